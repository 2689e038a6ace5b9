"""Warnings before a tool call: layers 2 and 3 (layer 1, the read-only skip, is the host's and
runs before anything is imported).

Layer 2 finds candidates by words (the lessons' full-text index) and, in the recall server, by
meaning (their vectors), adds the lessons one graph edge away, then gates and scores them
(``core.lessons.score``) and applies the session's dedup and budget. Layer 3, when a model is
configured for ``classify``, asks it which of the shortlist bear on this action (about 200
tokens in, a few out), and passes them all if it has not answered within ``FILTER_TIMEOUT``
seconds (fail-open). What is shown is recorded (for the dedup, the budget and the judge).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from cortexmem.core.lessons.evolve import after_shown
from cortexmem.core.lessons.facts import Action, program_of, words_of
from cortexmem.core.lessons.render import (
    relevance_question,
    relevant_numbers,
    request_warnings_text,
    warnings_text,
)
from cortexmem.core.lessons.requested import called_up, lookup_words
from cortexmem.core.lessons.score import BUDGET, Scored, score_all, select, word_similarity
from cortexmem.core.text import clip_redacted, relative_path
from cortexmem.errors import CortexError
from cortexmem.model import Lesson
from cortexmem.services.context import Context

CANDIDATES = 20
FILTER_TIMEOUT = 3.0
EDGE_DISCOUNT = 0.8


@dataclass
class WarnResult:
    """What fired and why: each layer's decision, for ``cortex warn --dry-run``."""

    text: str = ""
    shown: list[Lesson] = field(default_factory=list)
    scored: list[Scored] = field(default_factory=list)
    held: list[Scored] = field(default_factory=list)
    layer3: str = "not asked"

    def to_dict(self) -> dict[str, Any]:
        return {
            "context": self.text,
            "ids": [x.id for x in self.shown],
            "layer2": [
                {
                    "lesson": s.lesson.id,
                    "similarity": round(s.similarity, 3),
                    "score": round(s.score, 3),
                    "why": s.why,
                }
                for s in self.scored + self.held
            ],
            "layer3": self.layer3,
        }


def candidates(
    ctx: Context, action: Action, similarities: dict[str, float] | None = None
) -> list[tuple[Lesson, float]]:
    """Lessons that may concern ``action``, each with its similarity (0..1): by words, by
    meaning when ``similarities`` (lesson id → cosine) are given, and one edge away."""
    store = ctx.store("project")
    if store is None:
        return []
    # What the call is (its command, its file) finds lessons by words; what it writes (code,
    # mostly) only when there is nothing else: its words match lessons at random.
    query = " ".join(part for part in (action.command, action.path) if part) or action.text[:300]
    found: dict[str, tuple[Lesson, float]] = {}
    words = words_of(query)
    for _, lesson, _ in store.search_lessons(query, CANDIDATES):
        found[lesson.id] = (lesson, word_similarity(words, lesson))
    for lesson_id, cosine in (similarities or {}).items():
        known = found.get(lesson_id)
        hit = known[0] if known else store.get_lesson(lesson_id)
        if hit is not None:
            found[lesson_id] = (hit, max(cosine, known[1] if known else 0.0))
    for source, target, kind in store.lesson_edges(list(found)):
        if kind == "supersedes":
            continue
        for near, far in ((source, target), (target, source)):
            if near in found and far not in found:
                linked = store.get_lesson(far)
                if linked is not None:
                    found[far] = (linked, found[near][1] * EDGE_DISCOUNT)
    return list(found.values())


