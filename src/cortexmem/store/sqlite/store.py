"""The SQLite store: one file per scope, WAL, FTS5, numbered migrations, online backups.

It implements every protocol of ``store.protocols``. Transactions and retries come from
``tx``, row mapping from ``rows``; the lifecycle's and the graph upkeep's SQL live in
``lifecycle`` and ``upkeep`` (imported when first used, so a hook that only captures never
loads them).

Safety: a file that exists but is not a SQLite database is reported, never overwritten; a store
written by a newer Cortex is refused; a backup is taken before migrating, restoring or clearing.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

from cortexmem.core.decay import learned_clock
from cortexmem.core.filters import MemoryFilter
from cortexmem.core.fts_query import to_fts_query
from cortexmem.core.ranking import Candidate
from cortexmem.core.redact import redact, redact_event, redact_memory, redact_observation
from cortexmem.errors import (
    FULL_HINT,
    CortexError,
    DiskFull,
    NotCortexStore,
    NotFound,
    SchemaTooNew,
    StoreCorrupt,
    StoreReadOnly,
    disk_full,
    store_io_error,
)
from cortexmem.model import (
    DOCUMENT_TAG,
    MEMORY_STATUSES,
    Edge,
    Episode,
    Event,
    ExtractionCursor,
    Lesson,
    Listing,
    Memory,
    Observation,
    content_hash,
    normalise_tags,
    utc_now,
)
from cortexmem.store.migrations.loader import all_migrations, head_version
from cortexmem.store.protocols import (
    CandidatePair,
    CaptureResult,
    ImportResult,
    Redacted,
    StoreCounts,
    StorePass,
    UpkeepState,
)
from cortexmem.store.sqlite.ai import AIRooms
from cortexmem.store.sqlite.episodes import (
    EpisodeRooms,
    import_episodes,
    insert_episodes,
    link_memories,
    stale_episode_vectors,
)
from cortexmem.store.sqlite.integrity import (
    CORTEX_APPLICATION_ID,
    stamped_ok,
    tighten,
    write_stamp,
)
from cortexmem.store.sqlite.learning import LearningRooms
from cortexmem.store.sqlite.lessons import LessonRooms, import_lessons
from cortexmem.store.sqlite.redaction import compact, redact_connection
from cortexmem.store.sqlite.rows import (
    BM25_WEIGHTS,
    EDGE_COLUMNS,
    EVENT_COLUMNS,
    INSERT_EVENT,
    INSERT_MEMORY,
    INSERT_OBSERVATION,
    MEMORY_COLUMNS,
    MEMORY_SELECT,
    MEMORY_SELECT_M,
    OBSERVATION_COLUMNS,
    edge_row,
    event_row,
    filter_sql,
    memory_to_row,
    observation_row,
    row_to_cursor,
    row_to_edge,
    row_to_event,
    row_to_memory,
    row_to_observation,
    upsert_cursor,
)
from cortexmem.store.sqlite.token import token_of
from cortexmem.store.sqlite.tx import (
    DEFAULT_TIMEOUT,
    SQLITE_HEADER,
    Transactions,
    check_header,
    fetchall,
)

KEEP_BACKUPS = 20
# Verified undamaged in this process: (path, size:mtime) -> True.
_VERIFIED: set[tuple[str, str]] = set()


def newest_backup(path: Path) -> Path | None:
    found = backups_of(path)
    return found[-1] if found else None


def damaged(path: Path, detail: str) -> StoreCorrupt:
    """The one-line refusal of a damaged store, naming the way out and the newest backup."""
    backup = newest_backup(path)
    way_out = (
        f"run `cortex restore` (newest backup: {backup.name})"
        if backup
        else "no backup exists; move it aside to start a new store"
    )
    detail = " ".join(detail.split())[:200]
    return StoreCorrupt(f"the memory store {path} is damaged ({detail}); {way_out}")


def backups_of(path: Path) -> list[Path]:
    """The backups of the store at ``path``, oldest first (without opening it)."""
    folder = path.parent / "backups"
    return sorted(folder.glob(f"{path.stem}-*.db")) if folder.is_dir() else []


def replace_damaged(path: Path, backup: Path, timeout: float = DEFAULT_TIMEOUT) -> Path:
    """Put ``backup`` in place of a store that cannot be opened (damaged, truncated, not a
    database). The damaged file is moved, not written, into ``backups/`` as
    ``<name>.damaged-<stamp>`` (its -wal beside it) and returned; the backup itself is copied
    and migrated, never modified."""
    backup = Path(backup)
    if not backup.is_file():
        raise NotFound(f"no backup at {backup}")
    check_header(backup)
    folder = path.parent / "backups"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    aside = folder / f"{path.name}.damaged-{stamp}-{os.getpid()}"
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=".restore-") as tmp:
        staged = Path(tmp) / path.name
        os.close(os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        shutil.copyfile(backup, staged)
        _require_cortex_store(staged, backup)
        SQLiteStore.open(staged, timeout=timeout).close()
        if path.exists():
            os.replace(path, aside)
        wal = Path(f"{path}-wal")
        if wal.exists():
            os.replace(wal, Path(f"{aside}-wal"))
        Path(f"{path}-shm").unlink(missing_ok=True)
        os.replace(staged, path)
    return aside


def cannot_open(path: Path, exc: sqlite3.Error) -> CortexError:
    """The one-line refusal of a store that cannot be opened now (the file is not blamed)."""
    with contextlib.suppress(OSError):
        if disk_full(exc) or shutil.disk_usage(path.parent).free < 1 << 20:
            return DiskFull(f"cannot open store {path}: {exc} (the disk is full: {FULL_HINT})")
    return CortexError(f"cannot open store {path}: {exc}")


def read_only_uri(path: Path) -> str:
    """The URI that opens ``path`` read-only. SQLite reads a WAL store through its -shm file,
    which it cannot create in a read-only folder or mount: there, with no -shm beside the file
    (so no connection has it open to write), the file is read as immutable."""
    uri = path.resolve().as_uri() + "?mode=ro"
    if not Path(f"{path}-shm").exists() and not os.access(path.parent, os.W_OK):
        uri += "&immutable=1"
    return uri


def _is_read_only(exc: sqlite3.Error) -> bool:
    text = str(exc).lower()
    return "readonly" in text or "read-only" in text or "unable to open" in text


def _inspect(path: Path) -> bool:
    """Look at an existing file read-only: True when it is an empty SQLite database (taken as
    new); raise when it is not Cortex's, too new or damaged; False for a sound Cortex store."""
    from cortexmem.store.sqlite.integrity import file_key

    key = file_key(str(path)) or ""
    had = [Path(f"{path}{s}").exists() for s in ("-wal", "-shm")]
    try:
        return _inspect_read_only(path, key)
    except CortexError:
        # Reading a WAL file read-only makes SQLite create an empty -wal/-shm it cannot remove
        # on close: take back what this refusal left beside a file that is not ours to use.
        wal, shm = Path(f"{path}-wal"), Path(f"{path}-shm")
        if not any(had) and wal.exists() and wal.stat().st_size == 0:
            wal.unlink(missing_ok=True)
            shm.unlink(missing_ok=True)
        raise


