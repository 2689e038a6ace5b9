"""Scores that order recall results. Pure functions over plain numbers and records.

The seed gives two formulas:

* the full rank, used when a similarity is known::

      rank = confidence*0.5 + priority/10*0.2 + centrality*0.15 + log(access+1)/max_log*0.15

* the offline importance, which replaces similarity when there are no embeddings::

      importance = priority/10*0.4 + centrality*0.3 + log(access+1)/max_log*0.3

Lexical recall blends the normalised BM25 relevance with that importance. Ties are broken by a
total order (score, relevance, recency, id) so the same query always gives the same list, and the
candidate pool never depends on ``limit`` so the top 5 is always a prefix of the top 10.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from cortexmem.model import Episode, Memory

TEXT_WEIGHT = 0.7
CANDIDATE_POOL = 200


def centrality(in_degree: int, max_in_degree: int) -> float:
    """In-degree centrality normalised to 0..1 by the store's most linked memory."""
    if max_in_degree <= 0 or in_degree <= 0:
        return 0.0
    return min(1.0, in_degree / max_in_degree)


def access_score(access_count: int, max_access: int) -> float:
    """log(access+1)/log(max_access+1), 0..1; 0 when nothing has been accessed yet."""
    if max_access <= 0 or access_count <= 0:
        return 0.0
    return min(1.0, math.log1p(access_count) / math.log1p(max_access))


def importance(priority: int, centrality_: float, access: float) -> float:
    """The seed's offline rank: priority, centrality and access, 0..1."""
    return priority / 10 * 0.4 + centrality_ * 0.3 + access * 0.3


def rank_score(confidence: float, priority: int, centrality_: float, access: float) -> float:
    """The seed's full rank formula, 0..1."""
    return confidence * 0.5 + priority / 10 * 0.2 + centrality_ * 0.15 + access * 0.15


def blend(relevance: float, importance_: float, text_weight: float = TEXT_WEIGHT) -> float:
    """Mix normalised text relevance (0..1) with importance (0..1)."""
    return text_weight * relevance + (1.0 - text_weight) * importance_


@dataclass(frozen=True)
class Candidate:
    """A memory a search leg found, with the raw facts ranking needs.

    ``relevance`` is higher-is-better (the negated BM25 score for FTS5). ``max_in_degree`` and
    ``max_access`` are the maxima of the store the memory came from, so centrality and access
    are normalised within their own store before project and global results are merged.
    """

    memory: Memory
    scope: str
    relevance: float
    in_degree: int = 0
    max_in_degree: int = 0
    max_access: int = 0
    # Set when the candidate is an episode (what was said), served in the shape of a memory.
    episode: Episode | None = None


@dataclass(frozen=True)
class Ranked:
    memory: Memory
    scope: str
    score: float
    relevance: float
    importance: float
    centrality: float
    # What comes with it: the code a prose description describes (``source_of``).
    linked: tuple[Memory, ...] = ()
    # Set when the result is an episode (what was said) rather than a memory.
    episode: Episode | None = None

    @property
    def kind(self) -> str:
        """``"episode"`` or ``"memory"``."""
        return "memory" if self.episode is None else "episode"


def rank(
    candidates: Iterable[Candidate], limit: int, text_weight: float = TEXT_WEIGHT
) -> list[Ranked]:
    """Order candidates from any number of stores by blended score; return the first ``limit``."""
    pool = list(candidates)
    best = max((c.relevance for c in pool), default=0.0)
    ranked = []
    for c in pool:
        rel = c.relevance / best if best > 0 else 0.0
        cent = centrality(c.in_degree, c.max_in_degree)
        imp = importance(c.memory.priority, cent, access_score(c.memory.access_count, c.max_access))
        ranked.append(
            Ranked(
                c.memory, c.scope, blend(rel, imp, text_weight), rel, imp, cent, episode=c.episode
            )
        )
    ranked.sort(key=order_key)
    return ranked[: max(0, limit)]


def order_key(r: Ranked) -> tuple[float, float, str, str, str]:
    # created_at sorts as text; invert it for "newest first" without parsing dates. The scope
    # comes last: the same id can be in both stores (an export imported as global).
    newest_first = "".join(chr(0x10FFFF - ord(ch)) for ch in r.memory.created_at)
    return (-r.score, -r.relevance, newest_first, r.memory.id, r.scope)
