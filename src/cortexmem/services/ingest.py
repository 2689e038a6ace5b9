"""Backfill: capture transcripts that already exist (``cortex ingest``, ``cortex import-history``).

Each transcript goes to the project it was recorded in, found from its own ``cwd`` field (the
repository root of that folder, so worktrees share one store). A transcript whose folder no
longer exists is skipped with a reason unless ``into`` names the project to use. Cursors make a
second run read nothing new, so backfill is idempotent and can be interrupted at any time.
Each session's lessons are learned as a live Stop would learn them (idempotently too).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from cortexmem.core.session import SessionInfo
from cortexmem.errors import (
    FULL_HINT,
    DiskFull,
    SchemaTooNew,
    StoreCorrupt,
    StoreReadOnly,
    disk_full,
    store_io_error,
)
from cortexmem.model import normalise_time
from cortexmem.services.capture import CaptureReport, TranscriptReader, capture_session
from cortexmem.services.context import Context
from cortexmem.services.lessons import learn_session


@dataclass
class Skipped:
    path: str
    reason: str


@dataclass
class IngestResult:
    projects: dict[str, dict[str, int]] = field(default_factory=dict)
    skipped: list[Skipped] = field(default_factory=list)
    sessions: int = 0

    def add(self, project: str, report: CaptureReport) -> None:
        totals = self.projects.setdefault(
            project,
            {
                "sessions": 0,
                "transcripts": 0,
                "lines": 0,
                "events_added": 0,
                # new memories from the new events (digests not counted; they are rebuilt);
                # "memories_active_before" and "memories_active", what the store serves before
                # and after, are added at the end when the store could say
                "memories_added": 0,
                "observations_added": 0,
                "lessons_added": 0,
            },
        )
        totals["sessions"] += 1
        for key, value in report.totals().items():
            if key in totals:
                totals[key] += value

    def to_dict(self) -> dict[str, object]:
        return {
            "sessions": self.sessions,
            "projects": self.projects,
            "skipped": [{"path": s.path, "reason": s.reason} for s in self.skipped],
        }


def _is_subagent_file(path: Path) -> bool:
    return path.name.startswith("agent-") or path.parent.name == "subagents"


def find_sessions(paths: Iterable[Path], reader: TranscriptReader) -> list[Path]:
    """Session transcripts under ``paths``, the oldest session first (``_found``)."""
    return [path for path, _ in _found(paths, reader)]


def _found(
    paths: Iterable[Path], reader: TranscriptReader
) -> list[tuple[Path, SessionInfo | None]]:
    """Session transcripts under ``paths`` (files or folders), the oldest session first
    (then by path): a later session builds on what the earlier ones left, as it did live (a
    document read again withdraws the decisions its earlier version listed).

    Subagent transcripts are not listed on their own: they are read with their session. Ones
    whose session is not there (orphans) are listed so nothing is silently left out. Each comes
    with what its first lines say (None when they cannot be read): read once, for the order and
    for the capture.
    """
    sessions: list[Path] = []
    agents: list[Path] = []
    for root in paths:
        root = root.expanduser()
        found = sorted(root.rglob("*.jsonl")) if root.is_dir() else [root]
        for path in found:
            (agents if _is_subagent_file(path) else sessions).append(path)
    claimed = {p.resolve() for s in sessions if s.is_file() for p in reader.subagent_transcripts(s)}
    orphans = [a for a in agents if a.resolve() not in claimed]
    seen: set[Path] = set()
    out = []
    for path in [*sessions, *orphans]:
        key = path.resolve()
        if key not in seen:
            seen.add(key)
            out.append((path, _info(path, reader)))
    return sorted(out, key=lambda found: _started(found[1]))


def _info(path: Path, reader: TranscriptReader) -> SessionInfo | None:
    try:
        return reader.session_info(path)
    except (OSError, ValueError):
        return None


def _started(info: SessionInfo | None) -> str:
    """When the session began ("" when its lines do not say, or cannot be read)."""
    began = info.first_timestamp if info is not None else None
    return str(normalise_time(began)) if began else ""


def ingest(
    paths: Iterable[Path],
    *,
    reader: TranscriptReader,
    into: Path | None = None,
    on_progress: Callable[[Path, CaptureReport | Skipped], None] | None = None,
    on_start: Callable[[int], None] | None = None,
) -> IngestResult:
    """Capture every session under ``paths``, oldest first. ``on_start`` hears how many
    sessions there are before the first is read, ``on_progress`` each one's outcome."""
    sessions = _found(paths, reader)
    if on_start is not None:
        on_start(len(sessions))
    result = IngestResult()
    projects = _Projects()
    try:
        for path, info in sessions:
            try:
                outcome = _ingest_one(path, info, reader, into, projects, result)
            except (StoreCorrupt, SchemaTooNew, StoreReadOnly, DiskFull):
                raise  # the store itself refuses: every other file would fail the same way
            except Exception as exc:  # one file never stops the others (nor a traceback)
                if disk_full(exc) or store_io_error(exc):  # nor would a full disk
                    raise DiskFull(
                        f"the store could not be written ({exc}) while reading {path}; "
                        f"if the disk is full, {FULL_HINT}"
                    ) from exc
                outcome = Skipped(str(path), f"failed: {type(exc).__name__}: {exc}"[:500])
                result.skipped.append(outcome)
            if on_progress is not None:
                on_progress(path, outcome)
        for root, ctx in projects.contexts.items():
            totals = result.projects.get(str(root))
            was, now = projects.before.get(root), _active(ctx)
            if totals is not None and was is not None and now is not None:
                totals["memories_active_before"] = was
                totals["memories_active"] = now
    finally:
        for ctx in projects.contexts.values():
            ctx.close()
    return result


