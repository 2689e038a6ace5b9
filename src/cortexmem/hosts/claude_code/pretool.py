"""PreToolUse: warnings from lessons before a mutating tool call.

Layer 1 (``readonly``, a rule table) decides first, with nothing imported: a read-only call
costs only the spool's line. A mutating call asks the project's recall server (warm: vectors,
model, the relevance filter) for layers 2 and 3; with no server answering, the lookup runs
here by words only (no model, no vectors) and a server is started for the next call. The
answer is Claude Code's ``hookSpecificOutput.additionalContext``.
"""

from __future__ import annotations

from cortexmem.hosts.claude_code.readonly import SHELL_TOOLS, is_read_only

if False:  # for the type checker only: importing typing costs the hook milliseconds
    from cortexmem.project.paths import ProjectPaths

MAX_TEXT = 600
PATH_KEYS = ("file_path", "notebook_path", "path")


def action_fields(tool: str, tool_input: dict[str, object]) -> dict[str, str]:
    """The call in neutral terms (``services.warn.action_of`` reads these), without importing
    the transcript dialect: the shell's command, or the file and a few words of what is
    written into it."""
    shell = tool in SHELL_TOOLS
    kind = (
        "shell" if shell else "write" if tool == "Write" else "edit" if "Edit" in tool else "other"
    )
    path = next((v for k in PATH_KEYS if isinstance(v := tool_input.get(k), str) and v), "")
    written = tool_input.get("new_string") or tool_input.get("content") or ""
    edits = tool_input.get("edits")
    if not written and isinstance(edits, list):
        written = " ".join(str(e.get("new_string") or "") for e in edits if isinstance(e, dict))
    command = tool_input.get("command") if shell else ""
    return {
        "tool": tool,
        "kind": kind,
        "command": command if isinstance(command, str) else "",
        "path": path,
        "text": str(written)[:MAX_TEXT],
    }


def warnings(payload: dict[str, object], wait: float) -> dict[str, object] | None:
    """The hook's answer for a PreToolUse payload, or None (nothing to say)."""
    tool = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    if not isinstance(tool, str) or is_read_only(tool, tool_input) or wait <= 0:
        return None
    if not isinstance(tool_input, dict):
        tool_input = {}
    from cortexmem.hosts.claude_code.payload import project_dir
    from cortexmem.hosts.claude_code.spool import failed_commands
    from cortexmem.project.paths import resolve
    from cortexmem.recall import client as recall_client

    paths = resolve(project_dir(payload.get("cwd")))
    if not paths.db.is_file():
        return None
    import time

    from cortexmem import settings

    wait = min(wait, settings.warn_wait_without_model(str(paths.data_dir)))
    request = {
        "op": "warn",
        "action": action_fields(tool, tool_input),
        "session_id": payload.get("session_id"),
        "tool_use_id": payload.get("tool_use_id"),
        # What failed lately in the session (the spool's own records): a lesson about a file
        # warns at its edit once its failure is back (``core.lessons.score.gate``).
        "failed": failed_commands(payload.get("session_id")),
        # past it, the server records nothing as shown: this hook looks the lessons up itself
        "deadline": time.time() + wait,
    }
    reply = recall_client.ask(
        paths.project_hash, request, timeout=wait, data_dir=str(paths.data_dir)
    )
    if reply is None:
        from cortexmem.hosts.claude_code.serve import SERVER_MODULE

        # this host's server, which also takes the turns' ends (a generic one would not)
        recall_client.start(str(paths.worktree or paths.root), SERVER_MODULE)
        reply = _here(paths, request)
    context = reply.get("context") if reply.get("ok") else None
    if not isinstance(context, str) or not context:
        return None
    return {"hookSpecificOutput": {"additionalContext": context}}


def _here(paths: ProjectPaths, request: dict[str, object]) -> dict[str, object]:
    """Layer 2 in this process, by words only (no server answered; the deadline was the
    server's, this look-up is the hook's own)."""
    from cortexmem.services.context import Context
    from cortexmem.services.warn import serve

    own = {k: v for k, v in request.items() if k != "deadline"}
    with Context(paths, timeout=1.0) as ctx:
        return {"ok": True, **serve(ctx, own, use_model=False)}
