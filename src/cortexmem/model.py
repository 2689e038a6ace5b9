"""The records Cortex stores: plain, immutable dataclasses with no I/O.

Everything else (ranking, storage, the CLI) passes these around. They validate their own
invariants on construction so that a bad value is caught where it is made, not three layers
later when it is read back from disk.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Final, NamedTuple

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
# The tag of a decision a project document lists: ``doc:`` and the document's path, by which a
# later version of the document withdraws what it no longer says.
DOCUMENT_TAG: Final = "doc:"
# The prefixes of the tags Cortex files a memory under (its markers, not a person's words):
# the word search leaves them out (migration 0020 holds the same list).
TAG_MARKERS: Final = ("event:", "layer:", "doc:", "code:", "lang:", "role:", "kind:", "digest:")


class Listing(NamedTuple):
    """A document's word on a decision at a time: it listed it (``listed``), or a whole version
    of it no longer said it."""

    document: str
    decision: str
    at: str
    listed: bool


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
    "distill",  # proposed by a model from a session's transcript (services.distill)
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


# ----------------------------------------------------------------------------- validation
# Records are built from typed input (the CLI, capture) and from untrusted input (imports,
# hook payloads). These checks make a wrong type a ValueError with a clear message instead of an
# AttributeError three layers later, or a row that breaks every later read.

_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")
_ID = re.compile(r"^[0-9a-z][0-9a-z-]{0,63}$")
MAX_INT = 2**63 - 1


def is_valid_id(value: str) -> bool:
    return bool(_ID.match(value))


def clean_text(value: str) -> str:
    """Text that can be encoded as UTF-8: lone surrogates (undecodable bytes smuggled in by
    ``surrogateescape`` from argv or stdin, or ``\\ud800`` in JSON) become U+FFFD."""
    try:
        value.encode("utf-8")
        return value
    except UnicodeEncodeError:
        return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def _text(name: str, value: Any, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{name} must be text; got {type(value).__name__}")
    return clean_text(value)


def _number(name: str, value: Any, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a number; got {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be between {low:g} and {high:g}; got {value}")
    return float(value)


def _integer(name: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be a whole number; got {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be between {low} and {high}; got {value}")
    return value


def _flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be true or false; got {value!r}")
    return value


def _timestamp(name: str, value: Any, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or not _TIMESTAMP.match(value):
        raise ValueError(
            f"{name} must be a UTC time like 2026-01-31T12:00:00.000000Z; got {value!r}"
        )
    return value


def normalise_time(value: Any) -> Any:
    """Accept any ISO-8601 time on input (``2025-01-01T00:00:00Z``, offsets, no fraction) and
    return the storage format; anything else is returned as is for validation to reject."""
    if not isinstance(value, str) or _TIMESTAMP.match(value):
        return value
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return value
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return format_time(moment)


@dataclass(frozen=True)
class SourceContext:
    """Where a memory came from in the working tree: recorded so recall can filter by branch."""

    branch: str | None = None
    cwd: str | None = None
    commit: str | None = None

    def __post_init__(self) -> None:
        for name in ("branch", "cwd", "commit"):
            object.__setattr__(self, name, _text(name, getattr(self, name), optional=True))

    def to_dict(self) -> dict[str, str | None]:
        return {"branch": self.branch, "cwd": self.cwd, "commit": self.commit}

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> SourceContext:
        data = data or {}
        if not isinstance(data, dict):
            raise ValueError(f"source_context must be an object; got {type(data).__name__}")
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
        put = object.__setattr__
        put(self, "content", _text("content", self.content))
        if not self.content.strip():
            raise ValueError("a memory needs some content")
        put(self, "summary", _text("summary", self.summary))
        if not isinstance(self.id, str) or not is_valid_id(self.id):
            raise ValueError(f"id must be lower-case letters, digits and dashes; got {self.id!r}")
        _check_choice("memory_type", self.memory_type, MEMORY_TYPES)
        _check_choice("category", self.category, CATEGORIES)
        _check_choice("status", self.status, MEMORY_STATUSES)
        _check_choice("source_type", self.source_type, SOURCE_TYPES)
        put(self, "confidence", _number("confidence", self.confidence, 0.0, 1.0))
        _integer("priority", self.priority, 1, 10)
        _flag("pinned", self.pinned)
        _integer("access_count", self.access_count, 0, MAX_INT)
        put(self, "source_session", _text("source_session", self.source_session, optional=True))
        if not isinstance(self.source_context, SourceContext):
            raise ValueError("source_context must be a SourceContext")
        _timestamp("created_at", self.created_at)
        if not self.updated_at:
            put(self, "updated_at", self.created_at)
        _timestamp("updated_at", self.updated_at)
        _timestamp("last_accessed_at", self.last_accessed_at, optional=True)
        put(self, "tags", normalise_tags(self.tags))

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
        """Build from untrusted JSON: unknown keys ignored, times normalised, types checked."""
        known = {k: v for k, v in data.items() if k in _MEMORY_FIELDS}
        known["source_context"] = SourceContext.from_dict(data.get("source_context"))
        tags = data.get("tags") or ()
        if not isinstance(tags, list | tuple):
            raise ValueError(f"tags must be a list; got {type(tags).__name__}")
        known["tags"] = tuple(tags)
        for key in ("created_at", "updated_at", "last_accessed_at"):
            if key in known:
                known[key] = normalise_time(known[key])
        return cls(**known)


def normalise_tags(tags: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Tags are lower-case, trimmed, unique and sorted so equal sets compare and hash equal."""
    if isinstance(tags, str) or not all(isinstance(t, str) for t in tags):
        raise ValueError("tags must be a list of text")
    cleaned = {clean_text(t).strip().lower() for t in tags if t and t.strip()}
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
        for name in ("id", "source_id", "target_id"):
            value = getattr(self, name)
            if not isinstance(value, str) or not is_valid_id(value):
                raise ValueError(f"edge {name} is not a valid id: {value!r}")
        _check_choice("relation_type", self.relation_type, RELATION_TYPES)
        _check_choice("edge status", self.status, EDGE_STATUSES)
        object.__setattr__(self, "strength", _number("strength", self.strength, 0.0, 1.0))
        _flag("bidirectional", self.bidirectional)
        _timestamp("created_at", self.created_at)
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
        known = {k: v for k, v in data.items() if k in Edge.__dataclass_fields__}
        if "created_at" in known:
            known["created_at"] = normalise_time(known["created_at"])
        return cls(**known)


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

    def __post_init__(self) -> None:
        for name in ("session_id", "transcript_path", "branch", "commit"):
            object.__setattr__(self, name, _text(name, getattr(self, name), optional=True))
        if self.line is not None:
            _integer("line", self.line, 0, MAX_INT)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Provenance:
        data = data or {}
        if not isinstance(data, dict):
            raise ValueError(f"provenance must be an object; got {type(data).__name__}")
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
        put = object.__setattr__
        if not isinstance(self.kind, str) or not self.kind:
            raise ValueError("an event needs a kind")
        put(self, "content", _text("content", self.content))
        if not isinstance(self.payload, dict):
            raise ValueError("an event payload must be an object")
        put(self, "confidence", _number("confidence", self.confidence, 0.0, 1.0))
        put(self, "salience", _number("salience", self.salience, 0.0, 1.0))
        if not isinstance(self.id, str) or not is_valid_id(self.id):
            raise ValueError(f"event id is not a valid id: {self.id!r}")
        _timestamp("created_at", self.created_at)

    @property
    def content_hash(self) -> str:
        """Same kind and content in the same session is the same event, whenever it is re-read;
        a request the person made again later (``payload["again"]``: the line where they did)
        is another one."""
        again = self.payload.get("again")
        extra = () if again is None else (f"again:{again}",)
        return content_hash(self.kind, self.content, self.provenance.session_id or "", *extra)

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
        payload = data.get("payload") or {}
        if not isinstance(payload, dict):
            raise ValueError("an event payload must be an object")
        known["payload"] = payload
        if "created_at" in known:
            known["created_at"] = normalise_time(known["created_at"])
        return cls(**known)


