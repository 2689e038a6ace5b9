"""An exclusive lock between processes on a file of the project: the one place for it.

An ``flock`` on an open file: the operating system drops it when the holder exits, however it
exits, so no lock outlives its process and nothing has to judge a lock stale. Stdlib only (the
hooks' briefing lock uses it). Where there is no ``fcntl`` (Windows) every lock is granted and
the callers' own files decide, as they did before.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

RETRY_SECONDS = 0.05


@contextlib.contextmanager
def flocked(path: str | Path, wait: float = 0.0) -> Iterator[bool]:
    """Hold an exclusive lock on ``path`` (created, never followed if it is a symlink) for the
    block: True when this process holds it, False when another held it for ``wait`` seconds
    (0: do not wait). Another open of the same file, in this process too, is another holder."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on POSIX
        yield True
        return
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held = True
                break
            except OSError:
                if time.monotonic() >= deadline:
                    held = False
                    break
                time.sleep(RETRY_SECONDS)
        yield held
    finally:
        os.close(fd)  # closing releases the lock
