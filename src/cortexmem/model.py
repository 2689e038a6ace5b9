"""The records Cortex stores: plain, immutable dataclasses with no I/O.

Everything else (ranking, storage, the CLI) passes these around. They validate their own
invariants on construction so that a bad value is caught where it is made, not three layers
later when it is read back from disk.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Final

MEMORY_TYPES: Final = (
    "architecture",
    "decision",
    "pattern",
    "gotcha",
    "context",
    "progress",
    "code_description",
    "code",
)
CATEGORIES: Final = ("project", "global")
MEMORY_STATUSES: Final = ("active", "superseded", "archived", "pruned")
RELATION_TYPES: Final = (
    "relates_to",
    "derived_from",
    "contradicts",
    "exemplifies",
    "refines",
    "supersedes",
    "source_of",
    "generalizes",
)
EDGE_STATUSES: Final = ("active", "suggested")
SOURCE_TYPES: Final = (
    "manual",
    "extraction",
    "self_report",
    "code_index",
    "import",
    "consolidation",
)

# Kinds of memory that describe the state of one line of work rather than lasting knowledge;
# only these are filtered by branch (see core.filters).
BRANCH_SCOPED_TYPES: Final = frozenset({"progress", "context"})

_CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"


def utc_now() -> str:
    """Current time as a sortable ISO-8601 UTC string with microseconds (the storage format)."""
    return format_time(datetime.now(UTC))


def format_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def new_id(prefix: str = "m") -> str:
    """A short, time-ordered, collision-resistant id such as ``m-01jd3x5k9q-7f3k2p``.

    48 bits of milliseconds keep ids sortable by creation; 40 random bits make a clash between
    processes writing in the same millisecond negligible. Lower-case Crockford base32 so people
    can read and type a unique prefix of it.
    """
    millis = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(5), "big")
    return f"{prefix}-{_b32(millis, 10)}-{_b32(rand, 8)}"


def _b32(value: int, width: int) -> str:
    out = []
    for _ in range(width):
        out.append(_CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(out))


def content_hash(*parts: str) -> str:
    """SHA-256 over normalised text: whitespace runs collapse so reflowed text dedups."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(" ".join(part.split()).encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}; got {value!r}")


@dataclass(frozen=True)
class SourceContext:
    """Where a memory came from in the working tree: recorded so recall can filter by branch."""

    branch: str | None = None
    cwd: str | None = None
    commit: str | None = None

    def to_dict(self) -> dict[str, str | None]:
        return {"branch": self.branch, "cwd": self.cwd, "commit": self.commit}

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> SourceContext:
        data = data or {}
        return cls(branch=data.get("branch"), cwd=data.get("cwd"), commit=data.get("commit"))


@dataclass(frozen=True)
class Memory:
    """One unit of remembered knowledge (the seed's data model, field for field)."""

    content: str
    memory_type: str = "context"
    id: str = field(default_factory=new_id)
    summary: str = ""
    category: str = "project"
    confidence: float = 1.0
    priority: int = 5
    pinned: bool = False
    source_type: str = "manual"
    source_session: str | None = None
    source_context: SourceContext = field(default_factory=SourceContext)
    tags: tuple[str, ...] = ()
    access_count: int = 0
    last_accessed_at: str | None = None
    created_at: str = field(default_factory=utc_now)
    updated_at: str = ""
    status: str = "active"

    def __post_init__(self) -> None:
        if not self.content.strip():
            raise ValueError("a memory needs some content")
        _check_choice("memory_type", self.memory_type, MEMORY_TYPES)
        _check_choice("category", self.category, CATEGORIES)
        _check_choice("status", self.status, MEMORY_STATUSES)
        _check_choice("source_type", self.source_type, SOURCE_TYPES)
        if not 0.0 <= self.confidence <= 1.0:
            raise ValueError(f"confidence must be between 0 and 1; got {self.confidence}")
        if not 1 <= self.priority <= 10:
            raise ValueError(f"priority must be between 1 and 10; got {self.priority}")
        if self.access_count < 0:
            raise ValueError("access_count cannot be negative")
        if not self.updated_at:
            object.__setattr__(self, "updated_at", self.created_at)
        object.__setattr__(self, "tags", normalise_tags(self.tags))

    @property
    def content_hash(self) -> str:
        return content_hash(self.memory_type, self.content)

    @property
    def branch(self) -> str | None:
        return self.source_context.branch

    def with_changes(self, **changes: Any) -> Memory:
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "content": self.content,
            "summary": self.summary,
            "memory_type": self.memory_type,
            "category": self.category,
            "confidence": self.confidence,
            "priority": self.priority,
            "pinned": self.pinned,
            "source_type": self.source_type,
            "source_session": self.source_session,
            "source_context": self.source_context.to_dict(),
            "tags": list(self.tags),
            "access_count": self.access_count,
            "last_accessed_at": self.last_accessed_at,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "status": self.status,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Memory:
        known = {k: v for k, v in data.items() if k in _MEMORY_FIELDS}
        known["source_context"] = SourceContext.from_dict(data.get("source_context"))
        known["tags"] = tuple(data.get("tags") or ())
        return cls(**known)


