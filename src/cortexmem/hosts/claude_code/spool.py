"""Observations: one cheap record per tool call, spooled by the tool hooks.

PreToolUse/PostToolUse/PostToolUseFailure run on every tool call, so this module imports only
``os``, ``json`` and ``time``: no pathlib, no dataclasses, no store. A hook appends one short
line to ``$CORTEX_HOME/observations/<session>.jsonl`` (``O_APPEND``: concurrent hooks never
interleave or overwrite each other's lines) and is done. The Stop hook later drains the spool
into the project store, in the same transaction as the spool cursor, so nothing is counted
twice.

A spooled record holds the tool's name, the time, ok/failed, the duration, the two tools
before it and, for a shell command, the program's name and the command's form
(``core.command_form``: ``uv run pytest``): never arguments, so never a secret.
"""

from __future__ import annotations

import json
import os
import time

from cortexmem import settings
from cortexmem.core.command_form import command_form

TAIL_BYTES = 16_384
_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
# Programs that run another program: the interesting name is the one after them.
_WRAPPERS = {
    "sudo": 0,
    "env": 0,
    "time": 0,
    "nohup": 0,
    "exec": 0,
    "uv": 1,
    "poetry": 1,
    "pipenv": 1,
    "hatch": 1,
    "pdm": 1,
    "npx": 0,
    "pnpx": 0,
    "bunx": 0,
}


def spool_dir() -> str:
    return os.path.join(settings.cortex_home(), "observations")


def spool_path(session_id: str) -> str:
    safe = "".join(ch if ch in _SAFE else "_" for ch in session_id)[:120].lstrip(".") or "_"
    return os.path.join(spool_dir(), safe + ".jsonl")


def command_program(command: object) -> str | None:
    """The program a shell command runs (``pytest`` for ``FOO=1 uv run pytest -q``), or None.

    Only a bare program name is kept: arguments can hold secrets, a name cannot.
    """
    if not isinstance(command, str):
        return None
    words = command.strip().split()
    skip_args = 0
    for word in words:
        if skip_args:
            skip_args -= 1
            continue
        if "=" in word and not word.startswith("="):
            continue  # an environment assignment before the program
        name = word.rsplit("/", 1)[-1]
        if name in _WRAPPERS:
            skip_args = _WRAPPERS[name]
            continue
        if name in ("python", "python3") or name.startswith("python3."):
            continue  # `python -m pytest` → look at what follows
        if word == "-m":
            continue
        if word.startswith("-"):
            continue
        if 0 < len(name) <= 40 and all(ch in _SAFE for ch in name):
            return name
        return None
    return None


# SQLite stores integers as signed 64-bit: anything past this cannot be stored.
MAX_INT = (1 << 63) - 1


def clean_text(value: str, limit: int = 200) -> str:
    """``value`` cut to ``limit`` characters, with lone surrogates (``"\\ud83d"`` in a JSON
    payload decodes to one) replaced: UTF-8, so SQLite, cannot hold them."""
    value = value[:limit]
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        # A pair written as two escapes becomes its character; a lone half becomes U+FFFD.
        value = value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return value


def clean_int(value: object) -> int | None:
    """A non-negative integer in SQLite's range, or None (bools, floats, strings, negatives)."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        return None
    return min(value, MAX_INT)


def _text(value: object, limit: int = 200) -> str | None:
    return clean_text(value, limit) or None if isinstance(value, str) and value else None


def _append(path: str, record: dict[str, object]) -> None:
    line = (json.dumps(record, separators=(",", ":")) + "\n").encode("utf-8")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    except FileNotFoundError:
        settings.make_home()
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def _objects(lines: list[bytes]) -> list[dict[str, object]]:
    """The JSON objects among spooled lines; blank, damaged or non-object lines are skipped."""
    out = []
    for line in lines:
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            out.append(record)
    return out


def _tail_records(path: str) -> list[dict[str, object]]:
    """The complete records in the last few KB of the spool (newest last)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return []
    try:
        size = os.fstat(fd).st_size
        start = max(0, size - TAIL_BYTES)
        data = os.pread(fd, size - start, start)
    finally:
        os.close(fd)
    lines = data.split(b"\n")
    if start > 0:
        lines = lines[1:]  # the first one is probably cut
    return _objects(lines)


def record(event: str, payload: dict[str, object], now_ns: int | None = None) -> None:
    """Spool one tool hook's observation. Raises only on I/O errors (the caller logs them)."""
    session = payload.get("session_id")
    tool = payload.get("tool_name")
    if not isinstance(session, str) or not session or not isinstance(tool, str) or not tool:
        return
    now_ns = time.time_ns() if now_ns is None else now_ns
    path = spool_path(session)
    call_id = _text(payload.get("tool_use_id"))
    tool = clean_text(tool, 100)
    if event == "PreToolUse":
        _append(path, {"p": "pre", "t": now_ns, "tool": tool, "id": call_id})
        return
    ok = event == "PostToolUse"
    tail = _tail_records(path)
    done = [r.get("tool") for r in tail if r.get("p") == "post"]
    duration = clean_int(payload.get("duration_ms"))
    if duration is None:
        started = next(
            (r.get("t") for r in reversed(tail) if r.get("p") == "pre" and r.get("id") == call_id),
            None,
        )
        if call_id and isinstance(started, int) and started <= now_ns:
            duration = (now_ns - started) // 1_000_000
    tool_input = payload.get("tool_input")
    detail = form = None
    if tool == "Bash" and isinstance(tool_input, dict):
        detail = command_program(tool_input.get("command"))
        form = command_form(tool_input.get("command"))
    _append(
        path,
        {
            "p": "post",
            "t": now_ns,
            "tool": tool,
            "id": call_id,
            "ok": ok,
            "ms": duration,
            "prev": _text(done[-1], 100) if done else None,
            "prev2": _text(done[-2], 100) if len(done) > 1 else None,
            "detail": detail,
            "cmd": form,
        },
    )


def failed_commands(session_id: object) -> list[str]:
    """The forms of the shell commands that failed lately in the session (from the spool's
    last few KB, oldest first): what PreToolUse tells the warnings about the session."""
    if not isinstance(session_id, str) or not session_id:
        return []
    forms = (r.get("cmd") for r in _tail_records(spool_path(session_id)) if r.get("ok") is False)
    return list(dict.fromkeys(f for f in forms if isinstance(f, str) and f))


def read_spool(path: str, offset: int = 0) -> tuple[list[dict[str, object]], int]:
    """Complete spooled records from byte ``offset`` on, and the offset just past the last one.

    A half-written last line stays for the next read.
    """
    try:
        with open(path, "rb") as fh:
            fh.seek(offset)
            data = fh.read()
    except FileNotFoundError:
        return [], offset
    end = data.rfind(b"\n") + 1
    return _objects(data[:end].split(b"\n")), offset + end
