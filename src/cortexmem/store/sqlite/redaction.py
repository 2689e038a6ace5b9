"""Today's redaction over what a store already holds (``cortex redact``).

Every text is redacted before it is stored, but the rules grow: a store written by an older
Cortex keeps what the rules of its day let through (a password after a parenthesis, JSON
quoted in JSON). This pass runs the current rules over every text a store holds and rewrites
what changes, in one transaction:

* what is derived from a text follows it: a memory's, an event's and an episode's content
  hash (capturing the same transcript again still finds it stored: the capture redacts with
  the same rules, then hashes), a lesson's text-derived key and the event hashes it cites as
  evidence, the lesson's search text; two events or episodes that differed only by a secret
  become one (the first kept, an episode's links moved onto it);
* a changed text's vector is dropped (an episode's, a lesson's) or marked stale (a memory's,
  by its hash), so the backlog embeds the redacted text;
* events are append-only: their guard trigger is lifted for this transaction only and put
  back as it was;
* then the words are made unrecoverable: ``secure_delete`` zeroes what the updates free, the
  full-text indexes are merged (a replaced term lingers in an older index segment until
  then), the write-ahead log is checkpointed and truncated, and the file vacuumed.

A dry run does the same work and rolls it back, so its counts are exactly what would change.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from typing import Any, Final

from cortexmem.core.redact import (
    redact,
    redact_event,
    redact_json_text,
    redact_memory,
    redact_value,
)
from cortexmem.model import Lesson, content_hash
from cortexmem.store.protocols import Redacted
from cortexmem.store.sqlite.episodes import EPISODE_COLUMNS, row_to_episode
from cortexmem.store.sqlite.lessons import search_text
from cortexmem.store.sqlite.rows import EVENT_COLUMNS, MEMORY_SELECT, row_to_event, row_to_memory

# Free text written by hooks, the learning loop and the model routes, redacted when written:
# (table, key column, text columns). A column whose value is JSON is redacted as JSON (each
# string in it), so its structure stays readable.
PLAIN_TEXT: Final = (
    ("lesson_history", "id", ("detail",)),
    ("lesson_warnings", "id", ("tool", "action", "reason")),
    ("observations", "seq", ("tool", "prev_tool", "prev2_tool", "detail", "command", "branch")),
    # an instinct's key names its tools (an MCP tool is named by its server), and a
    # suggestion drawn from it says the key in its source
    ("instincts", "key", ("key", "label", "rule")),
    ("suggestions", "id", ("title", "text", "rationale", "source", "before", "after", "evidence")),
    ("audit_log", "id", ("diff",)),
    ("ai_calls", "id", ("error",)),
    ("ai_jobs", "id", ("last_error",)),
    ("extraction_cursors", "transcript_path", ("extractor_state",)),
    ("learning_state", "key", ("value",)),
)
FTS_TABLES: Final = ("memories_fts", "episodes_fts", "lessons_fts")
EVENT_GUARD: Final = "events_append_only"
HISTORY_CHARS: Final = 500  # as ``lessons._history`` clips a detail


def redact_connection(conn: sqlite3.Connection, *, apply: bool) -> Redacted:
    """Redact every stored text on ``conn`` in one transaction (rolled back unless ``apply``).

    ``conn`` must not be in a transaction. Tables or columns an older schema lacks are
    skipped."""
    conn.execute("PRAGMA secure_delete = ON")
    conn.execute("BEGIN IMMEDIATE")
    try:
        counts: dict[str, int] = {}
        folded = 0
        hashes: dict[str, str] = {}
        with _events_unguarded(conn):
            counts["events"], n = _events(conn, hashes)
            folded += n
        counts["memories"] = _memories(conn)
        counts["episodes"], n = _episodes(conn)
        folded += n
        counts["lessons"] = _lessons(conn, hashes)
        counts["document_listings"] = _listings(conn)
        for table, key, columns in PLAIN_TEXT:
            counts[table] = _plain(conn, table, key, columns)
        if apply:
            for table in FTS_TABLES:
                if _has_table(conn, table):
                    conn.execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")
            conn.execute("COMMIT")
        else:
            conn.execute("ROLLBACK")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return Redacted(tuple((t, n) for t, n in counts.items() if n), folded, compacted=False)


def compact(conn: sqlite3.Connection) -> bool:
    """Checkpoint and truncate the write-ahead log, then vacuum: no page of the file or the
    log keeps what was replaced. False when another connection kept it from finishing (a
    reader holding an old snapshot): the redacted rows are committed either way."""
    try:
        conn.execute("VACUUM")
        busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc).lower() or "busy" in str(exc).lower():
            return False
        raise
    return not busy


@contextlib.contextmanager
def _events_unguarded(conn: sqlite3.Connection) -> Iterator[None]:
    """The events' append-only trigger lifted inside the open transaction and put back as it
    was (a rollback puts it back too: SQLite's schema changes are transactional)."""
    row = conn.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?", (EVENT_GUARD,)
    ).fetchone()
    if row is not None:
        conn.execute(f"DROP TRIGGER {EVENT_GUARD}")
    yield
    if row is not None:
        conn.execute(row[0])