def normalise_tags(tags: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Tags are lower-case, trimmed, unique and sorted so equal sets compare and hash equal."""
    cleaned = {t.strip().lower() for t in tags if t and t.strip()}
    return tuple(sorted(cleaned))


_MEMORY_FIELDS = frozenset(Memory.__dataclass_fields__)


@dataclass(frozen=True)
class Edge:
    """A typed link between two memories; unique on (source_id, target_id, relation_type)."""

    source_id: str
    target_id: str
    relation_type: str
    strength: float = 1.0
    bidirectional: bool = False
    status: str = "active"
    id: str = field(default_factory=lambda: new_id("e"))
    created_at: str = field(default_factory=utc_now)

    def __post_init__(self) -> None:
        _check_choice("relation_type", self.relation_type, RELATION_TYPES)
        _check_choice("edge status", self.status, EDGE_STATUSES)
        if not 0.0 <= self.strength <= 1.0:
            raise ValueError(f"strength must be between 0 and 1; got {self.strength}")
        if self.source_id == self.target_id:
            raise ValueError("an edge cannot link a memory to itself")

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "source_id": self.source_id,
            "target_id": self.target_id,
            "relation_type": self.relation_type,
            "strength": self.strength,
            "bidirectional": self.bidirectional,
            "status": self.status,
            "created_at": self.created_at,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Edge:
        return cls(**{k: v for k, v in data.items() if k in Edge.__dataclass_fields__})


@dataclass(frozen=True)
class Provenance:
    """Where in which transcript an event was seen."""

    session_id: str | None = None
    transcript_path: str | None = None
    line: int | None = None
    branch: str | None = None
    commit: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "transcript_path": self.transcript_path,
            "line": self.line,
            "branch": self.branch,
            "commit": self.commit,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Provenance:
        data = data or {}
        return cls(**{k: data.get(k) for k in Provenance.__dataclass_fields__})


@dataclass(frozen=True)
class Event:
    """Something that happened in a session. Append-only; deduplicated by ``content_hash``.

    ``payload`` carries the structured details of the kind (a command, a file path, a plan step).
    """

    kind: str
    content: str
    payload: dict[str, Any] = field(default_factory=dict)
    confidence: float = 1.0
    salience: float = 0.5
    provenance: Provenance = field(default_factory=Provenance)
    id: str = field(default_factory=lambda: new_id("ev"))
    created_at: str = field(default_factory=utc_now)

    def __post_init__(self) -> None:
        if not self.kind:
            raise ValueError("an event needs a kind")
        if not 0.0 <= self.confidence <= 1.0:
            raise ValueError(f"confidence must be between 0 and 1; got {self.confidence}")
        if not 0.0 <= self.salience <= 1.0:
            raise ValueError(f"salience must be between 0 and 1; got {self.salience}")

    @property
    def content_hash(self) -> str:
        """Same kind and content in the same session is the same event, whenever it is re-read."""
        return content_hash(self.kind, self.content, self.provenance.session_id or "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "content": self.content,
            "payload": self.payload,
            "confidence": self.confidence,
            "salience": self.salience,
            "provenance": self.provenance.to_dict(),
            "created_at": self.created_at,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Event:
        known = {k: v for k, v in data.items() if k in Event.__dataclass_fields__}
        known["provenance"] = Provenance.from_dict(data.get("provenance"))
        known["payload"] = dict(data.get("payload") or {})
        return cls(**known)


@dataclass(frozen=True)
class ExtractionCursor:
    """How far extraction has read one transcript, so the next pass resumes exactly there.

    ``offset`` is a byte offset just past the last complete line consumed; ``head_hash`` is a
    hash of the file's first bytes so a rewritten or truncated transcript is noticed.
    """

    transcript_path: str
    offset: int = 0
    line: int = 0
    head_hash: str = ""
    session_id: str | None = None
    updated_at: str = field(default_factory=utc_now)

    def __post_init__(self) -> None:
        if self.offset < 0 or self.line < 0:
            raise ValueError("cursor position cannot be negative")