EPISODE_ROLES: Final = (
    "user", "assistant", "summary", "subagent", "tool_error", "plan", "written", "read", "ran",
)  # fmt: skip


@dataclass(frozen=True)
class Episode:
    """One chunk of what was said in a session, kept searchable as it was said (redacted).

    ``role`` is who said it: the person (``user``), the assistant, a compaction summary, a
    subagent's report, the text of a failing tool call (``tool_error``), a proposed ``plan``,
    what was ``written`` into a file, a document ``read``, or what a command that acted
    printed (``ran``). ``chunk`` numbers the pieces of one long message. Provenance says where
    it was read: the session, the transcript file and line, the branch and the time the message
    was written. ``document`` names the project's document a whole read showed (its absolute
    path, lower-cased: ``core.extraction.documents.document_key``): one version of a file that
    is rewritten between sessions (a status note), so a later whole read of it on the same
    branch says the earlier one is out of date.
    """

    text: str
    role: str = "user"
    session_id: str | None = None
    transcript_path: str | None = None
    line: int | None = None
    chunk: int = 0
    branch: str | None = None
    created_at: str = field(default_factory=utc_now)
    id: str = field(default_factory=lambda: new_id("ep"))
    document: str | None = None

    def __post_init__(self) -> None:
        put = object.__setattr__
        put(self, "text", _text("text", self.text))
        if not self.text.strip():
            raise ValueError("an episode needs some text")
        _check_choice("role", self.role, EPISODE_ROLES)
        for name in ("session_id", "transcript_path", "branch", "document"):
            put(self, name, _text(name, getattr(self, name), optional=True))
        if self.line is not None:
            _integer("line", self.line, 0, MAX_INT)
        _integer("chunk", self.chunk, 0, MAX_INT)
        _timestamp("created_at", self.created_at)
        if not isinstance(self.id, str) or not is_valid_id(self.id):
            raise ValueError(f"episode id is not a valid id: {self.id!r}")

    @property
    def content_hash(self) -> str:
        """The same words said in the same session by the same role are one episode; each
        whole read of a document keeps all its chunks (a later read replaces an earlier one
        whole, so the part it did not change must be in it)."""
        if self.document:
            where = (self.transcript_path or "", str(self.line))
            return content_hash(self.role, self.text, self.session_id or "", *where)
        return content_hash(self.role, self.text, self.session_id or "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "role": self.role,
            "text": self.text,
            "session_id": self.session_id,
            "transcript_path": self.transcript_path,
            "line": self.line,
            "chunk": self.chunk,
            "branch": self.branch,
            "created_at": self.created_at,
            "document": self.document,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Episode:
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        if "created_at" in known:
            known["created_at"] = normalise_time(known["created_at"])
        return cls(**known)


@dataclass(frozen=True)
class DocumentVersion:
    """Where the newest whole read of a document (``Episode.document``) on a branch was made:
    when, and which message of which transcript (the chunks of one read share them)."""

    created_at: str
    transcript_path: str | None
    line: int | None


@dataclass(frozen=True)
class ExtractionCursor:
    """How far extraction has read one transcript, so the next pass resumes exactly there.

    ``offset`` is a byte offset just past the last complete line consumed; ``head_hash`` is a
    hash of the file's first bytes so a rewritten or truncated transcript is noticed; ``state``
    is what the extractor carried at that point (JSON text, saved in the same transaction).
    """

    transcript_path: str
    offset: int = 0
    line: int = 0
    head_hash: str = ""
    session_id: str | None = None
    updated_at: str = field(default_factory=utc_now)
    state: str = ""

    def __post_init__(self) -> None:
        if self.offset < 0 or self.line < 0:
            raise ValueError("cursor position cannot be negative")


@dataclass(frozen=True)
class Observation:
    """One tool call as the learning loop sees it: cheap, and free of the call's arguments.

    ``detail`` is at most the program a shell command ran (``pytest``, ``git``), never its
    arguments, so an observation can hold no secret. ``prev_tool``/``prev2_tool`` are the two
    tools called before it in the same session (the learning loop's 3-tool chains).
    """

    session_id: str
    tool: str
    ok: bool
    at: str
    detail: str | None = None
    duration_ms: int | None = None
    prev_tool: str | None = None
    prev2_tool: str | None = None
    tool_use_id: str | None = None
    branch: str | None = None
    # A shell command's form (``uv run pytest``: core.command_form), never its arguments.
    command: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.session_id, str) or not self.session_id:
            raise ValueError("an observation needs a session")
        if not isinstance(self.tool, str) or not self.tool:
            raise ValueError("an observation needs a tool")
        if self.duration_ms is not None and (
            not isinstance(self.duration_ms, int) or self.duration_ms < 0
        ):
            raise ValueError("duration_ms must be a non-negative integer")
        _timestamp("at", self.at)

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "tool": self.tool,
            "ok": self.ok,
            "at": self.at,
            "detail": self.detail,
            "duration_ms": self.duration_ms,
            "prev_tool": self.prev_tool,
            "prev2_tool": self.prev2_tool,
            "tool_use_id": self.tool_use_id,
            "branch": self.branch,
            "command": self.command,
        }


