"""The memory lifecycle, run over the project and global stores: decay, archive, restore, prune.

The rules are ``core.decay`` and ``core.lifecycle`` (pure); the SQL is
the store's ``lifecycle_pass``. This module chooses the moment and the stores, and reports.

When it runs:

* ``cortex lifecycle`` (``--dry-run`` to see what would change);
* at the end of the Stop hook's capture, through ``maybe_run``: at most once per 24 hours per
  store (the last pass is in the store's ``lifecycle_runs`` table, checked under the write lock
  so racing hooks run it once), and only when the hook has time left;
* restore also happens in recall (``services.recall``): a memory the lifecycle archived that a
  recall asking for archived memories serves is made active again at once.

Pruning deletes rows, so a pass that prunes backs the store up first (``.cortex/backups/``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from cortexmem.model import format_time
from cortexmem.services.context import SCOPES, Context, Scope

ACTIONS = ("decayed", "archived", "restored", "pruned")
RUN_EVERY = timedelta(hours=24)


@dataclass(frozen=True)
class Example:
    scope: str
    id: str
    memory_type: str
    text: str
    confidence_before: float
    confidence_after: float | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "scope": self.scope,
            "id": self.id,
            "memory_type": self.memory_type,
            "text": self.text,
            "confidence_before": round(self.confidence_before, 6),
            "confidence_after": None
            if self.confidence_after is None
            else round(self.confidence_after, 6),
        }


@dataclass
class LifecycleReport:
    """What a pass changed (or, dry run, would change): ``(scope, id)`` per action."""

    now: str
    dry_run: bool = False
    decayed: list[tuple[str, str]] = field(default_factory=list)
    archived: list[tuple[str, str]] = field(default_factory=list)
    restored: list[tuple[str, str]] = field(default_factory=list)
    pruned: list[tuple[str, str]] = field(default_factory=list)
    examples: dict[str, list[Example]] = field(default_factory=lambda: {a: [] for a in ACTIONS})
    backups: list[str] = field(default_factory=list)
    scopes: list[str] = field(default_factory=list)  # the stores passed over
    skipped: list[str] = field(default_factory=list)  # stores whose last pass is recent
    elapsed_ms: float = 0.0

    def counts(self) -> dict[str, int]:
        return {a: len(getattr(self, a)) for a in ACTIONS}

    @property
    def changed(self) -> bool:
        return any(self.counts().values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "now": self.now,
            "dry_run": self.dry_run,
            "counts": self.counts(),
            **{a: [{"scope": s, "id": i} for s, i in getattr(self, a)] for a in ACTIONS},
            "examples": {a: [e.to_dict() for e in self.examples[a]] for a in ACTIONS},
            "backups": self.backups,
            "scopes": self.scopes,
            "skipped": self.skipped,
            "elapsed_ms": round(self.elapsed_ms, 1),
        }


def _now_iso(now: datetime | str | None) -> str:
    if now is None:
        return format_time(datetime.now(UTC))
    if isinstance(now, str):
        return now
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    return format_time(now)


def run_lifecycle(
    ctx: Context,
    now: datetime | str | None = None,
    dry_run: bool = False,
    *,
    scopes: tuple[Scope, ...] = SCOPES,
    every: timedelta | None = None,
) -> LifecycleReport:
    """One lifecycle pass at ``now`` (default: this moment) over every existing store.

    ``every``: leave out a store whose last pass ran less than that before ``now``.
    """
    started = time.perf_counter()
    report = LifecycleReport(now=_now_iso(now), dry_run=dry_run)
    for scope, store in ctx.existing(scopes):
        result = store.lifecycle_pass(report.now, dry_run=dry_run, every=every)
        if result.skipped:
            report.skipped.append(scope)
            continue
        report.scopes.append(scope)
        for action in ACTIONS:
            getattr(report, action).extend((scope, i) for i in getattr(result, action))
            report.examples[action].extend(
                Example(scope, *example) for example in result.examples.get(action, [])
            )
        if result.backup:
            report.backups.append(result.backup)
    report.elapsed_ms = 1000 * (time.perf_counter() - started)
    if not dry_run and any(report.counts().values()):
        _forget_cached_briefings(ctx)
    return report


def _forget_cached_briefings(ctx: Context) -> None:
    """Decay changes confidence markers without a new row: cached briefings must go."""
    folder = ctx.paths.data_dir / "cache"
    for path in folder.glob("briefing-*.json") if folder.is_dir() else []:
        path.unlink(missing_ok=True)


def maybe_run(ctx: Context, now: datetime | str | None = None) -> LifecycleReport | None:
    """Run a pass on each store whose last one is at least ``RUN_EVERY`` old; None when no
    store was due (cheap: one indexed lookup per store)."""
    report = run_lifecycle(ctx, now, every=RUN_EVERY)
    return report if report.scopes else None


def restore_served(ctx: Context, served: Sequence[tuple[str, str]]) -> set[tuple[str, str]]:
    """Restore the memories among ``served`` ``(scope, id)`` that the lifecycle archived; the
    ones restored."""
    restored: set[tuple[str, str]] = set()
    asked = {s for s, _ in served}
    for scope, store in ctx.existing(tuple(s for s in SCOPES if s in asked)):
        ids = [i for s, i in served if s == scope]
        restored.update((scope, i) for i in store.restore_archived(ids))
    return restored
