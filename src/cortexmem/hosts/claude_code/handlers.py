"""What each Claude Code hook event does (the tool events never get here: see ``spool``).

Thin: the payload is normalised once (``HookInput``), the project resolved once, then a
service does the work (``services.session``, ``services.brief``, the recall server) and this
renders the answer and logs.

Budgets: Stop, SubagentStop and PreCompact may take a few seconds (their timeout is 30 s), but
a long backlog is read in committed batches and left for the next hook past ``STOP_BUDGET``.
SessionEnd shares 1.5 s with every other SessionEnd hook, so it reads for at most
``SESSION_END_BUDGET`` and queues the rest; the next Stop in the project finishes it.
SessionStart returns the briefing (from its cache in milliseconds) and UserPromptSubmit the
few memories that bear on the prompt; both must stay fast.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from cortexmem.hosts.claude_code.payload import HookInput
from cortexmem.hosts.claude_code.serve import SERVER_MODULE

if TYPE_CHECKING:
    from cortexmem.project.paths import ProjectPaths

STOP_BUDGET = 8.0
SESSION_END_BUDGET = 1.0
# The whole UserPromptSubmit hook should stay under 100 ms; Python's start is ~20 of them.
PROMPT_BUDGET = 0.07
# What of a prompt goes to the server (it reads the first 2,000 characters; a request stops
# at 1 MB).
PROMPT_SENT = 4_000
# SessionStart waits at most this long for a busy store on a briefing cache miss.
BRIEFING_TIMEOUT = 2.0


def handle(event: str, payload: dict[str, Any], *, started: float) -> dict[str, Any] | None:
    hook = HookInput.parse(event, payload)
    if event == "UserPromptSubmit":
        return _anticipate(hook, deadline=started + PROMPT_BUDGET)
    if event == "SessionStart":
        return _session_start(hook)
    if event in ("Stop", "SubagentStop", "PreCompact"):
        _capture(hook, deadline=started + STOP_BUDGET)
    elif event == "SessionEnd":
        _capture(hook, deadline=started + SESSION_END_BUDGET)
    elif event == "PostCompact":
        _compact_summary(hook)
    return None


def _project(hook: HookInput) -> ProjectPaths | None:
    """The project's paths (resolved once per hook), or ``None`` when it has no store yet."""
    from cortexmem.project.paths import resolve

    paths = resolve(hook.project_dir)
    return paths if paths.db.is_file() else None


def _session_start(hook: HookInput) -> dict[str, Any] | None:
    """SessionStart (every source: startup, resume, clear, compact): the briefing, served from
    the cache when nothing changed since it was built (stdlib only on that path), else built
    and cached; the rules file is brought up to date either way. Then the recall server is
    warmed up."""
    paths = _project(hook)
    if paths is None:
        return None
    from cortexmem.errors import CortexError, StoreCorrupt
    from cortexmem.hosts.claude_code.rules import briefing_writer
    from cortexmem.services.publish import publish

    try:
        published = publish(
            paths,
            cwd=hook.project_dir,
            write=briefing_writer(paths),
            timeout=BRIEFING_TIMEOUT,
        )
    except StoreCorrupt as exc:  # damaged or not Cortex's: say so, once, and where to go
        hook.log(f"SessionStart: {exc}", paths.log)
        warning = f"⚠ the memory store is damaged or not Cortex's: {exc}"
        return {"hookSpecificOutput": {"additionalContext": warning}}
    except CortexError as exc:  # busy past its budget, read-only...: no briefing this time
        hook.log(f"SessionStart: no briefing: {exc}", paths.log)
        return None
    if published.error is not None:
        hook.log(f"SessionStart: briefing file not written: {published.error}", paths.log)
    _warm_up(hook, paths)
    context = published.markdown
    return {"hookSpecificOutput": {"additionalContext": context}} if context else None


def _warm_up(hook: HookInput, paths: ProjectPaths) -> None:
    """Make sure the project's recall server runs, so the first prompt finds the model loaded
    (the server exits by itself once sessions stop asking)."""
    from cortexmem.recall import client as recall_client

    if recall_client.ask(paths.project_hash, {"op": "ping"}, 0.05, str(paths.data_dir)) is None:
        recall_client.start(str(paths.worktree or paths.root), SERVER_MODULE)
        hook.log("SessionStart: recall server starting", paths.log)