INSTINCT_KINDS: Final = ("chain", "retry", "fix")
INSTINCT_STATUSES: Final = ("active", "promoted", "archived")


@dataclass(frozen=True)
class Instinct:
    """A pattern the learning loop keeps seeing (stage 3): a hypothesis with its evidence.

    ``key`` names the pattern (``chain:Grep>Read>Edit``, ``retry:Bash``,
    ``fix:pytest>uv run pytest``); ``score`` is frequency × consistency when it was last seen
    in the window, ``confidence`` that score decayed to ``updated_at`` (``core.learning``).
    ``promoted`` instincts are the generated rules; ``archived`` ones left active tracking.
    """

    key: str
    kind: str
    label: str
    rule: str
    confidence: float
    score: float
    observations: int
    sessions: int
    total_sessions: int
    first_seen: str
    last_seen: str
    status: str = "active"
    updated_at: str = ""
    promoted_at: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in INSTINCT_KINDS:
            raise ValueError(f"unknown instinct kind {self.kind!r}")
        if self.status not in INSTINCT_STATUSES:
            raise ValueError(f"unknown instinct status {self.status!r}")
        for name in ("confidence", "score"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0 or math.isnan(value):
                raise ValueError(f"{name} must be within [0, 1]")
        _timestamp("first_seen", self.first_seen)
        _timestamp("last_seen", self.last_seen)

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "kind": self.kind,
            "label": self.label,
            "rule": self.rule,
            "confidence": round(self.confidence, 4),
            "score": round(self.score, 4),
            "observations": self.observations,
            "sessions": self.sessions,
            "total_sessions": self.total_sessions,
            "first_seen": self.first_seen,
            "last_seen": self.last_seen,
            "status": self.status,
            "updated_at": self.updated_at,
            "promoted_at": self.promoted_at,
        }


