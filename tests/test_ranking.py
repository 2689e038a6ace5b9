from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from cortexmem.core.ranking import (
    Candidate,
    access_score,
    blend,
    centrality,
    importance,
    rank,
    rank_score,
)
from cortexmem.model import Memory


def test_seed_formulas():
    # rank = conf*0.5 + priority/10*0.2 + centrality*0.15 + log(access+1)/max_log*0.15
    assert math.isclose(rank_score(1.0, 10, 1.0, 1.0), 1.0)
    assert math.isclose(rank_score(0.8, 5, 0.0, 0.0), 0.5)
    # importance = priority/10*0.4 + centrality*0.3 + log(access+1)/max_log*0.3
    assert math.isclose(importance(10, 1.0, 1.0), 1.0)
    assert math.isclose(importance(5, 0.5, 0.0), 0.35)
    assert access_score(0, 10) == 0.0
    assert math.isclose(access_score(10, 10), 1.0)
    assert math.isclose(access_score(3, 15), math.log(4) / math.log(16))
    assert centrality(3, 6) == 0.5 and centrality(0, 0) == 0.0
    assert blend(1.0, 0.0, text_weight=0.7) == 0.7


def mem(i: int, priority: int = 5, created: str | None = None) -> Memory:
    return Memory(
        f"memory {i}",
        id=f"m-{i:04d}",
        priority=priority,
        created_at=created or f"2026-01-01T00:00:{i % 60:02d}.000000Z",
    )


candidates_strategy = st.lists(
    st.builds(
        lambda i, rel, prio, deg, acc: Candidate(
            memory=mem(i, prio).with_changes(access_count=acc),
            scope="project",
            relevance=rel,
            in_degree=deg,
            max_in_degree=10,
            max_access=50,
        ),
        st.integers(0, 9999),
        st.floats(0, 50, allow_nan=False),
        st.integers(1, 10),
        st.integers(0, 10),
        st.integers(0, 50),
    ),
    max_size=60,
    unique_by=lambda c: c.memory.id,
)


@settings(max_examples=200)
@given(candidates_strategy, st.randoms())
def test_order_is_total_and_independent_of_input_order(cands, rnd):
    shuffled = list(cands)
    rnd.shuffle(shuffled)
    first = [r.memory.id for r in rank(cands, 100)]
    second = [r.memory.id for r in rank(shuffled, 100)]
    assert first == second


@settings(max_examples=200)
@given(candidates_strategy, st.integers(0, 60), st.integers(0, 60))
def test_top_k_is_a_prefix_of_top_m(cands, k, m):
    k, m = sorted((k, m))
    top_k = [r.memory.id for r in rank(cands, k)]
    top_m = [r.memory.id for r in rank(cands, m)]
    assert top_m[: len(top_k)] == top_k


@settings(max_examples=200)
@given(candidates_strategy)
def test_scores_are_bounded_and_sorted(cands):
    ranked = rank(cands, 100)
    assert all(0.0 <= r.score <= 1.0 + 1e-9 for r in ranked)
    assert [r.score for r in ranked] == sorted((r.score for r in ranked), reverse=True)


def test_relevance_wins_when_all_else_is_equal():
    a = Candidate(mem(1), "project", relevance=9.0)
    b = Candidate(mem(2), "project", relevance=3.0)
    assert [r.memory.id for r in rank([b, a], 2)] == ["m-0001", "m-0002"]


def test_priority_and_links_lift_an_equally_relevant_memory():
    plain = Candidate(mem(1, priority=3), "project", relevance=5.0)
    hub = Candidate(mem(2, priority=9), "global", relevance=5.0, in_degree=4, max_in_degree=4)
    ranked = rank([plain, hub], 2)
    assert ranked[0].memory.id == "m-0002" and ranked[0].scope == "global"


def test_ties_break_newest_first_then_by_id():
    old = Candidate(mem(1, created="2026-01-01T00:00:00.000000Z"), "project", 1.0)
    new = Candidate(mem(2, created="2026-06-01T00:00:00.000000Z"), "project", 1.0)
    assert [r.memory.id for r in rank([old, new], 2)] == ["m-0002", "m-0001"]


def test_empty_and_zero_relevance():
    assert rank([], 10) == []
    only = rank([Candidate(mem(1), "project", relevance=0.0)], 10)
    assert only[0].relevance == 0.0