def _anticipate(hook: HookInput, *, deadline: float) -> dict[str, Any] | None:
    """UserPromptSubmit: the few memories that clearly bear on the prompt, and the lessons a
    request to fix a check calls up, from the recall server; nothing when none clears the bar,
    or when no server answers in time (one is then started for the next prompt)."""
    from cortexmem.recall import client as recall_client

    prompt = hook.prompt
    if prompt is None or not prompt.strip():
        return None
    paths = _project(hook)
    if paths is None:
        return None
    timeout = max(0.01, deadline - time.monotonic())
    branch, _ = paths.branch_and_commit()  # this worktree's branch, not the main one's
    request = {"op": "anticipate", "prompt": prompt[:PROMPT_SENT], "branch": branch,
               "session_id": hook.session_id, "deadline": time.time() + timeout}  # fmt: skip
    reply = recall_client.ask(paths.project_hash, request, timeout, str(paths.data_dir))
    if reply is None:
        recall_client.start(str(paths.worktree or paths.root), SERVER_MODULE)
        hook.log("UserPromptSubmit: no recall server answered; starting one", paths.log)
        return None
    if not reply.get("ok"):
        hook.log(f"UserPromptSubmit: recall server: {reply.get('error')}", paths.log)
        return None
    context = reply.get("context")
    if not isinstance(context, str) or not context:
        return None
    return {"hookSpecificOutput": {"additionalContext": context}}


def _capture(hook: HookInput, *, deadline: float) -> None:
    """Stop, SubagentStop, PreCompact, SessionEnd: ``services.session.after_capture``; only
    Stop (a turn of the main session ended) runs the whole policy, and when the project's
    recall server runs, Stop hands the turn's end to it and returns (a thin client: eight
    sessions ending turns at once on two cores do not queue behind each other's imports)."""
    if hook.event == "Stop" and _handed_to_server(hook):
        return
    from cortexmem.hosts.claude_code.reader import READER
    from cortexmem.hosts.claude_code.rules import briefing_writer, lessons_writer
    from cortexmem.project.paths import resolve
    from cortexmem.services.session import after_capture, open_context

    paths = resolve(hook.project_dir)
    budget = max(0.2, deadline - time.monotonic())
    with open_context(paths, budget) as ctx:
        after_capture(
            ctx,
            label=hook.event,
            transcript=hook.transcript_path,
            session_id=hook.session_id,
            agent_transcript=hook.agent_transcript_path,
            reader=READER,
            deadline=deadline,
            log=lambda message: hook.log(message, paths.log),
            full=hook.event == "Stop",
            write_briefing=briefing_writer(paths),
            hand_off=lambda added: _hand_off(hook, paths, added),
            queue_model_work=hook.event in ("Stop", "SessionEnd"),
            write_lessons=lessons_writer(paths),
        )


# How long Stop waits for the recall server to take its turn's end before capturing itself.
HAND_OVER_WAIT = 0.3


def _handed_to_server(hook: HookInput) -> bool:
    """Whether the project's recall server took the turn's end (it answers "queued"); the
    capture is then its work. Anything else (no server, an old one, no answer in time): False,
    and the hook captures itself. Nothing is lost either way: a capture reads from the
    transcript's cursor, whoever runs it."""
    from cortexmem.project.paths import resolve
    from cortexmem.recall import client as recall_client

    paths = resolve(hook.project_dir)
    request = {
        "op": "capture", "cwd": str(hook.project_dir), "label": hook.event,
        "transcript": None if hook.transcript_path is None else str(hook.transcript_path),
        "session_id": hook.session_id,
        "agent_transcript": (
            None if hook.agent_transcript_path is None else str(hook.agent_transcript_path)
        ),
    }  # fmt: skip
    reply = recall_client.ask(paths.project_hash, request, HAND_OVER_WAIT, str(paths.data_dir))
    if reply is None or not reply.get("ok"):
        return False
    hook.log(f"{hook.event}: handed to the recall server ({reply.get('queued')} queued)",
             paths.log)  # fmt: skip
    return True


def _hand_off(hook: HookInput, paths: ProjectPaths, added: int) -> bool:
    """Leave the upkeep after a turn (projections, briefing, lifecycle, consolidation) to the
    project's recall server when one runs: Stop then does only the bounded capture."""
    from cortexmem.recall import client as recall_client

    request = {"op": "upkeep", "cwd": str(hook.project_dir), "label": hook.event,
               "memories_added": added}  # fmt: skip
    return recall_client.tell(paths.project_hash, request, data_dir=str(paths.data_dir))


def _compact_summary(hook: HookInput) -> None:
    """PostCompact carries the summary Claude Code just wrote: keep it as an event."""
    summary = hook.compact_summary
    if summary is None or not summary.strip():
        return
    from cortexmem.project.paths import resolve
    from cortexmem.services.session import keep_compact_summary, open_context

    paths = resolve(hook.project_dir)
    with open_context(paths, STOP_BUDGET) as ctx:
        added = keep_compact_summary(
            ctx,
            summary,
            session_id=hook.session_id,
            transcript_path=hook.transcript_path,
            trigger=hook.trigger,
        )
        hook.log(f"PostCompact: summary kept ({added} event)", paths.log)
