"""The SQLite side of graph upkeep and consolidation (the tables of migration 0007).

Kept apart from ``store.py`` (which it builds on: the same transactions, retries and row
mapping) because only ``services.links`` and ``services.consolidate`` use it. Every change is
one transaction; a merge in particular (the kept memory updated, the other superseded, the
``supersedes`` edge, the other's edges carried over, the candidate marked) is all or nothing.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from cortexmem.core.fts_query import to_fts_query
from cortexmem.core.redact import redact_memory
from cortexmem.errors import CortexError, NotFound
from cortexmem.model import Edge, Memory, new_id, utc_now
from cortexmem.store.protocols import CandidatePair, UpkeepState, pair
from cortexmem.store.sqlite.rows import (
    BM25_WEIGHTS,
    EDGE_COLUMNS,
    INSERT_EDGE,
    MEMORY_SELECT_M,
    edge_row,
    row_to_edge,
    row_to_memory,
)
from cortexmem.store.sqlite.tx import fetchall

if TYPE_CHECKING:
    from cortexmem.store.sqlite.store import SQLiteStore

_M = MEMORY_SELECT_M
_EDGE_COLUMNS = EDGE_COLUMNS
_INSERT_EDGE = INSERT_EDGE


# ----------------------------------------------------------------------------- state


def _ensure_row(conn: sqlite3.Connection) -> None:
    # `cortex reset` empties every table, this one's single row included.
    conn.execute("INSERT OR IGNORE INTO upkeep_state (id) VALUES (1)")


def _state(conn: sqlite3.Connection) -> UpkeepState:
    row = conn.execute(
        "SELECT linked_seq, extractions, active_at_last_run, last_run_at FROM upkeep_state "
        "WHERE id = 1"
    ).fetchone() or (0, 0, 0, None)
    active, newest = conn.execute(
        "SELECT (SELECT count(*) FROM memories WHERE status = 'active'), "
        "(SELECT coalesce(max(seq), 0) FROM memories)"
    ).fetchone()
    return UpkeepState(int(row[0]), int(row[1]), int(row[2]), row[3], int(active), int(newest))


def read_state(store: SQLiteStore) -> UpkeepState:
    return store.read(_state)


def claim_run(
    store: SQLiteStore,
    *,
    add_extraction: bool,
    may_run: bool,
    due: Callable[[UpkeepState], bool],
) -> tuple[UpkeepState, bool]:
    """Count an extraction (when ``add_extraction``) and, if ``due(state)`` and ``may_run``,
    claim the automatic run: the counter restarts and the active count is noted, in the same
    transaction, so two hooks finishing together never both run it."""

    def op(conn: sqlite3.Connection) -> tuple[UpkeepState, bool]:
        _ensure_row(conn)
        if add_extraction:
            conn.execute("UPDATE upkeep_state SET extractions = extractions + 1 WHERE id = 1")
        state = _state(conn)
        if not (may_run and due(state)):
            return state, False
        conn.execute(
            "UPDATE upkeep_state SET extractions = 0, active_at_last_run = ?, last_run_at = ? "
            "WHERE id = 1",
            (state.active, utc_now()),
        )
        return state, True

    return store.write(op)


def advance_cursor(conn: sqlite3.Connection, linked_seq: int) -> None:
    _ensure_row(conn)
    conn.execute(
        "UPDATE upkeep_state SET linked_seq = max(linked_seq, ?) WHERE id = 1", (linked_seq,)
    )


# ----------------------------------------------------------------------------- reading


def memories_after(store: SQLiteStore, seq: int, limit: int | None) -> list[tuple[int, Memory]]:
    """Memories (any status) with a seq above ``seq``, oldest first, as ``(seq, memory)``."""
    sql = f"SELECT m.seq, {_M} FROM memories m WHERE m.seq > ? ORDER BY m.seq LIMIT ?"
    rows = store.read(lambda conn: conn.execute(sql, (seq, limit or -1)).fetchall())
    return [(int(r[0]), row_to_memory(r[1:])) for r in rows]


def count_after(store: SQLiteStore, seq: int) -> int:
    sql = "SELECT count(*) FROM memories WHERE seq > ?"
    return int(store.read(lambda conn: conn.execute(sql, (seq,)).fetchone()[0]))


def memories_by_seq(store: SQLiteStore, seqs: Iterable[int]) -> dict[int, Memory]:
    wanted = sorted(set(seqs))
    found: dict[int, Memory] = {}
    for start in range(0, len(wanted), 400):
        chunk = wanted[start : start + 400]
        sql = f"SELECT m.seq, {_M} FROM memories m WHERE m.seq IN ({', '.join('?' * len(chunk))})"
        rows = store.read(fetchall(sql, chunk))
        found.update((int(r[0]), row_to_memory(r[1:])) for r in rows)
    return found


def text_neighbours(
    store: SQLiteStore, text: str, before_seq: int, limit: int, skip_types: Sequence[str]
) -> list[tuple[int, Memory]]:
    """The active memories older than ``before_seq`` that share the most words with ``text``
    (BM25 over the full-text index, the same weights as recall)."""
    match = to_fts_query(text)
    if match is None or limit <= 0:
        return []
    skip = ", ".join("?" * len(skip_types))
    sql = (
        f"SELECT m.seq, {_M} FROM memories_fts JOIN memories m ON m.seq = memories_fts.rowid "
        "WHERE memories_fts MATCH ? AND m.status = 'active' AND m.seq < ? "
        + (f"AND m.memory_type NOT IN ({skip}) " if skip else "")
        + f"ORDER BY bm25(memories_fts, {', '.join(map(str, BM25_WEIGHTS))}), m.seq DESC LIMIT ?"
    )
    rows = store.read(
        lambda conn: conn.execute(sql, (match, before_seq, *skip_types, limit)).fetchall()
    )
    return [(int(r[0]), row_to_memory(r[1:])) for r in rows]


def vectors_of(store: SQLiteStore, model: str, seqs: Iterable[int]) -> dict[int, bytes]:
    """The stored vectors of ``model`` for ``seqs`` (float32 bytes), where there are any."""
    wanted = sorted(set(seqs))
    found: dict[int, bytes] = {}
    for start in range(0, len(wanted), 400):
        chunk = wanted[start : start + 400]
        sql = (
            "SELECT memory_seq, vector FROM embeddings WHERE model = ? "
            f"AND memory_seq IN ({', '.join('?' * len(chunk))})"
        )
        rows = store.read(fetchall(sql, (model, *chunk)))
        found.update((int(r[0]), bytes(r[1])) for r in rows)
    return found


def vector_chunk(
    store: SQLiteStore,
    model: str,
    after: int,
    before: int,
    limit: int,
    skip_types: Sequence[str],
    sink: Callable[[int, int, bytes], None],
) -> int:
    """Feed ``sink(i, seq, vector bytes)`` the vectors of active memories with
    ``after < seq < before``, in seq order, at most ``limit``; returns how many. Rows are handed
    over one at a time, so a chunk never exists twice in memory (rows, then an array)."""
    skip = ", ".join("?" * len(skip_types))
    sql = (
        # CROSS JOIN and the unary + pin the plan to a range scan of the primary key in seq
        # order (otherwise SQLite reads every active memory and sorts, for each chunk).
        "SELECT e.memory_seq, e.vector FROM embeddings e CROSS JOIN memories m "
        "ON m.seq = e.memory_seq "
        "WHERE +e.model = ? AND e.memory_seq > ? AND e.memory_seq < ? AND m.status = 'active' "
        + (f"AND m.memory_type NOT IN ({skip}) " if skip else "")
        + "ORDER BY e.memory_seq LIMIT ?"
    )
    args = (model, after, before, *skip_types, limit)

    def op(conn: sqlite3.Connection) -> int:
        count = 0
        for count, (seq, blob) in enumerate(conn.execute(sql, args), start=1):
            sink(count - 1, int(seq), blob)
        return count

    return store.read(op)


def settled_with(store: SQLiteStore, memory_id: str) -> set[str]:
    """Ids already settled with ``memory_id``: linked by any edge (either direction, any type
    or status), in a merge candidate of any status, or in a rejected suggestion."""
    sql = (
        "SELECT target_id FROM edges WHERE source_id = :m UNION "
        "SELECT source_id FROM edges WHERE target_id = :m UNION "
        "SELECT b_id FROM merge_candidates WHERE a_id = :m UNION "
        "SELECT a_id FROM merge_candidates WHERE b_id = :m UNION "
        "SELECT b_id FROM rejected_links WHERE a_id = :m UNION "
        "SELECT a_id FROM rejected_links WHERE b_id = :m"
    )
    rows = store.read(lambda conn: conn.execute(sql, {"m": memory_id}).fetchall())
    return {str(r[0]) for r in rows}


# ----------------------------------------------------------------------------- linking


def apply_links(
    store: SQLiteStore,
    edges: Sequence[Edge],
    candidates: Sequence[CandidatePair],
    linked_seq: int,
) -> tuple[int, int]:
    """Store automatic edges and merge candidates and advance the cursor, in one transaction;
    returns ``(edges added, candidates added)``. Refuses a ``supersedes`` edge: only a person
    accepting a merge creates one (:func:`merge`)."""
    for edge in edges:
        if edge.relation_type == "supersedes":
            raise ValueError("supersedes edges are made only by a person accepting a merge")
    now = utc_now()

    def op(conn: sqlite3.Connection) -> tuple[int, int]:
        added_edges = added_pairs = 0
        for edge in edges:
            found = conn.execute(
                "SELECT count(*) FROM memories WHERE id IN (?, ?)", (edge.source_id, edge.target_id)
            ).fetchone()[0]
            if found == 2:  # a memory deleted meanwhile: nothing to link
                added_edges += conn.execute(_INSERT_EDGE, edge_row(edge)).rowcount
        for c in candidates:
            added_pairs += conn.execute(
                "INSERT OR IGNORE INTO merge_candidates (a_id, b_id, jaccard, cosine, status, "
                "created_at) SELECT ?, ?, ?, ?, 'pending', ? "
                "WHERE (SELECT count(*) FROM memories WHERE id IN (?, ?)) = 2",
                (c.a_id, c.b_id, c.jaccard, c.cosine, now, c.a_id, c.b_id),
            ).rowcount
        advance_cursor(conn, linked_seq)
        return added_edges, added_pairs

    return store.write(op)


def set_cursor(store: SQLiteStore, linked_seq: int) -> None:
    store.write(lambda conn: advance_cursor(conn, linked_seq))


# ----------------------------------------------------------------------------- review


def pending_candidates(store: SQLiteStore) -> list[CandidatePair]:
    """Pending merge candidates whose two memories are both still active, most similar first."""
    rows = store.read(
        lambda conn: conn.execute(
            "SELECT c.a_id, c.b_id, c.jaccard, c.cosine, c.status, c.created_at "
            "FROM merge_candidates c JOIN memories a ON a.id = c.a_id "
            "JOIN memories b ON b.id = c.b_id WHERE c.status = 'pending' "
            "AND a.status = 'active' AND b.status = 'active'"
        ).fetchall()
    )
    found = [CandidatePair(r[0], r[1], float(r[2]), r[3], r[4], r[5]) for r in rows]
    return sorted(found, key=lambda c: (-c.similarity, c.a_id, c.b_id))


def suggested_edges(store: SQLiteStore) -> list[Edge]:
    """Suggested edges between two active memories, strongest first."""
    rows = store.read(
        lambda conn: conn.execute(
            f"SELECT {', '.join('e.' + c.strip() for c in _EDGE_COLUMNS.split(','))} "
            "FROM edges e JOIN memories s ON s.id = e.source_id "
            "JOIN memories t ON t.id = e.target_id WHERE e.status = 'suggested' "
            "AND s.status = 'active' AND t.status = 'active' "
            "ORDER BY e.strength DESC, e.id"
        ).fetchall()
    )
    return [row_to_edge(r) for r in rows]


def reject_candidate(store: SQLiteStore, candidate: CandidatePair, link: Edge | None) -> None:
    """Never propose this pair again; ``link`` (a ``relates_to``) records that the two are
    distinct but close."""

    def op(conn: sqlite3.Connection) -> None:
        conn.execute(
            "INSERT INTO merge_candidates (a_id, b_id, jaccard, cosine, status, created_at, "
            "decided_at) VALUES (?, ?, ?, ?, 'rejected', ?, ?) ON CONFLICT (a_id, b_id) "
            "DO UPDATE SET status = 'rejected', decided_at = excluded.decided_at",
            (candidate.a_id, candidate.b_id, candidate.jaccard, candidate.cosine,
             candidate.created_at or utc_now(), utc_now()),
        )  # fmt: skip
        if link is not None:
            if link.relation_type == "supersedes":
                raise ValueError("a rejected merge cannot leave a supersedes edge")
            conn.execute(_INSERT_EDGE, edge_row(link))

    store.write(op)


def accept_edge(store: SQLiteStore, edge_id: str) -> None:
    def op(conn: sqlite3.Connection) -> None:
        cur = conn.execute(
            "UPDATE edges SET status = 'active' WHERE id = ? AND status = 'suggested'", (edge_id,)
        )
        if cur.rowcount == 0:
            raise NotFound(f"no suggested edge {edge_id}")

    store.write(op)


def reject_edge(store: SQLiteStore, edge: Edge) -> None:
    """Delete a suggested edge and remember not to suggest it again."""
    a, b = pair(edge.source_id, edge.target_id)

    def op(conn: sqlite3.Connection) -> None:
        cur = conn.execute("DELETE FROM edges WHERE id = ? AND status = 'suggested'", (edge.id,))
        if cur.rowcount == 0:
            raise NotFound(f"no suggested edge {edge.id}")
        conn.execute(
            "INSERT OR IGNORE INTO rejected_links (a_id, b_id, relation_type, rejected_at) "
            "VALUES (?, ?, ?, ?)",
            (a, b, edge.relation_type, utc_now()),
        )

    store.write(op)


def merge(store: SQLiteStore, keep: Memory, drop_id: str) -> Edge:
    """A person accepted a merge: ``keep`` (as it should now read) stays active, ``drop_id``
    becomes ``superseded`` with a ``supersedes`` edge from the kept memory, the dropped one's
    edges are carried over to the kept one, and the candidate pair is marked merged."""
    keep = redact_memory(keep)
    now = utc_now()
    link = Edge(keep.id, drop_id, "supersedes", strength=1.0, created_at=now)

    def op(conn: sqlite3.Connection) -> Edge:
        statuses = dict(
            conn.execute(
                "SELECT id, status FROM memories WHERE id IN (?, ?)", (keep.id, drop_id)
            ).fetchall()
        )
        for memory_id in (keep.id, drop_id):
            if memory_id not in statuses:
                raise NotFound(f"no memory with id {memory_id}")
            if statuses[memory_id] != "active":
                raise CortexError(f"{memory_id} is {statuses[memory_id]}, no longer active")
        conn.execute(
            "UPDATE memories SET content = ?, summary = ?, tags = ?, priority = ?, "
            "confidence = ?, pinned = ?, access_count = ?, updated_at = ?, content_hash = ? "
            "WHERE id = ?",
            (
                keep.content,
                keep.summary,
                json.dumps(list(keep.tags)),
                keep.priority,
                keep.confidence,
                int(keep.pinned),
                keep.access_count,
                now,
                keep.content_hash,
                keep.id,
            ),
        )
        conn.execute(
            "UPDATE memories SET status = 'superseded', updated_at = ? WHERE id = ?",
            (now, drop_id),
        )
        for row in conn.execute(
            f"SELECT {_EDGE_COLUMNS} FROM edges WHERE (source_id = ? OR target_id = ?) "
            "AND relation_type != 'supersedes'",
            (drop_id, drop_id),
        ).fetchall():
            old = row_to_edge(row)
            source = keep.id if old.source_id == drop_id else old.source_id
            target = keep.id if old.target_id == drop_id else old.target_id
            if source == target:
                continue
            moved = Edge(
                source, target, old.relation_type, strength=old.strength,
                bidirectional=old.bidirectional, status=old.status, id=new_id("e"),
                created_at=now,
            )  # fmt: skip
            conn.execute(_INSERT_EDGE, edge_row(moved))
        conn.execute(_INSERT_EDGE, edge_row(link))
        a, b = pair(keep.id, drop_id)
        conn.execute(
            "UPDATE merge_candidates SET status = 'merged', decided_at = ? "
            "WHERE a_id = ? AND b_id = ?",
            (now, a, b),
        )
        return link

    return store.write(op)
