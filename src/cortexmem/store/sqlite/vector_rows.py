"""Writing vectors of rows that own them (episodes, lessons): one version per batch, a vector
only for a row that still exists, a row's old vector replaced."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from cortexmem.model import utc_now


def put_vectors(
    conn: sqlite3.Connection,
    table: str,
    owner: str,
    owners: str,
    model: str,
    dim: int,
    items: Sequence[tuple[int, bytes]],
) -> int:
    """Write ``items`` (``(seq, vector bytes)``) into ``table`` keyed by ``owner`` (a seq of
    ``owners``) under the next version; returns how many were written."""
    when = utc_now()
    version = int(conn.execute(f"SELECT coalesce(max(version), 0) + 1 FROM {table}").fetchone()[0])
    written = 0
    for seq, blob in items:
        if len(blob) != dim * 4:
            raise ValueError(f"vector of {len(blob)} bytes is not {dim} float32 values")
        written += conn.execute(
            f"INSERT INTO {table} ({owner}, model, dim, vector, version, embedded_at) "
            f"SELECT ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM {owners} WHERE seq = ?) "
            f"ON CONFLICT ({owner}) DO UPDATE SET model = excluded.model, "
            "dim = excluded.dim, vector = excluded.vector, version = excluded.version, "
            "embedded_at = excluded.embedded_at",
            (seq, model, dim, blob, version, when, seq),
        ).rowcount
    return written


def vector_state(conn: sqlite3.Connection, table: str, model: str) -> tuple[int, int]:
    """``(count, highest version)`` of ``model``'s vectors in ``table``."""
    sql = f"SELECT count(*), coalesce(max(version), 0) FROM {table} WHERE model = ?"
    row = conn.execute(sql, (model,)).fetchone()
    return int(row[0]), int(row[1])


def load_vectors(
    conn: sqlite3.Connection, table: str, owner: str, owners: str, label: str, model: str,
    after_version: int,
) -> list[tuple[int, int, str, bytes]]:  # fmt: skip
    """``(seq, version, label, vector bytes)`` of ``model`` written after ``after_version``
    (``label``: the owner's column the index filters on: an episode's role, a lesson's kind)."""
    return conn.execute(
        f"SELECT v.{owner}, v.version, o.{label}, v.vector FROM {table} v "
        f"JOIN {owners} o ON o.seq = v.{owner} WHERE v.model = ? AND v.version > ? "
        f"ORDER BY v.{owner}",
        (model, after_version),
    ).fetchall()
