"""Hybrid ranking (``core.fusion``): reciprocal rank fusion and the re-rank, as properties.

Pure: every record is built here, nothing is stored or embedded.
"""

from __future__ import annotations

import itertools
import math
import random
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cortexmem.core.fusion import RECENCY_FLOOR, RRF_K, hybrid_rank, recency, rrf
from cortexmem.core.ranking import Candidate
from cortexmem.model import MEMORY_TYPES, Memory, format_time

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)

# ----------------------------------------------------------------------------- rrf

keys = st.integers(0, 40)
legs = st.lists(keys, max_size=30)
unique_legs = st.lists(keys, max_size=30, unique=True)
open_alpha = st.floats(0.01, 0.99)
any_alpha = st.floats(0.0, 1.0)


@given(unique_legs, legs, legs)
def test_alpha_zero_ignores_the_vector_leg(lexical, vector, other_vector):
    fused = rrf(lexical, vector, 0.0)
    assert fused == rrf(lexical, other_vector, 0.0)
    assert set(fused) == set(lexical)
    for position, key in enumerate(lexical, start=1):
        assert fused[key] == pytest.approx(1.0 / (RRF_K + position))


@given(legs, unique_legs, legs)
def test_alpha_one_ignores_the_lexical_leg(lexical, vector, other_lexical):
    fused = rrf(lexical, vector, 1.0)
    assert fused == rrf(other_lexical, vector, 1.0)
    assert set(fused) == set(vector)


@given(st.data(), unique_legs, open_alpha)
def test_an_item_in_both_legs_beats_the_same_rank_in_one_leg(data, lexical, alpha):
    if not lexical:
        return
    item = data.draw(st.sampled_from(lexical))
    rank_in_vector = data.draw(st.integers(0, 5))
    others = [k + 100 for k in range(rank_in_vector)]
    both = rrf(lexical, [*others, item], alpha)
    one = rrf(lexical, others, alpha)
    assert both[item] > one[item]
    # and within one fusion (equal weights): lexical rank r plus a vector hit beats vector rank
    # r alone
    r = lexical.index(item)
    vector = [k + 100 for k in range(r)] + [999] + [item]
    fused = rrf(lexical, vector, 0.5)
    assert fused[item] > fused[999]


@given(unique_legs, any_alpha)
def test_scores_fall_with_rank(leg, alpha):
    for fused in (rrf(leg, [], alpha), rrf([], leg, alpha)):
        scores = [fused.get(k, 0.0) for k in leg]
        assert all(a >= b for a, b in itertools.pairwise(scores))
        if 0.001 <= alpha <= 0.999:
            assert all(a > b for a, b in itertools.pairwise(scores))


@pytest.mark.parametrize("alpha", [-0.01, 1.01, -1.0, 2.0, math.nan, math.inf])
def test_alpha_outside_zero_one_raises(alpha):
    with pytest.raises(ValueError, match="alpha"):
        rrf([1], [2], alpha)


@given(unique_legs, unique_legs, any_alpha, st.data())
def test_duplicates_in_a_leg_count_once(lexical, vector, alpha, data):
    def with_repeats(leg: list[int]) -> list[int]:
        out: list[int] = []
        for key in leg:  # a repeat may only follow the first occurrence
            out += [key] * data.draw(st.integers(1, 3))
        return out

    assert rrf(with_repeats(lexical), with_repeats(vector), alpha) == rrf(lexical, vector, alpha)


# ----------------------------------------------------------------------------- hybrid_rank


@st.composite
def candidate_pools(draw):
    """Memories, each found by the lexical leg, the vector leg, or both, in either store.

    The same id may be in both stores (an export of the project imported as global)."""
    ids = draw(st.lists(st.integers(0, 30), min_size=0, max_size=25))
    lexical: list[Candidate] = []
    vector: list[Candidate] = []
    seen: set[tuple[str, str]] = set()
    for number in ids:
        scope = draw(st.sampled_from(["project", "global"]))
        memory_id = f"m-{number:04d}"
        if (scope, memory_id) in seen:
            continue
        seen.add((scope, memory_id))
        memory = Memory(
            f"memory {number}",
            memory_type=draw(st.sampled_from(MEMORY_TYPES)),
            id=memory_id,
            priority=draw(st.integers(1, 10)),
            confidence=draw(st.sampled_from([0.5, 0.8, 1.0])),
            access_count=draw(st.integers(0, 20)),
            created_at=format_time(NOW - timedelta(days=draw(st.integers(0, 2000)))),
        )

        def candidate(relevance: float, memory=memory, scope=scope, number=number) -> Candidate:
            return Candidate(
                memory, scope, relevance, in_degree=number % 4, max_in_degree=3, max_access=20
            )

        legs_of = draw(st.sampled_from(["lexical", "vector", "both"]))
        # Few distinct relevances, so ties are common.
        if legs_of in ("lexical", "both"):
            lexical.append(candidate(draw(st.sampled_from([1.0, 2.0, 3.5, 7.0]))))
        if legs_of in ("vector", "both"):
            vector.append(candidate(draw(st.sampled_from([0.2, 0.5, 0.5, 0.9]))))
    return lexical, vector


def keys_of(ranked) -> list[tuple[str, str, float]]:
    return [(r.scope, r.memory.id, r.score) for r in ranked]


