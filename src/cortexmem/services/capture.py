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
from cortexmem.core.extraction.events import ExtractionContext
from cortexmem.core.extraction.extractor import Extractor
from cortexmem.core.extraction.memories import to_memories
from cortexmem.core.observations import to_observations
from cortexmem.core.session import Dialect, Entry, ParseStats, RawLine, SessionInfo
from cortexmem.model import Episode, Event, ExtractionCursor, Provenance
from cortexmem.project.files import write_atomic
from cortexmem.project.git import changed_files
from cortexmem.services.context import Context
from cortexmem.store.protocols import CaptureResult, EventStore

BATCH_LINES = 1_000
HEAD_BYTES = 4_096
GIT_TIMEOUT = 1.0
# A call unanswered for this many lines is abandoned (interrupted): the cursor moves on.
HOLD_LINES = 2_000
QUEUE_DIR = "queue"
# What Cortex itself writes in a working tree: not the session's changes.
OWN_FILES = (".cortex/", ".claude/rules/cortex-")


@dataclass
class TranscriptReport:
    path: str
    lines: int = 0
    entries: int = 0
    events_added: int = 0
    memories_added: int = 0
    episodes_added: int = 0
    restarted: bool = False
    finished: bool = True
    partial_tail: bool = False
    skipped: dict[str, int] = field(default_factory=dict)

    def add(self, result: CaptureResult) -> None:
        self.events_added += result.events_added
        self.memories_added += result.memories_added
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
    store: EventStore,
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
) -> TranscriptReport:
    """Read ``path`` from its cursor to its last complete line; commit batch by batch."""
    path = path.resolve()
    key = str(path)
    report = TranscriptReport(key)
    offset, line, report.restarted = resume_point(path, store.get_cursor(key))
    extractor = Extractor(
        ExtractionContext(
            session_id=session_id,
            transcript_path=key,
            branch=branch,
            commit=commit,
            project=project,
            dialect=reader.dialect,
        )
    )
    said = EpisodeCollector(
        session_id=session_id, transcript_path=key, branch=branch, dialect=reader.dialect
    )
    stats = ParseStats()
    events: list[Event] = []
    episodes: list[Episode] = []
    pending_lines = 0
    end, end_line = offset, line
    # Tool calls still waiting for their result: (line, start offset) by call id. The cursor
    # never passes the oldest of them, so a result written after this pass (a subagent still
    # running, a batch boundary) meets its call again next time; hashes make the re-read free.
    waiting: dict[str, tuple[int, int]] = {}

    def commit_batch(final: bool) -> None:
        nonlocal events, episodes, pending_lines
        if final:
            events.extend(extractor.finish())
        at, at_line = end, end_line
        held = [v for v in waiting.values() if end_line - v[0] <= HOLD_LINES]
        if held:
            held_line, held_start = min(held)
            at, at_line = held_start, held_line - 1
        cursor = ExtractionCursor(
            transcript_path=key,
            offset=at,
            line=at_line,
            head_hash=head_hash(path, at),
            session_id=session_id,
        )
        report.add(store.record_capture(events, memories_for, cursor, episodes=episodes))
        events, episodes, pending_lines = [], [], 0

    for entry, raw in reader.iter_entries(path, offset, line, stats):
        if entry is not None:
            report.entries += 1
            events.extend(extractor.feed(entry))
            episodes.extend(said.feed(entry))
            kinds = {b.kind for b in entry.blocks}
            if "tool_use" in kinds:
                waiting.update(
                    (b.tool_use_id, (raw.number, raw.start))
                    for b in entry.blocks
                    if b.kind == "tool_use" and b.tool_use_id
                )
            if "tool_result" in kinds or "tool_use" in kinds:
                open_calls = extractor.structural.pending
                waiting = {k: v for k, v in waiting.items() if k in open_calls}
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
    report.partial_tail = stats.partial_tail
    report.skipped = {
        **{k: v for k, v in stats.skipped_types.items() if v},
        **({"malformed": stats.malformed} if stats.malformed else {}),
        **({"oversized": stats.oversized} if stats.oversized else {}),
    }
    return report


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
    store: EventStore, reader: TranscriptReader, session_id: str, branch: str | None = None
) -> int:
    """Move the session's spooled observations into the store (exactly once, by cursor)."""
    spool = reader.spool_path(session_id)
    if not os.path.exists(spool):
        return 0
    key = "spool:" + spool
    cursor = store.get_cursor(key)
    offset = cursor.offset if cursor else 0
    if os.path.getsize(spool) < offset:
        offset = 0  # the spool was replaced: read it again (unique call ids keep it exact)
    records, end = reader.read_spool(spool, offset)
    if end == offset:
        return 0
    result = store.record_capture(
        [],
        to_memories,
        ExtractionCursor(transcript_path=key, offset=end, line=0, session_id=session_id),
        to_observations(records, session_id, branch),
    )
    return result.observations_added


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
    if session_id:
        report.observations_added = drain_observations(store, reader, session_id, branch)
    if live and git_status and ctx.paths.repo is not None:
        record_working_tree(store, ctx, session_id, branch, commit)
    paths = session_transcripts(reader, transcript, agent_transcript) if transcript else []
    if transcript is None and agent_transcript is not None and agent_transcript.is_file():
        paths = [agent_transcript]
    for path in paths:
        if deadline is not None and time.monotonic() >= deadline:
            report.transcripts.append(TranscriptReport(str(path), finished=False))
            continue
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
            )
        )
    return report


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
