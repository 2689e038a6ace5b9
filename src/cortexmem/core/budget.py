"""What a background model may still spend, and when it must stop: pure decisions over the
ledger of calls already made.

A peer's background learner made 2,534 consecutive failing calls in one loop and spent a
user's whole quota. Here every call through ``complete()`` is first checked against:

* **the budget**: calls and tokens per rolling hour and per rolling day (``ai.yaml``'s
  ``budget`` section; a project's file may only lower it);
* **the circuit breaker**: after ``failures_before_pause`` consecutive failures no call is made
  for ``pause_seconds``, doubled for each further failure up to ``max_pause_seconds``; once
  the pause is over ONE call is let through (half-open): a success closes the circuit, a
  failure opens it again for twice as long.

Times are ISO strings in the storage format (they sort as text); ``now`` is always passed in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import datetime, timedelta
from typing import Any, Final

from cortexmem.model import format_time, parse_time

HOUR: Final = timedelta(hours=1)
DAY: Final = timedelta(days=1)


@dataclass(frozen=True)
class Budget:
    """Limits per rolling hour and day, and the circuit breaker's settings."""

    calls_per_hour: int = 30
    calls_per_day: int = 200
    tokens_per_hour: int = 300_000
    tokens_per_day: int = 2_000_000
    failures_before_pause: int = 3
    pause_seconds: float = 300.0
    max_pause_seconds: float = 6 * 3600.0

    def lowered_by(self, other: Budget) -> Budget:
        """Each limit the lower of the two (a project's file may tighten, never loosen)."""
        return Budget(**{f.name: min(getattr(self, f.name), getattr(other, f.name))
                         for f in fields(self)})  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


SETTINGS: Final = tuple(f.name for f in fields(Budget))


def parse_budget(data: Any, base: Budget | None = None) -> Budget:
    """A ``Budget`` from the ``budget`` mapping of ``ai.yaml`` (missing settings keep ``base``'s
    values). Raises ``ValueError`` naming the setting that is wrong."""
    base = base or Budget()
    if data is None:
        return base
    if not isinstance(data, dict):
        raise ValueError("budget must be a mapping")
    unknown = set(data) - set(SETTINGS)
    if unknown:
        raise ValueError(f"budget: unknown setting(s) {', '.join(sorted(map(str, unknown)))}")
    values = base.to_dict()
    for name, value in data.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ValueError(f"budget.{name} must be a number ≥ 0")
        if name.endswith("_seconds"):
            values[name] = float(value)
        elif isinstance(value, float) and not value.is_integer():
            raise ValueError(f"budget.{name} must be a whole number")
        else:
            values[name] = int(value)
    if values["failures_before_pause"] < 1:
        raise ValueError("budget.failures_before_pause must be at least 1")
    return Budget(**values)


@dataclass(frozen=True)
class Call:
    """One call through ``complete()``, as the ledger keeps it."""

    at: str
    use: str
    provider: str
    model: str
    ok: bool
    input_tokens: int = 0
    output_tokens: int = 0
    session_id: str | None = None
    error: str | None = None

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True)
class Usage:
    calls_hour: int = 0
    calls_day: int = 0
    tokens_hour: int = 0
    tokens_day: int = 0
    failures_in_a_row: int = 0
    last_failure_at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def usage(calls: Sequence[Call], now: datetime) -> Usage:
    """What ``calls`` (the ledger since a day ago, any order) spent, and the failing streak."""
    hour_ago, day_ago = format_time(now - HOUR), format_time(now - DAY)
    ordered = sorted((c for c in calls if c.at >= day_ago), key=lambda c: c.at)
    recent = [c for c in ordered if c.at >= hour_ago]
    streak = 0
    for call in reversed(ordered):
        if call.ok:
            break
        streak += 1
    return Usage(
        calls_hour=len(recent),
        calls_day=len(ordered),
        tokens_hour=sum(c.tokens for c in recent),
        tokens_day=sum(c.tokens for c in ordered),
        failures_in_a_row=streak,
        last_failure_at=ordered[-1].at if streak else None,
    )


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    reason: str | None = None  # "budget" or "circuit"
    message: str = ""
    until: str | None = None


def pause_after(failures: int, budget: Budget) -> float:
    """Seconds the circuit stays open after ``failures`` consecutive failures (0: closed)."""
    over = failures - budget.failures_before_pause
    if over < 0:
        return 0.0
    return min(budget.max_pause_seconds, budget.pause_seconds * 2 ** min(over, 30))


def verdict(spent: Usage, budget: Budget, now: datetime) -> Verdict:
    """Whether one more call may be made now."""
    pause = pause_after(spent.failures_in_a_row, budget)
    if pause and spent.last_failure_at is not None:
        until = parse_time(spent.last_failure_at) + timedelta(seconds=pause)
        if now < until:
            return Verdict(
                False,
                "circuit",
                f"paused after {spent.failures_in_a_row} failed calls in a row, "
                f"until {format_time(until)[:19]}Z",
                format_time(until),
            )
    limits = (
        ("calls this hour", spent.calls_hour, budget.calls_per_hour),
        ("tokens this hour", spent.tokens_hour, budget.tokens_per_hour),
        ("calls in 24 hours", spent.calls_day, budget.calls_per_day),
        ("tokens in 24 hours", spent.tokens_day, budget.tokens_per_day),
    )
    for what, used, limit in limits:
        if used >= limit:
            return Verdict(False, "budget", f"budget spent: {used} of {limit} {what}")
    return Verdict(True)
