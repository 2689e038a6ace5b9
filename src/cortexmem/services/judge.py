"""The judge: a verdict for each tool call that followed a warning, off the hook path.

At Stop (after the capture, with the session's observations in the store) each warning not
judged yet gets the heuristic's verdict (``core.lessons.judge``) from its call's outcome and
the errors the session showed; the verdict moves the lesson (``core.lessons.evolve``). When a
model is configured for ``judge``, the heuristic's UNCLEAR ones are left for the project's
background worker (the recall server), which asks the model in one batch. A person's
``cortex feedback`` is a stronger signal (counted twice).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cortexmem.core.lessons.evolve import verdict_applied
from cortexmem.core.lessons.facts import Action
from cortexmem.core.lessons.judge import Verdict, judge
from cortexmem.errors import CortexError
from cortexmem.model import NOISE_REASONS, Lesson
from cortexmem.services.context import Context
from cortexmem.store.protocols import LessonStore, ShownWarning, Store

MODEL_BATCH = 10
FEEDBACK = {"followed": "FOLLOWED", "ignored": "IGNORED", "noise": "IRRELEVANT"}


@dataclass
class JudgeReport:
    judged: int = 0
    left_for_model: int = 0


def _action(warning: ShownWarning) -> Action:
    command, _, _ = warning.action.partition(" — ")
    if command.startswith(f"{warning.tool}: "):
        return Action(tool=warning.tool, kind="shell", command=command[len(warning.tool) + 2 :])
    return Action(tool=warning.tool, kind="edit", path=command.removeprefix(warning.tool).strip())


def record_verdict(
    store: LessonStore,
    lesson: Lesson,
    verdict: str,
    reason: str | None,
    *,
    language: str | None = None,
    project: str | None = None,
    weight: int = 1,
    by: str = "judge",
) -> Lesson:
    """Apply one verdict to a lesson and keep the lesson with its history line."""
    changed, note = verdict_applied(
        lesson, verdict, reason, language=language, project=project, weight=weight
    )
    if changed != lesson:
        store.update_lesson(changed, verdict.lower(), f"{by}: {note}")
    return changed


def judge_session(
    ctx: Context, session_id: str | None, *, model: bool | None = None
) -> JudgeReport:
    """Judge the session's warnings that have no verdict yet (heuristically)."""
    report = JudgeReport()
    store = ctx.store("project")
    if store is None or not session_id:
        return report
    pending = [w for w in store.warnings_of_session(session_id) if w.verdict is None]
    if not pending:
        return report
    if model is None:
        model = _model_configured(ctx)
    outcomes = {o.tool_use_id: o.ok for o in store.iter_observations(session_id) if o.tool_use_id}
    errors = [e.content.split(" failed: ", 1)[-1]
              for e in store.recent_events(("error",), 200, session_id)]  # fmt: skip
    for warning in pending:
        lesson = store.get_lesson(warning.lesson_id)
        if lesson is None:
            continue
        action = _action(warning)
        ok = outcomes.get(warning.tool_use_id) if warning.tool_use_id else None
        verdict = judge(lesson, action, ok, errors)
        # a warning a request called up has no call whose outcome a model could read: the
        # heuristic's abstention is its verdict
        if verdict.verdict == "UNCLEAR" and model and warning.tool_use_id:
            outcome = "unknown" if ok is None else "succeeded" if ok else "failed"
            store.set_warning_outcome(session_id, warning.tool_use_id or "", outcome)
            report.left_for_model += 1
            continue
        _apply(store, warning, lesson, verdict, action, ctx.paths.name)
        report.judged += 1
    return report


def _apply(
    store: Store, warning: ShownWarning, lesson: Lesson, verdict: Verdict, action: Action,
    project: str | None,
) -> None:  # fmt: skip
    store.judge_warning(warning.id, verdict.verdict, verdict.reason)
    record_verdict(store, lesson, verdict.verdict, verdict.reason, language=action.language,
                   project=project)  # fmt: skip


