"""``cortex-hook <Event>``: the one program Claude Code runs for every hook event.

Contract (DESIGN.md): a hook never breaks the session. Whatever happens (bad JSON, an unknown
event, a missing transcript, a locked store, a bug) this exits 0, writes to stdout nothing but
one valid JSON answer or nothing, and logs one line to the project's ``.cortex/cortex.log``.

Cost: the tool hooks run on every tool call, so this module imports only ``sys``, ``os``,
``json``, ``time`` and ``cortexmem.settings`` (``os`` only) and hands those events to ``spool``;
PreToolUse then asks ``pretool`` for warnings, whose read-only skip imports nothing more.
Inside a session Cortex itself started (``CORTEX_INSIDE``) it does nothing at all. Everything else
(extraction, the store) is imported only by the events that need it.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time

from cortexmem import settings
from cortexmem.settings import inside_cortex

TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure"})
EVENTS = TOOL_EVENTS | frozenset(
    {
        "SessionStart",
        "UserPromptSubmit",
        "PreCompact",
        "PostCompact",
        "Stop",
        "SubagentStop",
        "SessionEnd",
    }
)
MAX_PAYLOAD_BYTES = 64 * 1024 * 1024
MAX_OUTPUT_CHARS = 9_500  # Claude Code caps hook strings at 10,000 characters


class HookInputError(ValueError):
    """The payload is not something a hook can act on (logged, never raised to Claude Code)."""


def read_payload(data: bytes) -> dict[str, object]:
    if len(data) > MAX_PAYLOAD_BYTES:
        raise HookInputError(f"payload of {len(data)} bytes is too large")
    if not data.strip():
        return {}
    try:
        payload = json.loads(data)
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
        raise HookInputError(f"payload is not JSON: {exc}") from None
    if not isinstance(payload, dict):
        raise HookInputError("payload is not a JSON object")
    return payload


def render_output(event: str, output: dict[str, object] | None) -> str:
    """The one JSON answer on stdout; context is capped and ``hookEventName`` always set."""
    if not output:
        return ""
    specific = output.get("hookSpecificOutput")
    if isinstance(specific, dict):
        specific = dict(specific)
        specific["hookEventName"] = event
        context = specific.get("additionalContext")
        if isinstance(context, str) and len(context) > MAX_OUTPUT_CHARS:
            specific["additionalContext"] = context[: MAX_OUTPUT_CHARS - 1] + "…"
        output = {**output, "hookSpecificOutput": specific}
    return json.dumps(output, ensure_ascii=False)


def main(argv: list[str] | None = None) -> int:
    # The recursion guard, first and cheapest: a session Cortex itself started (``claude -p``
    # for a model call) is never captured and never sets Cortex off again.
    if inside_cortex():
        return 0
    started = time.monotonic()
    argv = sys.argv[1:] if argv is None else argv
    event = argv[0] if argv else ""
    payload: dict[str, object] = {}
    real_stdout = sys.stdout
    try:
        payload = read_payload(sys.stdin.buffer.read(MAX_PAYLOAD_BYTES + 1))
        if not event:
            name = payload.get("hook_event_name")
            event = name if isinstance(name, str) else ""
        if event not in EVENTS:
            raise HookInputError(f"unknown hook event {event!r}")
        if event in TOOL_EVENTS:
            from cortexmem.hosts.claude_code import spool as observe

            observe.record(event, payload)
            if event == "PreToolUse":  # warnings from lessons (read-only calls skip at once)
                sys.stdout = sys.stderr
                from cortexmem.hosts.claude_code.pretool import warnings

                answer = render_output(event, warnings(payload, settings.warn_wait_seconds()))
                sys.stdout = real_stdout
                if answer:
                    real_stdout.write(answer)
                    real_stdout.flush()
            return 0
        # Nothing a library prints may reach Claude Code: stdout is for our JSON answer only.
        sys.stdout = sys.stderr
        from cortexmem.hosts.claude_code.handlers import handle

        text = render_output(event, handle(event, payload, started=started))
        sys.stdout = real_stdout
        if text:
            real_stdout.write(text)
            real_stdout.flush()
    except BaseException as exc:
        sys.stdout = real_stdout
        _log_failure(event, payload, exc)
    return 0


def _log_failure(event: str, payload: dict[str, object], exc: BaseException) -> None:
    try:
        from cortexmem.hosts.claude_code.payload import HookInput

        HookInput.parse(event, payload).log(f"{event or '?'} failed: {type(exc).__name__}: {exc}")
    except BaseException:
        pass


def run() -> None:
    """Console-script entry: always exit 0."""
    try:
        main()
    finally:
        os._exit(_flush_and_zero())


def _flush_and_zero() -> int:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BaseException):
            stream.flush()
    return 0
