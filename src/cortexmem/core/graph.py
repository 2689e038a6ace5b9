"""Walking the typed graph: breadth-first traversal with filters. Pure: the caller supplies a
function that returns the edges touching a set of memories (one store query per level).

Direction is relative to each visited memory: ``out`` follows edges whose source it is,
``in`` edges whose target it is, ``both`` either. A bidirectional edge is followed both ways
whatever the direction asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from cortexmem.model import Edge

Direction = Literal["out", "in", "both"]
DIRECTIONS: tuple[Direction, ...] = ("out", "in", "both")
MAX_DEPTH = 10


@dataclass(frozen=True)
class Step:
    """A memory reached at ``depth`` through ``edge`` from ``via``."""

    memory_id: str
    depth: int
    via: str
    edge: Edge


def _neighbour(edge: Edge, node: str, direction: Direction) -> str | None:
    if edge.source_id == node and (direction in ("out", "both") or edge.bidirectional):
        return edge.target_id
    if edge.target_id == node and (direction in ("in", "both") or edge.bidirectional):
        return edge.source_id
    return None


def traverse(
    start: str,
    edges_touching: Callable[[set[str]], Iterable[Edge]],
    *,
    depth: int = 2,
    types: tuple[str, ...] = (),
    direction: Direction = "both",
    min_strength: float = 0.0,
    limit: int = 500,
) -> list[list[Step]]:
    """Memories reachable from ``start`` within ``depth`` hops, grouped by depth (index 0 is
    depth 1). Each memory appears once, at its shortest distance; order within a depth is
    stable (by edge strength, then id)."""
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {', '.join(DIRECTIONS)}; got {direction!r}")
    depth = max(0, min(depth, MAX_DEPTH))
    seen = {start}
    frontier = {start}
    levels: list[list[Step]] = []
    total = 0
    for level in range(1, depth + 1):
        if not frontier or total >= limit:
            break
        found: dict[str, Step] = {}
        edges = sorted(edges_touching(frontier), key=lambda e: (-e.strength, e.id))
        for edge in edges:
            if edge.status != "active" or edge.strength < min_strength:
                continue
            if types and edge.relation_type not in types:
                continue
            for node in (edge.source_id, edge.target_id):
                if node not in frontier:
                    continue
                other = _neighbour(edge, node, direction)
                if other is None or other in seen or other in found:
                    continue
                found[other] = Step(other, level, node, edge)
        steps = list(found.values())[: max(0, limit - total)]
        if not steps:
            break
        levels.append(steps)
        total += len(steps)
        seen.update(s.memory_id for s in steps)
        frontier = {s.memory_id for s in steps}
    return levels
