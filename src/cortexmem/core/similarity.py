"""How alike two memories are, and what the graph should do about it. Pure.

Two stages decide every pair (the seed's Jaccard pre-filter, then its geometric classification):

1. **Jaccard** over normalised word sets (lower case, stop words dropped, plurals folded) —
   free, and decisive at both ends::

       jaccard > 0.6          definitely similar: a merge candidate, no embedding needed
       jaccard < 0.1          definitely different: nothing, no embedding needed
       0.1 <= jaccard <= 0.6  maybe: the embeddings decide (stage 2)

2. **Cosine** of the two memories' embedding vectors, for the "maybe" band only::

       cosine < 0.1           orthogonal: nothing
       0.1 <= cosine < 0.4    relates_to, active
       0.4 <= cosine <= 0.5   relates_to, status "suggested" (a person accepts or rejects it)
       cosine > 0.5           a merge candidate (merging needs a person)

   The seed gives 0.1–0.5 "create relates_to" and 0.4–0.5 "also a suggested edge". An edge is
   unique on (source, target, type), so a pair cannot hold both an active and a suggested
   ``relates_to``: the overlap is resolved as ONE ``relates_to`` whose status is
   ``suggested``. Pairs that close to the merge line are the ambiguous ones (a restatement, a
   refinement, or just a neighbour); until a person has looked, they do not count towards
   centrality or traversal, which follow active edges only.

Without vectors only stage 1 runs: a "maybe" pair then gets nothing (it is looked at again by
nobody, but also never linked on a guess).

The verdicts are ordered (``NONE < RELATES < SUGGEST < MERGE``) and :func:`decide` is total
and monotone in both scores. No verdict ever yields ``supersedes``: that edge is made only by a
person accepting a merge.
"""

from __future__ import annotations

import enum
import math
import re
from typing import Final

from cortexmem.core.fts_query import STOPWORDS

JACCARD_SIMILAR: Final = 0.6
JACCARD_DIFFERENT: Final = 0.1
COSINE_ORTHOGONAL: Final = 0.1
COSINE_SUGGEST: Final = 0.4
COSINE_MERGE: Final = 0.5

_WORD = re.compile(r"[^\W_]+", re.UNICODE)


class Verdict(enum.IntEnum):
    """What a pair of memories should become, weakest first."""

    NONE = 0
    RELATES = 1  # relates_to, active
    SUGGEST = 2  # relates_to, suggested: a person decides
    MERGE = 3  # merge candidate: a person decides

    @property
    def edge_status(self) -> str | None:
        """The status of the ``relates_to`` edge this verdict creates (None: no edge)."""
        return {Verdict.RELATES: "active", Verdict.SUGGEST: "suggested"}.get(self)


def _fold_plural(word: str) -> str:
    """``policies`` → ``policy``, ``indexes`` → ``index``, ``retries`` → ``retry``,
    ``migrations`` → ``migration``; short words and ``-ss``/``-us``/``-is`` stay."""
    if len(word) <= 3 or not word.endswith("s") or word.isdigit():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes", "zes")):
        return word[:-2]
    if word.endswith(("ss", "us", "is")):
        return word
    return word[:-1]


def word_set(text: str) -> frozenset[str]:
    """The normalised words of ``text``: lower case, stop words and single letters dropped
    (unless nothing else is left), plurals folded."""
    words = [w.lower() for w in _WORD.findall(text)]
    content = [w for w in words if w not in STOPWORDS and len(w) > 1] or words
    return frozenset(_fold_plural(w) for w in content)


def jaccard(a: frozenset[str] | set[str], b: frozenset[str] | set[str]) -> float:
    """|a ∩ b| / |a ∪ b|; two empty sets share nothing (0.0)."""
    if not a and not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


def prefilter(jaccard_: float) -> Verdict | None:
    """Stage 1: MERGE above 0.6, NONE below 0.1, None (ask the embeddings) in between."""
    if jaccard_ > JACCARD_SIMILAR:
        return Verdict.MERGE
    if jaccard_ < JACCARD_DIFFERENT:
        return Verdict.NONE
    return None


def classify(cosine: float) -> Verdict:
    """Stage 2, the geometric classification of a cosine similarity (any real number)."""
    if math.isnan(cosine) or cosine < COSINE_ORTHOGONAL:
        return Verdict.NONE
    if cosine < COSINE_SUGGEST:
        return Verdict.RELATES
    if cosine <= COSINE_MERGE:
        return Verdict.SUGGEST
    return Verdict.MERGE


def decide(jaccard_: float, cosine: float | None) -> Verdict:
    """Both stages: the pre-filter settles the clear cases, the cosine (when the two memories
    have vectors) the rest; a "maybe" pair without vectors gets nothing."""
    early = prefilter(jaccard_)
    if early is not None:
        return early
    if cosine is None:
        return Verdict.NONE
    return classify(cosine)
