"""The project's log, ``.cortex/cortex.log``: one line per outcome of work nobody watches
(hooks, background upkeep), rotated at 1 MB. Host-neutral: a host adds its own tag."""

from __future__ import annotations

import os
import time
from pathlib import Path

MAX_LOG_BYTES = 1_000_000
MAX_MESSAGE_CHARS = 2_000
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\"}


def _escaped(ch: str) -> str:
    named = _NAMED.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _needs_escape(ch: str) -> bool:
    code = ord(ch)
    return (
        code < 0x20
        or 0x7F <= code < 0xA0  # DEL and the C1 controls (ESC sequences start here too)
        or code in (0x2028, 0x2029)  # line and paragraph separators
        or 0xD800 <= code < 0xE000  # a lone surrogate: no UTF-8 for it
        or ch == "\\"
    )


def escape(message: str) -> str:
    """``message`` on one line with nothing a terminal acts on: control characters, line
    breaks and lone surrogates written as escapes (``\\n``, ``\\x1b``), backslashes doubled so
    an escape in the message reads back unambiguously."""
    if message.isprintable() and "\\" not in message:
        return message
    return "".join(_escaped(ch) if _needs_escape(ch) else ch for ch in message)


def log_line(path: Path, message: str, tag: str | None = None) -> None:
    """Append one line (``tag``: e.g. the first characters of a session id); never raises (work
    must not fail because its log cannot be written)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size > MAX_LOG_BYTES:
            os.replace(path, path.with_name(path.name + ".1"))
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        text = escape(message)[:MAX_MESSAGE_CHARS]
        tag = escape(tag) if tag else None
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)  # memory: private
        with os.fdopen(fd, "a", encoding="utf-8") as fh:
            fh.write(f"{stamp}{f' [{tag}]' if tag else ''} {text}\n")
    except Exception:
        pass


def log_tail(path: Path, size: int = 4096) -> str:
    """The last ``size`` bytes of the log ("" when there is none): what was said lately, so a
    process that fails the same way at every try says it once."""
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, handle.seek(0, os.SEEK_END) - size))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""
