"""Small file systems for the reliability tests: a tmpfs that can be filled to the last block,
a read-only bind mount. Both need root and a kernel that lets it mount (a container may not);
``can_mount`` answers once per run, and the tests fall back or skip with the reason."""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path


def _mount(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["mount", *args], capture_output=True, text=True, timeout=30)


def umount(target: Path) -> None:
    subprocess.run(["umount", "-l", str(target)], capture_output=True, timeout=30)


@functools.cache
def can_mount() -> str:
    """Empty when this process can mount a tmpfs and a read-only bind; else why not
    (``CORTEX_TEST_NO_MOUNT=1`` tries the fallbacks)."""
    if os.environ.get("CORTEX_TEST_NO_MOUNT"):
        return "CORTEX_TEST_NO_MOUNT is set"
    if os.geteuid() != 0:
        return "not root"
    if shutil.which("mount") is None or shutil.which("umount") is None:
        return "no mount/umount command"
    probe = Path(tempfile.mkdtemp(prefix="cortex-mount-probe-"))
    try:
        done = _mount("-t", "tmpfs", "-o", "size=64k", "tmpfs", str(probe))
        if done.returncode != 0:
            return f"mount -t tmpfs refused: {done.stderr.strip()}"
        umount(probe)
        done = _mount("--bind", str(probe), str(probe))
        if done.returncode != 0:
            return f"mount --bind refused: {done.stderr.strip()}"
        ro = _mount("-o", "remount,bind,ro", str(probe))
        umount(probe)
        if ro.returncode != 0:
            return f"a read-only remount refused: {ro.stderr.strip()}"
        return ""
    finally:
        with contextlib.suppress(OSError):
            probe.rmdir()


@contextlib.contextmanager
def tmpfs(target: Path, size: str) -> Iterator[Path]:
    target.mkdir(parents=True, exist_ok=True)
    done = _mount("-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(target))
    assert done.returncode == 0, done.stderr
    try:
        yield target
    finally:
        umount(target)


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[Path]:
    """``folder`` seen read-only (a bind mount of itself, remounted ro) for every process."""
    done = _mount("--bind", str(folder), str(folder))
    assert done.returncode == 0, done.stderr
    try:
        done = _mount("-o", "remount,bind,ro", str(folder))
        assert done.returncode == 0, done.stderr
        yield folder
    finally:
        umount(folder)


def fill(mount: Path, leave_kib: int) -> Path:
    """Fill the file system at ``mount`` with a ballast file until ``leave_kib`` KiB are left;
    deleting the file frees the space again."""
    ballast = mount / "ballast"
    free_kib = shutil.disk_usage(mount).free // 1024
    with ballast.open("wb") as fh, contextlib.suppress(OSError):
        fh.write(b"\0" * max(0, free_kib - leave_kib) * 1024)
    return ballast
