"""Session policy: what runs when a host says a turn, a subagent, a compaction or a session
ended, and within which budget. Host-neutral: a host adapter normalises its own event, hands
in its transcript reader and its briefing writer, and logs the lines this reports.

After a turn ends (``full``): capture; the queue of transcripts earlier hooks left unread, for
at most ``QUEUE_BUDGET``; then the upkeep: the git projections and the briefing (one
``publish.publish``), the daily lifecycle pass and the learning loop (when due) when
``LIFECYCLE_LEFT`` of the budget is still there, and, like after every capture, the
consolidation trigger. Nothing after the capture may fail it: each step logs its own failure
and the next one runs.

The upkeep is not the capture: when the project's background worker (the recall server) takes
it (``hand_off``), a turn's end does only the bounded capture, and the worker runs ``upkeep_steps``
once for however many captures asked meanwhile. With eight sessions on two cores this is what
keeps Stop inside its budget: their upkeep is done once, off their path.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cortexmem.project.paths import ProjectPaths
from cortexmem.services import lessons
from cortexmem.services.capture import (
    CaptureReport,
    TranscriptReader,
    capture_session,
    drain_queue,
    enqueue,
)
from cortexmem.services.context import Context, default_timeout

QUEUE_BUDGET = 2.0
# The daily lifecycle pass runs only when this much of the budget is left (at 100k memories a
# daily pass takes ~0.4 s, the first one ~1.2 s, one that prunes ~2 s with its backup:
# bench/lifecycle.py).
LIFECYCLE_LEFT = 3.0
MAX_COMPACT_SUMMARY = 20_000

Log = Callable[[str], None]


def open_context(paths: ProjectPaths, timeout: float) -> Context:
    """A context on paths the caller already resolved, waiting at most ``timeout`` for a busy
    store (a hook passes what is left of its budget)."""
    return Context(paths, timeout=min(default_timeout(), timeout))


@dataclass
class AfterCapture:
    """What ``after_capture`` did: the capture, the queue drained, memories added by both."""

    capture: CaptureReport
    queued: CaptureReport | None = None
    steps: list[str] = field(default_factory=list)

    @property
    def memories_added(self) -> int:
        queued = self.queued.totals()["memories_added"] if self.queued else 0
        return self.capture.totals()["memories_added"] + queued


def after_capture(
    ctx: Context,
    *,
    label: str,
    transcript: Path | None,
    session_id: str | None,
    reader: TranscriptReader,
    deadline: float,
    log: Log,
    agent_transcript: Path | None = None,
    full: bool = False,
    write_briefing: Callable[[str], bool] | None = None,
    hand_off: Callable[[int], bool] | None = None,
    queue_model_work: bool = False,
    write_lessons: Callable[[str], bool] | None = None,
) -> AfterCapture:
    """Capture what is new for the session, then what the policy says (see the module).

    ``queue_model_work``: the session is queued for the model's distillation, done later by
    the project's background worker (never here: a hook never waits for a model).
    Lessons are learned from the session, its warnings judged and ``write_lessons`` handed
    the always-loaded lessons (``services.lessons.after_capture``).

    ``label`` starts each log line (the host's event name); ``full`` means a turn of the main
    session ended, so the working tree is recorded and the upkeep steps may run. ``hand_off``
    (given the memories added) asks the project's background worker to do the upkeep; True
    when it took it, and then nothing more runs here.
    """
    t0 = time.monotonic()
    report = capture_session(
        ctx,
        transcript,
        reader=reader,
        session_id=session_id,
        agent_transcript=agent_transcript,
        deadline=deadline,
        git_status=full,
    )
    if not report.finished and transcript is not None:
        enqueue(ctx, transcript, session_id)
    done = AfterCapture(report)
    if full and report.finished:
        done.queued = drain_queue(
            ctx, reader=reader, deadline=min(deadline, time.monotonic() + QUEUE_BUDGET)
        )
    totals = report.totals()
    missing = transcript is not None and not transcript.is_file()
    queued = done.queued
    log(
        f"{label}: {totals['lines']} lines, {totals['events_added']} events, "
        f"{totals['memories_added']} memories, {totals['observations_added']} observations"
        f" in {1000 * (time.monotonic() - t0):.0f} ms"
        + ("" if report.finished else "; the rest is queued")
        + (f"; transcript not found: {transcript}" if missing else "")
        + (f"; queue: {queued.totals()['lines']} lines" if queued and queued.transcripts else "")
    )
    if report.finished and session_id:
        lessons.after_capture(ctx, session_id, log, write_lessons)
    if queue_model_work:
        queue_distill(ctx, label, log, session_id, transcript)
    if full and hand_off is not None and _handed_off(hand_off, done.memories_added, label, log):
        done.steps.append("handed off")
        return done
    if full and time.monotonic() < deadline:
        refresh_projections(ctx, label, log, write_briefing)
        done.steps.append("projections")
    if full and report.finished and deadline - time.monotonic() > LIFECYCLE_LEFT:
        lifecycle(ctx, label, log)
        done.steps.append("lifecycle")
        if learning(ctx, label, log, reader.dialect.edit_tools):
            done.steps.append("learning")
    consolidate(ctx, label, log, done.memories_added, deadline)
    return done


def _handed_off(hand_off: Callable[[int], bool], added: int, label: str, log: Log) -> bool:
    try:
        return hand_off(added)
    except Exception as exc:  # no worker took it: the upkeep runs here
        log(f"{label}: upkeep not handed off: {type(exc).__name__}: {exc}")
        return False


def upkeep_steps(
    ctx: Context,
    label: str,
    log: Log,
    captures: Sequence[int],
    *,
    write_briefing: Callable[[str], bool] | None = None,
    budget: float = LIFECYCLE_LEFT + QUEUE_BUDGET,
    edit_tools: frozenset[str] = frozenset(),
) -> Iterator[str]:
    """What turns' ends handed to the background worker, done once for all of them: the
    projections and the briefing, the daily lifecycle pass, the learning loop, and the
    consolidation trigger counted once per capture (``captures``: the memories each one added).
    A step at a time (each yields its name): the worker, which also answers requests, answers
    them between two steps instead of after all of them."""
    refresh_projections(ctx, label, log, write_briefing)
    yield "projections"
    lifecycle(ctx, label, log)
    yield "lifecycle"
    learning(ctx, label, log, edit_tools)
    yield "learning"
    deadline = time.monotonic() + budget
    for added in captures or (0,):
        consolidate(ctx, label, log, added, deadline)
        yield "consolidation"


def queue_distill(
    ctx: Context, label: str, log: Log, session_id: str | None, transcript: Path | None
) -> bool:
    """Queue the session for distillation by a model: one row; the recall server's worker
    distills it once the session is quiet, or drops it when no model is configured."""
    if not session_id:
        return False
    try:
        from cortexmem.core.distill import JOB_KIND

        path = str(transcript) if transcript is not None else None
        return ctx.writable("project").enqueue_ai_job(JOB_KIND, session_id, path)
    except Exception as exc:  # queueing must never fail a capture
        log(f"{label}: not queued for distillation: {type(exc).__name__}: {exc}")
        return False


def refresh_projections(
    ctx: Context, label: str, log: Log, write_briefing: Callable[[str], bool] | None
) -> None:
    """The git projections and the briefing follow what was just captured."""
    try:
        from cortexmem.services.projections import write_projections
        from cortexmem.services.publish import publish

        written = write_projections(ctx).written
        published = publish(ctx.paths, ctx=ctx, write=write_briefing)
        if published.error is not None:
            log(f"{label}: briefing file not written: {published.error}")
        if written:
            log(f"{label}: projections updated: {', '.join(written)}")
    except Exception as exc:  # projections must never fail a capture
        log(f"{label}: projections not updated: {type(exc).__name__}: {exc}")


def lifecycle(ctx: Context, label: str, log: Log) -> None:
    """Decay, archive and prune, at most once a day per store (``services.lifecycle``)."""
    try:
        from cortexmem.services.lifecycle import maybe_run

        report = maybe_run(ctx)
        if report is not None:
            counts = ", ".join(f"{n} {action}" for action, n in report.counts().items())
            log(f"{label}: lifecycle pass ({', '.join(report.scopes)}): {counts} "
                f"in {report.elapsed_ms:.0f} ms")  # fmt: skip
    except Exception as exc:  # upkeep must never fail a capture
        log(f"{label}: lifecycle pass failed: {type(exc).__name__}: {exc}")


def learning(ctx: Context, label: str, log: Log, edit_tools: frozenset[str] = frozenset()) -> bool:
    """The learning loop when it is due (``services.learn``): new observations since its
    last run, and the interval of ``.cortex/learning.yaml`` passed; then the daily dream, as a
    dry run (``services.dream``). True when the loop ran."""
    try:
        from cortexmem.services.dream import maybe_dream
        from cortexmem.services.learn import maybe_learn

        report = maybe_learn(ctx, edit_tools=edit_tools)
        dreamt = maybe_dream(ctx) if report is not None else None
        if dreamt is not None:
            log(f"{label}: dream (dry run): report {dreamt.report}")
        if report is None:
            return False
        p = report.plan
        log(f"{label}: learning: {p.observations} observations, {len(p.active)} instincts, "
            f"{len(p.promoted)} rules ({len(p.newly_promoted)} new)")  # fmt: skip
        return True
    except Exception as exc:  # upkeep must never fail a capture
        log(f"{label}: learning failed: {type(exc).__name__}: {exc}")
        return False


def consolidate(ctx: Context, label: str, log: Log, added: int, deadline: float) -> None:
    """After a capture: count it when it added memories and, every 10 such captures or when the
    store crosses 80 active memories, link the new memories and queue merge candidates for a
    person (``services.consolidate``: never raises; runs only with enough budget left)."""
    try:
        from cortexmem.services.consolidate import maybe_consolidate

        upkeep = maybe_consolidate(ctx, memories_added=added, deadline=deadline)
        if upkeep is not None:
            log(f"{label}: {upkeep.describe()}")
    except Exception as exc:  # upkeep must never fail a capture
        log(f"{label}: consolidation failed: {type(exc).__name__}: {exc}")


def keep_compact_summary(
    ctx: Context,
    summary: str,
    *,
    session_id: str | None,
    transcript_path: Path | None,
    trigger: str | None,
) -> int:
    """The summary a host wrote when it compacted the context, kept as an event; the number of
    events added (0: already kept)."""
    from cortexmem.core.extraction.memories import to_memories
    from cortexmem.model import Event, Provenance

    branch, commit = ctx.paths.branch_and_commit()
    event = Event(
        kind="compact_summary",
        content=summary.strip()[:MAX_COMPACT_SUMMARY],
        payload={"trigger": trigger},
        confidence=0.9,
        salience=0.6,
        provenance=Provenance(
            session_id=session_id,
            transcript_path=str(transcript_path) if transcript_path is not None else None,
            branch=branch,
            commit=commit,
        ),
    )
    return ctx.writable("project").record_capture([event], to_memories, None).events_added
