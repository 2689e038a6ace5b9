"""The briefing: gathered from the stores, anchored in reality, built under its budget,
cached per (branch, cwd), and published (``publish``) one way for every caller: SessionStart's
context, the file a host's assistant reads (written by a writer the host hands in), ``cortex
brief --write``.

``publish`` serves from the cache with the standard library alone (a SessionStart on a cache hit
must not pay for the store or the builder), so what the builder needs is imported when it runs.

Reality anchoring: a memory that names repository files (``app/retry.py``) none of which
exists any more is flagged, or dropped when it describes the state of work (progress,
context); lasting knowledge recorded on another branch is flagged with that branch (progress
and context from other branches never reach the pool: the branch filter drops them).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cortexmem.core.briefing import Briefing, BriefingInput, Plan
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
    from cortexmem.model import BRANCH_SCOPED_TYPES

    notes = []
    if worktree is not None:
        paths = mentioned_paths(memory.content)
        if paths and not any((worktree / p).exists() for p in paths):
            if memory.memory_type in BRANCH_SCOPED_TYPES:
                return False, ""
            notes.append(f"⚠ {paths[0]} no longer exists")
    if branch and memory.branch and memory.branch != branch:
        notes.append(f"from branch {memory.branch}")
    return True, "; ".join(notes)


def active_plan(ctx: Context, branch: str | None) -> Plan | None:
    """The newest to-do list of this branch with its latest step statuses, if unfinished."""
    from cortexmem.core.briefing import Plan, PlanStep

    store = ctx.store("project")
    if store is None:
        return None
    for plan in store.recent_events(("plan",), 20):
        if plan.payload.get("call") == "plan" or not plan.payload.get("steps"):
            continue
        if branch and plan.provenance.branch and plan.provenance.branch != branch:
            continue
        steps = [str(s) for s in plan.payload["steps"]]
        # each step as the list itself gave it (a list rewritten to add a step carries its done
        # steps over, and one reopened is pending again: no plan_step event says either, as
        # extraction records a step's status when it changes and the store keeps an event
        # once), then as later updates of the same list say
        given = plan.payload.get("statuses")
        if isinstance(given, list) and len(given) == len(steps):
            status = {s: str(g) for s, g in zip(steps, given, strict=True)}
        else:  # recorded before lists kept their statuses
            status = {s: "pending" for s in steps}
        for event in reversed(store.recent_events(("plan_step",), 500, plan.provenance.session_id)):
            text = str(event.payload.get("step", ""))
            if text in status and event.created_at >= plan.created_at:
                status[text] = str(event.payload.get("status", "pending"))
        if all(v == "completed" for v in status.values()):
            return None
        title = f"{len(steps)} steps from session {(plan.provenance.session_id or '?')[:8]}"
        return Plan(title, tuple(PlanStep(s, status[s]) for s in steps), plan.provenance.branch,
                    plan.created_at, plan.provenance.session_id)  # fmt: skip
    return None


# How many memories of each type the briefing weighs (it lists ~30 lines at most; progress
# is folded into one line, so its pool is how many steps the fold counts).
POOL: dict[str, int] = {"decision": 24, "gotcha": 32, "pattern": 24, "architecture": 8,
                        "context": 16, "code_description": 4, "progress": 60}  # fmt: skip
COMMAND_EVENTS = 400
FILE_EVENTS = 300
FILES_SHOWN = 6
# A command worth telling a next session: a build, test, lint, format or run step.
_TOOL_WORDS = re.compile(
    r"\b(?:test|tests|pytest|build|lint|fmt|format|check|typecheck|run|dev|serve|start|"
    r"install|deploy|bench|ci|make|just|mise|tox|nox|cargo|npm|pnpm|yarn|bun|uv|poetry|"
    r"go|gradle|mvn|act|ruff|mypy|pyright|eslint|tsc|vitest|jest)\b"
)
# A run that asks the tool about itself (``pytest --collect-only``, ``--markers``, ``--help``).
_INSPECTION = re.compile(r"\s--(?:collect-only|markers|help|version)\b")
_NOT_HOWTO = re.compile(
    r"^(?:echo|cat|ls|cd|rm|mv|cp|mkdir|find|grep|rg|sed|awk|head|tail|wc|sort|stat|touch|"
    r"chmod|which|pwd|git|gh|curl|open|kill|pkill|ps|sleep|python3? -c|/tmp/)"
)


def howto_commands(events, limit: int = 8) -> list:
    """The commands that worked, grouped and counted, that look like build/test/run steps
    (not one-off inspection: ``ls``, ``grep``, ``git``, ``echo``…, nor a run of one test file,
    of tests picked by name or a check of one source file), most run first."""
    from cortexmem.core.briefing import Command
    from cortexmem.core.extraction.commands import (
        checks_one_file,
        runs_one_test,
        without_wrappers,
    )

    runs: dict[str, int] = {}
    described: dict[str, str] = {}
    order: dict[str, int] = {}
    for n, event in enumerate(events):  # newest first
        raw = str(event.payload.get("command") or "").strip()
        command = " ".join(raw.split())
        if not command or event.payload.get("ok") is False or len(command) > 100:
            continue
        # A script (several lines) or an inspection (``uv run python -c …``) is that moment's.
        if any(c in raw for c in "\n|>$`") or _NOT_HOWTO.match(without_wrappers(command)):
            continue
        if _INSPECTION.search(command):
            continue  # an inspection of the tool, not a step of the project
        if not _TOOL_WORDS.search(command) or runs_one_test(command):
            continue  # a run of one test file is that moment's, not how to test the project
        if checks_one_file(command):
            continue  # so is a checker given one file (`ruff check app/x.py`)
        runs[command] = runs.get(command, 0) + 1
        order.setdefault(command, n)
        if not described.get(command):
            described[command] = str(event.payload.get("description") or "")
    best = sorted(runs, key=lambda c: (-runs[c], order[c]))[:limit]
    return [Command(c, runs[c], described[c]) for c in best]


def worked_files(events, limit: int = FILES_SHOWN) -> list[str]:
    """The files edited most, most first, newest on a tie: repository-relative paths as
    recorded, an absolute one by its last two parts (files under /tmp or a home folder's
    dot-folders, such as plan files, are not the project's)."""
    counts: dict[str, int] = {}
    order: dict[str, int] = {}
    for n, event in enumerate(events):
        path = str(event.payload.get("path") or "")
        if path.startswith("/"):
            if path.startswith(("/tmp/", "/private/")) or "/." in path:
                continue
            path = "/".join(path.split("/")[-2:])
        if not path:
            continue
        counts[path] = counts.get(path, 0) + 1
        order.setdefault(path, n)
    return sorted(counts, key=lambda p: (-counts[p], order[p]))[:limit]


def gather(ctx: Context, branch: str | None, now: datetime) -> BriefingInput:
    from cortexmem.core.briefing import BriefingInput, Item
    from cortexmem.core.filters import MemoryFilter
    from cortexmem.core.ranking import access_score, centrality, rank_score

    flt = MemoryFilter(branch=branch)
    # Anchoring asks whether a named file still exists in the repository: outside a git
    # repository (a folder transcripts were ingested into) there is nothing to ask.
    worktree = ctx.paths.worktree if ctx.paths.repo is not None else None
    items: list[Item] = []
    for scope, store in ctx.existing():
        max_in, max_access = store.maxima()
        for memory_type, size in POOL.items():
            for memory, in_degree in store.top_memories((memory_type,), flt, size):
                keep, note = anchor(memory, worktree if scope == "project" else None, branch)
                if not keep:
                    continue
                cent = centrality(in_degree, max_in)
                score = rank_score(memory.confidence, memory.priority, cent,
                                   access_score(memory.access_count, max_access))  # fmt: skip
                if branch and memory.branch == branch:
                    score += BRANCH_BOOST
                items.append(Item(memory, score, note))
    commands, files, alerts = [], [], []
    project = ctx.store("project")
    if project is not None:
        from cortexmem.services.learn import review_status

        alert = review_status(ctx)["alert"]
        alerts = [alert] if alert else []
        commands = howto_commands(project.recent_events(("command", "test_run"), COMMAND_EVENTS))
        files = worked_files(project.recent_events(("file_modified",), FILE_EVENTS))
    return BriefingInput(ctx.paths.name, branch, now, items, active_plan(ctx, branch),
                         commands, files, alerts)  # fmt: skip


def make_briefing(
    ctx: Context, *, branch: str | None = None, now: datetime | None = None
) -> Briefing:
    """Build the briefing fresh (no cache)."""
    from cortexmem.core.briefing import build
    from cortexmem.core.tokens import count_tokens

    if branch is None:
        branch, _ = ctx.paths.branch_and_commit()
    return build(gather(ctx, branch, now or datetime.now(UTC)), count_tokens)