def _model_configured(ctx: Context) -> bool:
    from cortexmem.services.models import routing_of

    try:
        return routing_of(ctx).route("judge").configured
    except CortexError:
        return False


def judge_after_capture(ctx: Context, session_id: str | None, log: Callable[[str], None]) -> None:
    try:
        report = judge_session(ctx, session_id)
    except Exception as exc:  # the judge must never cost a capture
        log(f"judge: failed: {type(exc).__name__}: {exc}")
        return
    if report.judged or report.left_for_model:
        log(f"judge: {report.judged} verdicts, {report.left_for_model} left for the model")


JUDGE_SCHEMA = {
    "type": "object",
    "properties": {
        "verdicts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "n": {"type": "integer"},
                    "verdict": {
                        "type": "string",
                        "enum": ["FOLLOWED", "IGNORED", "IRRELEVANT", "UNCLEAR"],
                    },
                    "reason": {"type": "string"},
                },
                "required": ["n", "verdict"],
            },
        }
    },
    "required": ["verdicts"],
}


def due(ctx: Context) -> bool:
    """Whether the background worker has warnings for the model to judge (the heuristic left
    them UNCLEAR at a Stop, with their outcome) and a model is configured for ``judge``."""
    store = ctx.store("project")
    if store is None or not any(w.outcome for w in store.unjudged_warnings(MODEL_BATCH * 5)):
        return False
    return _model_configured(ctx)


def judge_with_model(ctx: Context, limit: int = MODEL_BATCH) -> int:
    """The background worker's part: the warnings the heuristic left UNCLEAR, judged by the
    model in one call (``use="judge"``); returns how many got a verdict. Raises what
    ``services.models.ask`` raises (NoModelConfigured, NotAllowed, ProviderError)."""
    from cortexmem.services.models import ask

    store = ctx.writable("project")
    pending = [w for w in store.unjudged_warnings(limit * 5) if w.outcome][:limit]
    if not pending:
        return 0
    lessons = {w.lesson_id: store.get_lesson(w.lesson_id) for w in pending}
    lines = []
    for n, w in enumerate(pending, 1):
        lesson = lessons[w.lesson_id]
        lines.append(
            f"{n}. WARNING: {lesson.text[:300] if lesson else '?'}\n   CALL: {w.action[:300]}\n"
            f"   OUTCOME: {w.outcome or 'unknown'}"
        )
    mission = (
        "Each item is a warning shown to a coding assistant before a tool call, and the call it "
        "then made. For each, say whether the call FOLLOWED the warning, IGNORED it, the "
        "warning was IRRELEVANT to the call (reason: wrong_language, wrong_repo, wrong_task or "
        "stale_rule), or UNCLEAR.\n\n" + "\n".join(lines)
    )
    answer = ask(ctx, mission, use="judge", schema=JUDGE_SCHEMA)
    judged = 0
    for item in (answer.data or {}).get("verdicts", []):
        n = item.get("n")
        if not isinstance(n, int) or not 1 <= n <= len(pending):
            continue
        warning = pending[n - 1]
        lesson = lessons[warning.lesson_id]
        verdict = str(item.get("verdict"))
        reason = item.get("reason") if item.get("reason") in NOISE_REASONS else None
        if lesson is None or (verdict not in FEEDBACK.values() and verdict != "UNCLEAR"):
            continue
        _apply(store, warning, lesson, Verdict(verdict, reason), _action(warning), ctx.paths.name)
        judged += 1
    return judged


def feedback(
    ctx: Context, lesson_id: str, signal: str, reason: str | None = None,
    *, language: str | None = None,
) -> Lesson:  # fmt: skip
    """A person's verdict (``followed``, ``ignored``, ``noise`` with a reason): counted twice."""
    store = ctx.writable("project")
    lesson = store.get_lesson(lesson_id)
    if lesson is None:
        from cortexmem.errors import NotFound

        raise NotFound(f"no lesson {lesson_id}")
    return record_verdict(store, lesson, FEEDBACK[signal], reason, language=language,
                          project=ctx.paths.name, weight=2, by="feedback")  # fmt: skip