def warn(
    ctx: Context,
    action: Action,
    *,
    session_id: str | None,
    tool_use_id: str | None = None,
    project: str | None = None,
    similarities: dict[str, float] | None = None,
    dry_run: bool = False,
    model_filter: Callable[[Action, list[Lesson]], set[int] | None] | None = None,
    now: datetime | None = None,
    budget: int = BUDGET,
    failed: frozenset[str] | None = None,
    deadline: float | None = None,
) -> WarnResult:
    """The warnings for ``action`` (layers 2 and 3), recorded as shown unless ``dry_run``.
    ``failed``: the programs that failed earlier in the session (None: not known). Past
    ``deadline`` (wall-clock seconds, less the time a reply takes) nothing is recorded or
    shown: the asker looks the lessons up itself, and one recorded here would be held back
    there."""
    now = now or datetime.now(UTC)
    result = WarnResult()
    found = candidates(ctx, action, similarities)
    result.scored = score_all(found, action, now, project, failed)
    store = ctx.store("project")
    shown_before = store.warnings_of_session(session_id) if store and session_id else []
    chosen, result.held = select(
        result.scored, {w.lesson_id for w in shown_before}, len(shown_before), budget
    )
    if chosen and model_filter is not None:
        keep = model_filter(action, [s.lesson for s in chosen])
        if keep is None:
            result.layer3 = "no answer: all pass (fail-open)"
        else:
            result.layer3 = f"relevant: {sorted(keep) or 'none'}"
            dropped = [s for i, s in enumerate(chosen, 1) if i not in keep]
            result.held += [Scored(s.lesson, s.similarity, s.score, "✗ layer 3: not relevant")
                            for s in dropped]  # fmt: skip
            chosen = [s for i, s in enumerate(chosen, 1) if i in keep]
    if deadline is not None and time.time() > deadline - REPLY_MARGIN:
        return result
    result.shown = _shown(ctx, [s.lesson for s in chosen], action, session_id, tool_use_id,
                          dry_run)  # fmt: skip
    result.text = warnings_text(result.shown)
    return result


def warn_for_prompt(
    ctx: Context,
    prompt: str,
    *,
    session_id: str | None,
    dry_run: bool = False,
    deadline: float | None = None,
) -> WarnResult:
    """The failure lessons a person's request calls up ("fix the tests": what fixed the same
    check last time, ``core.lessons.requested``), recorded as shown like a tool call's
    warnings (the session's dedup and budget), with ``prompt`` as the action. Past
    ``deadline`` (wall-clock seconds, less the time a reply takes) nothing is recorded or
    shown: the asker has stopped waiting, and a warning recorded but never seen would be held
    back for the rest of the session."""
    result = WarnResult()
    store = ctx.store("project")
    query = lookup_words(prompt)
    if store is None or not query:
        return result
    found = [x for _, x, _ in store.search_lessons(query, PROMPT_CANDIDATES)]
    lessons = called_up(prompt, found, ctx.paths.name)
    if not lessons or (deadline is not None and time.time() > deadline - REPLY_MARGIN):
        return result
    shown_before = store.warnings_of_session(session_id) if session_id else []
    chosen, _ = select(
        [Scored(x, 1.0, 1.0, "called up") for x in lessons],
        {w.lesson_id for w in shown_before},
        len(shown_before),
    )
    action = Action(
        tool=PROMPT_TOOL, kind="prompt", text=clip_redacted(" ".join(prompt.split()), 200)
    )
    result.shown = _shown(ctx, [s.lesson for s in chosen], action, session_id, None, dry_run)
    result.text = request_warnings_text(result.shown)
    return result


def _shown(
    ctx: Context,
    lessons: list[Lesson],
    action: Action,
    session_id: str | None,
    tool_use_id: str | None,
    dry_run: bool,
) -> list[Lesson]:
    """The lessons recorded as shown for ``action`` in the session (for its dedup, its budget
    and the judge), each kept past the raw tier; all of them when nothing is recorded (a dry
    run, no session)."""
    store = ctx.store("project")
    if store is None or dry_run or not session_id:
        return lessons
    shown = []
    for lesson in lessons:
        if store.record_warning(session_id, lesson.id, action.tool, action.describe(),
                                tool_use_id):  # fmt: skip
            store.update_lesson(after_shown(lesson), "shown", clip_redacted(action.describe(), 200))
            shown.append(lesson)
    return shown


# The "tool" a warning called up by a request is recorded under.
PROMPT_TOOL = "prompt"
# How many lessons a request's words look up before ``called_up`` picks the most confirmed
# (words find the check's name in the lesson's command: ``test`` in ``mise run test``).
PROMPT_CANDIDATES = 200
# What a reply takes to reach the hook after the warnings are recorded (seconds).
REPLY_MARGIN = 0.005


