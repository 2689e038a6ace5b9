"""Writing a file so that no reader ever sees it half-written: the one place for it.

Stdlib only, and ``tempfile`` is imported only when something is actually written, because the
SessionStart hook calls this on its cached path (where the file is usually unchanged).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

STALE_TMP_SECONDS = 60.0


def write_atomic(
    path: str | Path, text: str, *, private: bool = False, errors: str = "strict"
) -> bool:
    """Replace ``path`` (its symlink target, if it is one) with ``text`` in one rename, keeping
    the file's permissions; ``False``, and nothing written, when it already held exactly that.

    ``private``: the file is memory, not meant for git: a new one is 0600 (its new folder 0700)
    and an existing one loses any group/other access. Otherwise a new file gets what open()
    would give it (the umask), like every file of the repository.

    ``errors``: how text that is not UTF-8 is written (``"surrogateescape"`` gives back the
    bytes a file read with it held).

    The temporary file is ``.<name>.<random>.tmp`` beside the target; one left behind by a
    killed writer (older than a minute) is removed by the next write of the same file."""
    path = Path(path)
    real = path.resolve() if path.is_symlink() else path
    with contextlib.suppress(OSError, UnicodeDecodeError):
        if real.read_text(encoding="utf-8", errors=errors) == text:
            return False
    import tempfile

    real.parent.mkdir(mode=0o700 if private else 0o777, parents=True, exist_ok=True)
    try:
        mode = real.stat().st_mode & 0o7777
        if private:
            mode &= ~0o077
    except FileNotFoundError:  # a new file gets what open() would give it (mkstemp: 0600)
        if private:
            mode = 0o600
        else:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
    _remove_stale_temporaries(real)
    fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tmp", dir=real.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors=errors, newline="\n") as out:
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


def _remove_stale_temporaries(real: Path) -> None:
    """Temporary files of ``real`` that a killed writer left (older than a minute)."""
    import glob
    import time

    pattern = os.path.join(glob.escape(str(real.parent)), glob.escape(f".{real.name}.") + "*.tmp")
    cutoff = time.time() - STALE_TMP_SECONDS
    for leftover in glob.glob(pattern):
        with contextlib.suppress(OSError):
            if os.lstat(leftover).st_mtime < cutoff:
                os.unlink(leftover)
