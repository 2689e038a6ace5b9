"""Is a store file undamaged? ``PRAGMA quick_check`` costs ~40-60 ms at 10k memories, far too
much for every hook, so a file that passed it is stamped with its (size, mtime) in
``<folder>/cache/<name>.checked`` and not checked again until something changes the file
outside Cortex (a store closes by re-stamping what it verified at open). Stdlib only: the
cached SessionStart path asks :func:`stamped_ok` without importing the store.
"""

from __future__ import annotations

import contextlib
import os

CORTEX_APPLICATION_ID = 0x43525458  # "CRTX" in PRAGMA application_id


def stamp_path(db_path: str) -> str:
    folder, name = os.path.split(os.path.abspath(db_path))
    return os.path.join(folder, "cache", name + ".checked")


def file_key(db_path: str) -> str | None:
    try:
        st = os.stat(db_path)
    except OSError:
        return None
    return f"{st.st_size}:{st.st_mtime_ns}"


def stamped_ok(db_path: str, key: str | None = None) -> bool:
    """Whether the file is as it was when a quick_check last passed."""
    key = key or file_key(db_path)
    if key is None:
        return False
    try:
        with open(stamp_path(db_path), encoding="ascii") as fh:
            return fh.read().strip() == key
    except (OSError, ValueError):
        return False


def write_stamp(db_path: str) -> None:
    """Record that the file as it is now is undamaged (best effort: read-only folders)."""
    key = file_key(db_path)
    if key is None or stamped_ok(db_path, key):
        return
    path = stamp_path(db_path)
    tmp = f"{path}.{os.getpid()}.tmp"
    with contextlib.suppress(OSError):
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            fh.write(key)
        os.replace(tmp, path)
    with contextlib.suppress(OSError):
        os.unlink(tmp)


def tighten(path: str | os.PathLike[str]) -> None:
    """Take group/other access away from ``path`` when it has any (best effort: a file of
    another user, a read-only mount)."""
    with contextlib.suppress(OSError):
        mode = os.stat(path).st_mode & 0o7777
        if mode & 0o077:
            os.chmod(path, mode & ~0o077)
