"""What the MCP server's tools and resources do, as plain functions over a ``Context``.

Each function checks its arguments beyond what a JSON Schema can say (blank text, an id's
shape, a branch name, ``branch`` together with ``all_branches``), raises ``CortexError`` with
one line the assistant can act on, and returns plain JSON-able data: short memory records with
the ids the other tools take. Nothing here imports the MCP SDK (``cortexmem.mcp.server`` does
and wraps these), so they are tested and reused without it.

Branches: progress and context recorded on another branch are hidden unless the caller names
that branch or passes ``all_branches``; lasting knowledge (decisions, architecture, patterns,
gotchas, code) is shared by every branch (``core.filters``). A tool given a memory id acts on
that memory wherever it was recorded, but says so, and ``forget`` refuses to archive another
branch's progress or context unless that branch is named.
"""

from __future__ import annotations

import re
from typing import Any

from cortexmem.errors import CortexError
from cortexmem.model import (
    BRANCH_SCOPED_TYPES,
    MEMORY_TYPES,
    Episode,
    Event,
    Memory,
)
from cortexmem.services.context import Context

MAX_QUERY_CHARS = 2_000
MAX_TEXT_CHARS = 20_000
SEARCH_LIMIT = (1, 50)
LIST_LIMIT = (1, 100)
DEPTH = (1, 5)
PRIORITY = (1, 10)
SCOPE_CHOICES = ("all", "project", "global")
DIRECTIONS = ("out", "in", "both")
CONTENT_CHARS = 1_200  # one memory's content in a listing; `get` returns it whole
_BRANCH_BAD = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|^[-/]|/$|\.lock$|^$")


# ------------------------------------------------------------------------------ validation


def check_text(value: str, what: str, limit: int) -> str:
    text = value.strip() if isinstance(value, str) else ""
    if not text:
        raise CortexError(f"{what} is empty: give some text")
    if len(text) > limit:
        raise CortexError(f"{what} is {len(text)} characters long; at most {limit} are accepted")
    return text


def check_range(value: int | float, what: str, bounds: tuple[int, int]) -> None:
    low, high = bounds
    if isinstance(value, bool) or not low <= value <= high:
        raise CortexError(f"{what} must be between {low} and {high}; got {value!r}")


def check_choices(
    values: list[str] | tuple[str, ...], what: str, allowed: tuple[str, ...]
) -> tuple:
    unknown = [v for v in values if v not in allowed]
    if unknown:
        raise CortexError(f"unknown {what} {unknown[0]!r}; one of: {', '.join(allowed)}")
    return tuple(dict.fromkeys(values))


