"""The project's log, ``.cortex/cortex.log``: one line per outcome of work nobody watches
(hooks, background upkeep), rotated at 1 MB. Host-neutral: a host adds its own tag."""

from __future__ import annotations

import os
import time
from pathlib import Path

MAX_LOG_BYTES = 1_000_000


def log_line(path: Path, message: str, tag: str | None = None) -> None:
    """Append one line (``tag``: e.g. the first characters of a session id); never raises (work
    must not fail because its log cannot be written)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size > MAX_LOG_BYTES:
            os.replace(path, path.with_name(path.name + ".1"))
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        text = " ".join(message.split())[:2000]
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)  # memory: private
        with os.fdopen(fd, "a", encoding="utf-8") as fh:
            fh.write(f"{stamp}{f' [{tag}]' if tag else ''} {text}\n")
    except Exception:
        pass