def _inspect_read_only(path: Path, key: str) -> bool:
    uri = read_only_uri(path)
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=DEFAULT_TIMEOUT, isolation_level=None)
    except sqlite3.Error as exc:
        raise CortexError(f"cannot open store {path}: {exc}") from exc
    try:
        # One read transaction for the three: read one by one, a process creating the store
        # could commit in between (no id and version yet, its tables already), and a store
        # being made would be taken for someone else's database.
        # (A read that fails ends it; closing the connection below lets it go.)
        conn.execute("BEGIN")
        app_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        names = {
            str(r[0])
            for r in conn.execute("SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")
        }
        conn.execute("COMMIT")
        ours = app_id == CORTEX_APPLICATION_ID or (
            app_id == 0 and version >= 1 and "memories" in names
        )
        if not ours:
            if app_id == 0 and version == 0 and not names:
                return True  # an empty database: nothing in it to lose
            shown = ", ".join(sorted(names)[:3]) + (", ..." if len(names) > 3 else "")
            raise NotCortexStore(
                f"{path} is a SQLite database but not a Cortex store"
                + (f" (it holds {shown})" if names else "")
                + "; it was left untouched: move it aside to start a new store"
            )
        if version > head_version():
            raise SchemaTooNew(
                f"{path} has schema version {version}, newer than this Cortex knows "
                f"({head_version()}); upgrade cortex-memory to use it"
            )
        if (str(path), key) in _VERIFIED or stamped_ok(str(path), key):
            return False
        rows = conn.execute("PRAGMA quick_check(5)").fetchall()
        problems = [str(r[0]) for r in rows if str(r[0]) != "ok"]
        if problems:
            raise damaged(path, "; ".join(problems))
        _VERIFIED.add((str(path), key))
        write_stamp(str(path))
        return False
    except sqlite3.DatabaseError as exc:
        text = str(exc).lower()
        if isinstance(exc, sqlite3.OperationalError) and (
            _is_read_only(exc) or "locked" in text or "busy" in text
        ):
            raise CortexError(f"cannot open store {path}: {exc}") from exc
        if store_io_error(exc):  # e.g. a -shm that cannot grow: the file is not to blame
            raise cannot_open(path, exc) from exc
        raise damaged(path, str(exc)) from exc
    finally:
        conn.close()


def start_clock(conn: sqlite3.Connection, seq: int, memory_type: str, created_at: str) -> None:
    """Start the decay clock of the memory just stored at row ``seq`` now when its event is
    older (``core.decay.learned_clock``): backfilled knowledge is not charged for the months
    before Cortex learned it."""
    start = learned_clock(memory_type, created_at, utc_now())
    if start is not None:
        conn.execute("UPDATE memories SET decayed_at = ? WHERE seq = ?", (start, seq))


# What a document's withdrawal may archive: a decision extraction took from a document's list
# (its ``doc:`` tag), never one a person stored or pinned.
WITHDRAWABLE = (
    "memory_type = 'decision' AND source_type = 'extraction' AND pinned = 0 AND tags LIKE ?"
)


def keep_listings(conn: sqlite3.Connection, listings: Iterable[Listing]) -> None:
    """Each document's latest listing and latest drop of each decision."""
    for listing in listings:
        column = "listed_at" if listing.listed else "dropped_at"
        conn.execute(
            f"INSERT INTO document_listings (document, decision, {column}) VALUES (?, ?, ?) "
            f"ON CONFLICT (document, decision) DO UPDATE SET {column} = max({column}, ?)",
            (listing.document, listing.decision, listing.at, listing.at),
        )


def weigh_listings(conn: sqlite3.Connection, listings: Sequence[Listing]) -> int:
    """Keep the latest word of each document on each decision, then weigh every decision it
    touches: withdrawn while every document that listed it left it out since (archived as the
    lifecycle archives, ``archived_at`` set), back in service when one lists it again. Not a
    person's archive, nor a supersession (that waits for a person). How many were archived."""
    keep_listings(conn, listings)
    archived = 0
    now = utc_now()
    doc_tag = f'%"{DOCUMENT_TAG}%'
    for decision in dict.fromkeys(listing.decision for listing in listings):
        words = conn.execute(
            "SELECT listed_at, dropped_at FROM document_listings WHERE decision = ?", (decision,)
        ).fetchall()
        digest = content_hash("decision", decision)
        if all(dropped > listed for listed, dropped in words):
            archived += conn.execute(
                "UPDATE memories SET status = 'archived', archived_at = ?, updated_at = ? "
                f"WHERE content_hash = ? AND status = 'active' AND {WITHDRAWABLE}",
                (now, now, digest, doc_tag),
            ).rowcount
        else:  # one memory back, and only while no other holds the words
            conn.execute(
                "UPDATE memories SET status = 'active', archived_at = NULL, updated_at = ? "
                "WHERE seq = (SELECT seq FROM memories WHERE content_hash = ? "
                f"AND status = 'archived' AND archived_at IS NOT NULL AND {WITHDRAWABLE} "
                "ORDER BY seq LIMIT 1) AND NOT EXISTS (SELECT 1 FROM memories "
                "WHERE content_hash = ? AND status = 'active')",
                (now, digest, doc_tag, digest),
            )
    return archived


