"""Spooled tool-hook records → ``Observation`` records (pure)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from cortexmem.model import Observation, format_time


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
