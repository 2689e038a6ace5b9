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
