"""Lessons in SQLite (``LessonStore``): one row per lesson key with the record as JSON, its
full-text index, vectors, history, graph edges and the warnings shown from it. Mixed into
``SQLiteStore``."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Final

from cortexmem.core.fts_query import to_fts_query
from cortexmem.core.redact import redact, redact_value
from cortexmem.core.text import clip_redacted
from cortexmem.model import Lesson, utc_now
from cortexmem.store.protocols import ImportResult, ShownWarning
from cortexmem.store.sqlite.tx import Transactions
from cortexmem.store.sqlite.vector_rows import load_vectors, put_vectors, vector_state

MAX_ACTION: Final = 300
_WARNING: Final = (
    "id, session_id, lesson_id, at, tool, action, tool_use_id, outcome, verdict, reason"
)


def search_text(lesson: Lesson) -> str:
    """What the full-text index sees: the lesson and the words of its trigger."""
    t = lesson.trigger
    words = [t.tool, t.program, t.language, t.framework, t.domain, *t.file_kinds]
    return " ".join([lesson.text, *(w for w in words if w)])


def _row(lesson: Lesson) -> tuple[Any, ...]:
    data = json.dumps(lesson.to_dict(), ensure_ascii=False, separators=(",", ":"))
    return (
        lesson.id, lesson.key, lesson.kind, lesson.tier, lesson.status, lesson.text,
        search_text(lesson), data, lesson.created_at, lesson.updated_at,
    )  # fmt: skip


def _lesson(data: str) -> Lesson:
    return Lesson.from_dict(json.loads(data))


def _history(conn: sqlite3.Connection, lesson_id: str, what: str, detail: str) -> None:
    conn.execute(
        "INSERT INTO lesson_history (lesson_id, at, what, detail) VALUES (?, ?, ?, ?)",
        (lesson_id, utc_now(), what, clip_redacted(detail, 500)),  # a call's or request's words
    )


def import_lessons(
    conn: sqlite3.Connection,
    lessons: Sequence[Lesson],
    history: Mapping[str, Sequence[tuple[str, str, str]]],
    edges: Sequence[tuple[str, str, str]],
    result: ImportResult,
) -> None:
    """Lessons from an export, idempotently: one whose key is stored is that one (its edges
    are moved onto it, its counters kept); a new one is written with its timeline. An edge
    whose end this store does not hold is skipped and said."""
    stored_as: dict[str, str] = {}
    refused: set[str] = set()
    for lesson in lessons:
        row = conn.execute("SELECT id FROM lessons WHERE key = ?", (lesson.key,)).fetchone()
        if row is not None:
            stored_as[lesson.id] = str(row[0])
            continue
        if conn.execute("SELECT 1 FROM lessons WHERE id = ?", (lesson.id,)).fetchone():
            result.skipped.append(f"lesson {lesson.id}: the id names another lesson here")
            refused.add(lesson.id)  # its edges would land on that other lesson
            continue
        # every string of it (an export is a file anyone can have edited): its text, what it
        # is about, where it came from
        lesson = Lesson.from_dict(redact_value(lesson.to_dict()))
        conn.execute(
            "INSERT INTO lessons (id, key, kind, tier, status, text, search, data, "
            "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            _row(lesson),
        )
        conn.executemany(
            "INSERT INTO lesson_history (lesson_id, at, what, detail) VALUES (?, ?, ?, ?)",
            [(lesson.id, at, redact(what), clip_redacted(detail, 500)) for at, what, detail in
             history.get(lesson.id, ())],
        )  # fmt: skip
        result.lessons_added += 1
    for source_id, target_id, type_ in edges:
        if source_id in refused or target_id in refused:
            result.skipped.append(f"lesson edge {source_id} → {target_id}: an end was skipped")
            continue
        source, target = stored_as.get(source_id, source_id), stored_as.get(target_id, target_id)
        ends = conn.execute(
            "SELECT count(*) FROM lessons WHERE id IN (?, ?)", (source, target)
        ).fetchone()[0]
        if ends < (1 if source == target else 2):
            result.skipped.append(f"lesson edge {source_id} → {target_id}: an end is not here")
            continue
        result.lesson_edges_added += conn.execute(
            "INSERT OR IGNORE INTO lesson_edges (source_id, target_id, type, created_at) "
            "VALUES (?, ?, ?, ?)",
            (source, target, type_, utc_now()),
        ).rowcount


class LessonRooms(Transactions):
    """The ``LessonStore`` part of ``SQLiteStore``."""

    def add_lesson(
        self, lesson: Lesson, what: str = "learned", detail: str = ""
    ) -> tuple[Lesson, bool]:
        def op(conn: sqlite3.Connection) -> tuple[Lesson, bool]:
            row = conn.execute("SELECT data FROM lessons WHERE key = ?", (lesson.key,)).fetchone()
            if row is not None:
                return _lesson(row[0]), False
            conn.execute(
                "INSERT INTO lessons (id, key, kind, tier, status, text, search, data, "
                "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                _row(lesson),
            )
            _history(conn, lesson.id, what, detail)
            return lesson, True

        return self.write(op)

    def update_lesson(self, lesson: Lesson, what: str, detail: str = "") -> None:
        def op(conn: sqlite3.Connection) -> None:
            _, key, kind, tier, status, text, search, data, _, updated = _row(lesson)
            changed = conn.execute(
                "UPDATE lessons SET key = ?, kind = ?, tier = ?, status = ?, text = ?, "
                "search = ?, data = ?, updated_at = ? WHERE id = ?",
                (key, kind, tier, status, text, search, data, updated, lesson.id),
            ).rowcount
            if not changed:
                raise KeyError(f"no lesson {lesson.id}")
            _history(conn, lesson.id, what, detail)

        self.write(op)

    def get_lesson(self, lesson_id: str) -> Lesson | None:
        def op(conn: sqlite3.Connection) -> list[Any]:
            exact = conn.execute("SELECT data FROM lessons WHERE id = ?", (lesson_id,)).fetchall()
            if exact:
                return exact
            found = conn.execute(
                "SELECT id, data FROM lessons WHERE id LIKE ? ESCAPE '\\' "
                "OR id LIKE ? ESCAPE '\\' ORDER BY id LIMIT 64",
                (_prefix(lesson_id), "%-" + _prefix(lesson_id)),
            ).fetchall()
            # the start of the id, or of its last part (the short id a list shows), not of a
            # part in the middle (a time: lessons made the same weeks share it)
            return [
                (data,) for lid, data in found
                if lid.startswith(lesson_id) or lid.rsplit("-", 1)[-1].startswith(lesson_id)
            ]  # fmt: skip

        rows = self.read(op)
        if len(rows) != 1:
            return None  # none, or an ambiguous prefix
        return _lesson(rows[0][0])

    def lesson_by_key(self, key: str) -> Lesson | None:
        row = self.read(
            lambda conn: conn.execute("SELECT data FROM lessons WHERE key = ?", (key,)).fetchone()
        )
        return None if row is None else _lesson(row[0])

    def iter_lessons(
        self,
        statuses: Sequence[str] = ("active",),
        tiers: Sequence[str] = (),
        learned_before: str | None = None,
    ) -> Iterator[Lesson]:
        where, args = _where(statuses, tiers)
        if learned_before is not None:
            where += (" AND " if where else "WHERE ") + "created_at < ?"
            args.append(learned_before)
        rows = self.read(
            lambda conn: conn.execute(
                f"SELECT data FROM lessons {where} ORDER BY seq", args
            ).fetchall()
        )
        return (_lesson(r[0]) for r in rows)

    def lesson_count(self, statuses: Sequence[str] = ("active",)) -> int:
        where, args = _where(statuses, ())
        sql = f"SELECT count(*) FROM lessons {where}"
        return int(self.read(lambda conn: conn.execute(sql, args).fetchone()[0]))

    def search_lessons(self, query: str, limit: int) -> list[tuple[int, Lesson, float]]:
        match = to_fts_query(query)
        if match is None or limit <= 0:
            return []
        sql = (
            "SELECT l.seq, l.data, bm25(lessons_fts) AS score FROM lessons_fts "
            "JOIN lessons l ON l.seq = lessons_fts.rowid WHERE lessons_fts MATCH ? "
            "ORDER BY score, l.seq DESC LIMIT ?"
        )
        rows = self.read(lambda conn: conn.execute(sql, (match, limit)).fetchall())
        return [(int(r[0]), _lesson(r[1]), -float(r[2])) for r in rows]

    def lessons_by_seq(self, seqs: Iterable[int]) -> dict[int, Lesson]:
        wanted = list(dict.fromkeys(int(s) for s in seqs))
        if not wanted:
            return {}
        marks = ", ".join("?" * len(wanted))
        rows = self.read(
            lambda conn: conn.execute(
                f"SELECT seq, data FROM lessons WHERE seq IN ({marks})", wanted
            ).fetchall()
        )
        return {int(r[0]): _lesson(r[1]) for r in rows}

    def lesson_history(self, lesson_id: str) -> list[tuple[str, str, str]]:
        rows = self.read(
            lambda conn: conn.execute(
                "SELECT at, what, detail FROM lesson_history WHERE lesson_id = ? ORDER BY id",
                (lesson_id,),
            ).fetchall()
        )
        return [(r[0], r[1], r[2]) for r in rows]

    def add_lesson_edge(self, source_id: str, target_id: str, type_: str) -> bool:
        return bool(
            self.write(
                lambda conn: (
                    conn.execute(
                        "INSERT OR IGNORE INTO lesson_edges (source_id, target_id, type, "
                        "created_at) VALUES (?, ?, ?, ?)",
                        (source_id, target_id, type_, utc_now()),
                    ).rowcount
                )
            )
        )

    def lesson_edges(self, lesson_ids: Iterable[str]) -> list[tuple[str, str, str]]:
        wanted = list(dict.fromkeys(lesson_ids))
        if not wanted:
            return []
        marks = ", ".join("?" * len(wanted))
        rows = self.read(
            lambda conn: conn.execute(
                f"SELECT source_id, target_id, type FROM lesson_edges WHERE source_id IN "
                f"({marks}) OR target_id IN ({marks}) ORDER BY source_id, target_id, type",
                wanted + wanted,
            ).fetchall()
        )
        return [(r[0], r[1], r[2]) for r in rows]

    # ------------------------------------------------------------- warnings

    def record_warning(
        self, session_id: str, lesson_id: str, tool: str, action: str, tool_use_id: str | None
    ) -> bool:
        return bool(
            self.write(
                lambda conn: (
                    conn.execute(
                        "INSERT OR IGNORE INTO lesson_warnings (session_id, lesson_id, at, tool, "
                        "action, tool_use_id) VALUES (?, ?, ?, ?, ?, ?)",
                        (
                            session_id,
                            lesson_id,
                            utc_now(),
                            redact(tool),  # an MCP tool is named by its server
                            clip_redacted(action, MAX_ACTION),
                            tool_use_id,
                        ),
                    ).rowcount
                )
            )
        )

    def warnings_of_session(self, session_id: str) -> list[ShownWarning]:
        return self._warnings("session_id = ? ORDER BY id", (session_id,))

    def unjudged_warnings(self, limit: int = 100) -> list[ShownWarning]:
        return self._warnings("verdict IS NULL ORDER BY id LIMIT ?", (limit,))

    def _warnings(self, where: str, args: tuple[Any, ...]) -> list[ShownWarning]:
        sql = f"SELECT {_WARNING} FROM lesson_warnings WHERE {where}"
        return [ShownWarning(*r) for r in self.read(lambda c: c.execute(sql, args).fetchall())]

    def set_warning_outcome(self, session_id: str, tool_use_id: str, outcome: str) -> int:
        return int(
            self.write(
                lambda conn: (
                    conn.execute(
                        "UPDATE lesson_warnings SET outcome = ? WHERE session_id = ? AND "
                        "tool_use_id = ? AND verdict IS NULL",
                        (outcome[:MAX_ACTION], session_id, tool_use_id),
                    ).rowcount
                )
            )
        )

    def judge_warning(self, warning_id: int, verdict: str, reason: str | None) -> None:
        self.write(
            lambda conn: conn.execute(
                "UPDATE lesson_warnings SET verdict = ?, reason = ?, judged_at = ? WHERE id = ?",
                (verdict, reason, utc_now(), warning_id),
            )
        )

    # ------------------------------------------------------------- vectors

    def lesson_embedding_backlog(self, model: str, limit: int) -> list[tuple[int, Lesson]]:
        rows = self.read(
            lambda conn: conn.execute(
                "SELECT l.seq, l.data FROM lessons l LEFT JOIN lesson_embeddings v "
                "ON v.lesson_seq = l.seq AND v.model = ? WHERE v.lesson_seq IS NULL "
                "AND l.status != 'archived' ORDER BY l.seq LIMIT ?",
                (model, limit),
            ).fetchall()
        )
        return [(int(r[0]), _lesson(r[1])) for r in rows]

    def put_lesson_embeddings(
        self, model: str, dim: int, items: Sequence[tuple[int, bytes]]
    ) -> int:
        if not items:
            return 0
        return self.write(
            lambda conn: put_vectors(
                conn, "lesson_embeddings", "lesson_seq", "lessons", model, dim, items
            )
        )

    def lesson_embedding_state(self, model: str) -> tuple[int, int]:
        return self.read(lambda conn: vector_state(conn, "lesson_embeddings", model))

    def load_lesson_embeddings(
        self, model: str, after_version: int = 0
    ) -> list[tuple[int, int, str, bytes]]:
        return self.read(
            lambda conn: load_vectors(
                conn, "lesson_embeddings", "lesson_seq", "lessons", "kind", model, after_version
            )
        )


def _where(statuses: Sequence[str], tiers: Sequence[str]) -> tuple[str, list[Any]]:
    clauses, args = [], []
    for column, values in (("status", list(statuses)), ("tier", list(tiers))):
        if values:
            clauses.append(f"{column} IN ({', '.join('?' * len(values))})")
            args += values
    return ("WHERE " + " AND ".join(clauses) if clauses else ""), args


def _prefix(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
