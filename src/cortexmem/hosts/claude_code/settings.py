"""Cortex's hooks in a Claude Code settings file: pure functions over plain dicts, no I/O.

Claude Code nests hooks three levels deep: event name, then a list of matcher groups, then each
group's list of handlers::

    {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "... Stop", "timeout": 30}]}]}}

**Which handlers are ours.** A ``command`` handler under event ``E`` whose command line starts
with a program named ``cortex-hook`` (any folder, ``.exe`` allowed) followed by the argument
``E``. Identity therefore survives a new virtualenv path or a new timeout: such a handler is
updated in place, never duplicated. A ``cortex-hook`` handler put under a *different* event, or
wrapped in another program (``uv run cortex-hook Stop``), is somebody's own and is left alone.

**What ``merge_hooks`` changes.** Per event: every handler of ours gets our ``type``,
``command`` and ``timeout`` (a stale ``timeout`` or exec-form ``args`` is dropped; any other
field a person added, such as ``statusMessage``, stays). An event without a handler of ours gets
one new matcher group appended at the end of its list. Nothing else is touched, so merging twice
is the same as merging once.

**What ``remove_hooks`` deletes.** Our handlers, plus any container that is empty *because*
ours were taken out of it: a matcher group that held only ours, then an event list whose groups
were all removed, then the ``hooks`` object if its last event went. A container that was
already empty before (``{"matcher": "Bash", "hooks": []}``, ``"Notification": []``) stays.
The one thing this cannot tell apart: an *empty* list under one of our events (or an empty
``hooks`` object) that existed before ``merge_hooks`` filled it. After merge and remove it is
gone rather than empty. Claude Code treats an empty list and a missing key alike, so the
settings mean exactly what they meant before.
"""

from __future__ import annotations

import copy
import re
import shlex
from typing import Any

from cortexmem.errors import CortexError

PROGRAM = "cortex-hook"

HOOK_EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PreCompact",
    "PostCompact",
    "Stop",
    "SubagentStop",
    "SessionEnd",
)

# Events whose matcher is the tool name: we want every tool, so "*". The other events either
# take no matcher (UserPromptSubmit, Stop) or match a source/trigger/reason/agent type; Cortex
# wants all of those too, and an omitted matcher matches everything on every Claude Code version.
TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure"})

# Seconds. Claude Code's default is 600 s (60 s before 2026), far too long for a hook that must
# never hold a session up; ours finish in milliseconds, these are safety caps.
# * tool events, prompts, SessionStart, PostCompact: 10 s. They run on the interactive path.
# * Stop, SubagentStop, PreCompact: 30 s. They read the transcript (in budgeted batches).
# * SessionEnd: no timeout on purpose. All SessionEnd hooks share a 1.5 s budget, and a longer
#   per-handler timeout in a settings file *raises* that budget (up to 60 s), which would make
#   Claude Code's exit wait on us. The handler finishes within 1 s and queues the rest.
TIMEOUTS: dict[str, int | None] = {
    "SessionStart": 10,
    "UserPromptSubmit": 10,
    "PreToolUse": 10,
    "PostToolUse": 10,
    "PostToolUseFailure": 10,
    "PreCompact": 30,
    "PostCompact": 10,
    "Stop": 30,
    "SubagentStop": 30,
    "SessionEnd": None,
}

# The handler fields Cortex owns; on an update they are set to ours or dropped.
_MANAGED = ("type", "command", "args", "timeout")


class SettingsShapeError(CortexError):
    """The settings file has a ``hooks`` entry Cortex cannot merge into without guessing."""


def cortex_hooks(command: str) -> dict[str, Any]:
    """The ``{"hooks": {...}}`` block for every event in ``HOOK_EVENTS``.

    ``command`` is the hook program as a shell word (already quoted); the event name is
    appended as its first argument.
    """
    hooks: dict[str, Any] = {}
    for event in HOOK_EVENTS:
        handler: dict[str, Any] = {"type": "command", "command": f"{command} {event}"}
        timeout = TIMEOUTS[event]
        if timeout is not None:
            handler["timeout"] = timeout
        group: dict[str, Any] = {"matcher": "*"} if event in TOOL_EVENTS else {}
        group["hooks"] = [handler]
        hooks[event] = [group]
    return {"hooks": hooks}


