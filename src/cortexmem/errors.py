"""Errors a person can act on.

``CortexError`` and its subclasses carry a one-line message meant for the user; the CLI prints it
and exits 1 without a traceback. Anything else escaping is a bug.
"""


class CortexError(Exception):
    """A failure the user can fix (bad input, missing memory, corrupt store...)."""


class NotFound(CortexError):
    """No memory, edge or backup matches what was asked for."""


class StoreCorrupt(CortexError):
    """A store file exists but is not a readable Cortex database. Never overwrite it."""


class SchemaTooNew(CortexError):
    """The store was written by a newer Cortex; refuse rather than damage it."""


class NotCortexStore(StoreCorrupt):
    """The file is a SQLite database, but someone else's: refused and never written to."""


class StoreReadOnly(CortexError):
    """The store can be read but not written (a read-only folder, file or mount)."""


class DiskFull(CortexError):
    """The disk (or the file size limit) ran out while Cortex wrote: nothing was committed."""


def disk_full(exc: BaseException) -> bool:
    """True for a write refused for want of space: SQLite's ``database or disk is full``
    (SQLITE_FULL), ENOSPC, EFBIG (a file size limit) or EDQUOT."""
    import errno
    import sqlite3

    if isinstance(exc, sqlite3.Error):
        return getattr(exc, "sqlite_errorcode", 0) & 0xFF == 13 or "disk is full" in str(exc)
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)


def store_io_error(exc: BaseException) -> bool:
    """SQLite could not read or write its files (SQLITE_IOERR: a failing device, or a write
    past a file size limit, EFBIG) or found no space (SQLITE_FULL)."""
    import sqlite3

    return isinstance(exc, sqlite3.Error) and getattr(exc, "sqlite_errorcode", 0) & 0xFF in (10, 13)


FULL_HINT = "free some space and try again"
