"""The store contract, one small protocol per concern, and the records the stores return.

Services are typed against these protocols only (each function against the narrowest one it
needs), so a second backend (PostgreSQL for a team) implements them without touching ranking,
capture or the CLI. ``Store`` combines them all for the composition point
(``services.context``) and callers that need everything. ``store.sqlite.conformance`` has the
type checker prove the SQLite backend satisfies every one, and ``tests/contract`` runs the same
behavioural suite against each backend.

Every protocol is ``runtime_checkable`` so a test can also check a backend with ``isinstance``
(that checks method names only; the type checker checks signatures).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from cortexmem.model import (
    DocumentVersion,
    Edge,
    Episode,
    Event,
    ExtractionCursor,
    Instinct,
    Lesson,
    Listing,
    Memory,
    Observation,
    Suggestion,
)

if TYPE_CHECKING:  # core is only needed for the annotations
    from cortexmem.core.budget import Call
    from cortexmem.core.filters import MemoryFilter
    from cortexmem.core.ranking import Candidate


# ============================================================================ records


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


@dataclass(frozen=True)
class EpisodeCounts:
    """How many episodes a store holds, over how many sessions, their characters, by role."""

    episodes: int
    sessions: int
    chars: int
    by_role: dict[str, int] = field(default_factory=dict)


@dataclass
class CaptureResult:
    """What one committed capture batch added (duplicates already seen are not counted)."""

    events_added: int = 0
    memories_added: int = 0
    observations_added: int = 0
    memory_ids: list[str] = field(default_factory=list)
    # Memories the lifecycle had archived for fading, brought back by being said again.
    memories_restored: int = 0
    # Decisions archived because a later version of their document no longer says them.
    memories_withdrawn: int = 0
    episodes_added: int = 0


@dataclass
class ImportResult:
    inserted: int = 0
    updated: int = 0
    unchanged: int = 0
    edges_added: int = 0
    events_added: int = 0
    episodes_added: int = 0
    episode_links_added: int = 0
    lessons_added: int = 0
    lesson_edges_added: int = 0
    observations_added: int = 0
    skipped: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Redacted:
    """What one redaction pass over a store changed (or, in a dry run, would change): rows per
    table, the rows that became copies of another once redacted and were folded into it, and
    whether the file was compacted afterwards (no page keeps the replaced words)."""

    rows: tuple[tuple[str, int], ...] = ()
    folded: int = 0
    compacted: bool = False

    @property
    def total(self) -> int:
        return sum(n for _, n in self.rows) + self.folded


@dataclass
class StorePass:
    """What one lifecycle pass over one store changed (or would change)."""

    decayed: list[str] = field(default_factory=list)
    archived: list[str] = field(default_factory=list)
    restored: list[str] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)
    # action -> [(id, memory_type, text, confidence before, confidence after)]
    examples: dict[str, list[tuple[str, str, str, float, float | None]]] = field(
        default_factory=dict
    )
    backup: str | None = None
    skipped: bool = False  # a pass ran less than ``every`` ago: nothing done

    def counts(self) -> dict[str, int]:
        return {a: len(getattr(self, a)) for a in ("decayed", "archived", "restored", "pruned")}


@dataclass(frozen=True)
class UpkeepState:
    """Where graph upkeep stands: the linking cursor and what decides the next automatic run."""

    linked_seq: int
    extractions: int
    active_at_last_run: int
    last_run_at: str | None
    active: int
    newest_seq: int

    @property
    def unlinked(self) -> bool:
        return self.newest_seq > self.linked_seq


def pair(a: str, b: str) -> tuple[str, str]:
    """An unordered pair in its stored order (smaller id first)."""
    return (a, b) if a < b else (b, a)


@dataclass(frozen=True)
class CandidatePair:
    """Two memories proposed for a merge (``a_id < b_id``)."""

    a_id: str
    b_id: str
    jaccard: float
    cosine: float | None
    status: str = "pending"
    created_at: str = ""

    @property
    def similarity(self) -> float:
        """The stronger of the two scores: either one crossing its line made the pair."""
        return max(self.jaccard, self.cosine if self.cosine is not None else 0.0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "a_id": self.a_id,
            "b_id": self.b_id,
            "jaccard": round(self.jaccard, 4),
            "cosine": None if self.cosine is None else round(self.cosine, 4),
            "similarity": round(self.similarity, 4),
            "status": self.status,
            "created_at": self.created_at,
        }


# ============================================================================ protocols


@runtime_checkable
class StoreInfo(Protocol):
    """What any open store says about itself, and closing it."""

    @property
    def location(self) -> str:
        """Where the store lives (a file path, a connection name): shown, and a cache key."""
        ...

    def schema_version(self) -> int: ...

    def counts(self) -> StoreCounts: ...

    def size_bytes(self) -> int: ...

    def integrity_check(self) -> list[str]:
        """A full check of the stored data: the problems found, empty when it is sound."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class MemoryStore(Protocol):
    """Memories: adding (deduplicated by content), reading, status, full-text search and the
    pools the briefing and recall rank."""

    def add_memory(self, memory: Memory) -> tuple[Memory, bool]:
        """Insert ``memory`` unless an active memory with the same content hash exists;
        return the stored memory and whether it was new."""
        ...

    def add_memories(self, memories: Iterable[Memory]) -> int:
        """Bulk insert without dedup (bench, tests); returns the number inserted."""
        ...

    def replace_tagged(
        self,
        tag: str,
        memories: Sequence[Memory],
        edges: Sequence[tuple[int, int, str]],
        retire: str = "archived",
    ) -> tuple[list[Memory], int, int]:
        """Make ``memories`` the active memories tagged ``tag`` in one transaction; the others
        get status ``retire`` (``archived``, or ``superseded`` for a newer version) or are
        deleted (``deleted``: derived memories their source rebuilds);
        ``(stored memories, added, retired)``."""
        ...

    def get_memory(self, memory_id: str) -> Memory | None: ...

    def get_memories(self, memory_ids: Iterable[str]) -> dict[str, Memory]: ...

    def find_by_prefix(self, prefix: str, limit: int = 10) -> list[Memory]: ...

    def set_status(self, memory_id: str, status: str) -> Memory: ...

    def iter_memories(self, flt: MemoryFilter | None = None) -> Iterator[Memory]: ...

    def search_text(
        self, query: str, flt: MemoryFilter, limit: int, scope: str
    ) -> list[Candidate]: ...

    def term_documents(self, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        """How many documents (memories and episodes) the store holds, and how many of them
        hold each of ``terms`` (a word as a search matches it): how rare a word is here."""
        ...

    def top_memories(
        self, types: Sequence[str], flt: MemoryFilter, limit: int
    ) -> list[tuple[Memory, int]]: ...

    def maxima(self) -> tuple[int, int]:
        """``(highest in-degree, highest access count)``: what ranking normalises by."""
        ...

    def record_access(self, memory_ids: Sequence[str], when: str) -> None: ...

    def briefing_token(self) -> str:
        """Changes whenever what a briefing is made of changes."""
        ...


@runtime_checkable
class VectorStore(Protocol):
    """Embeddings: the backlog to embed, storing vectors, loading and streaming them, and the
    candidates their seqs stand for. Vectors are little-endian float32 bytes, keyed by the
    memory's ``seq`` (the store's own order of insertion)."""

    def embedding_backlog(
        self, model: str, limit: int, skip_types: Sequence[str] = ()
    ) -> list[tuple[int, Memory]]: ...

    def embedding_backlog_size(self, model: str, skip_types: Sequence[str] = ()) -> int: ...

    def embedding_coverage(self, model: str, skip_types: Sequence[str] = ()) -> tuple[int, int]:
        """``(embedded, total)`` of the memories ``model`` embeds (``skip_types`` left out):
        how much of the store recall can weigh by meaning."""
        ...

    def relabel_embeddings(self, model: str, label: str) -> int:
        """Mark ``model``'s vectors (memories' and episodes') stale when they were made with
        another label (project name) than ``label``; returns how many."""
        ...

    def put_embeddings(
        self, model: str, dim: int, items: Sequence[tuple[int, str, bytes]]
    ) -> int: ...

    def embedding_state(self, model: str) -> tuple[int, int]:
        """``(count, highest version)`` of ``model``'s vectors."""
        ...

    def last_embedded_at(self, model: str) -> str | None:
        """When the newest vector of ``model`` was written; None when there is none."""
        ...

    def load_embeddings(
        self, model: str, after_version: int = 0
    ) -> list[tuple[int, int, str, bytes]]: ...

    def vectors_of(self, model: str, seqs: Iterable[int]) -> dict[int, bytes]: ...

    def vector_chunk(
        self,
        model: str,
        after: int,
        before: int,
        limit: int,
        skip_types: Sequence[str],
        sink: Callable[[int, int, bytes], None],
    ) -> int: ...

    def candidates_by_seq(
        self, scored: Sequence[tuple[int, float]], flt: MemoryFilter, scope: str
    ) -> list[Candidate]: ...

    def seq_of(self, memory_ids: Sequence[str]) -> dict[str, int]: ...


@runtime_checkable
class GraphStore(Protocol):
    """Edges between memories (unique on source, target and type)."""

    def add_edge(self, edge: Edge) -> tuple[Edge, bool]: ...

    def add_edges(self, edges: Sequence[Edge]) -> int:
        """Add those not there yet (source, target, type) whose ends are both memories of this
        store, in one transaction; how many were added."""
        ...

    def iter_edges(self) -> Iterator[Edge]: ...

    def edges_touching(self, memory_ids: Iterable[str]) -> list[Edge]: ...


@runtime_checkable
class UpkeepStore(Protocol):
    """Graph upkeep: the linking cursor and run counters, the memories to link and their text
    neighbours, automatic links, merge candidates and suggested edges, and a person's
    decisions on them (a merge is all or nothing)."""

    def upkeep_state(self) -> UpkeepState: ...

    def claim_upkeep_run(
        self, *, add_extraction: bool, may_run: bool, due: Callable[[UpkeepState], bool]
    ) -> tuple[UpkeepState, bool]: ...

    def set_linked_seq(self, linked_seq: int) -> None: ...

    def memories_after(self, seq: int, limit: int | None) -> list[tuple[int, Memory]]: ...

    def count_after(self, seq: int) -> int: ...

    def memories_by_seq(self, seqs: Iterable[int]) -> dict[int, Memory]: ...

    def text_neighbours(
        self, text: str, before_seq: int, limit: int, skip_types: Sequence[str]
    ) -> list[tuple[int, Memory]]: ...

    def settled_with(self, memory_id: str) -> set[str]: ...

    def apply_links(
        self, edges: Sequence[Edge], candidates: Sequence[CandidatePair], linked_seq: int
    ) -> tuple[int, int]: ...

    def pending_candidates(self) -> list[CandidatePair]: ...

    def suggested_edges(self) -> list[Edge]: ...

    def reject_candidate(self, candidate: CandidatePair, link: Edge | None) -> None: ...

    def accept_edge(self, edge_id: str) -> None: ...

    def reject_edge(self, edge: Edge) -> None: ...

    def merge(self, keep: Memory, drop_id: str) -> Edge: ...


@runtime_checkable
class EventStore(Protocol):
    """Capture: events (append-only, deduplicated by content hash), transcript cursors,
    observations, and the one transaction that records a captured batch."""

    def append_event(self, event: Event) -> bool: ...

    def iter_events(self) -> Iterator[Event]: ...

    def recent_events(
        self, kinds: Sequence[str], limit: int, session_id: str | None = None
    ) -> list[Event]: ...

    def get_cursor(self, transcript_path: str) -> ExtractionCursor | None: ...

    def set_cursor(self, cursor: ExtractionCursor) -> None: ...

    def record_capture(
        self,
        events: Sequence[Event],
        memories_for: Callable[[list[Event]], list[Memory]],
        cursor: ExtractionCursor | None,
        observations: Sequence[Observation] = (),
        episodes: Sequence[Episode] = (),
        listings_in: Callable[[list[Event]], list[Listing]] | None = None,
    ) -> CaptureResult:
        """Events, the memories made from the events not seen before, observations, episodes
        (what was said, deduplicated by content hash, bounded per session) and the cursor that
        says how far the source was read, all in one transaction: a crash leaves either all of
        a batch or none of it, so a re-read neither loses nor duplicates. ``listings_in`` reads
        what the events say documents listed or dropped (``memories.listings``): the store
        keeps the latest word per document and decision and archives a decision every document
        dropped since it listed it (back when one lists it again)."""
        ...

    def document_decisions(self) -> list[tuple[str, tuple[tuple[str, str], ...]]]:
        """What the project's documents list now: per document, the decisions it last listed
        after any whole version dropped them, each with when it last listed it."""
        ...

    def iter_observations(self, session_id: str | None = None) -> Iterator[Observation]: ...


@runtime_checkable
class EpisodeStore(Protocol):
    """Episodes: what was said in sessions, redacted and chunked, searchable by words and by
    meaning, linked to the memories drawn from them. Episodes are not memories: no decay, no
    consolidation, no briefing. Vectors are keyed by the episode's ``seq`` (its own space)."""

    def add_episodes(self, episodes: Sequence[Episode]) -> int:
        """Store those not stored yet (content hash), bounded per session; how many added."""
        ...

    def get_episode(self, episode_id: str) -> Episode | None: ...

    def iter_episodes(self, session_id: str | None = None) -> Iterator[Episode]: ...

    def episode_counts(self) -> EpisodeCounts: ...

    def search_episodes(self, query: str, limit: int) -> list[tuple[int, Episode, float]]:
        """``(seq, episode, relevance)`` best first by BM25 (higher is better)."""
        ...

    def episodes_by_seq(self, seqs: Iterable[int]) -> dict[int, Episode]: ...

    def newest_versions(
        self, documents: Iterable[str]
    ) -> dict[tuple[str, str | None], DocumentVersion]:
        """The newest whole read (``Episode.document``) of each of ``documents`` stored, by
        document and branch."""
        ...

    def episodes_of_memory(self, memory_id: str) -> list[Episode]:
        """The episodes a memory was drawn from (``derived_from``)."""
        ...

    def memories_of_episode(self, episode_id: str) -> list[str]: ...

    def link_episodes(self, memories: Sequence[Memory], events: Sequence[Event]) -> int:
        """Link each memory to the episodes of the transcript lines of the events it was made
        from (same session, same time); how many links were added."""
        ...

    def memories_of_session(self, session_id: str) -> list[str]:
        """The active memories recorded from the session (ids)."""
        ...

    def iter_episode_links(self) -> Iterator[tuple[str, str]]:
        """Every ``(memory id, episode id)`` link (for export)."""
        ...

    def episode_embedding_backlog(self, model: str, limit: int) -> list[tuple[int, Episode]]: ...

    def episode_embedding_backlog_size(self, model: str) -> int: ...

    def put_episode_embeddings(
        self, model: str, dim: int, items: Sequence[tuple[int, bytes]]
    ) -> int: ...

    def episode_embedding_state(self, model: str) -> tuple[int, int]: ...

    def load_episode_embeddings(
        self, model: str, after_version: int = 0
    ) -> list[tuple[int, int, str, bytes]]: ...


@runtime_checkable
class LifecycleStore(Protocol):
    """Decay, archive, restore and prune, planned by ``core.lifecycle`` and applied by the
    store in one transaction."""

    def lifecycle_pass(
        self, now_iso: str, *, dry_run: bool = False, every: timedelta | None = None
    ) -> StorePass: ...

    def restore_archived(self, ids: Sequence[str], now_iso: str | None = None) -> list[str]:
        """Restore those of ``ids`` the lifecycle archived; their ids."""
        ...


@runtime_checkable
class BackupStore(Protocol):
    """Backups, restore, clearing, and moving records in and out (export, import)."""

    @property
    def backup_dir(self) -> Path: ...

    def backup(self, reason: str) -> Path: ...

    def list_backups(self) -> list[Path]: ...

    def backup_status_counts(self, backup: Path) -> dict[str, int]:
        """Memories by status in ``backup`` (read-only)."""
        ...

    def restore(self, backup: Path) -> Path:
        """Replace the store's contents with ``backup``; returns the safety backup taken first."""
        ...

    def clear(self) -> Path:
        """Delete everything after taking a backup; returns the backup's path."""
        ...

    def snapshot(self) -> tuple[list[Memory], list[Edge], list[Event]]:
        """Memories, edges and events as of one moment (for export)."""
        ...

    def import_records(
        self,
        memories: Sequence[Memory],
        edges: Sequence[Edge],
        events: Sequence[Event],
        *,
        episodes: Sequence[Episode] = (),
        episode_links: Sequence[tuple[str, str]] = (),
        lessons: Sequence[Lesson] = (),
        lesson_history: Mapping[str, Sequence[tuple[str, str, str]]] | None = None,
        lesson_edges: Sequence[tuple[str, str, str]] = (),
        lifecycle: Mapping[str, Mapping[str, str]] | None = None,
        observations: Sequence[Observation] = (),
        sessions: Sequence[tuple[str, bool, str | None, int]] = (),
    ) -> ImportResult:
        """All or nothing; importing the same records twice changes nothing. ``lifecycle``
        (by memory id: ``decayed_at``, ``below_since``, ``archived_at``) is where the
        lifecycle stood with a memory in the store exported; a new memory without it starts
        its decay clock on arrival. An episode
        already stored under another id (same content hash) is that one: the links naming it
        are moved onto it. ``episode_links`` are ``(memory id, episode id)``. A lesson whose
        key this store already holds is that one (kept as it is here, counters and all), and
        the edges naming it are moved onto it; a new one comes with its timeline
        (``lesson_history`` by lesson id)."""
        ...

    def lifecycle_marks(self) -> dict[str, dict[str, str]]:
        """By memory id, the lifecycle's marks that are set (for export)."""
        ...

    def redact_stored(self, *, apply: bool) -> Redacted:
        """Run today's secret redaction over every text the store holds, rewriting what
        changes (with what derives from it: content hashes, vectors) and leaving no page with
        the old words; a dry run (``apply`` false) changes nothing and says what would."""
        ...

    def redact_backup(self, backup: Path, *, apply: bool) -> Redacted:
        """The same over one of the store's backups, which stays a backup restore accepts."""
        ...


@dataclass(frozen=True)
class AIJob:
    """Model work queued for the background worker (one per kind and session)."""

    id: int
    kind: str
    session_id: str
    transcript_path: str | None
    queued_at: str
    attempts: int = 0
    last_error: str | None = None


@dataclass(frozen=True)
class DistillState:
    """How far a session was distilled by a model: its last transcript line sent, and what
    that cost."""

    session_id: str
    last_line: int
    distilled_at: str
    memories: int = 0
    model: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0


@runtime_checkable
class AIStore(Protocol):
    """The AI façade's bookkeeping: the ledger of model calls (budget, circuit breaker), the
    queue of background work, and how far each session was distilled."""

    def record_ai_call(self, call: Call) -> None: ...

    def ai_calls_since(self, since: str) -> list[Call]:
        """The calls made at or after ``since`` (ISO time), oldest first."""
        ...

    def enqueue_ai_job(self, kind: str, session_id: str, transcript_path: str | None) -> bool:
        """Queue work; False when the same (kind, session) was already queued (its
        ``queued_at`` then moves to now: work on a live session waits for it to settle)."""
        ...

    def ai_jobs(self, kind: str | None = None, limit: int = 100) -> list[AIJob]:
        """Queued jobs, oldest first."""
        ...

    def finish_ai_job(self, job_id: int) -> None: ...

    def fail_ai_job(self, job_id: int, error: str) -> int:
        """Count a failed attempt; the job's attempts so far."""
        ...

    def distill_state(self, session_id: str) -> DistillState | None: ...

    def set_distill_state(self, state: DistillState) -> None:
        """Record how far a session was distilled (tokens add up over passes)."""
        ...


@dataclass(frozen=True)
class AuditEntry:
    """One line of the audit log: who did what to which suggestion, where, with the diff."""

    id: int | None
    at: str
    who: str
    action: str
    suggestion_id: str | None
    target: str | None
    diff: str = ""
    backup: str | None = None


@runtime_checkable
class LearningStore(Protocol):
    """The learning loop and the review: the observations of a window, the sessions it must
    not learn from, instincts and the loop's state, suggestions and the audit log."""

    def observations_since(self, since: str) -> list[Observation]:
        """Observations at or after ``since`` (ISO time), oldest first."""
        ...

    def prune_observations(self, before: str, *, dry_run: bool = False) -> int:
        """Delete the observations older than ``before`` (the dream's compaction); how many
        (``dry_run``: how many would be)."""
        ...

    def latest_observation(self) -> str | None:
        """When the newest observation was made (ISO time); None when there is none."""
        ...

    def observation_mark(self) -> int:
        """A number that grows with every observation stored (cheap: is anything new?)."""
        ...

    def mark_session(self, session_id: str, *, automated: bool, entrypoint: str | None) -> None:
        """Remember a session's kind; once automated, always automated."""
        ...

    def session_marked(self, session_id: str) -> bool: ...

    def add_session_tokens(self, session_id: str, tokens: int) -> None:
        """Count tokens a session's answers cost (added to what was counted before)."""
        ...

    def session_tokens(self) -> dict[str, int]:
        """Each session's tokens (those with any)."""
        ...

    def automated_sessions(self) -> set[str]: ...

    def learning_sessions(self) -> list[tuple[str, bool, str | None, int]]:
        """Every session the loop knows: (id, automated, entrypoint, tokens), for export."""
        ...

    def instincts(self, statuses: Sequence[str] | None = None) -> list[Instinct]:
        """Instincts (of those statuses), most confident first."""
        ...

    def save_instincts(self, instincts: Iterable[Instinct], state: dict[str, str]) -> None:
        """Write instincts (by key) and the loop's state in one transaction."""
        ...

    def learning_state(self, key: str) -> str | None: ...

    def add_suggestions(self, suggestions: Iterable[Suggestion]) -> int:
        """Queue those whose key is new; a pending one seen again gets the new recurrence and
        evidence. How many were added."""
        ...

    def suggestions(self, status: str | None = "pending", limit: int = 1000) -> list[Suggestion]:
        """Ranked by recurrence, then evidence, then age (``None``: every status)."""
        ...

    def count_suggestions(self, status: str = "pending") -> int: ...

    def find_suggestions(self, prefix: str) -> list[Suggestion]: ...

    def suggestion_keys(self) -> set[str]: ...

    def decide_suggestion(self, suggestion: Suggestion, entry: AuditEntry) -> None: ...

    def audit_entries(self, limit: int = 100) -> list[AuditEntry]:
        """Newest first."""
        ...


@dataclass(frozen=True)
class ShownWarning:
    """A warning shown before a tool call, and the judge's verdict on the call that followed."""

    id: int
    session_id: str
    lesson_id: str
    at: str
    tool: str
    action: str = ""
    tool_use_id: str | None = None
    outcome: str | None = None
    verdict: str | None = None
    reason: str | None = None


@runtime_checkable
class LessonStore(Protocol):
    """Lessons (one per key), their full-text index and vectors, their history (the timeline),
    their graph, and the warnings shown from them with the judge's verdicts."""

    def add_lesson(
        self, lesson: Lesson, what: str = "learned", detail: str = ""
    ) -> tuple[Lesson, bool]:
        """Insert ``lesson``; when one with its key exists, that one and False (nothing
        written)."""
        ...

    def update_lesson(self, lesson: Lesson, what: str, detail: str = "") -> None:
        """Write ``lesson`` (found by id) and one line of its history."""
        ...

    def get_lesson(self, lesson_id: str) -> Lesson | None:
        """By id, or by a unique id prefix or random tail (``7f3k2p``)."""
        ...

    def lesson_by_key(self, key: str) -> Lesson | None: ...

    def iter_lessons(
        self,
        statuses: Sequence[str] = ("active",),
        tiers: Sequence[str] = (),
        learned_before: str | None = None,
    ) -> Iterator[Lesson]:
        """Lessons of ``statuses`` and ``tiers`` (any when empty), learned before a time when
        given, oldest first."""
        ...

    def lesson_count(self, statuses: Sequence[str] = ("active",)) -> int: ...

    def search_lessons(self, query: str, limit: int) -> list[tuple[int, Lesson, float]]:
        """``(seq, lesson, relevance)`` by BM25 (higher is better), any status."""
        ...

    def lessons_by_seq(self, seqs: Iterable[int]) -> dict[int, Lesson]: ...

    def lesson_history(self, lesson_id: str) -> list[tuple[str, str, str]]:
        """``(at, what, detail)``, oldest first."""
        ...

    def add_lesson_edge(self, source_id: str, target_id: str, type_: str) -> bool: ...

    def lesson_edges(self, lesson_ids: Iterable[str]) -> list[tuple[str, str, str]]:
        """``(source, target, type)`` of every edge touching ``lesson_ids``."""
        ...

    def record_warning(
        self, session_id: str, lesson_id: str, tool: str, action: str, tool_use_id: str | None
    ) -> bool:
        """Record a warning shown; False when that lesson was already shown in the session."""
        ...

    def warnings_of_session(self, session_id: str) -> list[ShownWarning]: ...

    def unjudged_warnings(self, limit: int = 100) -> list[ShownWarning]:
        """Warnings with no verdict yet, oldest first."""
        ...

    def set_warning_outcome(self, session_id: str, tool_use_id: str, outcome: str) -> int:
        """What the call after a warning did (its result), for the judge."""
        ...

    def judge_warning(self, warning_id: int, verdict: str, reason: str | None) -> None: ...

    def lesson_embedding_backlog(self, model: str, limit: int) -> list[tuple[int, Lesson]]: ...

    def put_lesson_embeddings(
        self, model: str, dim: int, items: Sequence[tuple[int, bytes]]
    ) -> int: ...

    def lesson_embedding_state(self, model: str) -> tuple[int, int]: ...

    def load_lesson_embeddings(
        self, model: str, after_version: int = 0
    ) -> list[tuple[int, int, str, bytes]]:
        """``(seq, version, kind, vector bytes)`` of ``model`` written after ``after_version``."""
        ...


@runtime_checkable
class Store(
    StoreInfo,
    MemoryStore,
    VectorStore,
    GraphStore,
    UpkeepStore,
    EventStore,
    EpisodeStore,
    LifecycleStore,
    BackupStore,
    AIStore,
    LearningStore,
    LessonStore,
    Protocol,
):
    """Everything a store of one scope (project or global) does."""