def model_filter_for(
    ctx: Context, timeout: float = FILTER_TIMEOUT
) -> Callable[[Action, list[Lesson]], set[int] | None] | None:
    """Layer 3 when a model is configured for ``classify``, else None. It never takes more
    than ``timeout`` seconds: past that, or on any failure, it answers None (all pass)."""
    from cortexmem.services.models import routing_of

    try:
        if not routing_of(ctx).route("classify").configured:
            return None
    except CortexError:
        return None

    def ask_model(action: Action, lessons: list[Lesson]) -> set[int] | None:
        import threading

        from cortexmem.services.models import ask

        answer: list[str] = []

        def run() -> None:
            with contextlib.suppress(Exception), Context(ctx.paths, timeout=ctx.timeout) as own:
                answer.append(ask(own, relevance_question(action, lessons), use="classify").text)

        worker = threading.Thread(target=run, name="cortex-warn-filter", daemon=True)
        worker.start()
        worker.join(timeout)
        if not answer:
            return None
        return relevant_numbers(answer[0], len(lessons))

    return ask_model


def action_of(fields: object) -> Action:
    """An ``Action`` from its JSON form (a hook's request to the recall server)."""
    if not isinstance(fields, dict) or not isinstance(fields.get("tool"), str):
        raise ValueError("an action needs a tool")
    text = {k: str(fields.get(k) or "")[:2_000] for k in ("kind", "command", "path", "text")}
    return Action(tool=fields["tool"], **text)


def serve(
    ctx: Context, request: dict[str, Any], embedder: Any = None, *, use_model: bool = True
) -> dict[str, Any]:
    """The recall server's ``warn`` request: layer 2 with meaning when lessons have vectors,
    layer 3 when a model is configured and ``use_model`` (never in a hook's own process)."""
    action = in_project(action_of(request.get("action")), ctx)
    deadline = request.get("deadline")  # the asker's, in wall-clock seconds
    similarities: dict[str, float] = {}
    store = ctx.store("project")
    # Meaning helps with what an edit writes; a command is matched by its program and the
    # files it names (the gates ask for them), which words find: it skips the query's embedding.
    if embedder is not None and store is not None and action.text and not action.command:
        from cortexmem.services.lesson_vectors import nearest

        if store.lesson_embedding_state(embedder.model)[0]:
            query = " ".join(p for p in (action.path, action.text[:300]) if p)
            similarities = nearest(store, embedder, query, CANDIDATES)
    session = request.get("session_id")
    tool_use_id = request.get("tool_use_id")
    result = warn(
        ctx,
        action,
        session_id=session if isinstance(session, str) else None,
        tool_use_id=tool_use_id if isinstance(tool_use_id, str) else None,
        project=ctx.paths.name,
        similarities=similarities,
        dry_run=bool(request.get("dry_run")),
        model_filter=model_filter_for(ctx) if use_model else None,
        failed=failed_programs(request.get("failed")),
        deadline=float(deadline) if isinstance(deadline, (int, float)) else None,
    )
    return result.to_dict()


def in_project(action: Action, ctx: Context) -> Action:
    """``action`` with its file relative to the project when it lies inside: the folders above
    the project (``/Users/alice/work``) are not words of what the call is about, and would
    water the lessons' word match down."""
    if not action.path.startswith("/"):
        return action
    for base in (ctx.paths.worktree, ctx.paths.root):
        inside = relative_path(action.path, str(base))
        if inside != action.path:
            return replace(action, path=inside)
    return action


def failed_programs(commands: object) -> frozenset[str] | None:
    """The programs of the session's failed commands a hook sent (their forms: ``uv run
    pytest``), as lessons name them (``pytest``); None when it sent none (not known)."""
    if not isinstance(commands, list):
        return None
    programs = (program_of(c[:300]) for c in commands[:MAX_FAILED] if isinstance(c, str))
    return frozenset(p for p in programs if p)


# At most this many of a session's failed commands are read from a request.
MAX_FAILED = 50
