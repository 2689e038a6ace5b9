"""Capture: transcripts and spooled observations → events, memories and observations.

Exactly once, incrementally. Each transcript has a cursor (byte offset just past the last
complete line read, its line number, and a hash of the file's first bytes). A pass reads from
the cursor, extracts, and commits every batch of events, the memories made from the new
events, and the advanced cursor in ONE transaction. So:

* a crash or kill mid-pass loses nothing and duplicates nothing: the next pass resumes from
  the last committed batch (and content hashes make a re-read harmless anyway);
* a half-written last line is never consumed: the cursor stops before it;
* a rewritten or truncated transcript (shorter than the cursor, or different first bytes) is
  noticed and read again from the start; content hashes keep what was already stored from
  being stored twice.

A deadline lets a hook with a small budget (SessionEnd: 1.5 s for every hook) do what fits;
what is left is queued in ``.cortex/queue/`` and finished by a later hook or ``cortex ingest``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from cortexmem.core.episodes import EpisodeCollector
from cortexmem.core.extraction.digest import DIGEST_KINDS, digest_tag, session_digest
from cortexmem.core.extraction.events import ExtractionContext
from cortexmem.core.extraction.extractor import Extractor
from cortexmem.core.extraction.memories import listings, to_memories
from cortexmem.core.observations import CallObserver, to_observations
from cortexmem.core.redact import redact_value
from cortexmem.core.session import Dialect, Entry, ParseStats, RawLine, SessionInfo
from cortexmem.model import (
    Edge,
    Episode,
    Event,
    ExtractionCursor,
    Memory,
    Observation,
    Provenance,
    utc_now,
)
from cortexmem.project.files import write_atomic
from cortexmem.project.git import changed_files
from cortexmem.project.log import append_line, log_line
from cortexmem.services.context import Context
from cortexmem.store.protocols import (
    CaptureResult,
    EpisodeStore,
    EventStore,
    GraphStore,
    LearningStore,
    MemoryStore,
)


class ObservationStore(EventStore, LearningStore, Protocol):
    """Observations with their cursors, and the kind of each session (the learning loop)."""


class CaptureStore(EventStore, MemoryStore, EpisodeStore, GraphStore, Protocol):
    """What a capture pass writes: events, cursors and episodes, the session's digest
    memories and their links (to episodes, and from the summary to the session's memories)."""


BATCH_LINES = 1_000
HEAD_BYTES = 4_096
GIT_TIMEOUT = 1.0
QUEUE_DIR = "queue"
QUARANTINE_DIR = "quarantine"
# What Cortex itself writes in a working tree: not the session's changes.
OWN_FILES = (".cortex/", ".claude/rules/cortex-")


@dataclass
class TranscriptReport:
    path: str
    lines: int = 0
    entries: int = 0
    events_added: int = 0
    memories_added: int = 0
    memories_withdrawn: int = 0
    episodes_added: int = 0
    restarted: bool = False
    finished: bool = True
    partial_tail: bool = False
    tokens: int = 0  # what the answers read in this pass cost
    skipped: dict[str, int] = field(default_factory=dict)

    def add(self, result: CaptureResult) -> None:
        self.events_added += result.events_added
        self.memories_added += result.memories_added
        self.memories_withdrawn += result.memories_withdrawn
        self.episodes_added += result.episodes_added


@dataclass
class CaptureReport:
    transcripts: list[TranscriptReport] = field(default_factory=list)
    observations_added: int = 0

    @property
    def finished(self) -> bool:
        return all(t.finished for t in self.transcripts)

    def totals(self) -> dict[str, int]:
        return {
            "transcripts": len(self.transcripts),
            "lines": sum(t.lines for t in self.transcripts),
            "events_added": sum(t.events_added for t in self.transcripts),
            "memories_added": sum(t.memories_added for t in self.transcripts),
            "memories_withdrawn": sum(t.memories_withdrawn for t in self.transcripts),
            "observations_added": self.observations_added,
        }


class TranscriptReader(Protocol):
    """What capture needs from a host, handed in by the host (``hosts.claude_code.reader``):
    its transcripts as neutral entries line by line, its subagents' transcripts, what it
    writes into messages without anyone speaking, and its tool hooks' spool."""

    @property
    def dialect(self) -> Dialect: ...

    def iter_entries(
        self, path: Path, offset: int = 0, line: int = 0, stats: ParseStats | None = None
    ) -> Iterator[tuple[Entry | None, RawLine]]: ...

    def subagent_transcripts(self, session_path: Path) -> list[Path]: ...

    def session_info(self, path: Path) -> SessionInfo: ...

    def spool_path(self, session_id: str) -> str: ...

    def read_spool(self, path: str, offset: int = 0) -> tuple[list[dict[str, object]], int]: ...


# ----------------------------------------------------------------- quarantine

# What is done with a record that cannot be stored: (where it came from, the record, why).
Quarantine = Callable[[str, object, BaseException], None]
# Errors that say a record is bad (as opposed to the store being busy, full or read-only).
DATA_ERRORS = (OverflowError, UnicodeError, ValueError, TypeError, RecursionError)
_SQL_DATA_ERRORS = frozenset({"IntegrityError", "InterfaceError", "DataError", "ProgrammingError"})


def is_data_error(exc: BaseException) -> bool:
    """Whether ``exc`` is about the data handed in, so retrying it can never succeed."""
    return isinstance(exc, DATA_ERRORS) or type(exc).__name__ in _SQL_DATA_ERRORS


def _log_nowhere(source: str, record: object, exc: BaseException) -> None:
    return None


def quarantine_to(data_dir: Path, log: Path) -> Quarantine:
    """Copy each bad record to ``<data_dir>/quarantine/records.jsonl`` (0600) and log a line."""

    def keep(source: str, record: object, exc: BaseException) -> None:
        reason = f"{type(exc).__name__}: {exc}"
        log_line(log, f"quarantined a record from {source}: {reason[:300]}")
        try:
            folder = data_dir / QUARANTINE_DIR
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            text = json.dumps(
                {
                    "at": utc_now(),
                    "source": source,
                    "reason": reason,
                    "record": redact_value(record),
                },
                default=repr,
            )
            line = (text + "\n").encode("utf-8", "backslashreplace")
            append_line(folder / "records.jsonl", line)
        except (OSError, ValueError, TypeError, RecursionError) as error:
            log_line(log, f"could not keep the quarantined record: {error}")

    return keep


# ----------------------------------------------------------------- cursors


def head_hash(path: Path, length: int) -> str:
    """``"<n>:<sha256 of the first n bytes>"`` with n = min(length, HEAD_BYTES)."""
    n = min(length, HEAD_BYTES)
    with path.open("rb") as fh:
        data = fh.read(n)
    return f"{len(data)}:{hashlib.sha256(data).hexdigest()[:32]}"


def resume_point(path: Path, cursor: ExtractionCursor | None) -> tuple[int, int, bool]:
    """(offset, line, restarted): where to continue reading ``path``.

    Restart from the top when the file is now shorter than the cursor or its first bytes
    changed: it was rewritten or truncated, and offsets into the old file mean nothing.
    """
    if cursor is None or cursor.offset == 0:
        return 0, 0, False
    size = path.stat().st_size
    if size < cursor.offset:
        return 0, 0, True
    n_text, _, _ = cursor.head_hash.partition(":")
    n = int(n_text) if n_text.isdigit() else HEAD_BYTES
    if head_hash(path, n) != cursor.head_hash:
        return 0, 0, True
    return cursor.offset, cursor.line, False


# ----------------------------------------------------------------- transcripts


def capture_transcript(
    store: CaptureStore,
    path: Path,
    *,
    reader: TranscriptReader,
    session_id: str | None = None,
    branch: str | None = None,
    commit: str | None = None,
    project: str | None = None,
    deadline: float | None = None,
    batch_lines: int = BATCH_LINES,
    memories_for: Callable[[list[Event]], list] = to_memories,
    on_bad: Quarantine | None = None,
    parent_branch: str | None = None,
    home: str | None = None,
) -> TranscriptReport:
    """Read ``path`` from its cursor to its last complete line; commit batch by batch.

    The extractor's state (calls awaiting their result, failures awaiting their fix, tasks
    awaiting updates...) is saved with the cursor in the same transaction and restored by the
    next pass, so a transcript read in any number of pieces gives what it gives read whole.
    A line that breaks extraction, or an event that cannot be stored, is quarantined
    (``on_bad``) and the pass goes on.
    """
    path = path.resolve()
    key = str(path)
    report = TranscriptReport(key)
    bad = on_bad or _log_nowhere
    saved = store.get_cursor(key)
    offset, line, report.restarted = resume_point(path, saved)
    # what the project's documents listed: only worth asking when there is more to read (the
    # SubagentStop, SessionEnd and PreCompact of a turn already captured do not pay for it)
    documents = store.document_decisions() if _unread(path, offset) else []
    extractor = Extractor(
        ExtractionContext(
            session_id=session_id,
            transcript_path=key,
            branch=branch,
            commit=commit,
            project=project,
            dialect=reader.dialect,
            parent_branch=parent_branch,
            home=home,
            documents=tuple(documents),
        )
    )
    if saved is not None and offset > 0 and saved.state:
        extractor.restore(saved.state)
    # A pass that read entries owes the session a new digest; the debt is saved with the
    # cursor, so a pass killed between its last commit and the digest pays it next time.
    digest_due = saved is not None and offset > 0 and _digest_due(saved.state)
    said = EpisodeCollector(
        session_id=session_id, transcript_path=key, branch=branch, dialect=reader.dialect,
        home=home,
    )  # fmt: skip
    if saved is not None and offset > 0 and saved.state:
        said.load_state(_saved(saved.state, "episodes"))
    stats = ParseStats()
    events: list[Event] = []
    episodes: list[Episode] = []
    pending_lines = 0
    end, end_line = offset, line
    answers: dict[str, int] = {}  # one answer may span records: counted once, at its largest

    def cursor_at(due: bool) -> ExtractionCursor:
        return ExtractionCursor(
            transcript_path=key,
            offset=end,
            line=end_line,
            head_hash=head_hash(path, end),
            session_id=session_id,
            state=_with_state(extractor.snapshot(), digest_due=due, episodes=said.to_state()),
        )

    def commit_batch(final: bool) -> None:
        nonlocal events, episodes, pending_lines
        if final:
            events.extend(extractor.finish())
        cursor = cursor_at(digest_due or report.entries > 0)
        try:
            report.add(
                store.record_capture(
                    events, memories_for, cursor, episodes=episodes, listings_in=listings
                )
            )
        except Exception as exc:
            if not is_data_error(exc):
                raise
            # One event or episode that cannot be stored must not hold back the others: store
            # them one by one, quarantine what fails, then move the cursor.
            for event in events:
                try:
                    report.add(
                        store.record_capture([event], memories_for, None, listings_in=listings)
                    )
                except Exception as one:
                    if not is_data_error(one):
                        raise
                    bad(f"{key}:{event.provenance.line}", event.to_dict(), one)
            for episode in episodes:
                try:
                    report.add(store.record_capture([], memories_for, None, episodes=[episode]))
                except Exception as one:
                    if not is_data_error(one):
                        raise
                    bad(f"{key}:{episode.line}", episode.text, one)
            report.add(store.record_capture([], memories_for, cursor))
        events, episodes, pending_lines = [], [], 0

    for entry, raw in reader.iter_entries(path, offset, line, stats):
        if entry is not None:
            report.entries += 1
            if entry.tokens:
                answer = entry.message_id or f"line:{raw.number}"
                answers[answer] = max(answers.get(answer, 0), entry.tokens)
            try:
                events.extend(extractor.feed(entry))
                episodes.extend(said.feed(entry))
            except Exception as exc:  # a line that breaks extraction is set aside, not fatal
                text = raw.data.decode("utf-8", "replace") if raw.data is not None else None
                bad(f"{key}:{raw.number}", text, exc)
        end, end_line = raw.end, raw.number
        report.lines += 1
        pending_lines += 1
        if pending_lines >= batch_lines:
            commit_batch(final=False)
            if deadline is not None and time.monotonic() >= deadline:
                report.finished = False
                break
    if report.finished:
        commit_batch(final=True)
        if report.entries or digest_due:
            try:
                refresh_digest(store, key, session_id or extractor_session(extractor))
            except Exception as exc:  # a digest that cannot be made must not stop capture
                if not is_data_error(exc) and not isinstance(exc, ValueError | TypeError):
                    raise  # busy, full, read-only: the debt stays and is paid next time
                bad(f"{key}:digest", None, exc)
            store.set_cursor(cursor_at(False))
    report.partial_tail = stats.partial_tail
    report.tokens = sum(answers.values())
    report.skipped = {
        **{k: v for k, v in stats.skipped_types.items() if v},
        **({"malformed": stats.malformed} if stats.malformed else {}),
        **({"oversized": stats.oversized} if stats.oversized else {}),
    }
    return report


def _unread(path: Path, offset: int) -> bool:
    try:
        return path.stat().st_size > offset
    except OSError:
        return False


def _digest_due(state: str) -> bool:
    return bool(_saved(state, "digest_due"))


def _with_state(state: str, **beside: object) -> str:
    """The extractor's saved state with what else a pass carries beside it: the digest debt,
    the episode collector's pending calls (the extractor ignores the extra keys)."""
    try:
        data = json.loads(state)
    except ValueError:
        return state
    if not isinstance(data, dict):
        return state
    data.update(beside)
    return json.dumps(data)


def _saved(state: str, key: str) -> object:
    try:
        data = json.loads(state)
    except ValueError:
        return None
    return data.get(key) if isinstance(data, dict) else None


# The tag of a session's summary memory (``core.extraction.digest``).
SUMMARY_TAG = "event:session_summary"
# How many of a session's events its digest reads at most (newest kept).
DIGEST_EVENTS = 20_000


def extractor_session(extractor: Extractor) -> str | None:
    return extractor.ctx.session_id or extractor.seen_session


def refresh_digest(store: CaptureStore, transcript: str, session_id: str | None) -> None:
    """Make the transcript's digest (summary, folded plan, open problems, how-tos) its active
    digest memories, replacing the versions an earlier, shorter read left. A function of the
    session's stored events, so reading at once or in pieces converges."""
    if not session_id:
        return
    events = [
        e for e in store.recent_events(DIGEST_KINDS, DIGEST_EVENTS, session_id=session_id)
        if e.provenance.transcript_path == transcript
    ]  # fmt: skip
    memories = session_digest(events, transcript)
    if memories or events:
        # A digest is derived from the session's events and rebuilt at every pass: its older
        # versions are deleted, not kept as history (one summary per Stop would pile up).
        digest, _, _ = store.replace_tagged(digest_tag(transcript), memories, [], retire="deleted")
        link_digest(store, digest, events, session_id)


# How strongly a session's summary holds the session's memories (an edge per memory).
SUMMARY_EDGE_STRENGTH = 0.5


def link_digest(
    store: CaptureStore, digest: list[Memory], events: list[Event], session_id: str
) -> None:
    """The graph of a digest: each digest memory links to the episodes of the lines it was
    drawn from, and the session's summary ``generalizes`` the session's other memories.
    Idempotent: links and edges are unique."""
    store.link_episodes(digest, events)
    summary = next((m for m in digest if SUMMARY_TAG in m.tags), None)
    if summary is None:
        return
    own = {m.id for m in digest}
    store.add_edges(
        [
            Edge(summary.id, target, "generalizes", strength=SUMMARY_EDGE_STRENGTH)
            for target in store.memories_of_session(session_id)
            if target not in own
        ]
    )


def session_transcripts(
    reader: TranscriptReader, transcript: Path, agent_transcript: Path | None = None
) -> list[Path]:
    """The session's transcript, then its subagents' (as the host lays them out)."""
    paths = [transcript] if transcript.is_file() else []
    if transcript.is_file():
        paths += reader.subagent_transcripts(transcript)
    if agent_transcript is not None and agent_transcript.is_file():
        paths.append(agent_transcript)
    seen: set[Path] = set()
    unique = []
    for p in paths:
        r = p.resolve()
        if r not in seen:
            seen.add(r)
            unique.append(p)
    return unique


# ----------------------------------------------------------------- observations


def drain_observations(
    store: EventStore,
    reader: TranscriptReader,
    session_id: str,
    branch: str | None = None,
    on_bad: Quarantine | None = None,
) -> int:
    """Move the session's spooled observations into the store (exactly once, by cursor).

    A record that cannot be stored is quarantined (``on_bad``) and the cursor moves past it:
    one bad record never blocks the spool.
    """
    spool = reader.spool_path(session_id)
    if not os.path.exists(spool):
        return 0
    key = "spool:" + spool
    cursor = store.get_cursor(key)
    offset = cursor.offset if cursor else 0
    try:
        if os.path.getsize(spool) < offset:
            offset = 0  # the spool was replaced: read it again (unique call ids keep it exact)
    except OSError:
        return 0  # removed meanwhile
    records, end = reader.read_spool(spool, offset)
    if end == offset:
        return 0
    moved = ExtractionCursor(transcript_path=key, offset=end, line=0, session_id=session_id)
    try:
        observations = to_observations(records, session_id, branch)
        return store.record_capture([], to_memories, moved, observations).observations_added
    except Exception as exc:
        if not is_data_error(exc):
            raise
    added = 0
    for rec in records:
        try:
            one = to_observations([rec], session_id, branch)
            if one:
                added += store.record_capture([], to_memories, None, one).observations_added
        except Exception as exc:
            if not is_data_error(exc):
                raise
            (on_bad or _log_nowhere)("spool " + spool, rec, exc)
    store.record_capture([], to_memories, moved)
    return added


# ----------------------------------------------------------------- whole sessions


def capture_session(
    ctx: Context,
    transcript: Path | None,
    *,
    reader: TranscriptReader,
    session_id: str | None,
    agent_transcript: Path | None = None,
    deadline: float | None = None,
    live: bool = True,
    git_status: bool = False,
) -> CaptureReport:
    """Everything new for one session: observations, transcript, subagent transcripts.

    ``live`` means the session is running here and now, so the repository's current branch
    and HEAD describe it (a backfill of old transcripts relies on each line's own branch).
    """
    store = ctx.writable("project")
    branch, commit = ctx.paths.branch_and_commit() if live else (None, None)
    report = CaptureReport()
    on_bad = quarantine_to(ctx.paths.data_dir, ctx.paths.log)
    if session_id:
        report.observations_added = drain_observations(store, reader, session_id, branch, on_bad)
    if live and git_status and ctx.paths.repo is not None:
        record_working_tree(store, ctx, session_id, branch, commit)
    paths = session_transcripts(reader, transcript, agent_transcript) if transcript else []
    if transcript is None and agent_transcript is not None and agent_transcript.is_file():
        paths = [agent_transcript]
    if session_id and transcript is not None and transcript.is_file():
        mark_session(store, reader, transcript, session_id)
    # a subagent's paths are relative to its session's folder, as its parent's are
    session_home = None
    if transcript is not None and transcript.is_file() and len(paths) > 1:
        session_home = reader.session_info(transcript).cwd
    for path in paths:
        if deadline is not None and time.monotonic() >= deadline:
            report.transcripts.append(TranscriptReport(str(path), finished=False))
            continue
        parent = home = None
        if transcript is not None and path.resolve() != transcript.resolve():
            parent = branch or branch_at(reader, transcript, reader.session_info(path))
            home = session_home
        report.transcripts.append(
            capture_transcript(
                store,
                path,
                reader=reader,
                session_id=session_id,
                branch=branch,
                commit=commit,
                project=ctx.paths.name,
                deadline=deadline,
                on_bad=on_bad,
                parent_branch=parent,
                home=home,
            )
        )
        if not live and report.transcripts[-1].finished:
            report.observations_added += observe_calls(store, path, reader, session_id, on_bad)
    tokens = sum(t.tokens for t in report.transcripts)
    if session_id and tokens:
        store.add_session_tokens(session_id, tokens)
    return report


def mark_session(
    store: ObservationStore, reader: TranscriptReader, transcript: Path, session_id: str
) -> None:
    """Record once whether a session was started by a program (``claude -p``, an SDK):
    the learning loop does not learn from those."""
    if store.session_marked(session_id):
        return
    info = reader.session_info(transcript)
    store.mark_session(session_id, automated=info.automated, entrypoint=info.entrypoint)


# The cursor of the observations drawn from a transcript (beside its extraction cursor).
CALLS_KEY = "calls:"


def observe_calls(
    store: ObservationStore,
    path: Path,
    reader: TranscriptReader,
    session_id: str | None,
    on_bad: Quarantine | None = None,
) -> int:
    """The observations of a transcript's tool calls that no tool hook spooled (history:
    ``cortex ingest``, ``import-history``): read from their own cursor, committed with it, each
    call stored once (the store keeps one observation per session and call id, so a call the
    spool already recorded is not counted again). How many were added."""
    path = path.resolve()
    key = CALLS_KEY + str(path)
    saved = store.get_cursor(key)
    try:
        offset, line, _ = resume_point(path, saved)
    except OSError:
        return 0
    observer = CallObserver(session_id)
    if saved is not None and offset > 0 and saved.state:
        with contextlib.suppress(ValueError, AttributeError):
            observer.restore(json.loads(saved.state))
    found: list[Observation] = []
    end, end_line = offset, line
    for entry, raw in reader.iter_entries(path, offset, line):
        if entry is not None:
            try:
                found.extend(observer.feed(entry))
            except (ValueError, TypeError) as exc:
                (on_bad or _log_nowhere)(f"{key}:{raw.number}", None, exc)
        end, end_line = raw.end, raw.number
    if end == offset:
        return 0
    cursor = ExtractionCursor(
        transcript_path=key,
        offset=end,
        line=end_line,
        head_hash=head_hash(path, end),
        session_id=session_id,
        state=json.dumps(observer.snapshot()),
    )
    return store.record_capture([], to_memories, cursor, found).observations_added


def branch_at(reader: TranscriptReader, transcript: Path, sub: SessionInfo) -> str | None:
    """The branch the parent ``transcript`` was on when a subagent (``sub``) started: the
    last branch its lines record up to the subagent's first time, else its first branch."""
    if not transcript.is_file():
        return None
    found: str | None = None
    for entry, _ in reader.iter_entries(transcript):
        if entry is None or not entry.branch or entry.is_sidechain:
            continue
        if (
            found is not None
            and sub.first_timestamp
            and (entry.timestamp or "") > sub.first_timestamp
        ):
            break
        found = entry.branch
    return found


def record_working_tree(
    store: EventStore,
    ctx: Context,
    session_id: str | None,
    branch: str | None,
    commit: str | None,
) -> bool:
    """One event with the files changed but not committed (git, under a hard time limit)."""
    files = [
        f for f in changed_files(ctx.paths.worktree, timeout=GIT_TIMEOUT) or []
        if not f.startswith(OWN_FILES)
    ]  # fmt: skip
    if not files:
        return False
    shown = ", ".join(files[:20]) + (f" and {len(files) - 20} more" if len(files) > 20 else "")
    event = Event(
        kind="working_tree",
        content=f"Uncommitted changes on {branch or 'a detached HEAD'}: {shown}",
        payload={"files": files, "branch": branch, "commit": commit},
        confidence=1.0,
        salience=0.3,
        provenance=Provenance(session_id=session_id, branch=branch, commit=commit),
    )
    return store.record_capture([event], lambda _: [], None).events_added > 0


# ----------------------------------------------------------------- the queue


def queue_dir(ctx: Context) -> Path:
    return ctx.paths.data_dir / QUEUE_DIR


def enqueue(ctx: Context, transcript: Path, session_id: str | None) -> Path:
    """Remember that ``transcript`` still has unread lines (atomic write, one file per session)."""
    folder = queue_dir(ctx)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    name = hashlib.sha256(str(transcript.resolve()).encode()).hexdigest()[:16]
    target = folder / f"{name}.json"
    record = {"transcript_path": str(transcript.resolve()), "session_id": session_id}
    write_atomic(target, json.dumps(record), private=True)
    return target


def drain_queue(
    ctx: Context, *, reader: TranscriptReader, deadline: float | None = None
) -> CaptureReport:
    """Finish transcripts a hook had to leave unread; each leaves the queue once fully read."""
    report = CaptureReport()
    folder = queue_dir(ctx)
    if not folder.is_dir():
        return report
    for item in sorted(folder.glob("*.json")):
        if deadline is not None and time.monotonic() >= deadline:
            break
        try:
            data = json.loads(item.read_text(encoding="utf-8"))
            transcript = Path(data["transcript_path"])
            session_id = data.get("session_id")
        except (OSError, ValueError, KeyError, TypeError):
            with contextlib.suppress(OSError):
                item.unlink()
            continue
        if not transcript.is_file():
            item.unlink(missing_ok=True)
            continue
        part = capture_session(
            ctx, transcript, reader=reader, session_id=session_id, deadline=deadline, live=False
        )
        report.transcripts += part.transcripts
        report.observations_added += part.observations_added
        if part.finished:
            item.unlink(missing_ok=True)
    return report