class SQLiteStore(EpisodeRooms, AIRooms, LearningRooms, LessonRooms, Transactions):
    """A Cortex store in one SQLite file. Open with :meth:`open`; use as a context manager.

    ``read``, ``write``, ``retry`` and ``backup_under_lock`` are for the SQL modules of this
    package; everything else is the store contract (``store.protocols.Store``)."""

    # ----------------------------------------------------------------- opening & schema

    @classmethod
    def open(
        cls, path: Path, *, timeout: float = DEFAULT_TIMEOUT, read_only: bool = False
    ) -> SQLiteStore:
        """Open (creating if needed) and migrate the store at ``path``.

        Before anything is written the file is inspected read-only: a file that is not a
        SQLite database, a SQLite database of someone else's, a store of a newer Cortex and a
        damaged store (``PRAGMA quick_check``, once per change of the file) are refused and left
        byte for byte as they were. A store that cannot be written (``read_only``, or a read-only
        folder or file) is opened read-only: it answers, and a write raises ``StoreReadOnly``."""
        path = Path(path)
        check_header(path)
        new = not path.exists() or path.stat().st_size == 0
        if not new:
            new = _inspect(path)
        if new and not read_only:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            with contextlib.suppress(FileExistsError):
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        for suffix in ("", "-wal", "-shm"):
            tighten(str(path) + suffix)
        if not read_only and not new:
            read_only = not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK))
        try:
            store = cls._connect(path, timeout, read_only)
        except sqlite3.OperationalError as exc:
            if read_only or new or not _is_read_only(exc):
                raise CortexError(f"cannot open store {path}: {exc}") from exc
            store = cls._connect(path, timeout, True)
        store._verified = True  # checked above, or created just now
        return store

    @classmethod
    def _connect(cls, path: Path, timeout: float, read_only: bool) -> SQLiteStore:
        try:
            if read_only:
                uri = read_only_uri(path)
                conn = sqlite3.connect(uri, uri=True, timeout=timeout, isolation_level=None,
                                       check_same_thread=False)  # fmt: skip
            else:
                conn = sqlite3.connect(
                    str(path), timeout=timeout, isolation_level=None, check_same_thread=False
                )
        except sqlite3.Error as exc:
            raise CortexError(f"cannot open store {path}: {exc}") from exc
        store = cls(path, conn, timeout)
        store.read_only = read_only
        try:
            if read_only:
                conn.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
                if store.schema_version() != head_version():
                    raise StoreReadOnly(
                        f"{path} is read-only and needs a schema migration: make it writable"
                    )
            else:
                store._configure()
                store._migrate()
                for suffix in ("-wal", "-shm"):
                    tighten(str(path) + suffix)
        except BaseException:
            conn.close()
            raise
        return store

    def _configure(self) -> None:
        conn = self._conn
        conn.execute(f"PRAGMA busy_timeout = {int(self._timeout * 1000)}")
        mode = self.retry(lambda: conn.execute("PRAGMA journal_mode = WAL").fetchone()[0])
        if str(mode).lower() != "wal":
            raise CortexError(f"cannot put {self.path} in WAL mode (got {mode})")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")

    def schema_version(self) -> int:
        return int(self.guard(lambda: self._conn.execute("PRAGMA user_version").fetchone()[0]))

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

        self.retry(apply)

    # ----------------------------------------------------------------- plumbing

    @property
    def location(self) -> str:
        return str(self.path)

    def close(self) -> None:
        self._conn.close()
        if getattr(self, "_verified", False) and not self.read_only:
            # Checked undamaged at open and only written by SQLite since: the file as it is
            # now needs no new quick_check at the next open.
            write_stamp(str(self.path))

    def integrity_check(self) -> list[str]:
        """The full ``PRAGMA integrity_check``: problems found (empty when the file is sound)."""
        try:
            rows = self._conn.execute("PRAGMA integrity_check(20)").fetchall()
        except sqlite3.DatabaseError as exc:
            return [str(exc)]
        problems = [str(r[0]) for r in rows if str(r[0]) != "ok"]
        if problems:
            self._verified = False
        return problems

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----------------------------------------------------------------- memories

    def add_memory(self, memory: Memory) -> tuple[Memory, bool]:
        memory = redact_memory(memory)

        def op(conn: sqlite3.Connection) -> tuple[Memory, bool]:
            row = conn.execute(
                f"SELECT {MEMORY_SELECT} FROM memories "
                "WHERE content_hash = ? AND status = 'active' LIMIT 1",
                (memory.content_hash,),
            ).fetchone()
            if row is not None:
                found = row_to_memory(row)
                if memory.source_type == "manual" and found.source_type == "extraction":
                    # a person saying what extraction kept makes it theirs: their pin, priority,
                    # confidence and tags hold, and no document's later version withdraws it
                    found = found.with_changes(
                        source_type="manual", pinned=found.pinned or memory.pinned,
                        priority=max(found.priority, memory.priority),
                        confidence=max(found.confidence, memory.confidence),
                        tags=normalise_tags((*found.tags, *memory.tags)), updated_at=utc_now(),
                    )  # fmt: skip
                    conn.execute(
                        "UPDATE memories SET source_type = ?, pinned = ?, priority = ?, "
                        "confidence = ?, tags = ?, updated_at = ? WHERE id = ?",
                        (found.source_type, int(found.pinned), found.priority, found.confidence,
                         json.dumps(list(found.tags)), found.updated_at, found.id),
                    )  # fmt: skip
                return found, False
            inserted = conn.execute(INSERT_MEMORY, memory_to_row(memory))
            start_clock(conn, inserted.lastrowid or 0, memory.memory_type, memory.created_at)
            return memory, True

        return self.write(op)

    def replace_tagged(
        self,
        tag: str,
        memories: Sequence[Memory],
        edges: Sequence[tuple[int, int, str]],
        retire: str = "archived",
    ) -> tuple[list[Memory], int, int]:
        """Make ``memories`` (linked by ``edges`` given as index pairs) the active memories
        tagged ``tag``, in one transaction: an existing one with the same content is kept,
        active ones with that tag and other content get status ``retire`` (archived, or
        superseded when ``memories`` are their newer version), or are deleted (``"deleted"``:
        derived memories, such as a session's digest, that their source rebuilds at will).

        Returns ``(stored memories, how many were added, how many were archived)``.
        """
        if retire not in ("archived", "superseded", "deleted"):
            raise ValueError(f"retire must be archived, superseded or deleted, not {retire!r}")
        (tag,) = normalise_tags((tag,))  # stored tags are normalised (lower-case)
        memories = [redact_memory(m) for m in memories]

        def op(conn: sqlite3.Connection) -> tuple[list[Memory], int, int]:
            stored: list[Memory] = []
            added = 0
            for memory in memories:
                row = conn.execute(
                    f"SELECT {MEMORY_SELECT} FROM memories WHERE content_hash = ? "
                    "AND status = 'active' LIMIT 1",
                    (memory.content_hash,),
                ).fetchone()
                if row is None:
                    inserted = conn.execute(INSERT_MEMORY, memory_to_row(memory))
                    start_clock(conn, inserted.lastrowid or 0, memory.memory_type,
                                memory.created_at)  # fmt: skip
                    stored.append(memory)
                    added += 1
                else:
                    stored.append(row_to_memory(row))
            keep = [m.id for m in stored]
            marks = ", ".join("?" * len(keep)) or "''"
            tagged = (
                "EXISTS (SELECT 1 FROM json_each(memories.tags) "
                f"WHERE value = ?) AND id NOT IN ({marks})"
            )
            if retire == "deleted":  # every other version, archived by the lifecycle or not,
                # except one a person pinned: that one is kept, superseded
                archived = conn.execute(
                    f"DELETE FROM memories WHERE pinned = 0 AND {tagged}", (tag, *keep)
                ).rowcount
                archived += conn.execute(
                    "UPDATE memories SET status = 'superseded', updated_at = ? "
                    f"WHERE pinned = 1 AND status = 'active' AND {tagged}",
                    (utc_now(), tag, *keep),
                ).rowcount
            else:
                archived = conn.execute(
                    f"UPDATE memories SET status = ?, updated_at = ? WHERE status = 'active' "
                    f"AND {tagged}",
                    (retire, utc_now(), tag, *keep),
                ).rowcount
            for a, b, relation in edges:
                conn.execute(
                    "INSERT OR IGNORE INTO edges (id, source_id, target_id, relation_type, "
                    "strength, bidirectional, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    edge_row(Edge(stored[a].id, stored[b].id, relation)),
                )
            return stored, added, archived

        return self.write(op)

    def add_memories(self, memories: Iterable[Memory]) -> int:
        rows = [memory_to_row(redact_memory(m)) for m in memories]
        self.write(lambda conn: conn.executemany(INSERT_MEMORY, rows))
        return len(rows)

    def get_memory(self, memory_id: str) -> Memory | None:
        row = self.retry(
            lambda: self._conn.execute(
                f"SELECT {MEMORY_SELECT} FROM memories WHERE id = ?", (memory_id,)
            ).fetchone()
        )
        return row_to_memory(row) if row else None

    def find_by_prefix(self, prefix: str, limit: int = 10) -> list[Memory]:
        # Range scan on the unique index instead of LIKE: no wildcard escaping to get wrong.
        rows = self.retry(
            lambda: self._conn.execute(
                f"SELECT {MEMORY_SELECT} FROM memories WHERE id >= ? AND id < ? "
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
            # a person's status (the trigger of 0006 clears the lifecycle's marks when the
            # status changes): also when it does not, so that what the lifecycle or a
            # document's later version archived, a person archiving it, stays archived
            conn.execute(
                "UPDATE memories SET archived_at = NULL, below_since = NULL WHERE id = ?",
                (memory_id,),
            )
            if cur.rowcount == 0:
                raise NotFound(f"no memory with id {memory_id}")

        self.write(op)
        memory = self.get_memory(memory_id)
        assert memory is not None
        return memory

    def document_decisions(self) -> list[tuple[str, tuple[tuple[str, str], ...]]]:
        rows = self.retry(
            lambda: self._conn.execute(
                "SELECT document, decision, listed_at FROM document_listings "
                "WHERE listed_at > dropped_at ORDER BY document, listed_at"
            ).fetchall()
        )
        documents: dict[str, list[tuple[str, str]]] = {}
        for document, decision, listed_at in rows:
            documents.setdefault(document, []).append((decision, listed_at))
        return [(d, tuple(decisions)) for d, decisions in documents.items()]

    def iter_memories(self, flt: MemoryFilter | None = None) -> Iterator[Memory]:
        where, params = filter_sql(flt or MemoryFilter(statuses=()), alias="memories")
        rows = self.retry(
            lambda: self._conn.execute(
                f"SELECT {MEMORY_SELECT} FROM memories WHERE {where} ORDER BY seq", params
            ).fetchall()
        )
        for row in rows:
            yield row_to_memory(row)

    def term_documents(self, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        words = list(dict.fromkeys(t for t in terms if t))

        def op(conn: sqlite3.Connection) -> tuple[int, dict[str, int]]:
            total = conn.execute(
                "SELECT (SELECT count(*) FROM memories) + (SELECT count(*) FROM episodes)"
            ).fetchone()[0]
            found = {}
            for word in words:
                phrase = '"' + word.replace('"', '""') + '"'  # a quoted term: never syntax
                found[word] = sum(
                    conn.execute(f"SELECT count(*) FROM {table} WHERE {table} MATCH ?",
                                 (phrase,)).fetchone()[0]
                    for table in ("memories_fts", "episodes_fts")
                )  # fmt: skip
            return int(total), found

        return self.read(op)

    def search_text(self, query: str, flt: MemoryFilter, limit: int, scope: str) -> list[Candidate]:
        match = to_fts_query(query)
        if match is None or limit <= 0:
            return []
        where, params = filter_sql(flt)
        sql = (
            f"SELECT {MEMORY_SELECT_M}, "
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

        return self.read(op)

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
            f"SELECT m.seq, {MEMORY_SELECT_M} "
            f"{self._BACKLOG} {f'AND m.memory_type NOT IN ({skip})' if skip else ''} "
            "ORDER BY m.seq LIMIT ?"
        )
        rows = self.read(lambda conn: conn.execute(sql, (model, *skip_types, limit)).fetchall())
        return [(int(r[0]), row_to_memory(r[1:])) for r in rows]

    def embedding_backlog_size(self, model: str, skip_types: Sequence[str] = ()) -> int:
        skip = ", ".join("?" * len(skip_types))
        sql = (
            f"SELECT count(*) {self._BACKLOG} "
            f"{f'AND m.memory_type NOT IN ({skip})' if skip else ''}"
        )
        return int(self.read(lambda conn: conn.execute(sql, (model, *skip_types)).fetchone()[0]))

    def embedding_coverage(self, model: str, skip_types: Sequence[str] = ()) -> tuple[int, int]:
        """``(embedded, total)``: the memories (active or archived, ``skip_types`` left out)
        with a vector from ``model`` for their current content, and all of them."""
        skip = ", ".join("?" * len(skip_types))
        sql = (
            "SELECT count(e.memory_seq), count(*) FROM memories m LEFT JOIN embeddings e "
            "ON e.memory_seq = m.seq AND e.model = ? AND e.source_hash = m.content_hash "
            "WHERE m.status IN ('active', 'archived') "
            f"{f'AND m.memory_type NOT IN ({skip})' if skip else ''}"
        )
        row = self.read(lambda conn: conn.execute(sql, (model, *skip_types)).fetchone())
        return int(row[0]), int(row[1])

    def relabel_embeddings(self, model: str, label: str) -> int:
        """Record that ``model``'s vectors are made with ``label`` (the project's name in the
        embedding text); when they were made with another one, mark them all stale (memories'
        and episodes') so the backlog re-embeds them. Returns how many were marked."""

        def op(conn: sqlite3.Connection) -> int:
            row = conn.execute(
                "SELECT label FROM embedding_labels WHERE model = ?", (model,)
            ).fetchone()
            if row is not None and row[0] == label:
                return 0
            conn.execute(
                "INSERT INTO embedding_labels (model, label) VALUES (?, ?) "
                "ON CONFLICT (model) DO UPDATE SET label = excluded.label",
                (model, label),
            )
            if row is None:
                return 0  # the first label: the vectors so far were made with it
            marked = conn.execute(
                "UPDATE embeddings SET source_hash = '' WHERE model = ? AND source_hash != ''",
                (model,),
            ).rowcount
            return marked + stale_episode_vectors(conn, model)

        current = self.read(
            lambda conn: conn.execute(
                "SELECT label FROM embedding_labels WHERE model = ?", (model,)
            ).fetchone()
        )
        return 0 if current is not None and current[0] == label else self.write(op)

    def put_embeddings(self, model: str, dim: int, items: Sequence[tuple[int, str, bytes]]) -> int:
        """Store ``(seq, source_hash, float32 bytes)`` vectors of ``model``; one transaction.
        A memory deleted meanwhile is skipped."""
        if not items:
            return 0
        when = utc_now()

        def op(conn: sqlite3.Connection) -> int:
            next_version = conn.execute("SELECT coalesce(max(version), 0) + 1 FROM embeddings")
            version = int(next_version.fetchone()[0])
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

        return self.write(op)

    def embedding_state(self, model: str) -> tuple[int, int]:
        """``(count, highest version)`` of ``model``'s vectors: a cache compares these to know
        whether it is current."""
        row = self.read(
            lambda conn: conn.execute(
                "SELECT count, version FROM embedding_counts WHERE model = ?", (model,)
            ).fetchone()
        )
        return (int(row[0]), int(row[1])) if row else (0, 0)

    def last_embedded_at(self, model: str) -> str | None:
        """When the newest vector of ``model`` was written (None: there is none)."""
        row = self.read(
            lambda conn: conn.execute(
                "SELECT embedded_at FROM embeddings WHERE model = ? ORDER BY version DESC LIMIT 1",
                (model,),
            ).fetchone()
        )
        return None if row is None else str(row[0])

    def load_embeddings(
        self, model: str, after_version: int = 0
    ) -> list[tuple[int, int, str, bytes]]:
        """``(seq, version, memory_type, vector bytes)`` of ``model`` written after
        ``after_version``."""
        return self.read(
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
        where, params = filter_sql(flt)
        marks = ", ".join("?" * len(similarity))
        sql = (
            f"SELECT m.seq, {MEMORY_SELECT_M}, "
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

        return self.read(op)

    def seq_of(self, memory_ids: Sequence[str]) -> dict[str, int]:
        if not memory_ids:
            return {}
        marks = ", ".join("?" * len(memory_ids))
        rows = self.read(
            lambda conn: conn.execute(
                f"SELECT id, seq FROM memories WHERE id IN ({marks})", tuple(memory_ids)
            ).fetchall()
        )
        return {str(r[0]): int(r[1]) for r in rows}

    def maxima(self) -> tuple[int, int]:
        """``(highest in-degree, highest access count)`` of the store: what centrality and
        access are normalised by."""
        return self.read(self._maxima)

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
        self.write(
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
                edge_row(edge),
            )
            if cur.rowcount:
                return edge, True
            row = conn.execute(
                f"SELECT {EDGE_COLUMNS} FROM edges "
                "WHERE source_id = ? AND target_id = ? AND relation_type = ?",
                (edge.source_id, edge.target_id, edge.relation_type),
            ).fetchone()
            return row_to_edge(row), False

        return self.write(op)

    def add_edges(self, edges: Sequence[Edge]) -> int:
        rows = [edge_row(e) for e in edges]
        if not rows:
            return 0

        def op(conn: sqlite3.Connection) -> int:
            return sum(
                conn.execute(
                    "INSERT OR IGNORE INTO edges (id, source_id, target_id, relation_type, "
                    "strength, bidirectional, status, created_at) SELECT ?, ?, ?, ?, ?, ?, ?, ? "
                    "WHERE (SELECT count(*) FROM memories WHERE id IN (?, ?)) = 2",
                    (*row, row[1], row[2]),
                ).rowcount
                for row in rows
            )

        return self.write(op)

    def iter_edges(self) -> Iterator[Edge]:
        rows = self.retry(
            lambda: self._conn.execute(
                f"SELECT {EDGE_COLUMNS} FROM edges ORDER BY created_at, id"
            ).fetchall()
        )
        for row in rows:
            yield row_to_edge(row)

    def edges_touching(self, memory_ids: Iterable[str]) -> list[Edge]:
        """Every edge (any status) with one of ``memory_ids`` at either end."""
        ids = sorted(set(memory_ids))
        out: list[Edge] = []
        for start in range(0, len(ids), 400):
            chunk = ids[start : start + 400]
            marks = ", ".join("?" * len(chunk))
            sql = (
                f"SELECT {EDGE_COLUMNS} FROM edges WHERE source_id IN ({marks}) "
                f"OR target_id IN ({marks}) ORDER BY id"
            )
            rows = self.run(fetchall(sql, (*chunk, *chunk)))
            out += [row_to_edge(r) for r in rows]
        return list({e.id: e for e in out}.values())

    def get_memories(self, memory_ids: Iterable[str]) -> dict[str, Memory]:
        ids = sorted(set(memory_ids))
        found: dict[str, Memory] = {}
        for start in range(0, len(ids), 400):
            chunk = ids[start : start + 400]
            marks = ", ".join("?" * len(chunk))
            sql = f"SELECT {MEMORY_SELECT} FROM memories WHERE id IN ({marks})"
            rows = self.run(fetchall(sql, chunk))
            for row in rows:
                memory = row_to_memory(row)
                found[memory.id] = memory
        return found

    def append_event(self, event: Event) -> bool:
        row = event_row(redact_event(event))
        cur = self.write(lambda conn: conn.execute(INSERT_EVENT, row))
        return bool(cur.rowcount)

    def iter_events(self) -> Iterator[Event]:
        rows = self.retry(
            lambda: self._conn.execute(
                f"SELECT {EVENT_COLUMNS} FROM events ORDER BY seq"
            ).fetchall()
        )
        for row in rows:
            yield row_to_event(row)

    # ----------------------------------------------------------------- briefing

    def top_memories(
        self, types: Sequence[str], flt: MemoryFilter, limit: int
    ) -> list[tuple[Memory, int]]:
        """The most important active memories of ``types`` under ``flt``, with their
        in-degree: pinned first, then priority, confidence and recency (the briefing's pool)."""
        where, params = filter_sql(replace(flt, types=tuple(types)))
        sql = (
            f"SELECT {MEMORY_SELECT_M}, "
            "(SELECT count(*) FROM edges e WHERE e.target_id = m.id AND e.status = 'active') "
            f"FROM memories m WHERE {where} "
            "ORDER BY m.pinned DESC, m.priority DESC, m.confidence DESC, m.created_at DESC, "
            "m.content, m.id "
            "LIMIT ?"
        )
        rows = self.read(lambda conn: conn.execute(sql, (*params, limit)).fetchall())
        return [(row_to_memory(r[:20]), int(r[20])) for r in rows]

    def recent_events(
        self, kinds: Sequence[str], limit: int, session_id: str | None = None
    ) -> list[Event]:
        """The newest events of ``kinds`` (optionally of one session), newest first."""
        marks = ", ".join("?" * len(kinds))
        sql = (
            f"SELECT {EVENT_COLUMNS} FROM events WHERE kind IN ({marks})"
            + (" AND session_id = ?" if session_id is not None else "")
            + " ORDER BY seq DESC LIMIT ?"
        )
        args = (*kinds, *((session_id,) if session_id is not None else ()), limit)
        rows = self.read(lambda conn: conn.execute(sql, args).fetchall())
        return [row_to_event(r) for r in rows]

    def briefing_token(self) -> str:
        """Changes whenever what a briefing is made of changes: new memories or events, or a
        memory changing status (archived, superseded, restored). The same query as
        ``token.file_token``, which the cached SessionStart path runs without this module."""
        return self.read(token_of)

    def get_cursor(self, transcript_path: str) -> ExtractionCursor | None:
        row = self.retry(
            lambda: self._conn.execute(
                "SELECT transcript_path, byte_offset, line, head_hash, session_id, updated_at, "
                "extractor_state FROM extraction_cursors WHERE transcript_path = ?",
                (transcript_path,),
            ).fetchone()
        )
        return row_to_cursor(row) if row is not None else None

    def set_cursor(self, cursor: ExtractionCursor) -> None:
        self.write(lambda conn: upsert_cursor(conn, cursor))

    # ----------------------------------------------------------------- capture

    def record_capture(
        self,
        events: Sequence[Event],
        memories_for: Callable[[list[Event]], list[Memory]],
        cursor: ExtractionCursor | None,
        observations: Sequence[Observation] = (),
        episodes: Sequence[Episode] = (),
        listings_in: Callable[[list[Event]], list[Listing]] | None = None,
    ) -> CaptureResult:
        events = [redact_event(e) for e in events]
        obs_rows = [observation_row(redact_observation(o)) for o in observations]

        def op(conn: sqlite3.Connection) -> CaptureResult:
            result = CaptureResult()
            fresh = [e for e in events if conn.execute(INSERT_EVENT, event_row(e)).rowcount]
            result.events_added = len(fresh)
            made: list[Memory] = []
            for memory in memories_for(fresh) if fresh else []:
                memory = redact_memory(memory)
                made.append(memory)
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
                    (
                        learned_clock(memory.memory_type, memory.created_at, utc_now())
                        or memory.created_at,
                        memory.confidence,
                        utc_now(),
                        memory.content_hash,
                    ),
                ).rowcount
                if revived:
                    result.memories_restored += 1
                    continue
                inserted = conn.execute(INSERT_MEMORY, memory_to_row(memory))
                start_clock(conn, inserted.lastrowid or 0, memory.memory_type, memory.created_at)
                result.memories_added += 1
                result.memory_ids.append(memory.id)
            if listings_in is not None:
                result.memories_withdrawn += weigh_listings(conn, listings_in(events))
            for row in obs_rows:
                result.observations_added += conn.execute(INSERT_OBSERVATION, row).rowcount
            if episodes:
                result.episodes_added = insert_episodes(conn, episodes)
            if result.memory_ids and fresh:
                added = set(result.memory_ids)
                link_memories(conn, [m for m in made if m.id in added], fresh)
            if cursor is not None:
                upsert_cursor(conn, cursor)
            return result

        return self.write(op)

    def iter_observations(self, session_id: str | None = None) -> Iterator[Observation]:
        sql = f"SELECT {OBSERVATION_COLUMNS} FROM observations"
        params: tuple[Any, ...] = ()
        if session_id is not None:
            sql += " WHERE session_id = ?"
            params = (session_id,)
        rows = self.retry(lambda: self._conn.execute(sql + " ORDER BY seq", params).fetchall())
        for row in rows:
            yield row_to_observation(row)

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
            # Beside each transcript's cursor are the cursors of its tool calls (``calls:``)
            # and of the tool hooks' spool files (``spool:``): not transcripts of their own.
            transcripts, last = conn.execute(
                "SELECT count(*), max(updated_at) FROM extraction_cursors "
                "WHERE transcript_path NOT LIKE 'spool:%' AND transcript_path NOT LIKE 'calls:%'"
            ).fetchone()
            return StoreCounts(by_type, by_status, edges, events, observations, transcripts, last)

        return self.read(op)

    def size_bytes(self) -> int:
        total = 0
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                total += Path(str(self.path) + suffix).stat().st_size
        return total

    # ----------------------------------------------------------------- import

    def import_records(
        self,
        memories: Sequence[Memory],
        edges: Sequence[Edge],
        events: Sequence[Event],
        *,
        episodes: Sequence[Episode] = (),
        episode_links: Sequence[tuple[str, str]] = (),
        lessons: Sequence[Lesson] = (),
        lesson_history: Mapping[str, Sequence[tuple[str, str, str]]] | None = None,
        lesson_edges: Sequence[tuple[str, str, str]] = (),
        lifecycle: Mapping[str, Mapping[str, str]] | None = None,
        observations: Sequence[Observation] = (),
        sessions: Sequence[tuple[str, bool, str | None, int]] = (),
    ) -> ImportResult:
        marks = lifecycle or {}

        def op(conn: sqlite3.Connection) -> ImportResult:
            result = ImportResult()
            # An incoming memory this store holds under another id (another machine's
            # capture of the same session, a teammate's export) is that one: edges and
            # episode links naming it are moved onto it.
            stored_as = {
                m.id: _merge_memory(conn, redact_memory(m), result, marks.get(m.id))
                for m in memories
            }
            for edge in edges:
                edge = replace(
                    edge,
                    source_id=stored_as.get(edge.source_id, edge.source_id),
                    target_id=stored_as.get(edge.target_id, edge.target_id),
                )
                if edge.source_id == edge.target_id:
                    result.skipped.append(f"edge {edge.id}: its two ends are one memory here")
                    continue
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
                    edge_row(edge),
                )
                result.edges_added += cur.rowcount
            for event in events:
                row = event_row(redact_event(event))
                result.events_added += conn.execute(INSERT_EVENT, row).rowcount
            # what the imported events say documents listed (the statuses came with the
            # memories: only a later version is weighed against these)
            from cortexmem.core.extraction.memories import listings

            keep_listings(conn, listings(redact_event(e) for e in events))
            links = [(stored_as.get(m, m), e) for m, e in episode_links]
            import_episodes(conn, episodes, links, result)
            import_lessons(conn, lessons, lesson_history or {}, lesson_edges, result)
            for seen in observations:
                seen = redact_observation(seen)
                if seen.tool_use_id is None and conn.execute(  # no call id to tell it by
                    "SELECT 1 FROM observations WHERE session_id = ? AND at = ? AND tool = ? "
                    "AND tool_use_id IS NULL", (seen.session_id, seen.at, seen.tool),
                ).fetchone():  # fmt: skip
                    continue
                added = conn.execute(INSERT_OBSERVATION, observation_row(seen)).rowcount
                result.observations_added += added
            # Which sessions were automated (`claude -p`, an SDK's runs: never learned from)
            # and what each cost; imported twice, the same.
            conn.executemany(
                "INSERT INTO learning_sessions (session_id, automated, entrypoint, seen_at, "
                "tokens) VALUES (?, ?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET "
                "automated = max(automated, excluded.automated), "
                "entrypoint = coalesce(entrypoint, excluded.entrypoint), "
                "tokens = max(tokens, excluded.tokens)",
                [(redact(s), int(a), e, utc_now(), max(0, t)) for s, a, e, t in sessions],
            )
            return result

        return self.write(op)

    # ----------------------------------------------------------------- backup & restore

    @property
    def backup_dir(self) -> Path:
        return self.path.parent / "backups"

    def backup(self, reason: str) -> Path:
        """An online, consistent copy of the store (SQLite's backup API) in ``backups/``."""
        return self._backup_from(self._conn, reason)

    def _backup_from(self, source: sqlite3.Connection, reason: str) -> Path:
        self.backup_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        tighten(self.backup_dir)
        now = time.time_ns()
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now // 10**9)) + f"{now % 10**9:09d}"
        safe_reason = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in reason)
        dest = self.backup_dir / f"{self.path.stem}-{stamp}-{safe_reason}.db"
        tmp = dest.with_suffix(".db.part")
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))  # private copy
        try:
            with contextlib.closing(sqlite3.connect(str(tmp))) as target:
                self.retry(lambda: source.backup(target))
                # A backup is a single self-contained file: no -wal/-shm beside it.
                target.execute("PRAGMA journal_mode = DELETE")
            tmp.replace(dest)
        finally:
            tmp.unlink(missing_ok=True)
        self._prune_backups()
        return dest

    def backup_under_lock(self, reason: str) -> Path:
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
        backups = self.list_backups()
        for old in backups[:-KEEP_BACKUPS]:
            old.unlink(missing_ok=True)
        for kept in backups[-KEEP_BACKUPS:]:
            tighten(kept)  # made by an older Cortex under the umask

    def restore(self, backup: Path) -> Path:
        """Replace the contents with ``backup``'s, in one transaction, after a safety backup.

        The backup is first copied aside and migrated to the current schema, so an old backup
        restores into a current store and the backup file itself is never modified.
        """
        backup = Path(backup)
        if not backup.is_file():
            raise NotFound(f"no backup at {backup}")
        with backup.open("rb") as fh:
            head = fh.read(len(SQLITE_HEADER))
        if head and head != SQLITE_HEADER:  # check_header's advice is for a damaged store
            raise StoreCorrupt(f"{backup} is not a backup of a Cortex store")
        check_header(backup)  # a backup cut short is damaged, and said so
        with tempfile.TemporaryDirectory(dir=self.path.parent, prefix=".restore-") as tmp:
            staged = Path(tmp) / "staged.db"
            shutil.copyfile(backup, staged)
            _require_cortex_store(staged, backup)
            SQLiteStore.open(staged, timeout=self._timeout).close()
            return self._replace_contents(staged)

    def _replace_contents(self, source: Path) -> Path:
        conn = self._conn
        self.retry(lambda: conn.execute("ATTACH DATABASE ? AS src", (str(source),)))
        try:

            def op(conn: sqlite3.Connection) -> Path:
                safety = self.backup_under_lock("pre-restore")
                conn.execute("PRAGMA defer_foreign_keys = ON")
                tables = _data_tables(conn)
                for table in reversed(tables):
                    conn.execute(f'DELETE FROM main."{table}"')
                for table in tables:
                    conn.execute(f'INSERT INTO main."{table}" SELECT * FROM src."{table}"')
                return safety

            return self.write(op)
        finally:
            conn.execute("DETACH DATABASE src")

    def clear(self) -> Path:
        """Delete everything, after a backup taken under the same write lock."""

        def op(conn: sqlite3.Connection) -> Path:
            safety = self.backup_under_lock("pre-reset")
            conn.execute("PRAGMA defer_foreign_keys = ON")
            for table in reversed(_data_tables(conn)):
                conn.execute(f'DELETE FROM main."{table}"')
            return safety

        return self.write(op)

    def snapshot(self) -> tuple[list[Memory], list[Edge], list[Event]]:
        """Memories, edges and events as of one moment (for export)."""
        return self.read(
            lambda conn: (
                list(self.iter_memories()),
                list(self.iter_edges()),
                list(self.iter_events()),
            )
        )

    def backup_status_counts(self, backup: Path) -> dict[str, int]:
        """Memories by status in ``backup`` (a checkpoint), opened read-only."""
        uri = f"file:{backup}?mode=ro"
        with contextlib.closing(sqlite3.connect(uri, uri=True)) as conn:
            rows = conn.execute("SELECT status, count(*) FROM memories GROUP BY status").fetchall()
        return {str(status): int(n) for status, n in rows}

    # ------------------------------------------------------------------ redaction (redaction.py)

    def lifecycle_marks(self) -> dict[str, dict[str, str]]:
        rows = self.read(
            lambda conn: conn.execute(
                "SELECT id, decayed_at, below_since, archived_at FROM memories "
                "WHERE decayed_at IS NOT NULL OR below_since IS NOT NULL "
                "OR archived_at IS NOT NULL"
            ).fetchall()
        )
        names = ("decayed_at", "below_since", "archived_at")
        return {
            str(r[0]): {k: str(v) for k, v in zip(names, r[1:], strict=True) if v} for r in rows
        }

    def redact_stored(self, *, apply: bool) -> Redacted:
        done = self.retry(lambda: redact_connection(self._conn, apply=apply))
        if not apply:
            return done
        # Compacted even when no row changed: what was deleted before (``cortex reset``, a
        # pruned memory) can still sit in a free page, and a backup copies free pages too.
        return replace(done, compacted=self.guard(lambda: compact(self._conn)))

    def redact_backup(self, backup: Path, *, apply: bool) -> Redacted:
        """On a copy in a private folder beside it, migrated as a restore would (what the
        migration backs up stays in that folder, removed with it), then put in the backup's
        place, mode and all: the backup itself is never half-written."""
        backup = Path(backup)
        check_header(backup)
        with tempfile.TemporaryDirectory(dir=backup.parent, prefix=".redact-") as tmp:
            staged = Path(tmp) / backup.name
            shutil.copyfile(backup, staged)
            _require_cortex_store(staged, backup)
            with SQLiteStore.open(staged, timeout=self._timeout) as copy:
                done = copy.redact_stored(apply=apply)
                copy.run(lambda conn: conn.execute("PRAGMA journal_mode = DELETE"))
            if apply:
                os.chmod(staged, backup.stat().st_mode & 0o777)
                staged.replace(backup)
            return done

    # ----------------------------------------------------------------- lifecycle (lifecycle.py)

    def lifecycle_pass(
        self, now_iso: str, *, dry_run: bool = False, every: timedelta | None = None
    ) -> StorePass:
        """Plan and (unless ``dry_run``) apply one lifecycle pass at ``now_iso``; skipped when
        one ran less than ``every`` before (checked under the write lock)."""
        from cortexmem.store.sqlite.lifecycle import pass_over

        return pass_over(self, now_iso, dry_run=dry_run, every=every)

    def restore_archived(self, ids: Sequence[str], now_iso: str | None = None) -> list[str]:
        from cortexmem.store.sqlite.lifecycle import restore_ids

        return restore_ids(self, ids, now_iso)

    # ----------------------------------------------------------------- graph upkeep (upkeep.py)

    def upkeep_state(self) -> UpkeepState:
        from cortexmem.store.sqlite import upkeep

        return upkeep.read_state(self)

    def claim_upkeep_run(
        self, *, add_extraction: bool, may_run: bool, due: Callable[[UpkeepState], bool]
    ) -> tuple[UpkeepState, bool]:
        from cortexmem.store.sqlite import upkeep

        return upkeep.claim_run(self, add_extraction=add_extraction, may_run=may_run, due=due)

    def set_linked_seq(self, linked_seq: int) -> None:
        from cortexmem.store.sqlite import upkeep

        upkeep.set_cursor(self, linked_seq)

    def memories_after(self, seq: int, limit: int | None) -> list[tuple[int, Memory]]:
        from cortexmem.store.sqlite import upkeep

        return upkeep.memories_after(self, seq, limit)

    def count_after(self, seq: int) -> int:
        from cortexmem.store.sqlite import upkeep

        return upkeep.count_after(self, seq)

    def memories_by_seq(self, seqs: Iterable[int]) -> dict[int, Memory]:
        from cortexmem.store.sqlite import upkeep

        return upkeep.memories_by_seq(self, seqs)

    def text_neighbours(
        self, text: str, before_seq: int, limit: int, skip_types: Sequence[str]
    ) -> list[tuple[int, Memory]]:
        from cortexmem.store.sqlite import upkeep

        return upkeep.text_neighbours(self, text, before_seq, limit, skip_types)

    def settled_with(self, memory_id: str) -> set[str]:
        from cortexmem.store.sqlite import upkeep

        return upkeep.settled_with(self, memory_id)

    def apply_links(
        self, edges: Sequence[Edge], candidates: Sequence[CandidatePair], linked_seq: int
    ) -> tuple[int, int]:
        from cortexmem.store.sqlite import upkeep

        return upkeep.apply_links(self, edges, candidates, linked_seq)

    def pending_candidates(self) -> list[CandidatePair]:
        from cortexmem.store.sqlite import upkeep

        return upkeep.pending_candidates(self)

    def suggested_edges(self) -> list[Edge]:
        from cortexmem.store.sqlite import upkeep

        return upkeep.suggested_edges(self)

    def reject_candidate(self, candidate: CandidatePair, link: Edge | None) -> None:
        from cortexmem.store.sqlite import upkeep

        upkeep.reject_candidate(self, candidate, link)

    def accept_edge(self, edge_id: str) -> None:
        from cortexmem.store.sqlite import upkeep

        upkeep.accept_edge(self, edge_id)

    def reject_edge(self, edge: Edge) -> None:
        from cortexmem.store.sqlite import upkeep

        upkeep.reject_edge(self, edge)

    def merge(self, keep: Memory, drop_id: str) -> Edge:
        from cortexmem.store.sqlite import upkeep

        return upkeep.merge(self, keep, drop_id)

    def vectors_of(self, model: str, seqs: Iterable[int]) -> dict[int, bytes]:
        from cortexmem.store.sqlite import upkeep

        return upkeep.vectors_of(self, model, seqs)

    def vector_chunk(
        self,
        model: str,
        after: int,
        before: int,
        limit: int,
        skip_types: Sequence[str],
        sink: Callable[[int, int, bytes], None],
    ) -> int:
        from cortexmem.store.sqlite import upkeep

        return upkeep.vector_chunk(self, model, after, before, limit, skip_types, sink)


