"""Transactions on one SQLite connection: the retry, read and write helpers every SQL module of
the backend runs its statements through (public within ``store.sqlite``; nothing outside the
backend sees a connection).

Concurrency: hooks of several sessions write to one file at once. Every write runs in a
``BEGIN IMMEDIATE`` transaction (the write lock is taken up front, so two readers can never
deadlock trying to upgrade) under a busy timeout, and a transaction that still meets
"database is locked" is retried with jittered back-off until the deadline. Nothing is written
outside a transaction, so a failure leaves nothing half-done.
"""

from __future__ import annotations

import contextlib
import random
import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from cortexmem.errors import CortexError, StoreCorrupt, StoreReadOnly

T = TypeVar("T")

SQLITE_HEADER = b"SQLite format 3\x00"
DEFAULT_TIMEOUT = 30.0


def fts5_available() -> bool:
    """Whether this Python's SQLite was built with FTS5 (it is required)."""
    try:
        with contextlib.closing(sqlite3.connect(":memory:")) as conn:
            conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
        return True
    except sqlite3.OperationalError:
        return False


def is_busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def is_corrupt(exc: sqlite3.DatabaseError) -> bool:
    text = str(exc).lower()
    return "not a database" in text or "malformed" in text or "encrypted" in text


def check_header(path: Path) -> None:
    """Refuse a non-empty file that is not a SQLite database (never read it as empty)."""
    try:
        with path.open("rb") as fh:
            head = fh.read(100)  # the whole database header
    except FileNotFoundError:
        return
    except OSError as exc:
        raise CortexError(f"cannot read store {path}: {exc.strerror}") from exc
    if head and not head.startswith(SQLITE_HEADER):
        raise StoreCorrupt(
            f"{path} is not a SQLite database; it was left untouched. "
            "Move it aside, or restore a backup with `cortex restore`."
        )
    if head and len(head) < 100:
        raise StoreCorrupt(
            f"the memory store {path} is damaged (truncated to {len(head)} bytes); "
            "it was left untouched: run `cortex restore`"
        )


def fetchall(sql: str, params: Sequence[Any] = ()) -> Callable[[sqlite3.Connection], list[Any]]:
    """The work "run ``sql`` with ``params`` and return every row", for ``read``/``run``."""
    return lambda conn: conn.execute(sql, params).fetchall()


class Transactions:
    """One connection to the file at ``path`` and the ways to run work on it."""

    def __init__(self, path: Path, conn: sqlite3.Connection, timeout: float) -> None:
        self.path = path
        self._conn = conn
        self._timeout = timeout
        self.read_only = False  # opened ``mode=ro``: every write raises StoreReadOnly
        self._verified = False  # passed quick_check at open (the file may be re-stamped)

    @property
    def timeout(self) -> float:
        return self._timeout

    def guard(self, fn: Callable[[], T]) -> T:
        """Run ``fn``; a damaged file is reported as such (with the way out), not as SQL."""
        try:
            return fn()
        except sqlite3.DatabaseError as exc:
            if is_corrupt(exc):
                self._verified = False
                raise StoreCorrupt(
                    f"the memory store {self.path} is damaged ({exc}); "
                    "run `cortex restore` to go back to its newest backup"
                ) from exc
            if "readonly" in str(exc).lower():
                raise StoreReadOnly(f"{self.path} is read-only: nothing was written") from exc
            raise

    def retry(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` again, with jittered back-off, while the file is busy (until the
        timeout)."""
        deadline = time.monotonic() + self._timeout
        delay = 0.005
        while True:
            try:
                return self.guard(fn)
            except sqlite3.OperationalError as exc:
                if not is_busy(exc) or time.monotonic() >= deadline:
                    raise
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, 0.25)

    def run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` on the connection outside an explicit transaction (one statement, which
        SQLite runs atomically), retried while the file is busy."""
        return self.retry(lambda: fn(self._conn))

    def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` in one IMMEDIATE transaction, retried whole while the file is busy."""

        def attempt() -> T:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = fn(conn)
                conn.execute("COMMIT")
                return result
            except BaseException:
                # SQLite may already have rolled back (disk full, I/O error); a second
                # ROLLBACK would replace the real error with "no transaction is active".
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

        return self.retry(attempt)

    def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` in one read transaction so its queries see one snapshot."""

        def attempt() -> T:
            conn = self._conn
            conn.execute("BEGIN")
            try:
                return fn(conn)
            finally:
                if conn.in_transaction:
                    conn.execute("COMMIT")

        return self.retry(attempt)