def is_ours(handler: object, event: str) -> bool:
    """Whether ``handler`` (one entry of a matcher group's ``hooks``) is Cortex's for ``event``."""
    if not isinstance(handler, dict) or handler.get("type", "command") != "command":
        return False
    argv = _argv(handler)
    return len(argv) >= 2 and _program_name(argv[0]) == PROGRAM and argv[1] == event


def find_ours(settings: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Our handlers per event (only events that have one), in file order."""
    found: dict[str, list[dict[str, Any]]] = {}
    for event, group in _groups(settings):
        mine = [h for h in group["hooks"] if is_ours(h, event)]
        if mine:
            found.setdefault(event, []).extend(mine)
    return found


def merge_hooks(settings: dict[str, Any], ours: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``settings`` with the handlers of ``ours`` (a ``cortex_hooks`` block) added.

    Raises ``SettingsShapeError`` when ``settings["hooks"]`` (or the list of one of our events)
    has a type that cannot hold handlers; the caller writes nothing then.
    """
    result = copy.deepcopy(settings)
    hooks = result.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsShapeError(f'"hooks" is {_kind(hooks)}, not an object')
    for event, our_groups in ours.get("hooks", {}).items():
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise SettingsShapeError(f'"hooks.{event}" is {_kind(entries)}, not a list')
        wanted = our_groups[0]["hooks"][0]
        updated = False
        for group in entries:
            if not _is_group(group):
                continue
            for handler in group["hooks"]:
                if is_ours(handler, event):
                    _update(handler, wanted)
                    updated = True
        if not updated:
            entries.extend(copy.deepcopy(our_groups))
    return result


def remove_hooks(settings: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``settings`` without Cortex's handlers (see the module docstring for which
    emptied containers go with them). Entries of a shape Cortex does not know are kept."""
    result = copy.deepcopy(settings)
    hooks = result.get("hooks")
    if not isinstance(hooks, dict):
        return result
    emptied_events = []
    for event, entries in hooks.items():
        if not isinstance(entries, list):
            continue
        kept_groups = []
        for group in entries:
            if _is_group(group) and any(is_ours(h, event) for h in group["hooks"]):
                group["hooks"] = [h for h in group["hooks"] if not is_ours(h, event)]
                if not group["hooks"]:
                    continue  # it held only ours
            kept_groups.append(group)
        if len(kept_groups) != len(entries):
            entries[:] = kept_groups
            if not entries:
                emptied_events.append(event)
    for event in emptied_events:
        del hooks[event]
    if emptied_events and not hooks:
        del result["hooks"]
    return result


def _update(handler: dict[str, Any], wanted: dict[str, Any]) -> None:
    """Make ``handler`` carry our managed fields, in place, keeping its key order and the
    fields a person added."""
    for key in _MANAGED:
        if key in wanted:
            handler[key] = wanted[key]
        else:
            handler.pop(key, None)


def _groups(settings: dict[str, Any]):
    """(event, group) for every well-formed matcher group; anything else is skipped."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return
    for event, entries in hooks.items():
        if isinstance(entries, list):
            for group in entries:
                if _is_group(group):
                    yield event, group


def _is_group(group: object) -> bool:
    return isinstance(group, dict) and isinstance(group.get("hooks"), list)


def _argv(handler: dict[str, Any]) -> list[str]:
    command = handler.get("command")
    if not isinstance(command, str):
        return []
    args = handler.get("args")
    if isinstance(args, list):  # exec form: the program, then its arguments, no shell
        return [command, *(a for a in args if isinstance(a, str))]
    lexer = shlex.shlex(command, posix=True, punctuation_chars=False)
    lexer.whitespace_split = True
    lexer.escape = ""  # keep Windows back-slashes; we only ever write single-quoted words
    try:
        return list(lexer)
    except ValueError:  # an unbalanced quote: not something we wrote
        return []


def _program_name(word: str) -> str:
    name = re.split(r"[\\/]", word)[-1]
    return name[:-4] if name.lower().endswith(".exe") else name


def _kind(value: object) -> str:
    kinds = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    return kinds.get(type(value), "a number" if isinstance(value, int | float) else "null")
