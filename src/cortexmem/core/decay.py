"""Confidence decay by memory type. Pure functions over plain numbers.

The seed's half-lives (days)::

    architecture, decision, code_description, code   stable (no decay)
    pattern 60 · gotcha 45 · context 30 · progress 7

**When the clock starts.** A memory's ``created_at`` is the time of the event it was distilled
from, which for ``cortex ingest`` / ``import-history`` of old transcripts is months in the past.
Charging knowledge decay for the months before Cortex ever learned it archived a backfilled
project's gotchas, how-tos and preferences on the first lifecycle pass (24 of the 27 memories
of ``examples/sessions``). So for every type but progress the clock starts when Cortex learned
the memory (``learned_clock``: the store sets ``decayed_at`` to the moment it stored it when the
event is older). Progress keeps the event's own time: work state goes stale with the work, so
months-old "Done: …" lines may fade at once. Half-lives are the seed's, unchanged.

Modifiers: a pinned memory never decays; more than 10 recalls doubles the half-life; a hub
(centrality above 0.5) doubles it; both together quadruple it. Decisions never decay, pinned
or not (they are immortal: see ``core.lifecycle``).

Decay is ``c · 0.5 ** (days / half_life)``: exponential, so decaying over 3 days and then 4
gives exactly what decaying over 7 at once gives. That is what makes the stored design safe:

**Incremental decay from a per-memory reference.** Each memory keeps ``decayed_at``, the moment
up to which decay has already been applied to its stored ``confidence`` (NULL: never decayed,
so its ``created_at``). A lifecycle pass multiplies the stored confidence by the decay of the
time since ``decayed_at`` and moves ``decayed_at`` to its own ``now``. Running it twice at the
same moment decays for zero days the second time (no double decay); running it daily or once a
month ends at the same confidence (up to rounding); a pass with a ``now`` earlier than
``decayed_at`` changes nothing (decay never runs backwards and ``decayed_at`` never moves back).

Why not a ``confidence_base`` that is decayed afresh from a fixed origin each time: other parts
of Cortex write ``confidence`` too (the judge promotes and demotes, consolidation merges). With
an origin, the next pass would recompute from the old base and silently undo their change; the
incremental form starts from whatever confidence is stored. And a modifier that starts to apply
(the 11th recall, a memory becoming a hub) slows decay from then on instead of retroactively
raising the confidence for the whole past.
"""

from __future__ import annotations

import math
from typing import Final

HALF_LIFE_DAYS: Final[dict[str, float]] = {
    "architecture": math.inf,
    "decision": math.inf,
    "code_description": math.inf,
    "code": math.inf,
    "pattern": 60.0,
    "gotcha": 45.0,
    "context": 30.0,
    "progress": 7.0,
}
# Types whose confidence changes with time (the others are stable).
DECAYING_TYPES: Final = frozenset(t for t, days in HALF_LIFE_DAYS.items() if days < math.inf)
IMMORTAL_TYPES: Final = frozenset({"decision"})
# Types whose decay clock is the event's time, not the moment Cortex learned them.
EVENT_CLOCK_TYPES: Final = frozenset({"progress"})
ACCESS_BOOST_ABOVE: Final = 10  # access_count > 10 doubles the half-life
HUB_CENTRALITY: Final = 0.5  # centrality > 0.5 doubles the half-life (and exempts from archive)


def is_hub(centrality: float) -> bool:
    return centrality > HUB_CENTRALITY


def half_life_days(
    memory_type: str, pinned: bool = False, access_count: int = 0, centrality: float = 0.0
) -> float:
    """The effective half-life in days; ``math.inf`` when the memory does not decay."""
    if pinned or memory_type in IMMORTAL_TYPES:
        return math.inf
    try:
        days = HALF_LIFE_DAYS[memory_type]
    except KeyError:
        raise ValueError(f"unknown memory type {memory_type!r}") from None
    if access_count > ACCESS_BOOST_ABOVE:
        days *= 2
    if is_hub(centrality):
        days *= 2
    return days


def decay_factor(days: float, half_life: float) -> float:
    """``0.5 ** (days / half_life)`` for ``days`` ≥ 0; 1 for no time or no decay."""
    if days <= 0 or math.isinf(half_life) or math.isnan(days):
        return 1.0
    return 0.5 ** (days / half_life)


def decayed_confidence(
    confidence_at_reference: float,
    memory_type: str,
    days_since_reference: float,
    pinned: bool = False,
    access_count: int = 0,
    centrality: float = 0.0,
) -> float:
    """The confidence ``days_since_reference`` days after it was ``confidence_at_reference``.

    Non-increasing in ``days``; equal to the input for 0 (or negative) days, for stable types,
    pinned memories and decisions.
    """
    half_life = half_life_days(memory_type, pinned, access_count, centrality)
    return confidence_at_reference * decay_factor(days_since_reference, half_life)


def days_to_fall_below(confidence: float, threshold: float, half_life: float) -> float:
    """How many days after being ``confidence`` a decaying memory drops below ``threshold``:
    0 when it already is at or under it, ``math.inf`` when it never will."""
    if confidence <= threshold:
        return 0.0
    if math.isinf(half_life) or threshold <= 0:
        return math.inf
    return half_life * math.log2(confidence / threshold)


def learned_clock(memory_type: str, created_at: str, learned_at: str) -> str | None:
    """Where the decay clock of a memory stored at ``learned_at`` starts, when that is not its
    ``created_at`` (None): ``learned_at`` for a decaying knowledge type whose event is older.
    ISO-8601 UTC strings of one format (``model.format_time``) compare as times."""
    if memory_type not in DECAYING_TYPES or memory_type in EVENT_CLOCK_TYPES:
        return None
    return learned_at if created_at < learned_at else None