@dataclass
class _Projects:
    """The projects an ingest reached: one context each (two folders of a repository share its
    store), by its root, and what each store served when the ingest first reached it."""

    contexts: dict[Path, Context] = field(default_factory=dict)
    roots: dict[Path, Path] = field(default_factory=dict)  # a folder -> its project's root
    before: dict[Path, int | None] = field(default_factory=dict)

    def context_for(self, folder: Path) -> Context:
        if folder not in self.roots:
            found = Context.for_cwd(folder)
            self.roots[folder] = found.paths.root
            if found.paths.root in self.contexts:  # another folder of a project already open
                found.close()
            else:
                self.contexts[found.paths.root] = found
                self.before[found.paths.root] = _active(found)
        return self.contexts[self.roots[folder]]


def _active(ctx: Context) -> int | None:
    """How many memories the project's store serves: per-event memories and the sessions'
    digests (summaries, plans, open problems, how-tos) alike, net of what a later statement
    withdrew (0 before the first capture makes the store; None when the store cannot say: a
    count is a report, never a reason to fail the ingest)."""
    try:
        store = ctx.store("project")
        return 0 if store is None else store.counts().by_status.get("active", 0)
    except Exception:  # a busy, locked or damaged store: the capture itself says what failed
        return None


def _ingest_one(
    path: Path,
    info: SessionInfo | None,
    reader: TranscriptReader,
    into: Path | None,
    projects: _Projects,
    result: IngestResult,
) -> CaptureReport | Skipped:
    if not path.is_file():
        skipped = Skipped(str(path), "no such file")
        result.skipped.append(skipped)
        return skipped
    if info is None:  # read again, to say why it could not be
        try:
            info = reader.session_info(path)
        except OSError as exc:
            skipped = Skipped(str(path), f"cannot read: {exc.strerror or exc}")
            result.skipped.append(skipped)
            return skipped
    folder = into
    if folder is None:
        if not info.cwd:
            skipped = Skipped(str(path), "no cwd recorded in the transcript (use --into DIR)")
            result.skipped.append(skipped)
            return skipped
        folder = Path(info.cwd)
        if not folder.is_dir():
            skipped = Skipped(str(path), f"its project folder {folder} is gone (use --into DIR)")
            result.skipped.append(skipped)
            return skipped
    ctx = projects.context_for(folder.resolve())
    report = capture_session(ctx, path, reader=reader, session_id=info.session_id, live=False)
    result.sessions += 1
    result.add(str(ctx.paths.root), report)
    # What the session teaches, as a live Stop would learn it (lessons never cost the capture);
    # a session read before (nothing new) was learned from then.
    if not report.totals().get("events_added"):
        return report
    try:
        learned = learn_session(ctx, info.session_id)
    except Exception as exc:  # said, and `cortex lessons learn` backfills what this missed
        note = f"read, but its lessons were not learned: {type(exc).__name__}: {exc}"
        result.skipped.append(Skipped(str(path), note[:500]))
    else:
        result.projects[str(ctx.paths.root)]["lessons_added"] += len(learned.added)
    return report