# Parents before children, so foreign keys hold while copying.
_TABLE_ORDER = ("memories", "edges", "episodes")
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


def _merge_memory(
    conn: sqlite3.Connection,
    incoming: Memory,
    result: ImportResult,
    marks: Mapping[str, str] | None = None,
) -> str:
    """Insert, or update when the incoming copy is newer; equal copies merge access stats.
    The id it is stored under: its own, or that of an active memory saying the same (same
    type and content) under another id, which it is then taken for.

    Applying the same record twice is a no-op, so import is idempotent. A new memory takes
    the lifecycle's ``marks`` it had where it was exported; without them (an older export)
    its decay clock starts when it arrives, as a captured one's does: knowledge from an old
    export is not archived by the first lifecycle pass for the months it spent elsewhere.
    """
    row = conn.execute(
        f"SELECT {MEMORY_SELECT} FROM memories WHERE id = ?", (incoming.id,)
    ).fetchone()
    if row is None:
        same = conn.execute(
            "SELECT id FROM memories WHERE content_hash = ? AND status = 'active' LIMIT 1",
            (incoming.content_hash,),
        ).fetchone()
        if same is not None and incoming.status == "active":
            result.unchanged += 1
            return str(same[0])
        seq = conn.execute(INSERT_MEMORY, memory_to_row(incoming)).lastrowid
        if seq is not None and marks:
            conn.execute(
                "UPDATE memories SET decayed_at = ?, below_since = ?, archived_at = ? "
                "WHERE seq = ?",
                (marks.get("decayed_at"), marks.get("below_since"), marks.get("archived_at"),
                 seq),
            )  # fmt: skip
        elif seq is not None and incoming.status == "active":
            start_clock(conn, seq, incoming.memory_type, incoming.created_at)
        result.inserted += 1
        return incoming.id
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
        return incoming.id
    values = memory_to_row(winner)
    conn.execute(
        "UPDATE memories SET "
        + ", ".join(f"{c.strip()} = ?" for c in MEMORY_COLUMNS.split(",")[1:])
        + " WHERE id = ?",
        (*values[1:], winner.id),
    )
    if winner is incoming and marks:  # newer there: where its lifecycle stood there too
        conn.execute(
            "UPDATE memories SET decayed_at = ?, below_since = ?, archived_at = ? WHERE id = ?",
            (marks.get("decayed_at"), marks.get("below_since"), marks.get("archived_at"),
             incoming.id),
        )  # fmt: skip
    result.updated += 1
    return incoming.id
