"""The ``Store`` protocol every backend implements, and the small records it returns.

Services talk to this protocol only, so a second backend (PostgreSQL for a team) slots in
without touching ranking, capture or the CLI.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from cortexmem.core.filters import MemoryFilter
from cortexmem.core.ranking import Candidate
from cortexmem.model import Edge, Event, ExtractionCursor, Memory, Observation


@dataclass(frozen=True)
class StoreCounts:
    by_type: dict[str, int]
    by_status: dict[str, int]
    edges: int
    events: int
    observations: int = 0
    transcripts: int = 0
    last_capture: str | None = None

    @property
    def memories(self) -> int:
        return sum(self.by_status.values())


@dataclass
class CaptureResult:
    """What one committed capture batch added (duplicates already seen are not counted)."""

    events_added: int = 0
    memories_added: int = 0
    observations_added: int = 0
    memory_ids: list[str] = field(default_factory=list)
    # Memories the lifecycle had archived for fading, brought back by being said again.
    memories_restored: int = 0


@dataclass
class ImportResult:
    inserted: int = 0
    updated: int = 0
    unchanged: int = 0
    edges_added: int = 0
    events_added: int = 0
    skipped: list[str] = field(default_factory=list)


class Store(Protocol):
    """Memories, edges, events and cursors of one scope (project or global)."""

    @property
    def location(self) -> str: ...

    def schema_version(self) -> int: ...

    def add_memory(self, memory: Memory) -> tuple[Memory, bool]:
        """Insert ``memory`` unless an active memory with the same content hash exists;
        return the stored memory and whether it was new."""
        ...

    def add_memories(self, memories: Iterable[Memory]) -> int:
        """Bulk insert without dedup (bench, tests); returns the number inserted."""
        ...

    def get_memory(self, memory_id: str) -> Memory | None: ...

    def find_by_prefix(self, prefix: str, limit: int = 10) -> list[Memory]: ...

    def set_status(self, memory_id: str, status: str) -> Memory: ...

    def iter_memories(self, flt: MemoryFilter | None = None) -> Iterator[Memory]: ...

    def search_text(
        self, query: str, flt: MemoryFilter, limit: int, scope: str
    ) -> list[Candidate]: ...

    def record_access(self, memory_ids: Sequence[str], when: str) -> None: ...

    def add_edge(self, edge: Edge) -> tuple[Edge, bool]: ...

    def iter_edges(self) -> Iterator[Edge]: ...

    def append_event(self, event: Event) -> bool: ...

    def iter_events(self) -> Iterator[Event]: ...

    def get_cursor(self, transcript_path: str) -> ExtractionCursor | None: ...

    def set_cursor(self, cursor: ExtractionCursor) -> None: ...

    def record_capture(
        self,
        events: Sequence[Event],
        memories_for: Callable[[list[Event]], list[Memory]],
        cursor: ExtractionCursor | None,
        observations: Sequence[Observation] = (),
    ) -> CaptureResult:
        """Events, the memories made from the events not seen before, observations and the
        cursor that says how far the source was read, all in one transaction: a crash leaves
        either all of a batch or none of it, so a re-read neither loses nor duplicates."""
        ...

    def iter_observations(self, session_id: str | None = None) -> Iterator[Observation]: ...

    def counts(self) -> StoreCounts: ...

    def size_bytes(self) -> int: ...

    def import_records(
        self, memories: Sequence[Memory], edges: Sequence[Edge], events: Sequence[Event]
    ) -> ImportResult:
        """All or nothing; importing the same records twice changes nothing."""
        ...

    @property
    def backup_dir(self) -> Path: ...

    def backup(self, reason: str) -> Path: ...

    def list_backups(self) -> list[Path]: ...

    def restore(self, backup: Path) -> Path:
        """Replace the store's contents with ``backup``; returns the safety backup taken first."""
        ...

    def clear(self) -> Path:
        """Delete everything after taking a backup; returns the backup's path."""
        ...

    def snapshot(self) -> tuple[list[Memory], list[Edge], list[Event]]:
        """Memories, edges and events as of one moment (for export)."""
        ...

    def close(self) -> None: ...
