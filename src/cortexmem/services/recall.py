"""Recall: search project and global stores, rank together, count what was served."""

from __future__ import annotations

from cortexmem.core.filters import MemoryFilter
from cortexmem.core.ranking import CANDIDATE_POOL, Ranked, rank
from cortexmem.model import utc_now
from cortexmem.services.context import SCOPES, Context, Scope


def recall(
    ctx: Context,
    query: str,
    *,
    types: tuple[str, ...] = (),
    scopes: tuple[Scope, ...] = SCOPES,
    branch: str | None = None,
    all_branches: bool = False,
    limit: int = 10,
    statuses: tuple[str, ...] = ("active",),
    count_access: bool = True,
) -> list[Ranked]:
    """The best ``limit`` memories for ``query``.

    ``branch`` defaults to the current git branch (progress and context from other branches are
    hidden); ``all_branches`` lifts that. Each store yields a fixed-size candidate pool, so the
    order never depends on ``limit`` (which is capped at the pool size).
    """
    if not all_branches and branch is None:
        branch, _ = ctx.paths.branch_and_commit()
    flt = MemoryFilter(types=types, branch=None if all_branches else branch, statuses=statuses)
    limit = min(limit, CANDIDATE_POOL)
    candidates = []
    stores = ctx.existing(scopes)
    for scope, store in stores:
        candidates += store.search_text(query, flt, CANDIDATE_POOL, scope)
    results = rank(candidates, limit)
    if count_access and results:
        when = utc_now()
        for scope, store in stores:
            served = [r.memory.id for r in results if r.scope == scope]
            store.record_access(served, when)
    return results