def _has_table(conn: sqlite3.Connection, table: str) -> bool:
    return (
        conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone() is not None
    )


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {str(r[1]) for r in conn.execute(f"PRAGMA table_info({table})")}


def _events(conn: sqlite3.Connection, hashes: dict[str, str]) -> tuple[int, int]:
    """Events redacted again, their hashes worked out anew (``hashes``: old to new); one
    that now equals an earlier event is deleted (the earlier one stands for both)."""
    if not _has_table(conn, "events"):
        return 0, 0
    changed = folded = 0
    rows = conn.execute(f"SELECT seq, content_hash, {EVENT_COLUMNS} FROM events ORDER BY seq")
    for seq, old_hash, *rest in rows.fetchall():
        event = row_to_event(tuple(rest))
        clean = redact_event(event)
        new_hash = clean.content_hash
        if clean is event and new_hash == old_hash:
            continue
        hashes[old_hash] = new_hash
        taken = conn.execute(
            "SELECT 1 FROM events WHERE content_hash = ? AND seq != ?", (new_hash, seq)
        ).fetchone()
        if taken:
            conn.execute("DELETE FROM events WHERE seq = ?", (seq,))
            folded += 1
            continue
        p = clean.provenance
        conn.execute(
            "UPDATE events SET content = ?, payload = ?, content_hash = ?, session_id = ?, "
            "transcript_path = ?, branch = ? WHERE seq = ?",
            (clean.content, json.dumps(clean.payload, sort_keys=True), new_hash, p.session_id,
             p.transcript_path, p.branch, seq),
        )  # fmt: skip
        changed += 1
    return changed, folded


def _memories(conn: sqlite3.Connection) -> int:
    """Memories redacted again; the new content hash leaves their vector stale, so the
    embedding backlog takes them again."""
    changed = 0
    rows = conn.execute(f"SELECT seq, {MEMORY_SELECT} FROM memories ORDER BY seq").fetchall()
    for seq, *rest in rows:
        memory = row_to_memory(tuple(rest))
        clean = redact_memory(memory)
        if clean is memory:
            continue
        where = clean.source_context
        conn.execute(
            "UPDATE memories SET content = ?, summary = ?, tags = ?, content_hash = ?, "
            "source_session = ?, source_branch = ?, source_cwd = ? WHERE seq = ?",
            (clean.content, clean.summary, json.dumps(list(clean.tags)), clean.content_hash,
             clean.source_session, where.branch, where.cwd, seq),
        )  # fmt: skip
        changed += 1
    return changed


def _episodes(conn: sqlite3.Connection) -> tuple[int, int]:
    """Episodes redacted again, hashed anew, their vectors dropped; one that now equals an
    earlier episode is folded into it (the memories drawn from it point at that one)."""
    if not _has_table(conn, "episodes"):
        return 0, 0
    changed = folded = 0
    rows = conn.execute(
        f"SELECT seq, {EPISODE_COLUMNS}, content_hash FROM episodes ORDER BY seq"
    ).fetchall()
    for seq, *columns, old_hash in rows:
        episode = row_to_episode(columns)
        episode_id, text = episode.id, episode.text
        where = [episode.session_id, episode.transcript_path, episode.branch, episode.document]
        clean, new_where = redact(text), [redact(w) if w else w for w in where]
        session, path, branch, document = new_where
        # the hash the episode's record gives (a whole read's chunks hash with where it was read)
        new_hash = replace(
            episode, text=clean, session_id=session, transcript_path=path, branch=branch,
            document=document,
        ).content_hash  # fmt: skip
        if clean == text and new_where == where and new_hash == old_hash:
            continue
        taken = conn.execute(
            "SELECT id FROM episodes WHERE content_hash = ? AND seq != ?", (new_hash, seq)
        ).fetchone()
        if taken:
            conn.execute(
                "INSERT OR IGNORE INTO memory_episodes (memory_id, episode_id) "
                "SELECT memory_id, ? FROM memory_episodes WHERE episode_id = ?",
                (taken[0], episode_id),
            )
            conn.execute("DELETE FROM episodes WHERE seq = ?", (seq,))
            folded += 1
            continue
        conn.execute(
            "UPDATE episodes SET text = ?, session_id = ?, transcript_path = ?, branch = ?, "
            "document = ?, content_hash = ? WHERE seq = ?",
            (clean, *new_where, new_hash, seq),
        )
        if clean != text:
            conn.execute("DELETE FROM episode_embeddings WHERE episode_seq = ?", (seq,))
        changed += 1
    return changed, folded


