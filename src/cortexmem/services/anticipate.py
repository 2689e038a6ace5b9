"""UserPromptSubmit: recall for the prompt, and keep only what clearly bears on it.

Runs inside the recall server (the model is warm there); the hook only relays. Served memories
get their recall counter bumped like any recall.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cortexmem.core.anticipation import Pick, baseline, coverage, render, select, worth_asking
from cortexmem.core.fts_query import query_terms
from cortexmem.core.ranking import Ranked
from cortexmem.model import utc_now
from cortexmem.services.context import Context
from cortexmem.services.recall import QueryEmbedder, recall

CANDIDATES = 10


@dataclass
class Anticipation:
    text: str = ""
    ids: list[str] = field(default_factory=list)
    similarities: list[float] = field(default_factory=list)


def anticipate(
    ctx: Context, prompt: str, *, branch: str | None = None, embedder: QueryEmbedder
) -> Anticipation:
    if not worth_asking(prompt):
        return Anticipation()
    if branch is None:
        branch, _ = ctx.paths.branch_and_commit()
    prompt = prompt[:2_000]
    similarity: dict[tuple[str, str], float] = {}
    words: dict[tuple[str, str], float] = {}
    ranked = recall(
        ctx, prompt, branch=branch, limit=CANDIDATES, embedder=embedder, count_access=False,
        with_links=False, similarities=similarity, word_scores=words,
    )  # fmt: skip
    if not similarity:
        return Anticipation()
    # Each candidate carries both kinds of evidence: meaning (cosine) and words (the share of
    # the prompt's search words it holds, when the word search found it); an
    # episode (raw conversation) is held to stricter bars (``core.anticipation``).
    picks = select(
        candidates(ranked, prompt, similarity, words), floor=baseline(list(similarity.values()))
    )
    text = render(picks, prompt=prompt)
    if not text:
        return Anticipation()
    shown = [p for p in picks if p.memory.id in text]
    said = {r.memory.id for r in ranked if r.episode is not None}
    when = utc_now()
    for scope, store in ctx.existing():
        ids = [
            p.memory.id
            for p in shown
            if (scope, p.memory.id) in similarity and p.memory.id not in said
        ]
        store.record_access(ids, when)
    return Anticipation(text, [p.memory.id for p in shown], [p.similarity for p in shown])


def candidates(
    ranked: list[Ranked],
    prompt: str,
    similarity: dict[tuple[str, str], float],
    found: dict[tuple[str, str], float],
) -> list[Pick]:
    """The recall order with each result's evidence: meaning (its cosine similarity) and words
    (the share of the prompt's search words it holds, when the word search found it)."""
    terms, _ = query_terms(prompt)
    return [
        Pick(
            r.memory,
            similarity.get((r.scope, r.memory.id), 0.0),
            words=coverage(terms, f"{r.memory.content}\n{r.memory.summary or ''}")
            if (r.scope, r.memory.id) in found
            else 0.0,
            episode=r.episode is not None,
        )
        for r in ranked
    ]
