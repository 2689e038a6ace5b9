"""The memory lifecycle as a pure plan: which memories decay, are archived, restored or pruned.

::

    active   → archived   confidence below 0.3 continuously for 14 days, and not recalled in
                          those 14 days; hubs (centrality > 0.5) are exempt
    archived → active     recalled (served again): see ``restore``
    archived → pruned     30 days archived and untouched (deleted by the service, after a backup)

Never touched: pinned memories and decisions (immortal: no decay, no archive, no prune). Only
memories the lifecycle archived itself (``archived_at`` set) are restored or pruned here: one a
person archived (``cortex forget``) or that code re-indexing retired stays as they left it.

Records are plain values; times are floats in days on any one axis shared with ``now`` (the
service uses Julian day numbers straight from SQLite). ``advance(record, now)`` returns the
record's next state, or ``None`` when nothing changes; it reaches a fixed point in one step, so
planning twice at the same ``now`` plans nothing the second time.

Two choices beyond the seed, both in the direction of keeping memories:

* the 14-day clock counts from the later of "fell below 0.3" and "last recalled": a memory
  that is still being recalled is not stale, whatever its confidence;
* a hub that is archived anyway (it became a hub after it was archived) is not pruned, since
  deleting it would cut every edge that makes it one.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Final, Literal

from cortexmem.core.decay import (
    IMMORTAL_TYPES,
    days_to_fall_below,
    decay_factor,
    half_life_days,
    is_hub,
)

ARCHIVE_BELOW: Final = 0.3
ARCHIVE_AFTER_DAYS: Final = 14.0
PRUNE_AFTER_DAYS: Final = 30.0

Transition = Literal["archive", "restore", "prune"]


@dataclass(frozen=True, slots=True)
class LifeRecord:
    """What the lifecycle needs to know about one memory.

    ``decayed_at``: up to when decay has been applied to ``confidence`` (its creation time when
    never decayed). ``below_since``: since when its confidence has been under ``ARCHIVE_BELOW``
    (None when it is not). ``archived_at``: when the lifecycle archived it (None otherwise).
    """

    id: str
    memory_type: str
    status: str
    confidence: float
    pinned: bool = False
    access_count: int = 0
    centrality: float = 0.0
    decayed_at: float = 0.0
    below_since: float | None = None
    archived_at: float | None = None
    last_accessed_at: float | None = None

    @property
    def immortal(self) -> bool:
        return self.pinned or self.memory_type in IMMORTAL_TYPES

    @property
    def half_life(self) -> float:
        return half_life_days(self.memory_type, self.pinned, self.access_count, self.centrality)


@dataclass(frozen=True, slots=True)
class Change:
    """One memory's planned change: ``after`` is None when it is pruned."""

    before: LifeRecord
    after: LifeRecord | None
    transition: Transition | None = None

    @property
    def decayed(self) -> bool:
        return self.after is not None and self.after.confidence < self.before.confidence


def advance(record: LifeRecord, now: float) -> Change | None:
    """The lifecycle step of one memory at ``now``; None when it stays as it is."""
    if record.immortal:
        return None
    if record.status == "archived":
        return _advance_archived(record, now)
    if record.status != "active":
        return None
    half_life = record.half_life
    confidence, decayed_at = record.confidence, record.decayed_at
    elapsed = now - record.decayed_at
    if elapsed > 0 and not math.isinf(half_life):
        confidence = record.confidence * decay_factor(elapsed, half_life)
        decayed_at = now
    below_since = _below_since(record, confidence, half_life, now)
    archive = False
    if below_since is not None and not is_hub(record.centrality):
        quiet_since = max(below_since, record.last_accessed_at or -math.inf)
        archive = now - quiet_since >= ARCHIVE_AFTER_DAYS
    if not archive and (confidence, decayed_at, below_since) == (
        record.confidence, record.decayed_at, record.below_since
    ):  # fmt: skip
        return None
    # Built field by field, not with dataclasses.replace: this runs for every decaying memory.
    after = LifeRecord(
        record.id, record.memory_type, "archived" if archive else record.status, confidence,
        record.pinned, record.access_count, record.centrality, decayed_at, below_since,
        now if archive else record.archived_at, record.last_accessed_at,
    )  # fmt: skip
    return Change(record, after, "archive" if archive else None)


def _advance_archived(record: LifeRecord, now: float) -> Change | None:
    if record.archived_at is None:
        return None  # archived by a person or by re-indexing: theirs, not the lifecycle's
    if record.last_accessed_at is not None and record.last_accessed_at > record.archived_at:
        return restore(record, now)  # recalled by a path that did not restore it at once
    if now - record.archived_at >= PRUNE_AFTER_DAYS and not is_hub(record.centrality):
        return Change(record, None, "prune")
    return None


def _below_since(record: LifeRecord, confidence: float, half_life: float, now: float):
    if confidence >= ARCHIVE_BELOW:
        return None
    if record.below_since is not None:
        return record.below_since
    if record.confidence >= ARCHIVE_BELOW and confidence < record.confidence:
        # It fell below during the decay just applied: at a moment the half-life tells.
        crossed = record.decayed_at + days_to_fall_below(
            record.confidence, ARCHIVE_BELOW, half_life
        )
        return min(now, max(record.decayed_at, crossed))
    return now  # below already, for reasons other than decay: count from now


def restore(record: LifeRecord, now: float) -> Change | None:
    """Bring a memory the lifecycle archived back into service (it was recalled).

    The time it spent archived is not charged as decay (``decayed_at`` moves to ``now``), and
    its 14 days below the threshold start again."""
    if record.immortal or record.status != "archived" or record.archived_at is None:
        return None
    after = replace(
        record,
        status="active",
        archived_at=None,
        decayed_at=max(record.decayed_at, now),
        below_since=now if record.confidence < ARCHIVE_BELOW else None,
    )
    return Change(record, after, "restore")


def plan(records: Iterable[LifeRecord], now: float) -> list[Change]:
    """Every change one lifecycle pass at ``now`` makes, in the order of ``records``."""
    changes = []
    for record in records:
        change = advance(record, now)
        if change is not None:
            changes.append(change)
    return changes


def apply(records: Iterable[LifeRecord], changes: Iterable[Change]) -> list[LifeRecord]:
    """``records`` after ``changes`` (pruned ones gone): how a store looks after a pass."""
    by_id = {c.before.id: c.after for c in changes}
    out = []
    for record in records:
        if record.id not in by_id:
            out.append(record)
        elif (after := by_id[record.id]) is not None:
            out.append(after)
    return out