@given(candidate_pools(), any_alpha, st.randoms(use_true_random=False))
def test_hybrid_rank_is_deterministic_whatever_the_input_order(pool, alpha, rnd: random.Random):
    lexical, vector = pool
    first = hybrid_rank(lexical, vector, alpha=alpha, limit=50, now=NOW)
    assert keys_of(hybrid_rank(lexical, vector, alpha=alpha, limit=50, now=NOW)) == keys_of(first)
    shuffled_lexical, shuffled_vector = list(lexical), list(vector)
    rnd.shuffle(shuffled_lexical)
    rnd.shuffle(shuffled_vector)
    again = hybrid_rank(shuffled_lexical, shuffled_vector, alpha=alpha, limit=50, now=NOW)
    assert keys_of(again) == keys_of(first)


@given(candidate_pools(), any_alpha, st.integers(0, 60))
def test_hybrid_rank_limit_only_cuts(pool, alpha, limit):
    lexical, vector = pool
    top5 = hybrid_rank(lexical, vector, alpha=alpha, limit=5, now=NOW)
    top10 = hybrid_rank(lexical, vector, alpha=alpha, limit=10, now=NOW)
    assert keys_of(top10)[:5] == keys_of(top5)
    some = hybrid_rank(lexical, vector, alpha=alpha, limit=limit, now=NOW)
    assert len(some) <= limit
    found = {
        (c.scope, c.memory.id)
        for c in (*(lexical if alpha < 1 else ()), *(vector if alpha > 0 else ()))
    }
    assert len(some) == min(limit, len(found))
    assert [r.score for r in some] == sorted((r.score for r in some), reverse=True)


def test_hybrid_rank_prefers_what_both_legs_found():
    def c(memory_id: str, relevance: float) -> Candidate:
        return Candidate(
            Memory("x", "decision", id=memory_id, created_at=format_time(NOW)), "project", relevance
        )

    lexical = [c("m-a", 9.0), c("m-b", 8.0)]
    vector = [c("m-c", 0.9), c("m-b", 0.8)]
    ranked = hybrid_rank(lexical, vector, alpha=0.4, limit=10, now=NOW)
    assert ranked[0].memory.id == "m-b"
    assert ranked[0].relevance == 1.0
    assert [r.memory.id for r in hybrid_rank(lexical, vector, alpha=0.0, limit=10, now=NOW)][
        :2
    ] == ["m-a", "m-b"]
    assert {r.memory.id for r in hybrid_rank(lexical, vector, alpha=1.0, limit=10, now=NOW)} == {
        "m-c",
        "m-b",
    }
    assert hybrid_rank([], [], alpha=0.4, limit=10, now=NOW) == []


# ----------------------------------------------------------------------------- recency

ages = st.floats(0, 100_000, allow_nan=False)


@given(st.sampled_from(["decision", "architecture", "code"]), st.floats(-10, 1e6))
def test_lasting_knowledge_never_decays(memory_type, age):
    assert recency(memory_type, age) == 1.0


@given(st.sampled_from(["pattern", "gotcha", "context", "progress"]), ages, ages)
def test_other_memories_lose_at_most_a_quarter_with_age(memory_type, a, b):
    young, old = sorted((a, b))
    assert RECENCY_FLOOR <= recency(memory_type, old) <= recency(memory_type, young) <= 1.0
    assert recency(memory_type, 0) == 1.0
    if old - young >= 1 and young < 3650:
        assert recency(memory_type, old) < recency(memory_type, young)


def test_a_fresh_memory_wins_a_tie_over_an_old_one():
    def c(memory_id: str, days: int, memory_type: str) -> Candidate:
        when = format_time(NOW - timedelta(days=days))
        return Candidate(Memory("same", memory_type, id=memory_id, created_at=when), "project", 1.0)

    # Equal fusion: the old one first in the lexical leg, the new one first in the vector leg.
    for memory_type, decays in (("gotcha", True), ("progress", True), ("decision", False)):
        old, new = c("m-a", 900, memory_type), c("m-b", 1, memory_type)
        ranked = hybrid_rank([old], [new], alpha=0.5, limit=2, now=NOW)
        assert [r.memory.id for r in ranked] == ["m-b", "m-a"]  # newest first, even on a tie
        assert ranked[0].relevance == ranked[1].relevance == 1.0
        if decays:
            assert ranked[1].score < ranked[0].score
            expected = recency(memory_type, 900) / recency(memory_type, 1)
            assert ranked[1].score / ranked[0].score == pytest.approx(expected)
        else:
            assert ranked[1].score == ranked[0].score


def test_a_tie_within_a_leg_goes_to_the_newer_whatever_the_ids():
    """The same document read in two sessions ties on both legs: the newer copy ranks first
    within each leg, so a third result's fused rank does not depend on the random part of
    the two ids (the order was one thing in one run and another in the next)."""

    def c(memory_id: str, days: int, relevance: float) -> Candidate:
        when = format_time(NOW - timedelta(days=days))
        return Candidate(Memory("x", "decision", id=memory_id, created_at=when), "project",
                         relevance)  # fmt: skip

    for older_id, newer_id in (("m-a", "m-z"), ("m-z", "m-a")):
        older, newer = c(older_id, 30, 0.9), c(newer_id, 2, 0.9)
        third = c("m-m", 10, 0.5)
        ranked = hybrid_rank([older, newer, third], [], alpha=0.0, limit=3, now=NOW)
        assert [r.memory.id for r in ranked][:2] == [newer_id, older_id]
