"""Spooled tool-hook records, or a transcript's tool calls, → ``Observation`` records (pure)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from cortexmem.core.command_form import command_form, form_program
from cortexmem.core.session import Entry
from cortexmem.model import Observation, format_time, normalise_time, parse_time


def to_observations(
    records: Iterable[dict[str, Any]], session_id: str, branch: str | None = None
) -> list[Observation]:
    """One Observation per completed call (``post`` record); ``pre`` records only served to
    time the call. Records that do not have the expected shape are dropped."""
    out = []
    for rec in records:
        if rec.get("p") != "post":
            continue
        tool, stamp = rec.get("tool"), rec.get("t")
        if not isinstance(tool, str) or not tool or not isinstance(stamp, int):
            continue
        ms = rec.get("ms")
        try:
            at = format_time(datetime.fromtimestamp(stamp / 1e9, UTC))
            out.append(
                Observation(
                    session_id=session_id,
                    tool=tool,
                    ok=rec.get("ok") is True,
                    at=at,
                    detail=_opt(rec.get("detail")),
                    duration_ms=ms if isinstance(ms, int) and not isinstance(ms, bool) else None,
                    prev_tool=_opt(rec.get("prev")),
                    prev2_tool=_opt(rec.get("prev2")),
                    tool_use_id=_opt(rec.get("id")),
                    branch=branch,
                    command=_opt(rec.get("cmd")),
                )
            )
        except (ValueError, OverflowError, OSError):
            continue
    return out


def _opt(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


class CallObserver:
    """The observations a transcript's tool calls give, for sessions no tool hook spooled:
    each completed call's time (its result's), tool, outcome, duration, the two tools before it
    and, for a shell command, its form. Fed entries in order; its state (calls awaiting their
    result, the last two tools) is saved with a cursor so a transcript read in pieces gives
    what it gives read whole."""

    def __init__(self, session_id: str | None, branch: str | None = None) -> None:
        self.session_id = session_id
        self.branch = branch
        self.pending: dict[str, tuple[str, str | None, str | None]] = {}
        self.done: list[str] = []

    def snapshot(self) -> dict[str, Any]:
        return {"pending": self.pending, "done": self.done[-2:]}

    def restore(self, state: dict[str, Any]) -> None:
        pending = state.get("pending")
        if isinstance(pending, dict):
            self.pending = {
                str(k): (str(v[0]), v[1], v[2])
                for k, v in pending.items()
                if isinstance(v, list | tuple) and len(v) == 3
            }
        done = state.get("done")
        if isinstance(done, list):
            self.done = [str(t) for t in done][-2:]

    def feed(self, entry: Entry) -> list[Observation]:
        out: list[Observation] = []
        at = _time(entry.timestamp)
        for block in entry.blocks:
            if block.kind == "tool_use" and block.call is not None and block.tool_use_id:
                call = block.call
                form = command_form(call.command) if call.kind == "shell" else None
                self.pending[block.tool_use_id] = (call.name, at, form)
            elif block.kind == "tool_result" and block.tool_use_id:
                started = self.pending.pop(block.tool_use_id, None)
                session = self.session_id or entry.session_id
                if started is None or at is None or not session:
                    continue
                tool, began, form = started
                failed = block.outcome.is_error if block.outcome else block.is_error
                out.append(
                    Observation(
                        session_id=session,
                        tool=tool,
                        ok=not failed,
                        at=at,
                        detail=form_program(form) if form else None,
                        duration_ms=_millis(began, at),
                        prev_tool=self.done[-1] if self.done else None,
                        prev2_tool=self.done[-2] if len(self.done) > 1 else None,
                        tool_use_id=block.tool_use_id,
                        branch=self.branch or entry.branch,
                        command=form,
                    )
                )
                self.done = [*self.done[-1:], tool]
        return out


def _time(stamp: str | None) -> str | None:
    value = normalise_time(stamp) if stamp else None
    try:
        return value if isinstance(value, str) and parse_time(value) else None
    except ValueError:
        return None


def _millis(began: str | None, ended: str) -> int | None:
    if began is None:
        return None
    delta = (parse_time(ended) - parse_time(began)).total_seconds()
    return int(delta * 1000) if delta >= 0 else None
