"""The briefing token of a SQLite store: the one query both the store and the cached
SessionStart path run.

Stdlib only (no numpy, no core, not the store module): SessionStart serves a cached briefing
after reading this token, and that path must stay a few milliseconds.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

# Newest memory and event, active count, newest update: changes with every extraction,
# lifecycle or consolidation change.
TOKEN_SQL = (
    "SELECT (SELECT coalesce(max(seq), 0) FROM memories), "
    "(SELECT coalesce(max(seq), 0) FROM events), "
    "(SELECT count(*) FROM memories WHERE status = 'active'), "
    "(SELECT coalesce(max(updated_at), '') FROM memories)"
)


def token_of(conn: sqlite3.Connection) -> str:
    """The token read over an open connection (inside the caller's transaction, if any)."""
    row = conn.execute(TOKEN_SQL).fetchone()
    return ":".join(str(v) for v in row)


def file_token(db_path: str) -> str | None:
    """The token of the store at ``db_path``, opened read-only; ``None`` if it cannot be read,
    or when the file changed outside Cortex since its last quick_check (``integrity``): the
    caller then opens the store, which checks it, rather than serving from a cache."""
    from cortexmem.store.sqlite.integrity import stamped_ok

    if not stamped_ok(db_path):
        return None
    try:
        uri = Path(os.path.abspath(db_path)).as_uri() + "?mode=ro"  # '#', '?' in paths
        conn = sqlite3.connect(uri, uri=True, timeout=1.0)
    except sqlite3.Error:
        return None
    try:
        return token_of(conn)
    except sqlite3.Error:
        return None
    finally:
        conn.close()