def _lessons(conn: sqlite3.Connection, hashes: dict[str, str]) -> int:
    """Lessons redacted again (text and the command they are about), with a key made from
    their text made anew, and the events they cite under those events' new hashes."""
    if not _has_table(conn, "lessons"):
        return 0
    changed = 0
    for seq, key, data in conn.execute("SELECT seq, key, data FROM lessons").fetchall():
        lesson = Lesson.from_dict(json.loads(data))
        clean = _redacted_lesson(lesson, hashes)
        if clean == lesson:
            continue
        if key == content_hash(lesson.kind, lesson.text.lower()):
            new_key = content_hash(clean.kind, clean.text.lower())
            free = not conn.execute(
                "SELECT 1 FROM lessons WHERE key = ? AND seq != ?", (new_key, seq)
            ).fetchone()
            clean = replace(clean, key=new_key if free else key)
        conn.execute(
            "UPDATE lessons SET key = ?, text = ?, search = ?, data = ? WHERE seq = ?",
            (clean.key, clean.text, search_text(clean), _lesson_data(clean), seq),
        )
        changed += 1
    return changed


def _listings(conn: sqlite3.Connection) -> int:
    """What documents list, under the redacted decision (an event's content) and document:
    two that become one keep the later times of each."""
    if not _has_table(conn, "document_listings"):
        return 0
    changed = 0
    rows = conn.execute(
        "SELECT document, decision, listed_at, dropped_at FROM document_listings"
    ).fetchall()
    for document, decision, listed_at, dropped_at in rows:
        clean = (redact(document), redact(decision))
        if clean == (document, decision):
            continue
        conn.execute(
            "DELETE FROM document_listings WHERE document = ? AND decision = ?",
            (document, decision),
        )
        conn.execute(
            "INSERT INTO document_listings (document, decision, listed_at, dropped_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (document, decision) DO UPDATE SET "
            "listed_at = max(listed_at, excluded.listed_at), "
            "dropped_at = max(dropped_at, excluded.dropped_at)",
            (*clean, listed_at, dropped_at),
        )
        changed += 1
    return changed


def _redacted_lesson(lesson: Lesson, hashes: dict[str, str]) -> Lesson:
    """Every string of it redacted, as an import redacts a lesson, and the events it cites
    under their new hashes."""
    clean = Lesson.from_dict(redact_value(lesson.to_dict()))
    events = tuple(dict.fromkeys(hashes.get(e, e) for e in clean.events))
    return replace(clean, events=events)


def _lesson_data(lesson: Lesson) -> str:
    return json.dumps(lesson.to_dict(), ensure_ascii=False, separators=(",", ":"))


def _plain(conn: sqlite3.Connection, table: str, key: str, columns: tuple[str, ...]) -> int:
    """Rows of ``table`` whose text columns (those the schema has) change when redacted."""
    if not _has_table(conn, table):
        return 0
    present = [c for c in columns if c in _columns(conn, table)]
    if not present:
        return 0
    changed = 0
    rows = conn.execute(f"SELECT {key}, {', '.join(present)} FROM {table}").fetchall()
    for row_key, *values in rows:
        clean = [_text(table, column, v) for column, v in zip(present, values, strict=True)]
        if clean == values:
            continue
        sets = ", ".join(f"{c} = ?" for c in present)
        try:
            conn.execute(f"UPDATE {table} SET {sets} WHERE {key} = ?", (*clean, row_key))
        except sqlite3.IntegrityError:  # its key, redacted, is another row's: that one stays
            conn.execute(f"DELETE FROM {table} WHERE {key} = ?", (row_key,))
        changed += 1
    return changed


def _text(table: str, column: str, value: Any) -> Any:
    if not isinstance(value, str) or not value:
        return value
    clean = redact_json_text(value)
    if clean is None:
        clean = redact(value)
    if clean != value and (table, column) == ("lesson_history", "detail"):
        clean = clean[:HISTORY_CHARS]
    return clean
