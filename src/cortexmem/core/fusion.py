"""Hybrid ranking: reciprocal rank fusion of the lexical and vector legs, then the seed's rank.

Pure functions over plain records. The steps, in order:

1. **Fusion.** Each leg is a list ordered best first (BM25 for full text, cosine similarity for
   vectors). Reciprocal rank fusion gives an item ``(1 - alpha) / (k + lexical rank) +
   alpha / (k + vector rank)`` (ranks from 1; a leg that missed the item adds nothing).
   ``alpha`` 0 is lexical only, 1 vector only. Ranks, not raw scores, are fused, so BM25 and
   cosine never need a common scale. ``k`` = 10 and ``alpha`` = 0.4 were chosen on LoCoMo
   (``bench/locomo.py``): the RRF paper's k = 60 flattens the top of the list so much that a
   weak leg drags the strong one down (recall@10 0.76 at alpha 0.4 with k = 60, 0.83 with
   k = 10), and it leaves relevance too flat to outweigh importance in step 2.
2. **Rank.** The fused score, normalised by the best one, is blended with the seed's full rank
   formula ``confidence*0.5 + priority/10*0.2 + centrality*0.15 + access*0.15``.
3. **Importance × recency re-rank.** Memories that decay (everything but decisions,
   architecture and code) lose up to a quarter of their score with age
   (``0.75 + 0.25 * exp(-age_days / 365)``): a fresh memory wins a tie, an old but relevant one
   still beats a new irrelevant one.

Ties are broken by a total order (score, relevance, newest, id): the same query always gives
the same list, and the top 5 is always a prefix of the top 10.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from datetime import datetime
from typing import TypeVar

from cortexmem.core.ranking import (
    TEXT_WEIGHT,
    Candidate,
    Ranked,
    access_score,
    blend,
    centrality,
    order_key,
    rank_score,
)

K = TypeVar("K", bound=Hashable)

RRF_K = 10
DEFAULT_ALPHA = 0.4
STABLE_TYPES = frozenset({"decision", "architecture", "code", "code_description"})
RECENCY_FLOOR = 0.75
# The cosine similarity (local MiniLM) below which nothing a store holds bears on a query:
# unrelated text sits around 0.0-0.30, a related memory or passage at 0.35 and above.
RELEVANCE_FLOOR = 0.35
RECENCY_DAYS = 365.0


def rrf(lexical: Sequence[K], vector: Sequence[K], alpha: float, k: int = RRF_K) -> dict[K, float]:
    """Reciprocal rank fusion of two best-first lists with weight ``alpha`` on the vector leg."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be between 0 and 1; got {alpha}")
    fused: dict[K, float] = {}
    for weight, leg in ((1.0 - alpha, lexical), (alpha, vector)):
        if weight <= 0.0:
            continue
        for position, key in enumerate(dict.fromkeys(leg), start=1):
            fused[key] = fused.get(key, 0.0) + weight / (k + position)
    return fused


def recency(memory_type: str, age_days: float) -> float:
    """The re-rank factor: 1 for memories that never decay, else 0.75..1 falling with age."""
    if memory_type in STABLE_TYPES:
        return 1.0
    return RECENCY_FLOOR + (1.0 - RECENCY_FLOOR) * math.exp(-max(0.0, age_days) / RECENCY_DAYS)


def _age_days(created_at: str, now: datetime) -> float:
    try:  # fromisoformat is C; strptime costs ~10 µs a call, a millisecond per query
        return (now - datetime.fromisoformat(created_at)).total_seconds() / 86_400
    except (ValueError, TypeError):
        return 0.0


# What was said counts a little less than what was distilled from it at the same rank: a typed
# memory and the raw prompt it answers tie otherwise, and the memory is the answer.
EPISODE_WEIGHT = 0.85


def hybrid_rank(
    lexical: Iterable[Candidate],
    vector: Iterable[Candidate],
    *,
    alpha: float,
    limit: int,
    now: datetime,
    text_weight: float = TEXT_WEIGHT,
    episode_lexical: Iterable[Candidate] = (),
    episode_vector: Iterable[Candidate] = (),
) -> list[Ranked]:
    """Fuse both legs (candidates from any number of stores) and rank; first ``limit``.

    Episodes (what was said) share the vector leg with the memories (one model's cosines are
    on one scale) and have a word leg of their own, fused by rank (BM25 scores of two indexes
    are not on one scale; ranks are). The rank formula then prefers the typed memory at equal
    relevance (episodes carry a lower confidence and priority), while an episode that answers
    better than a weak memory outranks it."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be between 0 and 1; got {alpha}")

    def key(c: Candidate) -> tuple[str, str]:
        return (c.scope, c.memory.id)

    def ordered(cands: Iterable[Candidate]) -> list[Candidate]:
        # At equal relevance the newer first (the same document read in two sessions ties on
        # both legs; an id minted at random within a millisecond would order them differently
        # from one run to the next), then the id; the same id can be in both stores (an export
        # imported as global): scope breaks that tie.
        out = sorted(cands, key=lambda c: (c.memory.id, c.scope))
        out.sort(key=lambda c: c.memory.created_at, reverse=True)
        out.sort(key=lambda c: -c.relevance)
        return out

    lex, vec = ordered(lexical), ordered(vector)
    ep_lex, ep_vec = ordered(episode_lexical), ordered(episode_vector)
    by_key: dict[tuple[str, str], Candidate] = {}
    for leg in (ep_vec, ep_lex, vec, lex):
        by_key.update({key(c): c for c in leg})
    # Cosine similarities of one model are on one scale: memories and episodes share the
    # vector leg, ranked together by meaning. BM25 scores of two indexes are not: the episodes'
    # word leg is fused by its own ranks, at ``EPISODE_WEIGHT``.
    fused = rrf([key(c) for c in lex], [key(c) for c in ordered(vec + ep_vec)], alpha)
    for item, score in rrf([key(c) for c in ep_lex], [], alpha).items():
        fused[item] = fused.get(item, 0.0) + EPISODE_WEIGHT * score
    if not fused:
        return []
    best = max(fused.values())
    ranked = []
    for item, score in fused.items():
        c = by_key[item]
        rel = score / best if best > 0 else 0.0
        cent = centrality(c.in_degree, c.max_in_degree)
        access = access_score(c.memory.access_count, c.max_access)
        base = rank_score(c.memory.confidence, c.memory.priority, cent, access)
        final = blend(rel, base, text_weight)
        final *= recency(c.memory.memory_type, _age_days(c.memory.created_at, now))
        ranked.append(Ranked(c.memory, c.scope, final, rel, base, cent, episode=c.episode))
    ranked.sort(key=order_key)
    return ranked[: max(0, limit)]
