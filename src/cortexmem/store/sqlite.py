"""The SQLite store: one file per scope, WAL, FTS5, numbered migrations, online backups.

Concurrency: hooks of several sessions write to one file at once. Every write runs in a
``BEGIN IMMEDIATE`` transaction (the write lock is taken up front, so two readers can never
deadlock trying to upgrade) under a busy timeout, and a transaction that still meets
"database is locked" is retried with jittered back-off until the deadline. Nothing is written
outside a transaction, so a failure leaves nothing half-done.

Safety: a file that exists but is not a SQLite database is reported, never overwritten; a store
written by a newer Cortex is refused; a backup is taken before migrating, restoring or clearing.
"""

from __future__ import annotations

import contextlib
import json
import random
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from cortexmem.core.filters import MemoryFilter
from cortexmem.core.fts_query import to_fts_query
from cortexmem.core.ranking import Candidate
from cortexmem.core.redact import redact_event, redact_memory
from cortexmem.errors import CortexError, NotFound, SchemaTooNew, StoreCorrupt
from cortexmem.model import (
    BRANCH_SCOPED_TYPES,
    MEMORY_STATUSES,
    Edge,
    Event,
    ExtractionCursor,
    Memory,
    Observation,
    Provenance,
    SourceContext,
    normalise_tags,
    utc_now,
)
from cortexmem.store.base import CaptureResult, ImportResult, StoreCounts
from cortexmem.store.migrations import all_migrations, head_version

T = TypeVar("T")

SQLITE_HEADER = b"SQLite format 3\x00"
DEFAULT_TIMEOUT = 30.0
KEEP_BACKUPS = 20
# Column weights for bm25(): content, summary, tags. Content weighs double: a summary repeats
# part of it, and on LoCoMo this lifts lexical recall@10 from 0.782 to 0.808 (bench/locomo.py).
BM25_WEIGHTS = (2.0, 1.0, 0.5)

_MEMORY_COLUMNS = (
    "id, content, summary, memory_type, category, confidence, priority, pinned, source_type, "
    "source_session, source_branch, source_cwd, source_commit, tags, access_count, "
    "last_accessed_at, created_at, updated_at, status, content_hash"
)
_MEMORY_SELECT = _MEMORY_COLUMNS.replace("content_hash", "content_hash AS _hash")
_INSERT_MEMORY = f"INSERT INTO memories ({_MEMORY_COLUMNS}) VALUES ({', '.join('?' * 20)})"


def fts5_available() -> bool:
    """Whether this Python's SQLite was built with FTS5 (it is required)."""
    try:
        with contextlib.closing(sqlite3.connect(":memory:")) as conn:
            conn.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
        return True
    except sqlite3.OperationalError:
        return False


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def _is_corrupt(exc: sqlite3.DatabaseError) -> bool:
    text = str(exc).lower()
    return "not a database" in text or "malformed" in text or "encrypted" in text


def check_header(path: Path) -> None:
    """Refuse a non-empty file that is not a SQLite database (never read it as empty)."""
    try:
        with path.open("rb") as fh:
            head = fh.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        return
    except OSError as exc:
        raise CortexError(f"cannot read store {path}: {exc.strerror}") from exc
    if head and head != SQLITE_HEADER:
        raise StoreCorrupt(
            f"{path} is not a SQLite database; it was left untouched. "
            "Move it aside, or restore a backup with `cortex restore`."
        )


def memory_to_row(m: Memory) -> tuple[Any, ...]:
    ctx = m.source_context
    return (
        m.id,
        m.content,
        m.summary,
        m.memory_type,
        m.category,
        m.confidence,
        m.priority,
        int(m.pinned),
        m.source_type,
        m.source_session,
        ctx.branch,
        ctx.cwd,
        ctx.commit,
        json.dumps(list(m.tags)),
        m.access_count,
        m.last_accessed_at,
        m.created_at,
        m.updated_at,
        m.status,
        m.content_hash,
    )


def row_to_memory(row: sqlite3.Row | tuple[Any, ...]) -> Memory:
    return Memory(
        id=row[0],
        content=row[1],
        summary=row[2],
        memory_type=row[3],
        category=row[4],
        confidence=row[5],
        priority=row[6],
        pinned=bool(row[7]),
        source_type=row[8],
        source_session=row[9],
        source_context=SourceContext(branch=row[10], cwd=row[11], commit=row[12]),
        tags=tuple(json.loads(row[13])),
        access_count=row[14],
        last_accessed_at=row[15],
        created_at=row[16],
        updated_at=row[17],
        status=row[18],
    )


def _filter_sql(flt: MemoryFilter, alias: str = "m") -> tuple[str, list[Any]]:
    """SQL for ``core.filters.visible`` (a test checks the two agree)."""
    clauses: list[str] = []
    params: list[Any] = []
    if flt.statuses:
        clauses.append(f"{alias}.status IN ({', '.join('?' * len(flt.statuses))})")
        params += flt.statuses
    if flt.types:
        clauses.append(f"{alias}.memory_type IN ({', '.join('?' * len(flt.types))})")
        params += flt.types
    if flt.branch is not None:
        scoped = sorted(BRANCH_SCOPED_TYPES)
        clauses.append(
            f"({alias}.memory_type NOT IN ({', '.join('?' * len(scoped))}) "
            f"OR {alias}.source_branch IS NULL OR {alias}.source_branch = ?)"
        )
        params += [*scoped, flt.branch]
    return (" AND ".join(clauses) or "1"), params