# Where an approved suggestion lands (the learning chapter's six destinations).
DESTINATIONS: Final = (
    "claude_md",  # a rule in a CLAUDE.md directives file
    "settings_json",  # hooks / permissions / env in .claude/settings.json
    "memory",  # a tier-1 memory file, loaded in every session
    "brain_inbox",  # a new note in the Zettelkasten inbox
    "skill",  # a skill folder with its SKILL.md
    "tool",  # a new tool or automation (a note describing it)
)
SUGGESTION_STATUSES: Final = ("pending", "applied", "refused", "modified")


@dataclass(frozen=True)
class Suggestion:
    """A proposed lasting change, waiting for a person's yes (``cortex review``).

    ``text`` is what would be written; ``before``/``after`` the target file's content around
    the change (the diff shown); ``key`` identifies what is proposed so the same thing is not
    proposed twice; ``recurrence`` how often its source was seen; ``evidence`` where.
    """

    id: str
    destination: str
    target: str
    title: str
    text: str
    rationale: str
    source: str
    key: str
    before: str = ""
    after: str = ""
    evidence: tuple[str, ...] = ()
    recurrence: int = 1
    status: str = "pending"
    created_at: str = ""
    decided_at: str | None = None
    drafted_by: str = "template"

    def __post_init__(self) -> None:
        if self.destination not in DESTINATIONS:
            raise ValueError(f"unknown destination {self.destination!r}")
        if self.status not in SUGGESTION_STATUSES:
            raise ValueError(f"unknown suggestion status {self.status!r}")
        if not self.text.strip():
            raise ValueError("a suggestion needs a text")

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "destination": self.destination,
            "target": self.target,
            "title": self.title,
            "text": self.text,
            "rationale": self.rationale,
            "source": self.source,
            "key": self.key,
            "before": self.before,
            "after": self.after,
            "evidence": list(self.evidence),
            "recurrence": self.recurrence,
            "status": self.status,
            "created_at": self.created_at,
            "decided_at": self.decided_at,
            "drafted_by": self.drafted_by,
        }


