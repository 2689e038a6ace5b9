"""Writing a file so that no reader ever sees it half-written: the one place for it.

Stdlib only, and ``tempfile`` is imported only when something is actually written, because the
SessionStart hook calls this on its cached path (where the file is usually unchanged).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def write_atomic(path: str | Path, text: str) -> bool:
    """Replace ``path`` (its symlink target, if it is one) with ``text`` in one rename, keeping
    the file's permissions; ``False``, and nothing written, when it already held exactly that."""
    path = Path(path)
    real = path.resolve() if path.is_symlink() else path
    with contextlib.suppress(OSError, UnicodeDecodeError):
        if real.read_text(encoding="utf-8") == text:
            return False
    import tempfile

    real.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = real.stat().st_mode & 0o7777
    except FileNotFoundError:  # a new file gets what open() would give it (mkstemp: 0600)
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tmp", dir=real.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, real)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return True
