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
            rotate(path)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        text = escape(message)[:MAX_MESSAGE_CHARS]
        tag = escape(tag) if tag else None
        append_line(path, f"{stamp}{f' [{tag}]' if tag else ''} {text}\n".encode())
    except Exception:
        pass


def append_line(path: Path, data: bytes, tries: int = 3) -> None:
    """Append ``data`` to ``path`` (created 0600: memory is private) under a shared lock.

    ``cortex redact`` rewrites such a file by a rename while holding it exclusively: a writer
    that opened the old file waits for it, then finds the name now names another file and
    appends there, so no line goes to a file nobody will read again."""
    for _ in range(tries):
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            if _lock_shared(fd) and not still_named(fd, path):
                continue  # renamed over while this waited: the name is another file now
            os.write(fd, data)
            return
        finally:
            os.close(fd)  # the lock goes with it
    raise OSError(f"{path} kept being replaced while a line was appended")


def rotate(path: Path) -> None:
    """Move the log to ``<name>.1`` holding both files exclusively: ``cortex redact`` may be
    rewriting either by a rename, and a rotation between its read and its rename lost lines
    and left secrets in the rotated copy. Another process that rotated first leaves nothing
    to do."""
    rotated = path.with_name(path.name + ".1")
    held = []
    try:
        for name in (path, rotated):
            try:
                fd = os.open(name, os.O_RDONLY)
            except FileNotFoundError:
                if name == path:
                    return
                continue
            held.append(fd)
            lock_file(fd, exclusive=True)
            if not still_named(fd, name):
                return  # replaced while this waited: someone else rotated or rewrote it
        if os.fstat(held[0]).st_size > MAX_LOG_BYTES:
            os.replace(path, rotated)
    finally:
        for fd in held:
            os.close(fd)


def still_named(fd: int, path: Path) -> bool:
    try:
        return os.fstat(fd).st_ino == os.stat(path).st_ino
    except OSError:
        return False


def _lock_shared(fd: int) -> bool:
    """Take a shared lock on ``fd`` (False where there are no such locks)."""
    return lock_file(fd, exclusive=False)


def lock_file(fd: int, *, exclusive: bool) -> bool:
    """Lock ``fd`` shared or exclusively (``flock``, released with the descriptor); False
    where there are no such locks (not POSIX)."""
    try:
        import fcntl
    except ImportError:  # not POSIX
        return False
    fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
    return True


def log_tail(path: Path, size: int = 4096) -> str:
    """The last ``size`` bytes of the log ("" when there is none): what was said lately, so a
    process that fails the same way at every try says it once."""
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, handle.seek(0, os.SEEK_END) - size))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


def unlock_file(fd: int) -> None:
    """Release ``lock_file``'s lock before the descriptor is closed (no-op where there are no
    such locks)."""
    try:
        import fcntl
    except ImportError:
        return
    fcntl.flock(fd, fcntl.LOCK_UN)