LESSON_KINDS: Final = ("failure", "victory", "correction")
# T3 raw (just learned) → T2 (stored, retrieved on match) → T1 behavioural → T0 principle.
LESSON_TIERS: Final = ("T3", "T2", "T1", "T0")
# ``pending``: a drafted principle waiting for a person's yes (``cortex lessons review``).
LESSON_STATUSES: Final = ("active", "pending", "superseded", "archived")
# The experience graph's edges between lessons (the store checks the same list).
LESSON_EDGE_TYPES: Final = ("generalizes", "relates_to", "supersedes")
NOISE_REASONS: Final = ("wrong_language", "wrong_repo", "wrong_task", "stale_rule")


@dataclass(frozen=True)
class Trigger:
    """What a lesson is about: the tool, the program a command ran, the kinds of file, the
    language, framework and domain. Empty fields match anything."""

    tool: str | None = None
    program: str | None = None
    file_kinds: tuple[str, ...] = ()
    language: str | None = None
    framework: str | None = None
    domain: str | None = None
    command: str | None = None  # the command it is about (one line), when it is about one

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "program": self.program,
            "command": self.command,
            "file_kinds": list(self.file_kinds),
            "language": self.language,
            "framework": self.framework,
            "domain": self.domain,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Trigger:
        data = data or {}
        return cls(
            tool=data.get("tool"),
            program=data.get("program"),
            file_kinds=tuple(data.get("file_kinds") or ()),
            language=data.get("language"),
            framework=data.get("framework"),
            domain=data.get("domain"),
            command=data.get("command"),
        )


