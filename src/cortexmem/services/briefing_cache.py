"""The briefing cache: stdlib only, so SessionStart serves a cached briefing in milliseconds
without importing the store, the model or the briefing builder (the token query comes from
``store.sqlite.token``, which is stdlib only too).

* Cache: ``.cortex/cache/briefing-<hash of branch and cwd>.json`` holding the markdown and the
  store's *token* when it was built. The token (newest memory and event, active count, newest
  update) changes with every extraction, lifecycle or consolidation change, so a cached
  briefing is served only while nothing it was made from has changed.
* Lock: ``PidLock``, a PID lock file with stale-lock detection, under which a host writes the
  briefing where its assistant reads it (Claude Code: ``hosts.claude_code.rules``), so
  concurrent sessions never leave that file half-written.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time

from cortexmem.project.files import write_atomic
from cortexmem.project.locks import flocked
from cortexmem.store.sqlite.token import file_token

LOCK_NAME = "briefing.lock"
LOCK_WAIT = 2.0
STALE_AFTER = 30.0


def store_token(db_path: str) -> str | None:
    """The token of the store at ``db_path`` (read-only); ``None`` if it cannot be read. The
    query is the store's own (``store.sqlite.token``, stdlib only like this module)."""
    return file_token(db_path)


def combined_token(project_db: str, global_db: str) -> str | None:
    """The token of what a briefing reads: the project store and the global one."""
    project = store_token(project_db)
    if project is None:
        return None
    return f"{project}|{store_token(global_db) if os.path.exists(global_db) else '-'}"


def cache_path(data_dir: str, branch: str | None, cwd: str) -> str:
    key = hashlib.sha256(f"{branch or ''}\0{os.path.realpath(cwd)}".encode()).hexdigest()[:16]
    return os.path.join(data_dir, "cache", f"briefing-{key}.json")


def read_cached(path: str, token: str) -> str | None:
    """The cached markdown if it was built from a store with ``token``."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    if isinstance(data, dict) and data.get("token") == token:
        markdown = data.get("markdown")
        return markdown if isinstance(markdown, str) else None
    return None


def write_cached(path: str, token: str, markdown: str) -> None:
    write_atomic(path, json.dumps({"token": token, "markdown": markdown}), private=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class PidLock:
    """An exclusive lock file holding its owner's PID. A lock whose owner is gone, or older
    than ``STALE_AFTER`` seconds, is stale and taken over."""

    def __init__(
        self, path: str, wait: float = LOCK_WAIT, stale_after: float = STALE_AFTER
    ) -> None:
        self.path = path
        self.wait = wait
        self.stale_after = stale_after
        self.held = False

    def __enter__(self) -> PidLock:
        deadline = time.monotonic() + self.wait
        os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
        while True:
            # looking at and creating the lock file is one process at a time
            with flocked(self.path + ".guard") as mine:
                if mine and self._take():
                    self.held = True
                    return self
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.path} is held by another process") from None
            time.sleep(0.01)

    def _take(self) -> bool:
        """Create the lock file with this PID in it, or take over a stale one. Run by one
        process at a time: another never reads the file between its creation and its PID
        (an empty file reads as stale), nor takes over a lock a third has just taken over."""
        for _ in range(2):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
            except FileExistsError:
                if not self._stale():
                    return False
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.path)
                continue
            with os.fdopen(fd, "w") as fh:
                fh.write(str(os.getpid()))
            return True
        return False

    def _stale(self) -> bool:
        try:
            with open(self.path, encoding="utf-8") as fh:
                pid = int(fh.read().strip() or 0)
            age = time.time() - os.path.getmtime(self.path)
        except (OSError, ValueError):
            return True
        return pid <= 0 or not _alive(pid) or age > self.stale_after

    def __exit__(self, *exc: object) -> None:
        if self.held:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
            self.held = False
