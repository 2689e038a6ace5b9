"""UserPromptSubmit: recall for the prompt, and keep only what clearly bears on it.

Runs inside the recall server (the model is warm there); the hook only relays. Served memories
get their recall counter bumped like any recall.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cortexmem.core.anticipation import Pick, baseline, render, select, worth_asking
from cortexmem.core.filters import MemoryFilter
from cortexmem.model import utc_now
from cortexmem.services.context import Context
from cortexmem.services.recall import QueryEmbedder, recall, vector_candidates

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
    flt = MemoryFilter(branch=branch)
    similarity = {
        (c.scope, c.memory.id): c.relevance
        for c in vector_candidates(ctx, ctx.existing(), prompt, flt, embedder)
    }
    if not similarity:
        return Anticipation()
    ranked = recall(
        ctx, prompt, branch=branch, limit=CANDIDATES, embedder=embedder, count_access=False,
        with_links=False,
    )  # fmt: skip
    picks = select(
        [Pick(r.memory, similarity.get((r.scope, r.memory.id), 0.0)) for r in ranked],
        floor=baseline(list(similarity.values())),
    )
    text = render(picks)
    if not text:
        return Anticipation()
    shown = [p for p in picks if p.memory.id in text]
    when = utc_now()
    for scope, store in ctx.existing():
        ids = [p.memory.id for p in shown if (scope, p.memory.id) in similarity]
        store.record_access(ids, when)
    return Anticipation(text, [p.memory.id for p in shown], [p.similarity for p in shown])
