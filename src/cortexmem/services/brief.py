"""The briefing: gathered from the stores, anchored in reality, built under its budget,
cached per (branch, cwd), delivered as SessionStart context and as a rules file.

Reality anchoring: a memory that names repository files (``app/retry.py``) none of which
exists any more is flagged, or dropped when it describes the state of work (progress,
context); lasting knowledge recorded on another branch is flagged with that branch (progress
and context from other branches never reach the pool: the branch filter drops them).
"""

from __future__ import annotations

import contextlib
import re
from datetime import UTC, datetime
from pathlib import Path

from cortexmem.core.briefing import SECTIONS, Briefing, BriefingInput, Item, Plan, PlanStep, build
from cortexmem.core.filters import MemoryFilter
from cortexmem.core.ranking import access_score, centrality, rank_score
from cortexmem.core.tokens import count_tokens
from cortexmem.model import BRANCH_SCOPED_TYPES
from cortexmem.services import briefing_cache
from cortexmem.services.context import Context

POOL_PER_LINE = 4
BRANCH_BOOST = 0.1
_PATH = re.compile(
    r"(?<![\w/.-])((?:[\w.-]+/)+[\w.-]+\.[A-Za-z]{1,6}"
    r"|[\w-]+\.(?:py|ts|tsx|js|go|rs|rb|java|md|toml|yaml|yml|json|sql))(?![\w/])"
)


def mentioned_paths(text: str) -> list[str]:
    """Repository-relative file paths a memory names (``app/retry.py``, ``pyproject.toml``)."""
    return [p for p in dict.fromkeys(_PATH.findall(text)) if not p.startswith(("http", "www."))]


def anchor(memory, worktree: Path | None, branch: str | None) -> tuple[bool, str]:
    """(keep, note) for one memory against the working tree and the current branch."""
    notes = []
    if worktree is not None:
        paths = mentioned_paths(memory.content)
        if paths and not any((worktree / p).exists() for p in paths):
            if memory.memory_type in BRANCH_SCOPED_TYPES:
                return False, ""
            notes.append(f"⚠ {paths[0]} no longer exists")
    if branch and memory.branch and memory.branch != branch:
        notes.append("other branch")
    return True, "; ".join(notes)


def active_plan(ctx: Context, branch: str | None) -> Plan | None:
    """The newest TodoWrite plan of this branch with its latest step statuses, if unfinished."""
    store = ctx.store("project")
    if store is None:
        return None
    for plan in store.recent_events(("plan",), 20):
        if plan.payload.get("tool") == "ExitPlanMode" or not plan.payload.get("steps"):
            continue
        if branch and plan.provenance.branch and plan.provenance.branch != branch:
            continue
        steps = [str(s) for s in plan.payload["steps"]]
        status = {s: "pending" for s in steps}
        for event in reversed(store.recent_events(("plan_step",), 500, plan.provenance.session_id)):
            text = str(event.payload.get("step", ""))
            if text in status and event.created_at >= plan.created_at:
                status[text] = str(event.payload.get("status", "pending"))
        if all(v == "completed" for v in status.values()):
            return None
        title = f"{len(steps)} steps from session {(plan.provenance.session_id or '?')[:8]}"
        return Plan(title, tuple(PlanStep(s, status[s]) for s in steps), plan.provenance.branch,
                    plan.created_at)  # fmt: skip
    return None


def gather(ctx: Context, branch: str | None, now: datetime) -> BriefingInput:
    flt = MemoryFilter(branch=branch)
    worktree = ctx.paths.worktree
    items: list[Item] = []
    for scope, store in ctx.existing():
        max_in, max_access = store.maxima()
        for _, _, types, lines in SECTIONS:
            if not types:
                continue
            for memory, in_degree in store.top_memories(types, flt, lines * POOL_PER_LINE):
                keep, note = anchor(memory, worktree if scope == "project" else None, branch)
                if not keep:
                    continue
                cent = centrality(in_degree, max_in)
                score = rank_score(memory.confidence, memory.priority, cent,
                                   access_score(memory.access_count, max_access))  # fmt: skip
                if branch and memory.branch == branch:
                    score += BRANCH_BOOST
                items.append(Item(memory, score, note))
    return BriefingInput(ctx.paths.name, branch, now, items, active_plan(ctx, branch))


def make_briefing(
    ctx: Context, *, branch: str | None = None, now: datetime | None = None
) -> Briefing:
    """Build the briefing fresh (no cache)."""
    if branch is None:
        branch, _ = ctx.paths.branch_and_commit()
    return build(gather(ctx, branch, now or datetime.now(UTC)), count_tokens)


def briefing_markdown(ctx: Context, *, cwd: Path | None = None) -> tuple[str, bool]:
    """``(markdown, served from cache)`` for the current branch and ``cwd``."""
    branch, _ = ctx.paths.branch_and_commit()
    where = str(cwd or ctx.paths.worktree or ctx.paths.root)
    path = briefing_cache.cache_path(str(ctx.paths.data_dir), branch, where)
    token = (
        briefing_cache.combined_token(str(ctx.paths.db), str(ctx.paths.global_db))
        if ctx.exists("project")
        else None
    )
    if token is not None:
        cached = briefing_cache.read_cached(path, token)
        if cached is not None:
            return cached, True
    markdown = make_briefing(ctx, branch=branch).markdown
    if token is not None:
        # A read-only .cortex: the briefing is still returned, only not cached.
        with contextlib.suppress(OSError):
            briefing_cache.write_cached(path, token, markdown)
    return markdown, False


def deliver(ctx: Context, *, cwd: Path | None = None) -> str:
    """The briefing, also written to ``.claude/rules/cortex-briefing.md`` (when it changed)."""
    markdown, _ = briefing_markdown(ctx, cwd=cwd)
    worktree = ctx.paths.worktree or ctx.paths.root
    if ctx.exists("project"):
        briefing_cache.write_rules_file(str(worktree), str(ctx.paths.data_dir), markdown)
    return markdown
