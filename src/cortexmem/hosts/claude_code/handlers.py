"""What each Claude Code hook event does (the tool events never get here: see ``observe``).

Budgets: Stop, SubagentStop and PreCompact may take a few seconds (their timeout is 30 s), but
a long backlog is read in committed batches and left for the next hook past ``STOP_BUDGET``.
SessionEnd shares 1.5 s with every other SessionEnd hook, so it reads for at most
``SESSION_END_BUDGET`` and queues the rest; the next Stop in the project finishes it.
SessionStart returns the briefing (from its cache in milliseconds) and UserPromptSubmit the
few memories that bear on the prompt; both must stay fast.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from cortexmem.hosts.claude_code.hooklog import log_line, project_dir

STOP_BUDGET = 8.0
SESSION_END_BUDGET = 1.0
QUEUE_BUDGET = 2.0
# The whole UserPromptSubmit hook should stay under 100 ms; Python's start is ~20 of them.
PROMPT_BUDGET = 0.07
MAX_COMPACT_SUMMARY = 20_000


def _path(value: object) -> Path | None:
    return Path(value) if isinstance(value, str) and value else None


def _session(payload: dict[str, Any]) -> str | None:
    value = payload.get("session_id")
    return value if isinstance(value, str) and value else None


def handle(event: str, payload: dict[str, Any], *, started: float) -> dict[str, Any] | None:
    if event == "UserPromptSubmit":
        return _anticipate(payload, deadline=started + PROMPT_BUDGET)
    if event == "SessionStart":
        context = _briefing(payload)
        _warm_up(payload)
        return {"hookSpecificOutput": {"additionalContext": context}} if context else None
    if event in ("Stop", "SubagentStop", "PreCompact"):
        _capture(event, payload, deadline=started + STOP_BUDGET)
    elif event == "SessionEnd":
        _capture(event, payload, deadline=started + SESSION_END_BUDGET)
    elif event == "PostCompact":
        _compact_summary(payload)
    return None


def _recall_server(payload: dict[str, Any]):
    """``(paths, project hash)`` of the project, or ``None`` when it has no store yet."""
    from cortexmem.project.paths import resolve

    paths = resolve(project_dir(payload))
    if not paths.db.is_file():
        return None
    return paths, paths.project_hash


def _briefing(payload: dict[str, Any]) -> str | None:
    """SessionStart (every source: startup, resume, clear, compact): the briefing, served from
    the cache when nothing changed since it was built (stdlib only on that path), else built
    and cached; the rules file is brought up to date either way."""
    from cortexmem.project.paths import resolve
    from cortexmem.services import briefing_cache

    cwd = project_dir(payload)
    paths = resolve(cwd)
    if not paths.db.is_file():
        return None
    branch, _ = paths.branch_and_commit()
    token = briefing_cache.combined_token(str(paths.db), str(paths.global_db))
    cache = briefing_cache.cache_path(str(paths.data_dir), branch, str(cwd))
    markdown = briefing_cache.read_cached(cache, token) if token else None
    if markdown is None:
        from cortexmem.errors import StoreCorrupt
        from cortexmem.services.brief import briefing_markdown
        from cortexmem.services.context import Context

        try:
            with Context.for_cwd(cwd, timeout=2.0) as ctx:
                markdown, _ = briefing_markdown(ctx, cwd=cwd)
        except StoreCorrupt as exc:  # damaged or not Cortex's: say so, once, and where to go
            log_line(payload, f"SessionStart: {exc}", paths.log)
            return f"⚠ the memory store is damaged or not Cortex's: {exc}"
    worktree = str(paths.worktree or paths.root)
    try:
        git_dir = str(paths.repo.common_dir) if paths.repo is not None else None
        briefing_cache.write_rules_file(worktree, str(paths.data_dir), markdown, git_dir)
    except (OSError, TimeoutError) as exc:
        log_line(payload, f"SessionStart: briefing file not written: {exc}", paths.log)
    return markdown


def _warm_up(payload: dict[str, Any]) -> None:
    """SessionStart: make sure the project's recall server runs, so the first prompt finds the
    model loaded (the server exits by itself once sessions stop asking)."""
    from cortexmem.recall import client as recall_client

    found = _recall_server(payload)
    if found is None:
        return
    paths, key = found
    if recall_client.ask(key, {"op": "ping"}, timeout=0.05) is None:
        recall_client.start(str(paths.worktree or paths.root))
        log_line(payload, "SessionStart: recall server starting", paths.log)


def _anticipate(payload: dict[str, Any], *, deadline: float) -> dict[str, Any] | None:
    """UserPromptSubmit: the few memories that clearly bear on the prompt, from the recall
    server; nothing when none clears the bar, or when no server answers in time (one is then
    started for the next prompt)."""
    from cortexmem.recall import client as recall_client

    prompt = payload.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        return None
    found = _recall_server(payload)
    if found is None:
        return None
    paths, key = found
    timeout = max(0.01, deadline - time.monotonic())
    branch, _ = paths.branch_and_commit()  # this worktree's branch, not the main one's
    request = {"op": "anticipate", "prompt": prompt, "branch": branch}
    reply = recall_client.ask(key, request, timeout=timeout)
    if reply is None:
        recall_client.start(str(paths.worktree or paths.root))
        log_line(payload, "UserPromptSubmit: no recall server answered; starting one", paths.log)
        return None
    if not reply.get("ok"):
        log_line(payload, f"UserPromptSubmit: recall server: {reply.get('error')}", paths.log)
        return None
    context = reply.get("context")
    if not isinstance(context, str) or not context:
        return None
    return {"hookSpecificOutput": {"additionalContext": context}}


def _capture(event: str, payload: dict[str, Any], *, deadline: float) -> None:
    from cortexmem.services.capture import capture_session, drain_queue, enqueue
    from cortexmem.services.context import Context

    transcript = _path(payload.get("transcript_path"))
    agent = _path(payload.get("agent_transcript_path")) if event == "SubagentStop" else None
    session = _session(payload)
    t0 = time.monotonic()
    budget = max(0.2, deadline - time.monotonic())
    with Context.for_cwd(project_dir(payload), timeout=budget) as ctx:
        report = capture_session(
            ctx,
            transcript,
            session_id=session,
            agent_transcript=agent,
            deadline=deadline,
            git_status=event == "Stop",
        )
        if not report.finished and transcript is not None:
            enqueue(ctx, transcript, session)
        queued = None
        if event == "Stop" and report.finished:
            queued = drain_queue(ctx, deadline=min(deadline, time.monotonic() + QUEUE_BUDGET))
        totals = report.totals()
        missing = transcript is not None and not transcript.is_file()
        log_line(
            payload,
            f"{event}: {totals['lines']} lines, {totals['events_added']} events, "
            f"{totals['memories_added']} memories, {totals['observations_added']} observations"
            f" in {1000 * (time.monotonic() - t0):.0f} ms"
            + ("" if report.finished else "; the rest is queued")
            + (f"; transcript not found: {transcript}" if missing else "")
            + (
                f"; queue: {queued.totals()['lines']} lines"
                if queued and queued.transcripts
                else ""
            ),
            path=ctx.paths.log,
        )
        if event == "Stop" and time.monotonic() < deadline:
            _refresh_projections(ctx, payload)
        if event == "Stop" and report.finished and deadline - time.monotonic() > LIFECYCLE_LEFT:
            _lifecycle(ctx, payload)
        added = totals["memories_added"] + (queued.totals()["memories_added"] if queued else 0)
        _consolidate(ctx, payload, event, added, deadline)


def _refresh_projections(ctx: Any, payload: dict[str, Any]) -> None:
    """Stop: the git projections and the briefing file follow what was just captured."""
    try:
        from cortexmem.services.brief import briefing_markdown
        from cortexmem.services.briefing_cache import write_rules_file
        from cortexmem.services.projections import write_projections

        written = write_projections(ctx).written
        markdown, _ = briefing_markdown(ctx)
        worktree = ctx.paths.worktree or ctx.paths.root
        repo = ctx.paths.repo
        git_dir = str(repo.common_dir) if repo is not None else None
        write_rules_file(str(worktree), str(ctx.paths.data_dir), markdown, git_dir)
        if written:
            log_line(payload, f"Stop: projections updated: {', '.join(written)}", ctx.paths.log)
    except Exception as exc:  # projections must never fail a capture
        log_line(payload, f"Stop: projections not updated: {type(exc).__name__}: {exc}",
                 ctx.paths.log)  # fmt: skip


# The daily lifecycle pass runs only when this much of the Stop budget is left (at 100k
# memories a daily pass takes ~0.4 s, the first one ~1.2 s, one that prunes ~2 s with its
# backup: bench/lifecycle.py).
LIFECYCLE_LEFT = 3.0


def _lifecycle(ctx: Any, payload: dict[str, Any]) -> None:
    """Stop: decay, archive and prune, at most once a day per store (``services.lifecycle``)."""
    try:
        from cortexmem.services.lifecycle import maybe_run

        report = maybe_run(ctx)
        if report is not None:
            counts = ", ".join(f"{n} {action}" for action, n in report.counts().items())
            log_line(payload, f"Stop: lifecycle pass ({', '.join(report.scopes)}): {counts} "
                     f"in {report.elapsed_ms:.0f} ms", ctx.paths.log)  # fmt: skip
    except Exception as exc:  # upkeep must never fail a capture
        log_line(payload, f"Stop: lifecycle pass failed: {type(exc).__name__}: {exc}",
                 ctx.paths.log)  # fmt: skip


def _consolidate(ctx: Any, payload: dict[str, Any], event: str, added: int, deadline: float):
    """After a capture: count it when it added memories and, every 10 such captures or when the
    store crosses 80 active memories, link the new memories and queue merge candidates for a
    person (``services.consolidate``: never raises; runs only with enough budget left)."""
    try:
        from cortexmem.services.consolidate import maybe_consolidate

        upkeep = maybe_consolidate(ctx, memories_added=added, deadline=deadline)
        if upkeep is not None:
            log_line(payload, f"{event}: {upkeep.describe()}", ctx.paths.log)
    except Exception as exc:  # upkeep must never fail a capture
        log_line(payload, f"{event}: consolidation failed: {type(exc).__name__}: {exc}",
                 ctx.paths.log)  # fmt: skip


def _compact_summary(payload: dict[str, Any]) -> None:
    """PostCompact carries the summary Claude Code just wrote: keep it as an event."""
    from cortexmem.core.extraction import to_memories
    from cortexmem.model import Event, Provenance
    from cortexmem.services.context import Context

    summary = payload.get("compact_summary")
    if not isinstance(summary, str) or not summary.strip():
        return
    session = _session(payload)
    with Context.for_cwd(project_dir(payload), timeout=STOP_BUDGET) as ctx:
        branch, commit = ctx.paths.branch_and_commit()
        event = Event(
            kind="compact_summary",
            content=summary.strip()[:MAX_COMPACT_SUMMARY],
            payload={"trigger": payload.get("trigger")},
            confidence=0.9,
            salience=0.6,
            provenance=Provenance(
                session_id=session,
                transcript_path=payload.get("transcript_path")
                if isinstance(payload.get("transcript_path"), str)
                else None,
                branch=branch,
                commit=commit,
            ),
        )
        result = ctx.writable("project").record_capture([event], to_memories, None)
        log_line(payload, f"PostCompact: summary kept ({result.events_added} event)", ctx.paths.log)
