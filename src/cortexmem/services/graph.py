"""Graph traversal over one store: the memory a walk starts from, and what it reaches; and
the links between memories and the episodes (what was said) they were drawn from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from cortexmem.core.episodes import provenance
from cortexmem.core.graph import Direction, Step, traverse
from cortexmem.core.text import shorten
from cortexmem.errors import NotFound
from cortexmem.model import Edge, Episode, Memory
from cortexmem.services.context import Context, Scope
from cortexmem.services.memories import Found, get

# How much of an episode's text a listing shows (the whole of it is ``cortex traverse ep-…``).
EPISODE_CLIP: Final = 160


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


def episode_line(episode: Episode, width: int = EPISODE_CLIP) -> str:
    """``ep-… [role] session s-1 · /path/t.jsonl:42 · clipped text`` (one line)."""
    where = f"{episode.transcript_path}:{episode.line}" if episode.transcript_path else "-"
    session = episode.session_id or "-"
    return f"{episode.id} [{episode.role}] session {session} · {where} · " + shorten(
        episode.text, width
    )


def episode_dict(episode: Episode, width: int | None = EPISODE_CLIP) -> dict[str, Any]:
    """An episode's id and provenance with its text (clipped to ``width``; None: whole)."""
    text = episode.text if width is None else shorten(episode.text, width)
    return {"id": episode.id, **provenance(episode), "text": text}


def sources_of(ctx: Context, found: Found) -> list[Episode]:
    """The episodes ``found`` was drawn from, in the order they were said."""
    return ctx.require(found.scope).episodes_of_memory(found.memory.id)


@dataclass(frozen=True)
class Drawn:
    """An episode and the memories drawn from it (within its store)."""

    episode: Episode
    scope: Scope
    memories: list[Memory]


def is_episode_id(value: str) -> bool:
    return value.strip().lower().startswith("ep-")


def drawn_from(ctx: Context, episode_id: str) -> Drawn:
    """The episode ``episode_id`` (exact id) and the memories drawn from it."""
    wanted = episode_id.strip().lower()
    for scope, store in ctx.existing():
        episode = store.get_episode(wanted)
        if episode is None:
            continue
        ids = store.memories_of_episode(episode.id)
        found = store.get_memories(ids)
        return Drawn(episode, scope, [found[i] for i in ids if i in found])
    raise NotFound(f"no episode with id {wanted} (an episode is found by its whole id)")
