"""Graph traversal over one store: the memory a walk starts from, and what it reaches."""

from __future__ import annotations

from dataclasses import dataclass

from cortexmem.core.graph import Direction, Step, traverse
from cortexmem.model import Edge, Memory
from cortexmem.services.context import Context
from cortexmem.services.memories import Found, get


@dataclass(frozen=True)
class Reached:
    memory: Memory
    depth: int
    via: str
    edge: Edge

    def to_dict(self) -> dict:
        return {
            "depth": self.depth,
            "via": self.via,
            "edge": self.edge.to_dict(),
            "memory": self.memory.to_dict(),
        }


def walk(
    ctx: Context,
    memory_id: str,
    *,
    depth: int = 2,
    types: tuple[str, ...] = (),
    direction: Direction = "both",
    min_strength: float = 0.0,
) -> tuple[Found, list[list[Reached]]]:
    """BFS from ``memory_id`` (id or unique prefix) within its store, grouped by depth."""
    start = get(ctx, memory_id)
    store = ctx.require(start.scope)
    levels: list[list[Step]] = traverse(
        start.memory.id,
        store.edges_touching,
        depth=depth,
        types=types,
        direction=direction,
        min_strength=min_strength,
    )
    memories = store.get_memories(s.memory_id for level in levels for s in level)
    return start, [
        [
            Reached(memories[s.memory_id], s.depth, s.via, s.edge)
            for s in level
            if s.memory_id in memories
        ]
        for level in levels
    ]
