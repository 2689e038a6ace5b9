"""UserPromptSubmit: recall for the prompt, and keep only what clearly bears on it.

Runs inside the recall server (the model is warm there); the hook only relays. Served memories
get their recall counter bumped like any recall.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from cortexmem.core.anticipation import (
    Pick,
    coverage,
    informative,
    rarity,
    render,
    select,
    worth_asking,
)
from cortexmem.core.fts_query import query_terms
from cortexmem.core.ranking import Ranked
from cortexmem.errors import CortexError
from cortexmem.model import utc_now
from cortexmem.services.context import Context
from cortexmem.services.recall import QueryEmbedder, recall
from cortexmem.services.warn import warn_for_prompt

CANDIDATES = 10


@dataclass
class Anticipation:
    text: str = ""
    ids: list[str] = field(default_factory=list)
    similarities: list[float] = field(default_factory=list)


# Who records that memories were served: (scope, ids, when). The recall server hands in one
# that notes them and writes later, while nobody asks; by default they are written at once.
AccessRecorder = Callable[[str, list[str], str], None]


def anticipate(
    ctx: Context,
    prompt: str,
    *,
    branch: str | None = None,
    embedder: QueryEmbedder,
    session_id: str | None = None,
    deadline: float | None = None,
    record: AccessRecorder | None = None,
) -> Anticipation:
    """What bears on ``prompt``: the memories that clear the bar, then the failure lessons it
    calls up (a request to fix a check that failed before: ``services.warn.warn_for_prompt``,
    recorded as shown in ``session_id``). Past ``deadline`` (wall-clock seconds: the hook that
    asked has stopped waiting) no lesson is looked up: one recorded as shown but never seen
    would be held back for the rest of the session."""
    found = _memories(ctx, prompt, branch=branch, embedder=embedder, record=record)
    if deadline is not None and time.time() > deadline:
        return found
    try:
        lessons = warn_for_prompt(ctx, prompt[:2_000], session_id=session_id, deadline=deadline)
    except CortexError:  # a busy or read-only store: the memories found still go out
        return found
    if lessons.text:
        found.text = "\n\n".join(t for t in (found.text, lessons.text) if t)
        found.ids += [x.id for x in lessons.shown]
    return found


def _memories(
    ctx: Context,
    prompt: str,
    *,
    branch: str | None,
    embedder: QueryEmbedder,
    record: AccessRecorder | None = None,
) -> Anticipation:
    if not worth_asking(prompt):
        return Anticipation()
    if branch is None:
        branch, _ = ctx.paths.branch_and_commit()
    prompt = prompt[:2_000]
    similarity: dict[tuple[str, str], float] = {}
    words: dict[tuple[str, str], float] = {}
    generic: dict[tuple[str, str], float] = {}
    ranked = recall(
        ctx, prompt, branch=branch, limit=CANDIDATES, embedder=embedder, count_access=False,
        with_links=False, similarities=similarity, word_scores=words, baselines=generic,
    )  # fmt: skip
    if not similarity:
        return Anticipation()
    # Each candidate carries both kinds of evidence: meaning (cosine, and how much closer than
    # to no text at all) and words (the share of the prompt's information it holds, its words
    # weighted by how rare they are in the stores, when the word search found it):
    # ``core.anticipation``.
    picks = select(candidates(ranked, similarity, words, term_weights(ctx, prompt), generic))
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
        if record is not None:
            record(scope, ids, when)
        else:
            store.record_access(ids, when)
    return Anticipation(text, [p.memory.id for p in shown], [p.similarity for p in shown])


def term_weights(ctx: Context, prompt: str) -> dict[str, float]:
    """The prompt's search words, each weighted by how rare it is in the stores searched."""
    terms, _ = query_terms(prompt)
    total, documents = 0, dict.fromkeys(terms, 0)
    for _, store in ctx.existing():
        n, found = store.term_documents(terms)
        total += n
        for term, count in found.items():
            documents[term] = documents.get(term, 0) + count
    return rarity(total, documents)


def candidates(
    ranked: list[Ranked],
    similarity: dict[tuple[str, str], float],
    found: dict[tuple[str, str], float],
    weights: dict[str, float],
    generic: dict[tuple[str, str], float] | None = None,
) -> list[Pick]:
    """The recall order with each result's evidence: meaning (its cosine similarity, and, in
    ``generic``, its similarity to no text at all), and, when the word search found it, the
    share of the prompt's search words (``weights``' keys: the prompt's terms, as
    ``term_weights`` gave them) and of its information it holds."""
    terms = list(weights)
    picks = []
    for r in ranked:
        text = f"{r.memory.content}\n{r.memory.summary or ''}"
        worded = (r.scope, r.memory.id) in found
        picks.append(
            Pick(
                r.memory,
                similarity.get((r.scope, r.memory.id), 0.0),
                words=coverage(terms, text) if worded else 0.0,
                episode=r.episode is not None,
                information=informative(weights, text) if worded else 0.0,
                generic=(generic or {}).get((r.scope, r.memory.id)),
            )
        )
    return picks
