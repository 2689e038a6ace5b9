"""The AI façade's bookkeeping in SQLite (``AIStore``): the ledger of model calls, the queue
of background work and the distillation state. Mixed into ``SQLiteStore``."""

from __future__ import annotations

import sqlite3

from cortexmem.core.budget import Call
from cortexmem.model import utc_now
from cortexmem.store.protocols import AIJob, DistillState
from cortexmem.store.sqlite.tx import Transactions

MAX_ERROR = 300
_JOB = "id, kind, session_id, transcript_path, queued_at, attempts, last_error"
_CALL = "at, use, provider, model, ok, input_tokens, output_tokens, session_id, error"


class AIRooms(Transactions):
    """The ``AIStore`` part of ``SQLiteStore``."""

    def record_ai_call(self, call: Call) -> None:
        row = (
            call.at, call.use, call.provider, call.model, int(call.ok),
            max(0, call.input_tokens), max(0, call.output_tokens), call.session_id,
            (call.error or "")[:MAX_ERROR] or None,
        )  # fmt: skip
        self.write(
            lambda conn: conn.execute(
                f"INSERT INTO ai_calls ({_CALL}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", row
            )
        )

    def ai_calls_since(self, since: str) -> list[Call]:
        rows = self.read(
            lambda conn: conn.execute(
                f"SELECT {_CALL} FROM ai_calls WHERE at >= ? ORDER BY at, id", (since,)
            ).fetchall()
        )
        return [
            Call(at=r[0], use=r[1], provider=r[2], model=r[3], ok=bool(r[4]), input_tokens=r[5],
                 output_tokens=r[6], session_id=r[7], error=r[8])
            for r in rows
        ]  # fmt: skip

    def enqueue_ai_job(self, kind: str, session_id: str, transcript_path: str | None) -> bool:
        now = utc_now()

        def op(conn: sqlite3.Connection) -> bool:
            added = conn.execute(
                "INSERT OR IGNORE INTO ai_jobs (kind, session_id, transcript_path, queued_at) "
                "VALUES (?, ?, ?, ?)",
                (kind, session_id, transcript_path, now),
            ).rowcount
            if not added:  # queued again: it settles from now
                conn.execute(
                    "UPDATE ai_jobs SET queued_at = ? WHERE kind = ? AND session_id = ?",
                    (now, kind, session_id),
                )
            return bool(added)

        return self.write(op)

    def ai_jobs(self, kind: str | None = None, limit: int = 100) -> list[AIJob]:
        rows = self.read(
            lambda conn: conn.execute(
                f"SELECT {_JOB} FROM ai_jobs WHERE ? IS NULL OR kind = ? ORDER BY id LIMIT ?",
                (kind, kind, limit),
            ).fetchall()
        )
        return [AIJob(*r) for r in rows]

    def finish_ai_job(self, job_id: int) -> None:
        self.write(lambda conn: conn.execute("DELETE FROM ai_jobs WHERE id = ?", (job_id,)))

    def fail_ai_job(self, job_id: int, error: str) -> int:
        def op(conn: sqlite3.Connection) -> int:
            conn.execute(
                "UPDATE ai_jobs SET attempts = attempts + 1, last_error = ? WHERE id = ?",
                (error[:MAX_ERROR], job_id),
            )
            row = conn.execute("SELECT attempts FROM ai_jobs WHERE id = ?", (job_id,)).fetchone()
            return int(row[0]) if row else 0

        return self.write(op)

    def distill_state(self, session_id: str) -> DistillState | None:
        row = self.read(
            lambda conn: conn.execute(
                "SELECT session_id, last_line, distilled_at, memories, model, input_tokens, "
                "output_tokens FROM distill_state WHERE session_id = ?",
                (session_id,),
            ).fetchone()
        )
        return None if row is None else DistillState(*row)

    def set_distill_state(self, state: DistillState) -> None:
        self.write(
            lambda conn: conn.execute(
                "INSERT INTO distill_state (session_id, last_line, distilled_at, memories, model, "
                "input_tokens, output_tokens) VALUES (?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (session_id) DO UPDATE SET last_line = excluded.last_line, "
                "distilled_at = excluded.distilled_at, "
                "memories = memories + excluded.memories, model = excluded.model, "
                "input_tokens = input_tokens + excluded.input_tokens, "
                "output_tokens = output_tokens + excluded.output_tokens",
                (
                    state.session_id,
                    state.last_line,
                    state.distilled_at,
                    state.memories,
                    state.model,
                    state.input_tokens,
                    state.output_tokens,
                ),
            )
        )