class SQLiteStore:
    """A Cortex store in one SQLite file. Open with :meth:`open`; use as a context manager."""

    def __init__(self, path: Path, conn: sqlite3.Connection, timeout: float) -> None:
        self.path = path
        self._conn = conn
        self._timeout = timeout

    # ----------------------------------------------------------------- opening & schema

    @classmethod
    def open(cls, path: Path, *, timeout: float = DEFAULT_TIMEOUT) -> SQLiteStore:
        """Open (creating if needed) and migrate the store at ``path``."""
        path = Path(path)
        check_header(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = sqlite3.connect(
                str(path), timeout=timeout, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise CortexError(f"cannot open store {path}: {exc}") from exc
        store = cls(path, conn, timeout)
        try:
            store._configure()
            store._migrate()
        except BaseException:
            conn.close()
            raise
        return store

    def _configure(self) -> None:
        conn = self._conn
        conn.execute(f"PRAGMA busy_timeout = {int(self._timeout * 1000)}")
        mode = self._retry(lambda: conn.execute("PRAGMA journal_mode = WAL").fetchone()[0])
        if str(mode).lower() != "wal":
            raise CortexError(f"cannot put {self.path} in WAL mode (got {mode})")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")

    def schema_version(self) -> int:
        return int(self._guard(lambda: self._conn.execute("PRAGMA user_version").fetchone()[0]))

    def _migrate(self) -> None:
        head = head_version()
        current = self.schema_version()
        if current > head:
            raise SchemaTooNew(
                f"{self.path} has schema version {current}, newer than this Cortex knows "
                f"({head}); upgrade cortex-memory to use it"
            )
        if current == head:
            return
        if current > 0:
            self.backup(f"pre-migrate-v{current}")

        def apply() -> None:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                # Another process may have migrated while we waited for the lock.
                version = conn.execute("PRAGMA user_version").fetchone()[0]
                for migration in all_migrations()[version:]:
                    for statement in migration.statements():
                        conn.execute(statement)
                    conn.execute(f"PRAGMA user_version = {migration.version}")
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

        self._retry(apply)

    # ----------------------------------------------------------------- plumbing

    @property
    def location(self) -> str:
        return str(self.path)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _guard(self, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except sqlite3.DatabaseError as exc:
            if _is_corrupt(exc):
                raise StoreCorrupt(
                    f"{self.path} is damaged ({exc}); restore a backup with `cortex restore`"
                ) from exc
            raise

    def _retry(self, fn: Callable[[], T]) -> T:
        deadline = time.monotonic() + self._timeout
        delay = 0.005
        while True:
            try:
                return self._guard(fn)
            except sqlite3.OperationalError as exc:
                if not _is_busy(exc) or time.monotonic() >= deadline:
                    raise
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, 0.25)

    def _write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
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

        return self._retry(attempt)

    def _read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` in one read transaction so its queries see one snapshot."""

        def attempt() -> T:
            conn = self._conn
            conn.execute("BEGIN")
            try:
                return fn(conn)
            finally:
                if conn.in_transaction:
                    conn.execute("COMMIT")

        return self._retry(attempt)

    # ----------------------------------------------------------------- memories

    def add_memory(self, memory: Memory) -> tuple[Memory, bool]:
        memory = redact_memory(memory)

        def op(conn: sqlite3.Connection) -> tuple[Memory, bool]:
            row = conn.execute(
                f"SELECT {_MEMORY_SELECT} FROM memories "
                "WHERE content_hash = ? AND status = 'active' LIMIT 1",
                (memory.content_hash,),
            ).fetchone()
            if row is not None:
                return row_to_memory(row), False
            conn.execute(_INSERT_MEMORY, memory_to_row(memory))
            return memory, True

        return self._write(op)

    def replace_tagged(
        self, tag: str, memories: Sequence[Memory], edges: Sequence[tuple[int, int, str]]
    ) -> tuple[list[Memory], int, int]:
        """Make ``memories`` (linked by ``edges`` given as index pairs) the active memories
        tagged ``tag``, in one transaction: an existing one with the same content is kept,
        active ones with that tag and other content are archived.

        Returns ``(stored memories, how many were added, how many were archived)``.
        """
        (tag,) = normalise_tags((tag,))  # stored tags are normalised (lower-case)
        memories = [redact_memory(m) for m in memories]

        def op(conn: sqlite3.Connection) -> tuple[list[Memory], int, int]:
            stored: list[Memory] = []
            added = 0
            for memory in memories:
                row = conn.execute(
                    f"SELECT {_MEMORY_SELECT} FROM memories WHERE content_hash = ? "
                    "AND status = 'active' LIMIT 1",
                    (memory.content_hash,),
                ).fetchone()
                if row is None:
                    conn.execute(_INSERT_MEMORY, memory_to_row(memory))
                    stored.append(memory)
                    added += 1
                else:
                    stored.append(row_to_memory(row))
            keep = [m.id for m in stored]
            marks = ", ".join("?" * len(keep)) or "''"
            archived = conn.execute(
                "UPDATE memories SET status = 'archived', updated_at = ? WHERE status = 'active'"
                " AND EXISTS (SELECT 1 FROM json_each(memories.tags) WHERE value = ?)"
                f" AND id NOT IN ({marks})",
                (utc_now(), tag, *keep),
            ).rowcount
            for a, b, relation in edges:
                conn.execute(
                    "INSERT OR IGNORE INTO edges (id, source_id, target_id, relation_type, "
                    "strength, bidirectional, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    _edge_row(Edge(stored[a].id, stored[b].id, relation)),
                )
            return stored, added, archived

        return self._write(op)

    def add_memories(self, memories: Iterable[Memory]) -> int:
        rows = [memory_to_row(redact_memory(m)) for m in memories]
        self._write(lambda conn: conn.executemany(_INSERT_MEMORY, rows))
        return len(rows)

    def get_memory(self, memory_id: str) -> Memory | None:
        row = self._retry(
            lambda: self._conn.execute(
                f"SELECT {_MEMORY_SELECT} FROM memories WHERE id = ?", (memory_id,)
            ).fetchone()
        )
        return row_to_memory(row) if row else None

    def find_by_prefix(self, prefix: str, limit: int = 10) -> list[Memory]:
        # Range scan on the unique index instead of LIKE: no wildcard escaping to get wrong.
        rows = self._retry(
            lambda: self._conn.execute(
                f"SELECT {_MEMORY_SELECT} FROM memories WHERE id >= ? AND id < ? "
                "ORDER BY id LIMIT ?",
                (prefix, prefix + "\U0010ffff", limit),
            ).fetchall()
        )
        return [row_to_memory(r) for r in rows]

    def set_status(self, memory_id: str, status: str) -> Memory:
        if status not in MEMORY_STATUSES:
            raise ValueError(f"unknown status {status!r}")

        def op(conn: sqlite3.Connection) -> None:
            cur = conn.execute(
                "UPDATE memories SET status = ?, updated_at = ? WHERE id = ?",
                (status, utc_now(), memory_id),
            )
            if cur.rowcount == 0:
                raise NotFound(f"no memory with id {memory_id}")

        self._write(op)
        memory = self.get_memory(memory_id)
        assert memory is not None
        return memory

    def iter_memories(self, flt: MemoryFilter | None = None) -> Iterator[Memory]:
        where, params = _filter_sql(flt or MemoryFilter(statuses=()), alias="memories")
        rows = self._retry(
            lambda: self._conn.execute(
                f"SELECT {_MEMORY_SELECT} FROM memories WHERE {where} ORDER BY seq", params
            ).fetchall()
        )
        for row in rows:
            yield row_to_memory(row)

    def search_text(self, query: str, flt: MemoryFilter, limit: int, scope: str) -> list[Candidate]:
        match = to_fts_query(query)
        if match is None or limit <= 0:
            return []
        where, params = _filter_sql(flt)
        sql = (
            f"SELECT {', '.join('m.' + c.strip() for c in _MEMORY_SELECT.split(','))}, "
            f"bm25(memories_fts, {', '.join(map(str, BM25_WEIGHTS))}) AS score, "
            "(SELECT count(*) FROM edges e WHERE e.target_id = m.id AND e.status = 'active') "
            "FROM memories_fts JOIN memories m ON m.seq = memories_fts.rowid "
            # On equal scores keep the newest, as the ranker's tie-break does.
            f"WHERE memories_fts MATCH ? AND {where} ORDER BY score, m.seq DESC LIMIT ?"
        )

        def op(conn: sqlite3.Connection) -> list[Candidate]:
            rows = conn.execute(sql, (match, *params, limit)).fetchall()
            if not rows:
                return []
            max_in, max_access = self._maxima(conn)
            return [
                Candidate(
                    memory=row_to_memory(r),
                    scope=scope,
                    relevance=-float(r[20]),
                    in_degree=int(r[21]),
                    max_in_degree=max_in,
                    max_access=max_access,
                )
                for r in rows
            ]

        return self._read(op)

    # ----------------------------------------------------------------- vectors

    _BACKLOG = (
        "FROM memories m LEFT JOIN embeddings e ON e.memory_seq = m.seq "
        "WHERE m.status IN ('active', 'archived') AND (e.memory_seq IS NULL "
        "OR e.model != ? OR e.source_hash != m.content_hash)"
    )

    def embedding_backlog(
        self, model: str, limit: int, skip_types: Sequence[str] = ()
    ) -> list[tuple[int, Memory]]:
        """Memories (active or archived) with no vector from ``model`` for their current
        content, oldest first, as ``(seq, memory)``; ``skip_types`` are never embedded."""
        skip = ", ".join("?" * len(skip_types))
        sql = (
            f"SELECT m.seq, {', '.join('m.' + c.strip() for c in _MEMORY_SELECT.split(','))} "
            f"{self._BACKLOG} {f'AND m.memory_type NOT IN ({skip})' if skip else ''} "
            "ORDER BY m.seq LIMIT ?"
        )
        rows = self._read(lambda conn: conn.execute(sql, (model, *skip_types, limit)).fetchall())
        return [(int(r[0]), row_to_memory(r[1:])) for r in rows]

    def embedding_backlog_size(self, model: str, skip_types: Sequence[str] = ()) -> int:
        skip = ", ".join("?" * len(skip_types))
        sql = (
            f"SELECT count(*) {self._BACKLOG} "
            f"{f'AND m.memory_type NOT IN ({skip})' if skip else ''}"
        )
        return int(self._read(lambda conn: conn.execute(sql, (model, *skip_types)).fetchone()[0]))

    def put_embeddings(self, model: str, dim: int, items: Sequence[tuple[int, str, bytes]]) -> int:
        """Store ``(seq, source_hash, float32 bytes)`` vectors of ``model``; one transaction.
        A memory deleted meanwhile is skipped."""
        if not items:
            return 0
        when = utc_now()

        def op(conn: sqlite3.Connection) -> int:
            version = conn.execute("SELECT coalesce(max(version), 0) + 1 FROM embeddings")
            version = int(version.fetchone()[0])
            written = 0
            for seq, source_hash, blob in items:
                if len(blob) != dim * 4:
                    raise ValueError(f"vector of {len(blob)} bytes is not {dim} float32 values")
                written += conn.execute(
                    "INSERT INTO embeddings (memory_seq, model, dim, source_hash, vector, "
                    "version, embedded_at) SELECT ?, ?, ?, ?, ?, ?, ? "
                    "WHERE EXISTS (SELECT 1 FROM memories WHERE seq = ?) "
                    "ON CONFLICT (memory_seq) DO UPDATE SET model = excluded.model, "
                    "dim = excluded.dim, source_hash = excluded.source_hash, "
                    "vector = excluded.vector, version = excluded.version, "
                    "embedded_at = excluded.embedded_at",
                    (seq, model, dim, source_hash, blob, version, when, seq),
                ).rowcount
            return written

        return self._write(op)

    def embedding_state(self, model: str) -> tuple[int, int]:
        """``(count, highest version)`` of ``model``'s vectors: a cache compares these to know
        whether it is current."""
        row = self._read(
            lambda conn: conn.execute(
                "SELECT count, version FROM embedding_counts WHERE model = ?", (model,)
            ).fetchone()
        )
        return (int(row[0]), int(row[1])) if row else (0, 0)

    def load_embeddings(
        self, model: str, after_version: int = 0
    ) -> list[tuple[int, int, str, bytes]]:
        """``(seq, version, memory_type, vector bytes)`` of ``model`` written after
        ``after_version``."""
        return self._read(
            lambda conn: conn.execute(
                "SELECT e.memory_seq, e.version, m.memory_type, e.vector FROM embeddings e "
                "JOIN memories m ON m.seq = e.memory_seq WHERE e.model = ? AND e.version > ? "
                "ORDER BY e.memory_seq",
                (model, after_version),
            ).fetchall()
        )

    def candidates_by_seq(
        self, scored: Sequence[tuple[int, float]], flt: MemoryFilter, scope: str
    ) -> list[Candidate]:
        """The memories of ``(seq, similarity)`` pairs that pass ``flt``, as candidates in the
        given order (similarity is their relevance)."""
        if not scored:
            return []
        similarity = dict(scored)
        where, params = _filter_sql(flt)
        marks = ", ".join("?" * len(similarity))
        sql = (
            f"SELECT m.seq, {', '.join('m.' + c.strip() for c in _MEMORY_SELECT.split(','))}, "
            "(SELECT count(*) FROM edges e WHERE e.target_id = m.id AND e.status = 'active') "
            f"FROM memories m WHERE m.seq IN ({marks}) AND {where}"
        )

        def op(conn: sqlite3.Connection) -> list[Candidate]:
            rows = conn.execute(sql, (*similarity, *params)).fetchall()
            if not rows:
                return []
            max_in, max_access = self._maxima(conn)
            order = {seq: i for i, (seq, _) in enumerate(scored)}
            rows.sort(key=lambda r: order[int(r[0])])
            return [
                Candidate(
                    memory=row_to_memory(r[1:21]),
                    scope=scope,
                    relevance=similarity[int(r[0])],
                    in_degree=int(r[21]),
                    max_in_degree=max_in,
                    max_access=max_access,
                )
                for r in rows
            ]

        return self._read(op)

    def seq_of(self, memory_ids: Sequence[str]) -> dict[str, int]:
        if not memory_ids:
            return {}
        marks = ", ".join("?" * len(memory_ids))
        rows = self._read(
            lambda conn: conn.execute(
                f"SELECT id, seq FROM memories WHERE id IN ({marks})", tuple(memory_ids)
            ).fetchall()
        )
        return {str(r[0]): int(r[1]) for r in rows}

    def maxima(self) -> tuple[int, int]:
        """``(highest in-degree, highest access count)`` of the store: what centrality and
        access are normalised by."""
        return self._read(self._maxima)

    @staticmethod
    def _maxima(conn: sqlite3.Connection) -> tuple[int, int]:
        max_in = conn.execute(
            "SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM edges "
            "WHERE status = 'active' GROUP BY target_id)"
        ).fetchone()[0]
        max_access = conn.execute("SELECT coalesce(max(access_count), 0) FROM memories")
        return int(max_in), int(max_access.fetchone()[0])

    def record_access(self, memory_ids: Sequence[str], when: str) -> None:
        if not memory_ids:
            return
        marks = ", ".join("?" * len(memory_ids))
        self._write(
            lambda conn: conn.execute(
                "UPDATE memories SET access_count = access_count + 1, last_accessed_at = ? "
                f"WHERE id IN ({marks})",
                (when, *memory_ids),
            )
        )

    # ----------------------------------------------------------------- edges & events

    def add_edge(self, edge: Edge) -> tuple[Edge, bool]:
        def op(conn: sqlite3.Connection) -> tuple[Edge, bool]:
            found = conn.execute(
                "SELECT id FROM memories WHERE id IN (?, ?)", (edge.source_id, edge.target_id)
            ).fetchall()
            if len(found) < 2:
                raise NotFound("both ends of an edge must be memories in the same store")
            cur = conn.execute(
                "INSERT OR IGNORE INTO edges (id, source_id, target_id, relation_type, strength,"
                " bidirectional, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                _edge_row(edge),
            )
            if cur.rowcount:
                return edge, True
            row = conn.execute(
                "SELECT id, source_id, target_id, relation_type, strength, bidirectional, "
                "status, created_at FROM edges "
                "WHERE source_id = ? AND target_id = ? AND relation_type = ?",
                (edge.source_id, edge.target_id, edge.relation_type),
            ).fetchone()
            return _row_to_edge(row), False

        return self._write(op)

    def iter_edges(self) -> Iterator[Edge]:
        rows = self._retry(
            lambda: self._conn.execute(
                "SELECT id, source_id, target_id, relation_type, strength, bidirectional, "
                "status, created_at FROM edges ORDER BY created_at, id"
            ).fetchall()
        )
        for row in rows:
            yield _row_to_edge(row)

    def edges_touching(self, memory_ids: Iterable[str]) -> list[Edge]:
        """Every edge (any status) with one of ``memory_ids`` at either end."""
        ids = sorted(set(memory_ids))
        out: list[Edge] = []
        for start in range(0, len(ids), 400):
            chunk = ids[start : start + 400]
            marks = ", ".join("?" * len(chunk))
            rows = self._retry(
                lambda chunk=chunk, marks=marks: self._conn.execute(
                    "SELECT id, source_id, target_id, relation_type, strength, bidirectional, "
                    f"status, created_at FROM edges WHERE source_id IN ({marks}) "
                    f"OR target_id IN ({marks}) ORDER BY id",
                    (*chunk, *chunk),
                ).fetchall()
            )
            out += [_row_to_edge(r) for r in rows]
        return list({e.id: e for e in out}.values())

    def get_memories(self, memory_ids: Iterable[str]) -> dict[str, Memory]:
        ids = sorted(set(memory_ids))
        found: dict[str, Memory] = {}
        for start in range(0, len(ids), 400):
            chunk = ids[start : start + 400]
            marks = ", ".join("?" * len(chunk))
            rows = self._retry(
                lambda chunk=chunk, marks=marks: self._conn.execute(
                    f"SELECT {_MEMORY_SELECT} FROM memories WHERE id IN ({marks})", chunk
                ).fetchall()
            )
            for row in rows:
                memory = row_to_memory(row)
                found[memory.id] = memory
        return found

    def append_event(self, event: Event) -> bool:
        row = _event_row(redact_event(event))
        cur = self._write(lambda conn: conn.execute(_INSERT_EVENT, row))
        return bool(cur.rowcount)

    def iter_events(self) -> Iterator[Event]:
        rows = self._retry(
            lambda: self._conn.execute(
                "SELECT id, kind, content, payload, confidence, salience, session_id, "
                "transcript_path, line, branch, commit_sha, created_at FROM events ORDER BY seq"
            ).fetchall()
        )
        for row in rows:
            yield _row_to_event(row)

    # ----------------------------------------------------------------- briefing

    def top_memories(
        self, types: Sequence[str], flt: MemoryFilter, limit: int
    ) -> list[tuple[Memory, int]]:
        """The most important active memories of ``types`` under ``flt``, with their
        in-degree: pinned first, then priority, confidence and recency (the briefing's pool)."""
        where, params = _filter_sql(replace(flt, types=tuple(types)))
        sql = (
            f"SELECT {', '.join('m.' + c.strip() for c in _MEMORY_SELECT.split(','))}, "
            "(SELECT count(*) FROM edges e WHERE e.target_id = m.id AND e.status = 'active') "
            f"FROM memories m WHERE {where} "
            "ORDER BY m.pinned DESC, m.priority DESC, m.confidence DESC, m.created_at DESC, m.id "
            "LIMIT ?"
        )
        rows = self._read(lambda conn: conn.execute(sql, (*params, limit)).fetchall())
        return [(row_to_memory(r[:20]), int(r[20])) for r in rows]

    def recent_events(
        self, kinds: Sequence[str], limit: int, session_id: str | None = None
    ) -> list[Event]:
        """The newest events of ``kinds`` (optionally of one session), newest first."""
        marks = ", ".join("?" * len(kinds))
        sql = (
            "SELECT id, kind, content, payload, confidence, salience, session_id, "
            f"transcript_path, line, branch, commit_sha, created_at FROM events "
            f"WHERE kind IN ({marks})"
            + (" AND session_id = ?" if session_id is not None else "")
            + " ORDER BY seq DESC LIMIT ?"
        )
        args = (*kinds, *((session_id,) if session_id is not None else ()), limit)
        rows = self._read(lambda conn: conn.execute(sql, args).fetchall())
        return [_row_to_event(r) for r in rows]

    def briefing_token(self) -> str:
        """Changes whenever what a briefing is made of changes: new memories or events, or a
        memory changing status (archived, superseded, restored)."""
        row = self._read(
            lambda conn: conn.execute(
                "SELECT (SELECT coalesce(max(seq), 0) FROM memories), "
                "(SELECT coalesce(max(seq), 0) FROM events), "
                "(SELECT count(*) FROM memories WHERE status = 'active'), "
                "(SELECT coalesce(max(updated_at), '') FROM memories)"
            ).fetchone()
        )
        return ":".join(str(v) for v in row)

    def get_cursor(self, transcript_path: str) -> ExtractionCursor | None:
        row = self._retry(
            lambda: self._conn.execute(
                "SELECT transcript_path, byte_offset, line, head_hash, session_id, updated_at "
                "FROM extraction_cursors WHERE transcript_path = ?",
                (transcript_path,),
            ).fetchone()
        )
        if row is None:
            return None
        return ExtractionCursor(
            transcript_path=row[0],
            offset=row[1],
            line=row[2],
            head_hash=row[3],
            session_id=row[4],
            updated_at=row[5],
        )

    def set_cursor(self, cursor: ExtractionCursor) -> None:
        self._write(lambda conn: _upsert_cursor(conn, cursor))

    # ----------------------------------------------------------------- capture

    def record_capture(
        self,
        events: Sequence[Event],
        memories_for: Callable[[list[Event]], list[Memory]],
        cursor: ExtractionCursor | None,
        observations: Sequence[Observation] = (),
    ) -> CaptureResult:
        events = [redact_event(e) for e in events]
        obs_rows = [_observation_row(o) for o in observations]

        def op(conn: sqlite3.Connection) -> CaptureResult:
            result = CaptureResult()
            fresh = [e for e in events if conn.execute(_INSERT_EVENT, _event_row(e)).rowcount]
            result.events_added = len(fresh)
            for memory in memories_for(fresh) if fresh else []:
                memory = redact_memory(memory)
                seen = conn.execute(
                    "SELECT 1 FROM memories WHERE content_hash = ? AND status = 'active' LIMIT 1",
                    (memory.content_hash,),
                ).fetchone()
                if seen is not None:
                    continue
                # Said again after the lifecycle archived it for fading: it comes back, with the
                # new statement's confidence if higher, instead of a duplicate. (A memory a
                # person archived has no archived_at and stays archived.)
                revived = conn.execute(
                    "UPDATE memories SET status = 'active', archived_at = NULL, "
                    "below_since = NULL, decayed_at = ?, confidence = max(confidence, ?), "
                    "updated_at = ? WHERE seq = (SELECT seq FROM memories WHERE content_hash = ? "
                    "AND status = 'archived' AND archived_at IS NOT NULL LIMIT 1)",
                    (memory.created_at, memory.confidence, utc_now(), memory.content_hash),
                ).rowcount
                if revived:
                    result.memories_restored += 1
                    continue
                conn.execute(_INSERT_MEMORY, memory_to_row(memory))
                result.memories_added += 1
                result.memory_ids.append(memory.id)
            for row in obs_rows:
                result.observations_added += conn.execute(_INSERT_OBSERVATION, row).rowcount
            if cursor is not None:
                _upsert_cursor(conn, cursor)
            return result

        return self._write(op)

    def iter_observations(self, session_id: str | None = None) -> Iterator[Observation]:
        sql = f"SELECT {_OBSERVATION_COLUMNS} FROM observations"
        params: tuple[Any, ...] = ()
        if session_id is not None:
            sql += " WHERE session_id = ?"
            params = (session_id,)
        rows = self._retry(lambda: self._conn.execute(sql + " ORDER BY seq", params).fetchall())
        for row in rows:
            yield Observation(
                session_id=row[0], tool=row[1], detail=row[2], ok=bool(row[3]),
                duration_ms=row[4], prev_tool=row[5], prev2_tool=row[6], tool_use_id=row[7],
                at=row[8], branch=row[9],
            )  # fmt: skip

    # ----------------------------------------------------------------- statistics

    def counts(self) -> StoreCounts:
        def op(conn: sqlite3.Connection) -> StoreCounts:
            by_type = dict(
                conn.execute(
                    "SELECT memory_type, count(*) FROM memories WHERE status = 'active' "
                    "GROUP BY memory_type ORDER BY memory_type"
                ).fetchall()
            )
            by_status = dict(
                conn.execute(
                    "SELECT status, count(*) FROM memories GROUP BY status ORDER BY status"
                ).fetchall()
            )
            edges = conn.execute("SELECT count(*) FROM edges").fetchone()[0]
            events = conn.execute("SELECT count(*) FROM events").fetchone()[0]
            observations = conn.execute("SELECT count(*) FROM observations").fetchone()[0]
            transcripts, last = conn.execute(
                "SELECT count(*), max(updated_at) FROM extraction_cursors "
                "WHERE transcript_path NOT LIKE 'spool:%'"
            ).fetchone()
            return StoreCounts(by_type, by_status, edges, events, observations, transcripts, last)

        return self._read(op)

    def size_bytes(self) -> int:
        total = 0
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                total += Path(str(self.path) + suffix).stat().st_size
        return total

    # ----------------------------------------------------------------- import

    def import_records(
        self, memories: Sequence[Memory], edges: Sequence[Edge], events: Sequence[Event]
    ) -> ImportResult:
        def op(conn: sqlite3.Connection) -> ImportResult:
            result = ImportResult()
            for memory in memories:
                _merge_memory(conn, redact_memory(memory), result)
            for edge in edges:
                found = conn.execute(
                    "SELECT count(*) FROM memories WHERE id IN (?, ?)",
                    (edge.source_id, edge.target_id),
                ).fetchone()[0]
                if found < 2:
                    result.skipped.append(f"edge {edge.id}: an end is not in this store")
                    continue
                cur = conn.execute(
                    "INSERT OR IGNORE INTO edges (id, source_id, target_id, relation_type, "
                    "strength, bidirectional, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    _edge_row(edge),
                )
                result.edges_added += cur.rowcount
            for event in events:
                row = _event_row(redact_event(event))
                result.events_added += conn.execute(_INSERT_EVENT, row).rowcount
            return result

        return self._write(op)

    # ----------------------------------------------------------------- backup & restore

    @property
    def backup_dir(self) -> Path:
        return self.path.parent / "backups"

    def backup(self, reason: str) -> Path:
        """An online, consistent copy of the store (SQLite's backup API) in ``backups/``."""
        return self._backup_from(self._conn, reason)

    def _backup_from(self, source: sqlite3.Connection, reason: str) -> Path:
        self.backup_dir.mkdir(parents=True, exist_ok=True)
        now = time.time_ns()
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now // 10**9)) + f"{now % 10**9:09d}"
        safe_reason = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in reason)
        dest = self.backup_dir / f"{self.path.stem}-{stamp}-{safe_reason}.db"
        tmp = dest.with_suffix(".db.part")
        try:
            with contextlib.closing(sqlite3.connect(str(tmp))) as target:
                self._retry(lambda: source.backup(target))
                # A backup is a single self-contained file: no -wal/-shm beside it.
                target.execute("PRAGMA journal_mode = DELETE")
            tmp.replace(dest)
        finally:
            tmp.unlink(missing_ok=True)
        self._prune_backups()
        return dest

    def _backup_under_lock(self, reason: str) -> Path:
        """Back up while this connection holds the write lock (inside ``_write``).

        A second connection reads the last committed state (WAL lets it), so nothing another
        process commits can fall between the backup and the change that follows it.
        """
        with contextlib.closing(sqlite3.connect(str(self.path), timeout=self._timeout)) as reader:
            return self._backup_from(reader, reason)

    def list_backups(self) -> list[Path]:
        if not self.backup_dir.is_dir():
            return []
        return sorted(self.backup_dir.glob(f"{self.path.stem}-*.db"))

    def _prune_backups(self) -> None:
        for old in self.list_backups()[:-KEEP_BACKUPS]:
            old.unlink(missing_ok=True)

    def restore(self, backup: Path) -> Path:
        """Replace the contents with ``backup``'s, in one transaction, after a safety backup.

        The backup is first copied aside and migrated to the current schema, so an old backup
        restores into a current store and the backup file itself is never modified.
        """
        backup = Path(backup)
        if not backup.is_file():
            raise NotFound(f"no backup at {backup}")
        check_header(backup)
        with tempfile.TemporaryDirectory(dir=self.path.parent, prefix=".restore-") as tmp:
            staged = Path(tmp) / "staged.db"
            shutil.copyfile(backup, staged)
            _require_cortex_store(staged, backup)
            SQLiteStore.open(staged, timeout=self._timeout).close()
            return self._replace_contents(staged)

    def _replace_contents(self, source: Path) -> Path:
        conn = self._conn
        self._retry(lambda: conn.execute("ATTACH DATABASE ? AS src", (str(source),)))
        try:

            def op(conn: sqlite3.Connection) -> Path:
                safety = self._backup_under_lock("pre-restore")
                conn.execute("PRAGMA defer_foreign_keys = ON")
                tables = _data_tables(conn)
                for table in reversed(tables):
                    conn.execute(f'DELETE FROM main."{table}"')
                for table in tables:
                    conn.execute(f'INSERT INTO main."{table}" SELECT * FROM src."{table}"')
                return safety

            return self._write(op)
        finally:
            conn.execute("DETACH DATABASE src")

    def clear(self) -> Path:
        """Delete everything, after a backup taken under the same write lock."""

        def op(conn: sqlite3.Connection) -> Path:
            safety = self._backup_under_lock("pre-reset")
            conn.execute("PRAGMA defer_foreign_keys = ON")
            for table in reversed(_data_tables(conn)):
                conn.execute(f'DELETE FROM main."{table}"')
            return safety

        return self._write(op)

    def snapshot(self) -> tuple[list[Memory], list[Edge], list[Event]]:
        """Memories, edges and events as of one moment (for export)."""
        return self._read(
            lambda conn: (
                list(self.iter_memories()),
                list(self.iter_edges()),
                list(self.iter_events()),
            )
        )


# Parents before children, so foreign keys hold while copying.
_TABLE_ORDER = ("memories", "edges")
# Kept by triggers from other tables: copying them as well would count everything twice.
_DERIVED_TABLES = frozenset({"embedding_counts"})


def _data_tables(conn: sqlite3.Connection) -> list[str]:
    """Every table that holds data, in dependency order (FTS index tables excluded: the
    triggers rebuild the index from ``memories``)."""
    rows = conn.execute(
        "SELECT name, sql FROM main.sqlite_master WHERE type = 'table' "
        "AND name NOT LIKE 'sqlite_%' ORDER BY name"
    ).fetchall()
    virtual = [name for name, sql in rows if sql.upper().startswith("CREATE VIRTUAL TABLE")]
    plain = [
        name
        for name, _ in rows
        if name not in virtual
        and name not in _DERIVED_TABLES
        and not any(name.startswith(v + "_") for v in virtual)
    ]
    return sorted(plain, key=lambda t: (_TABLE_ORDER.index(t) if t in _TABLE_ORDER else 99, t))


def _require_cortex_store(path: Path, shown_as: Path) -> None:
    try:
        with contextlib.closing(sqlite3.connect(str(path))) as conn:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            conn.execute("SELECT count(*) FROM memories").fetchone()
    except sqlite3.DatabaseError as exc:
        raise StoreCorrupt(f"{shown_as} is not a Cortex store ({exc})") from exc
    if version < 1:
        raise StoreCorrupt(f"{shown_as} is not a Cortex store (no schema version)")
    if version > head_version():
        raise SchemaTooNew(f"{shown_as} was written by a newer Cortex (schema {version})")


# --------------------------------------------------------------------- row helpers

_INSERT_EVENT = (
    "INSERT OR IGNORE INTO events (id, kind, content, payload, confidence, salience, session_id, "
    "transcript_path, line, branch, commit_sha, created_at, content_hash) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _upsert_cursor(conn: sqlite3.Connection, cursor: ExtractionCursor) -> None:
    conn.execute(
        "INSERT INTO extraction_cursors (transcript_path, byte_offset, line, head_hash, "
        "session_id, updated_at) VALUES (?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (transcript_path) DO UPDATE SET byte_offset = excluded.byte_offset, "
        "line = excluded.line, head_hash = excluded.head_hash, "
        "session_id = excluded.session_id, updated_at = excluded.updated_at",
        (
            cursor.transcript_path,
            cursor.offset,
            cursor.line,
            cursor.head_hash,
            cursor.session_id,
            cursor.updated_at,
        ),
    )


_OBSERVATION_COLUMNS = (
    "session_id, tool, detail, ok, duration_ms, prev_tool, prev2_tool, tool_use_id, at, branch"
)
_INSERT_OBSERVATION = (
    f"INSERT OR IGNORE INTO observations ({_OBSERVATION_COLUMNS}) VALUES ({', '.join('?' * 10)})"
)


def _observation_row(o: Observation) -> tuple[Any, ...]:
    return (
        o.session_id, o.tool, o.detail, int(o.ok), o.duration_ms, o.prev_tool, o.prev2_tool,
        o.tool_use_id, o.at, o.branch,
    )  # fmt: skip


def _event_row(e: Event) -> tuple[Any, ...]:
    p = e.provenance
    return (
        e.id,
        e.kind,
        e.content,
        json.dumps(e.payload, sort_keys=True),
        e.confidence,
        e.salience,
        p.session_id,
        p.transcript_path,
        p.line,
        p.branch,
        p.commit,
        e.created_at,
        e.content_hash,
    )


def _row_to_event(row: tuple[Any, ...]) -> Event:
    return Event(
        id=row[0],
        kind=row[1],
        content=row[2],
        payload=json.loads(row[3]),
        confidence=row[4],
        salience=row[5],
        provenance=Provenance(
            session_id=row[6], transcript_path=row[7], line=row[8], branch=row[9], commit=row[10]
        ),
        created_at=row[11],
    )


def _edge_row(e: Edge) -> tuple[Any, ...]:
    return (
        e.id,
        e.source_id,
        e.target_id,
        e.relation_type,
        e.strength,
        int(e.bidirectional),
        e.status,
        e.created_at,
    )


def _row_to_edge(row: tuple[Any, ...]) -> Edge:
    return Edge(
        id=row[0],
        source_id=row[1],
        target_id=row[2],
        relation_type=row[3],
        strength=row[4],
        bidirectional=bool(row[5]),
        status=row[6],
        created_at=row[7],
    )


def _merge_memory(conn: sqlite3.Connection, incoming: Memory, result: ImportResult) -> None:
    """Insert, or update when the incoming copy is newer; equal copies merge access stats.

    Applying the same record twice is a no-op, so import is idempotent.
    """
    row = conn.execute(
        f"SELECT {_MEMORY_SELECT} FROM memories WHERE id = ?", (incoming.id,)
    ).fetchone()
    if row is None:
        conn.execute(_INSERT_MEMORY, memory_to_row(incoming))
        result.inserted += 1
        return
    current = row_to_memory(row)
    if incoming.updated_at > current.updated_at:
        winner = incoming
    else:
        winner = current.with_changes(
            access_count=max(current.access_count, incoming.access_count),
            last_accessed_at=max(
                (t for t in (current.last_accessed_at, incoming.last_accessed_at) if t),
                default=None,
            ),
        )
    if winner == current:
        result.unchanged += 1
        return
    values = memory_to_row(winner)
    conn.execute(
        "UPDATE memories SET "
        + ", ".join(f"{c.strip()} = ?" for c in _MEMORY_COLUMNS.split(",")[1:])
        + " WHERE id = ?",
        (*values[1:], winner.id),
    )
    result.updated += 1