@dataclass(frozen=True)
class Lesson:
    """Something learned from what happened: the seeds' scar and experience in one record.

    ``text`` is the lesson itself ("when X, do Y, because Z"); ``key`` is what makes two
    lessons the same one (learned twice = ``confirmed`` twice). ``events`` (their content
    hashes: stable however often they are read), ``episodes`` and ``sessions`` are its
    evidence, ``source`` how it was drawn (structural, keyword, tag, model, manual,
    principle). The counters are the judge's and recall's; ``noise`` counts
    the reasons a warning was called noise. ``lang_exclude``/``project_exclude`` narrow where
    it applies; ``superseded_by`` names the lesson that replaced it.
    """

    text: str
    kind: str = "failure"
    key: str = ""
    trigger: Trigger = field(default_factory=Trigger)
    importance: int = 5
    learnable: bool = True
    tier: str = "T3"
    status: str = "active"
    source: str = "structural"
    events: tuple[str, ...] = ()
    episodes: tuple[str, ...] = ()
    sessions: tuple[str, ...] = ()
    confirmed: int = 1
    shown: int = 0
    followed: int = 0
    ignored: int = 0
    irrelevant: int = 0
    recalled: int = 0
    noise: tuple[tuple[str, int], ...] = ()
    lang_exclude: tuple[str, ...] = ()
    project_exclude: tuple[str, ...] = ()
    superseded_by: str | None = None
    created_at: str = field(default_factory=utc_now)
    updated_at: str = field(default_factory=utc_now)
    last_confirmed_at: str | None = None
    last_recalled_at: str | None = None
    # When a model was asked to put it in better words (once; its answer is in the history).
    model_asked_at: str | None = None
    id: str = field(default_factory=lambda: new_id("ls"))

    def __post_init__(self) -> None:
        put = object.__setattr__
        put(self, "text", _text("text", self.text))
        if not self.text.strip():
            raise ValueError("a lesson needs some text")
        _check_choice("kind", self.kind, LESSON_KINDS)
        _check_choice("tier", self.tier, LESSON_TIERS)
        _check_choice("status", self.status, LESSON_STATUSES)
        _integer("importance", self.importance, 0, 10)
        for name in ("confirmed", "shown", "followed", "ignored", "irrelevant", "recalled"):
            _integer(name, getattr(self, name), 0, MAX_INT)
        for reason, count in self.noise:
            _check_choice("noise reason", reason, NOISE_REASONS)
            _integer("noise count", count, 0, MAX_INT)
        if not self.key:
            put(self, "key", content_hash(self.kind, self.text.lower()))
        _timestamp("created_at", self.created_at)
        _timestamp("updated_at", self.updated_at)
        _timestamp("last_confirmed_at", self.last_confirmed_at, optional=True)
        _timestamp("last_recalled_at", self.last_recalled_at, optional=True)
        _timestamp("model_asked_at", self.model_asked_at, optional=True)
        if not isinstance(self.id, str) or not is_valid_id(self.id):
            raise ValueError(f"lesson id is not a valid id: {self.id!r}")

    def with_changes(self, **changes: Any) -> Lesson:
        return replace(self, **changes)

    def noise_count(self, reason: str | None = None) -> int:
        return sum(n for r, n in self.noise if reason is None or r == reason)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "key": self.key,
            "text": self.text,
            "trigger": self.trigger.to_dict(),
            "importance": self.importance,
            "learnable": self.learnable,
            "tier": self.tier,
            "status": self.status,
            "source": self.source,
            "events": list(self.events),
            "episodes": list(self.episodes),
            "sessions": list(self.sessions),
            "confirmed": self.confirmed,
            "shown": self.shown,
            "followed": self.followed,
            "ignored": self.ignored,
            "irrelevant": self.irrelevant,
            "recalled": self.recalled,
            "noise": {r: n for r, n in self.noise},
            "lang_exclude": list(self.lang_exclude),
            "project_exclude": list(self.project_exclude),
            "superseded_by": self.superseded_by,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "last_confirmed_at": self.last_confirmed_at,
            "last_recalled_at": self.last_recalled_at,
            "model_asked_at": self.model_asked_at,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Lesson:
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        known["trigger"] = Trigger.from_dict(data.get("trigger"))
        for name in ("events", "episodes", "sessions", "lang_exclude", "project_exclude"):
            if name in known:
                known[name] = tuple(known[name] or ())
        noise = data.get("noise") or {}
        known["noise"] = tuple(sorted((str(r), int(n)) for r, n in dict(noise).items()))
        return cls(**known)