def check_edge_types(values: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Edge types as a model writes them (``derives``, ``Related``, ``derived-from``) through
    the one alias table the command line uses too; an unknown one lists the valid types."""
    from cortexmem.core.edge_types import UnknownEdgeType, normalise_edge_type

    try:
        return tuple(dict.fromkeys(normalise_edge_type(v) for v in values))
    except UnknownEdgeType as exc:
        raise CortexError(str(exc)) from None


def check_branch(branch: str | None) -> str | None:
    """A branch name as git would accept it; ``None`` or blank (what a model sends for "not
    given") is ``None``."""
    if branch is None or not branch.strip():
        return None
    name = branch.strip()
    if len(name) > 250 or _BRANCH_BAD.search(name):
        raise CortexError(f"{branch!r} is not a git branch name")
    return name


def branch_filter(ctx: Context, branch: str | None, all_branches: bool) -> tuple[str | None, bool]:
    """``(branch the results are filtered to, all_branches)``: the named branch, else the
    current one; ``None`` with ``all_branches``."""
    branch = check_branch(branch)
    if branch is not None and all_branches:
        raise CortexError("give either branch or all_branches, not both")
    if all_branches:
        return None, True
    if branch is None:
        branch, _ = ctx.paths.branch_and_commit()
    return branch, False


# ------------------------------------------------------------------------------- rendering


def episode_record(episode: Episode, scope: str) -> dict[str, Any]:
    """An episode (what was said) as the assistant sees it: the words and where they were
    said (role, session, transcript line, branch, time)."""
    text = episode.text
    if len(text) > CONTENT_CHARS:
        text = text[:CONTENT_CHARS].rstrip() + f" … [{len(episode.text)} chars]"
    record: dict[str, Any] = {
        "kind": "episode",
        "id": episode.id,
        "role": episode.role,
        "scope": scope,
        "content": text,
        "session": episode.session_id,
        "transcript": episode.transcript_path,
        "line": episode.line,
    }
    if episode.branch:
        record["branch"] = episode.branch
    record["created"] = episode.created_at[:19] + "Z"
    return record


def memory_record(memory: Memory, scope: str, *, full: bool = False) -> dict[str, Any]:
    """A memory as the assistant sees it: what it says and the few facts that weigh on it."""
    content = memory.content
    if not full and len(content) > CONTENT_CHARS:
        content = content[:CONTENT_CHARS].rstrip() + f" … [{len(memory.content)} chars; get it]"
    record: dict[str, Any] = {
        "id": memory.id,
        "type": memory.memory_type,
        "scope": scope,
        "content": content,
    }
    if memory.summary and (full or memory.summary not in memory.content):
        record["summary"] = memory.summary
    record["priority"] = memory.priority
    record["confidence"] = round(memory.confidence, 2)
    if memory.branch:
        record["branch"] = memory.branch
    if memory.tags:
        record["tags"] = list(memory.tags)
    if memory.pinned:
        record["pinned"] = True
    if memory.status != "active":
        record["status"] = memory.status
    record["created"] = memory.created_at[:19] + "Z"
    if full:
        record |= {
            "source_type": memory.source_type,
            "commit": memory.source_context.commit,
            "recalled": memory.access_count,
            "updated": memory.updated_at or None,
        }
    return record


def _event_record(event: Event) -> dict[str, Any]:
    record: dict[str, Any] = {
        "kind": event.kind,
        "content": event.content,
        "salience": round(event.salience, 2),
        "when": event.created_at[:19] + "Z",
    }
    if event.provenance.branch:
        record["branch"] = event.provenance.branch
    if event.provenance.session_id:
        record["session"] = event.provenance.session_id[:8]
    return record


def _other_branch_note(memory: Memory, branch: str | None) -> str | None:
    if memory.memory_type not in BRANCH_SCOPED_TYPES or not memory.branch or branch is None:
        return None
    if memory.branch == branch:
        return None
    return f"{memory.memory_type} recorded on branch {memory.branch}, not on {branch}"


# ----------------------------------------------------------------------------------- tools


def search(
    ctx: Context,
    query: str,
    *,
    types: list[str] | tuple[str, ...] = (),
    scope: str = "all",
    branch: str | None = None,
    all_branches: bool = False,
    limit: int = 10,
) -> dict[str, Any]:
    """Hybrid recall (words + meaning) over the project and global stores."""
    from cortexmem.core.fusion import RELEVANCE_FLOOR
    from cortexmem.services.memories import scopes_for
    from cortexmem.services.recall import recall

    text = check_text(query, "query", MAX_QUERY_CHARS)
    wanted = check_choices(list(types), "memory type", MEMORY_TYPES)
    check_choices([scope], "scope", SCOPE_CHOICES)
    check_range(limit, "limit", SEARCH_LIMIT)
    branch, all_branches = branch_filter(ctx, branch, all_branches)
    results = recall(ctx, text, types=wanted, scopes=scopes_for(scope), branch=branch,
                     all_branches=all_branches, limit=limit, floor=RELEVANCE_FLOOR)  # fmt: skip
    found = []
    for r in results:
        if r.episode is not None:
            found.append(episode_record(r.episode, r.scope) | {"score": round(r.score, 3)})
            continue
        record = memory_record(r.memory, r.scope) | {"kind": "memory", "score": round(r.score, 3)}
        if r.linked:
            record["code"] = [memory_record(m, r.scope) for m in r.linked]
        found.append(record)
    from cortexmem.core.redact import redact

    # echoed redacted, like everything Cortex says back (a client may log its replies)
    out = {"query": redact(text), "branch": branch, "all_branches": all_branches,
           "results": found}  # fmt: skip
    if not found:  # said plainly, as `cortex recall` says it: nothing cleared the relevance floor
        out["note"] = "nothing relevant in memory for this query"
    return out


def search_decisions(
    ctx: Context,
    query: str | None = None,
    *,
    branch: str | None = None,
    all_branches: bool = False,
    limit: int = 20,
) -> dict[str, Any]:
    """Decisions (and the alternatives rejected, tagged ``rejected``): those matching
    ``query``, or the most important ones when no query is given."""
    from cortexmem.core.filters import MemoryFilter

    check_range(limit, "limit", LIST_LIMIT)
    branch, all_branches = branch_filter(ctx, branch, all_branches)
    if query is not None and query.strip():
        found = search(ctx, query, types=("decision",), branch=branch, all_branches=all_branches,
                       limit=min(limit, SEARCH_LIMIT[1]))  # fmt: skip
        return found | {"decisions": found.pop("results")}
    flt = MemoryFilter(types=("decision",), branch=branch)
    pool = [
        (memory, scope)
        for scope, store in ctx.existing()
        for memory, _ in store.top_memories(("decision",), flt, limit)
    ]
    # newest first among equals (two stable sorts), then the store's own importance order
    pool.sort(key=lambda p: (p[0].created_at, p[0].id), reverse=True)
    pool.sort(key=lambda p: (not p[0].pinned, -p[0].priority, -p[0].confidence))
    return {
        "query": None,
        "branch": branch,
        "all_branches": all_branches,
        "decisions": [memory_record(m, scope) for m, scope in pool[:limit]],
    }


def get_plan(ctx: Context, *, branch: str | None = None) -> dict[str, Any]:
    """The newest unfinished TodoWrite plan of the branch, with each step's status."""
    from cortexmem.services.brief import active_plan

    branch, _ = branch_filter(ctx, branch, False)
    plan = active_plan(ctx, branch)
    if plan is None:
        return {"branch": branch, "plan": None, "note": "no unfinished plan on this branch"}
    done = sum(1 for s in plan.steps if s.status == "completed")
    return {
        "branch": branch,
        "plan": {
            "title": plan.title,
            "branch": plan.branch,
            "since": plan.when,
            "done": done,
            "total": len(plan.steps),
            "steps": [{"text": s.text, "status": s.status} for s in plan.steps],
        },
    }


def get_recent(
    ctx: Context,
    *,
    branch: str | None = None,
    all_branches: bool = False,
    limit: int = 20,
    min_salience: float = 0.3,
    kinds: list[str] | tuple[str, ...] = (),
) -> dict[str, Any]:
    """What happened lately in this project's sessions: captured events, newest first, at
    least ``min_salience`` salient, of the branch (or every branch)."""
    from cortexmem.core.extraction.events import EVENT_KINDS

    check_range(limit, "limit", LIST_LIMIT)
    if not 0.0 <= min_salience <= 1.0:
        raise CortexError(f"min_salience must be between 0 and 1; got {min_salience!r}")
    wanted = check_choices(list(kinds), "event kind", tuple(EVENT_KINDS)) or tuple(EVENT_KINDS)
    branch, all_branches = branch_filter(ctx, branch, all_branches)
    store = ctx.store("project")
    events: list[Event] = []
    if store is not None:
        fetch = limit * 4
        while True:
            batch = store.recent_events(wanted, fetch)
            events = [
                e
                for e in batch
                if e.salience >= min_salience
                and (all_branches or not e.provenance.branch or e.provenance.branch == branch)
            ]
            if len(events) >= limit or len(batch) < fetch or fetch >= 5_000:
                break
            fetch *= 4
    return {
        "branch": branch,
        "all_branches": all_branches,
        "events": [_event_record(e) for e in events[:limit]],
    }


def get_status(ctx: Context, *, branch: str | None = None) -> dict[str, Any]:
    """Where the stores are, what they hold, and the branch's plan in one line."""
    from cortexmem.services.brief import active_plan
    from cortexmem.services.status import status

    report = status(ctx)
    branch, _ = branch_filter(ctx, branch, False)
    plan = active_plan(ctx, branch)
    done = 0 if plan is None else sum(s.status == "completed" for s in plan.steps)
    report["plan"] = {
        "branch": branch,
        "unfinished": None if plan is None else f"{done}/{len(plan.steps)} steps done",
    }
    return report


def remember(
    ctx: Context,
    text: str,
    *,
    memory_type: str = "context",
    priority: int = 5,
    scope: str = "project",
    tags: list[str] | tuple[str, ...] = (),
    summary: str | None = None,
    pinned: bool = False,
    branch: str | None = None,
) -> dict[str, Any]:
    """Store a memory (the identical memory already stored is returned instead)."""
    from cortexmem.services.memories import remember as store_memory

    body = check_text(text, "text", MAX_TEXT_CHARS)
    check_choices([memory_type], "memory type", MEMORY_TYPES)
    check_choices([scope], "scope", ("project", "global"))
    check_range(priority, "priority", PRIORITY)
    clean_tags = tuple(dict.fromkeys(t.strip() for t in tags if t.strip()))
    if any(len(t) > 64 for t in clean_tags):
        raise CortexError("a tag is at most 64 characters long")
    memory, created = store_memory(
        ctx,
        body,
        memory_type=memory_type,
        priority=priority,
        scope=scope,  # type: ignore[arg-type]
        tags=clean_tags,
        summary=summary.strip() if summary else None,
        pinned=pinned,
        source_type="self_report",
        branch=check_branch(branch),
        embed=True,
    )
    return {"created": created, "memory": memory_record(memory, scope)}


def get(ctx: Context, memory_id: str, *, branch: str | None = None) -> dict[str, Any]:
    """One memory in full (an id or a unique id prefix) with the edges touching it; or, given
    an episode's id (``ep-…``, as search lists what was said), the episode and the memories
    drawn from it."""
    from cortexmem.services.graph import drawn_from, is_episode_id
    from cortexmem.services.memories import edges_of
    from cortexmem.services.memories import get as find

    if is_episode_id(check_text(memory_id, "id", 64)):
        drawn = drawn_from(ctx, memory_id)
        return {
            "episode": episode_record(drawn.episode, drawn.scope),
            "memories": [memory_record(m, drawn.scope) for m in drawn.memories],
        }
    found = find(ctx, memory_id)
    branch, _ = branch_filter(ctx, branch, False)
    out: dict[str, Any] = {"memory": memory_record(found.memory, found.scope, full=True)}
    edges = edges_of(ctx, found)
    out["edges"] = [
        {
            "type": e.relation_type,
            "direction": "out" if e.source_id == found.memory.id else "in",
            "other": e.target_id if e.source_id == found.memory.id else e.source_id,
            "strength": round(e.strength, 2),
            **({"status": e.status} if e.status != "active" else {}),
        }
        for e in edges
    ]
    note = _other_branch_note(found.memory, branch)
    if note:
        out["note"] = note
    return out


def traverse(
    ctx: Context,
    memory_id: str,
    *,
    depth: int = 2,
    edge_types: list[str] | tuple[str, ...] = (),
    direction: str = "both",
    min_strength: float = 0.0,
    branch: str | None = None,
    all_branches: bool = False,
) -> dict[str, Any]:
    """Breadth-first walk of the graph from a memory, grouped by depth. Progress and context
    of other branches reached on the way are left out unless asked for."""
    from cortexmem.core.filters import visible_on_branch
    from cortexmem.services.graph import walk

    start_id = check_text(memory_id, "id", 64)
    check_range(depth, "depth", DEPTH)
    relation_types = check_edge_types(edge_types)
    check_choices([direction], "direction", DIRECTIONS)
    if not 0.0 <= min_strength <= 1.0:
        raise CortexError(f"min_strength must be between 0 and 1; got {min_strength!r}")
    branch, all_branches = branch_filter(ctx, branch, all_branches)
    start, levels = walk(ctx, start_id, depth=depth, types=relation_types,
                         direction=direction, min_strength=min_strength)  # type: ignore[arg-type]  # fmt: skip
    hidden = 0
    depths = []
    for level in levels:
        shown = []
        for r in level:
            if not visible_on_branch(r.memory, branch):
                hidden += 1
                continue
            shown.append({
                "depth": r.depth,
                "edge": r.edge.relation_type,
                "direction": "out" if r.edge.source_id == r.via else "in",
                "from": r.via,
                "strength": round(r.edge.strength, 2),
                "memory": memory_record(r.memory, start.scope),
            })  # fmt: skip
        depths.append(shown)
    out: dict[str, Any] = {
        "start": memory_record(start.memory, start.scope),
        "branch": branch,
        "all_branches": all_branches,
        "depths": depths,
    }
    if hidden:
        out["hidden_other_branches"] = hidden
    return out


def forget(ctx: Context, memory_id: str, *, branch: str | None = None) -> dict[str, Any]:
    """Archive a memory: recall stops serving it; it stays in the store and its backups."""
    from cortexmem.services import memories

    found = memories.get(ctx, check_text(memory_id, "id", 64))
    branch, _ = branch_filter(ctx, branch, False)
    note = _other_branch_note(found.memory, branch)
    if note:
        raise CortexError(
            f"{found.memory.id} is {note}; pass branch={found.memory.branch!r} to archive it"
        )
    was = found.memory.status
    archived = memories.forget(ctx, found.memory.id)
    return {"archived": was != "archived", "memory": memory_record(archived.memory, archived.scope)}


# ------------------------------------------------------------------------------- resources


def decisions_markdown(ctx: Context) -> str:
    """Every active decision of the project and global stores, oldest first."""
    from cortexmem.core.filters import MemoryFilter
    from cortexmem.services.projections import decisions_markdown as render

    flt = MemoryFilter(types=("decision",), statuses=("active",))
    found = [m for _, store in ctx.existing() for m in store.iter_memories(flt)]
    return render(found, "Decisions", "No decisions recorded yet.")


def plan_markdown(ctx: Context) -> str:
    """The current branch's unfinished plan as Markdown."""
    from cortexmem.services.projections import plan_markdown as render

    branch, _ = ctx.paths.branch_and_commit()
    return render(ctx, branch)


# ----------------------------------------------------------------- lessons

LESSON_SCOPES = ("lessons", "scars", "victories")
FEEDBACK_SIGNALS = ("followed", "ignored", "noise")


def lessons_for_action(
    ctx: Context,
    tool: str,
    *,
    command: str = "",
    path: str = "",
    text: str = "",
    query: str | None = None,
    scope: str = "scars",
    limit: int = 5,
) -> dict[str, Any]:
    """What earlier sessions learned about an action: the warnings the hook would give before
    it (each layer's decision, nothing recorded) and the lessons recalled for it."""
    from cortexmem.services.lessons import recall_lessons
    from cortexmem.services.warn import action_of, warn

    check_choices([scope], "scope", LESSON_SCOPES)
    check_range(limit, "limit", SEARCH_LIMIT)
    fields = {
        "tool": check_text(tool, "tool", 100),
        "kind": "shell" if command else "edit",
        "command": command[:MAX_QUERY_CHARS],
        "path": path[:1_000],
        "text": text[:MAX_QUERY_CHARS],
    }
    action = action_of(fields)
    warned = warn(ctx, action, session_id=None, project=ctx.paths.name, dry_run=True)
    wanted = query or " ".join(p for p in (command, path, text) if p) or tool
    recalled = recall_lessons(ctx, check_text(wanted, "query", MAX_QUERY_CHARS), scope=scope,
                              limit=limit)  # fmt: skip
    return {"warnings": warned.text, **{k: v for k, v in warned.to_dict().items()
                                        if k in ("ids", "layer2")},
            "lessons": [r.to_dict() for r in recalled]}  # fmt: skip


def lesson_feedback(
    ctx: Context, lesson_id: str, signal: str, *, reason: str | None = None,
    language: str | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Whether a lesson's warning helped: followed, ignored, or noise with a reason."""
    from cortexmem.model import NOISE_REASONS
    from cortexmem.services.judge import feedback

    check_choices([signal], "signal", FEEDBACK_SIGNALS)
    if reason is not None:
        check_choices([reason], "reason", NOISE_REASONS)
    if signal == "noise" and reason is None:
        raise CortexError("noise needs a reason: " + ", ".join(NOISE_REASONS))
    lesson = feedback(ctx, check_text(lesson_id, "lesson id", 64), signal, reason,
                      language=language)  # fmt: skip
    return lesson.to_dict()
