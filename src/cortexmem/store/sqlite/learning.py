"""The learning loop's and the review's tables in SQLite (``LearningStore``): the observations
of a window, the sessions left out, instincts, the loop's state, suggestions and the audit
log. Mixed into ``SQLiteStore``."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence

from cortexmem.core.redact import redact
from cortexmem.errors import CortexError
from cortexmem.model import Instinct, Observation, Suggestion, utc_now
from cortexmem.store.protocols import AuditEntry
from cortexmem.store.sqlite.rows import OBSERVATION_COLUMNS, row_to_observation
from cortexmem.store.sqlite.tx import Transactions

_INSTINCT = (
    "key, kind, label, rule, confidence, score, observations, sessions, total_sessions, "
    "first_seen, last_seen, status, updated_at, promoted_at"
)
_SUGGESTION = (
    "id, destination, target, title, text, rationale, source, key, before, after, evidence, "
    "recurrence, status, created_at, decided_at, drafted_by"
)
_AUDIT = "id, at, who, action, suggestion_id, target, diff, backup"
# The review queue's order: what recurs most and has the most evidence first, not the newest.
_RANKED = "ORDER BY recurrence DESC, json_array_length(evidence) DESC, created_at, id"


def _instinct_row(i: Instinct) -> tuple[object, ...]:
    return (
        i.key, i.kind, i.label, i.rule, i.confidence, i.score, i.observations, i.sessions,
        i.total_sessions, i.first_seen, i.last_seen, i.status, i.updated_at or utc_now(),
        i.promoted_at,
    )  # fmt: skip


def _suggestion(row: tuple[object, ...]) -> Suggestion:
    values = list(row)
    evidence = json.loads(str(values[10]) or "[]")
    values[10] = tuple(str(e) for e in evidence) if isinstance(evidence, list) else ()
    return Suggestion(*values)  # type: ignore[arg-type]


class LearningRooms(Transactions):
    """The ``LearningStore`` part of ``SQLiteStore``."""

    # ------------------------------------------------------------ observations, sessions

    def observations_since(self, since: str) -> list[Observation]:
        rows = self.read(
            lambda conn: conn.execute(
                f"SELECT {OBSERVATION_COLUMNS} FROM observations WHERE at >= ? ORDER BY at, seq",
                (since,),
            ).fetchall()
        )
        return [row_to_observation(r) for r in rows]

    def prune_observations(self, before: str, *, dry_run: bool = False) -> int:
        if dry_run:
            row = self.read(
                lambda conn: conn.execute(
                    "SELECT count(*) FROM observations WHERE at < ?", (before,)
                ).fetchone()
            )
            return int(row[0])
        return self.write(
            lambda conn: conn.execute("DELETE FROM observations WHERE at < ?", (before,)).rowcount
        )

    def latest_observation(self) -> str | None:
        row = self.read(lambda conn: conn.execute("SELECT max(at) FROM observations").fetchone())
        return row[0]

    def observation_mark(self) -> int:
        row = self.read(lambda conn: conn.execute("SELECT max(seq) FROM observations").fetchone())
        return int(row[0] or 0)

    def mark_session(self, session_id: str, *, automated: bool, entrypoint: str | None) -> None:
        self.write(
            lambda conn: conn.execute(
                "INSERT INTO learning_sessions (session_id, automated, entrypoint, seen_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET "
                "automated = max(automated, excluded.automated), "
                "entrypoint = excluded.entrypoint",
                (session_id, int(automated), entrypoint or "", utc_now()),
            )
        )

    def session_marked(self, session_id: str) -> bool:
        row = self.read(
            lambda conn: conn.execute(
                "SELECT 1 FROM learning_sessions WHERE session_id = ? AND entrypoint IS NOT NULL",
                (session_id,),
            ).fetchone()
        )
        return row is not None

    def add_session_tokens(self, session_id: str, tokens: int) -> None:
        self.write(
            lambda conn: conn.execute(
                "INSERT INTO learning_sessions (session_id, automated, seen_at, tokens) "
                "VALUES (?, 0, ?, ?) ON CONFLICT (session_id) DO UPDATE SET "
                "tokens = tokens + excluded.tokens",
                (session_id, utc_now(), max(0, tokens)),
            )
        )

    def session_tokens(self) -> dict[str, int]:
        rows = self.read(
            lambda conn: conn.execute(
                "SELECT session_id, tokens FROM learning_sessions WHERE tokens > 0"
            ).fetchall()
        )
        return {r[0]: int(r[1]) for r in rows}

    def learning_sessions(self) -> list[tuple[str, bool, str | None, int]]:
        rows = self.read(
            lambda conn: conn.execute(
                "SELECT session_id, automated, entrypoint, tokens FROM learning_sessions "
                "ORDER BY session_id"
            ).fetchall()
        )
        return [(str(r[0]), bool(r[1]), r[2], int(r[3])) for r in rows]

    def automated_sessions(self) -> set[str]:
        rows = self.read(
            lambda conn: conn.execute(
                "SELECT session_id FROM learning_sessions WHERE automated = 1"
            ).fetchall()
        )
        return {r[0] for r in rows}

    # ------------------------------------------------------------ instincts, state

    def instincts(self, statuses: Sequence[str] | None = None) -> list[Instinct]:
        sql = f"SELECT {_INSTINCT} FROM instincts"
        params: tuple[str, ...] = ()
        if statuses:
            sql += f" WHERE status IN ({', '.join('?' * len(statuses))})"
            params = tuple(statuses)
        rows = self.read(
            lambda conn: conn.execute(sql + " ORDER BY confidence DESC, key", params).fetchall()
        )
        return [Instinct(*r) for r in rows]

    def save_instincts(self, instincts: Iterable[Instinct], state: dict[str, str]) -> None:
        rows = [_instinct_row(i) for i in instincts]

        def op(conn: sqlite3.Connection) -> None:
            conn.executemany(
                f"INSERT OR REPLACE INTO instincts ({_INSTINCT}) VALUES ({', '.join('?' * 14)})",
                rows,
            )
            conn.executemany(
                "INSERT OR REPLACE INTO learning_state (key, value) VALUES (?, ?)",
                list(state.items()),
            )

        self.write(op)

    def learning_state(self, key: str) -> str | None:
        row = self.read(
            lambda conn: conn.execute(
                "SELECT value FROM learning_state WHERE key = ?", (key,)
            ).fetchone()
        )
        return None if row is None else str(row[0])

    # ------------------------------------------------------------ suggestions, audit

    def add_suggestions(self, suggestions: Iterable[Suggestion]) -> int:
        # The target file before and after, kept to show: redacted like everything stored
        # (a CLAUDE.md or a settings.json's env block can hold a key). Applying reads the
        # file again; what is kept here is never written back.
        rows = [
            (
                s.id, s.destination, s.target, s.title, s.text, s.rationale, s.source, s.key,
                redact(s.before), redact(s.after), json.dumps(list(s.evidence)), s.recurrence,
                s.status,
                s.created_at or utc_now(), s.decided_at, s.drafted_by,
            )
            for s in suggestions
        ]  # fmt: skip

        def op(conn: sqlite3.Connection) -> int:
            added = 0
            for row in rows:
                added += conn.execute(
                    f"INSERT OR IGNORE INTO suggestions ({_SUGGESTION}) "
                    f"VALUES ({', '.join('?' * 16)})",
                    row,
                ).rowcount
                # Seen again while still pending: its recurrence and evidence follow.
                conn.execute(
                    "UPDATE suggestions SET recurrence = max(recurrence, ?), evidence = ? "
                    "WHERE key = ? AND status = 'pending'",
                    (row[11], row[10], row[7]),
                )
            return added

        return self.write(op)

    def suggestions(self, status: str | None = "pending", limit: int = 1000) -> list[Suggestion]:
        rows = self.read(
            lambda conn: conn.execute(
                f"SELECT {_SUGGESTION} FROM suggestions WHERE ? IS NULL OR status = ? "
                f"{_RANKED} LIMIT ?",
                (status, status, limit),
            ).fetchall()
        )
        return [_suggestion(r) for r in rows]

    def count_suggestions(self, status: str = "pending") -> int:
        row = self.read(
            lambda conn: conn.execute(
                "SELECT count(*) FROM suggestions WHERE status = ?", (status,)
            ).fetchone()
        )
        return int(row[0])

    def find_suggestions(self, prefix: str) -> list[Suggestion]:
        rows = self.read(
            lambda conn: conn.execute(
                f"SELECT {_SUGGESTION} FROM suggestions WHERE id >= ? AND id < ? "
                "ORDER BY id LIMIT 10",
                (prefix, prefix + "\uffff"),
            ).fetchall()
        )
        return [_suggestion(r) for r in rows]

    def suggestion_keys(self) -> set[str]:
        rows = self.read(lambda conn: conn.execute("SELECT key FROM suggestions").fetchall())
        return {r[0] for r in rows}

    def decide_suggestion(self, suggestion: Suggestion, entry: AuditEntry) -> None:
        """Record a person's decision (the suggestion as decided: status, maybe a patched
        text) and its audit entry, in one transaction; ``CortexError`` when the suggestion is
        no longer pending (two reviews decided it at once: the second records nothing)."""

        def op(conn: sqlite3.Connection) -> None:
            claimed = conn.execute(
                "UPDATE suggestions SET status = ?, text = ?, after = ?, decided_at = ? "
                "WHERE id = ? AND status = 'pending'",
                (
                    suggestion.status,
                    redact(suggestion.text),
                    redact(suggestion.after),
                    suggestion.decided_at or utc_now(),
                    suggestion.id,
                ),
            ).rowcount
            if not claimed:  # decided meanwhile (another review), or gone
                raise CortexError(f"suggestion {suggestion.id} is no longer pending")
            conn.execute(
                "INSERT INTO audit_log (at, who, action, suggestion_id, target, diff, backup) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    entry.at,
                    entry.who,
                    entry.action,
                    entry.suggestion_id,
                    entry.target,
                    redact(entry.diff),
                    entry.backup,
                ),
            )

        self.write(op)

    def audit_entries(self, limit: int = 100) -> list[AuditEntry]:
        rows = self.read(
            lambda conn: conn.execute(
                f"SELECT {_AUDIT} FROM audit_log ORDER BY id DESC LIMIT ?", (limit,)
            ).fetchall()
        )
        return [AuditEntry(*r) for r in rows]
