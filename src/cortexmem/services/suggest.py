"""Suggestions: gather what recurs, draft it, queue it for a person (``cortex review``).

Sources (each a function ``(ctx, config) -> drafts``, listed in ``SOURCES``):

* promoted instincts (``core.learning``): a command fix or a retry habit → CLAUDE.md; a tool
  chain → a memory file;
* recurring failures: a step that failed the same way ``recurring_failures`` (3) times or more
  (``error_resolved`` events) → CLAUDE.md;
* session lessons: each substantial session (``lesson_min_calls`` tool calls) once quiet, its
  five-section lesson → an inbox note (``core.retrospective``);
* skills: step sequences repeated in ``skill_min_tasks`` sessions → a skill (weekly at Stop);
* lessons: each learnable lesson confirmed in a second session or promoted to T1/T0 → a
  CLAUDE.md instruction, and a command the person refused → an ``ask`` permission in
  ``.claude/settings.json`` (``core.suggestions.from_lesson``).

A new source is a function added to ``SOURCES``: keys, duplicates, ranking and the review are
the same for every source.

Drafts come from templates; with ``use_model`` and a model configured for ``distill`` the
model rewrites each one's text and rationale (what is sent goes through ``for_model``: secrets
redacted, personal data stripped; what comes back is redacted again). ``NoModelConfigured``,
or any failure, keeps the template. Duplicates of a queued or decided suggestion, or of what
the target file already says, are not queued.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cortexmem.core.learning import LearningConfig
from cortexmem.core.retrospective import session_lesson, skill_candidates, skill_draft
from cortexmem.core.suggestions import (
    Draft,
    from_failure,
    from_instinct,
    from_lesson,
    recurring_failures,
    select,
    to_suggestion,
    worth_keeping,
)
from cortexmem.model import Event, Observation, Suggestion, format_time, utc_now
from cortexmem.services.context import Context
from cortexmem.store.protocols import Store

FAILURE_EVENTS = 20_000
# A source: (the project, the loop's settings, the time it runs at) → drafts.
Source = Callable[[Context, LearningConfig, datetime], list[Draft]]


def instinct_drafts(ctx: Context, config: LearningConfig, now: datetime) -> list[Draft]:
    store = ctx.store("project")
    if store is None:
        return []
    drafts = (from_instinct(i) for i in store.instincts(("promoted",)))
    return [d for d in drafts if d is not None]


def failure_drafts(ctx: Context, config: LearningConfig, now: datetime) -> list[Draft]:
    store = ctx.store("project")
    if store is None:
        return []
    events = store.recent_events(("error_resolved",), FAILURE_EVENTS)
    drafts = (from_failure(r) for r in recurring_failures(events, config.recurring_failures))
    return [d for d in drafts if d is not None]


def _sessions(ctx: Context, days: float, now: datetime) -> dict[str, list[Observation]]:
    """The observations of the last ``days`` by session, automated sessions left out."""
    store = ctx.store("project")
    if store is None:
        return {}
    since, until = format_time(now - timedelta(days=days)), format_time(now)
    automated = store.automated_sessions()
    out: dict[str, list[Observation]] = defaultdict(list)
    for o in store.observations_since(since):
        if o.session_id not in automated and o.at <= until:
            out[o.session_id].append(o)
    return out


def lesson_events(store: Store, session: str) -> list[Event]:
    """What a post-session lesson reads of its session: its errors, the files it created (a
    test it wrote fails before it passes), and the refusals with what the person said (each
    under its own cap: a long session's requests do not push its errors out)."""
    return [
        *store.recent_events(("error", "file_modified"), 1_000, session_id=session),
        *store.recent_events(("refused", "prompt", "preference"), 300, session_id=session),
    ]


def lesson_drafts(ctx: Context, config: LearningConfig, now: datetime) -> list[Draft]:
    """A lesson for each substantial session of the window that has gone quiet."""
    store = ctx.store("project")
    if store is None:
        return []
    quiet = format_time(now - timedelta(hours=config.session_quiet_hours))
    tokens = store.session_tokens()
    drafts = []
    usual_of: list[tuple[str, int]] | None = None
    for session, calls in _sessions(ctx, config.window_days, now).items():
        if len(calls) < config.lesson_min_calls or max(o.at for o in calls) > quiet:
            continue
        if usual_of is None:
            # sessions a person worked in: a subagent's transcript whose session is not
            # known (``cortex ingest`` of a folder without it) is no session to compare with
            usual_of = [(s, n) for s, n in tokens.items() if store.recent_events(("prompt",), 1, s)]
        usual = [n for s, n in usual_of if s != session]
        events = lesson_events(store, session)
        draft = session_lesson(session, calls, events, tokens.get(session, 0), usual,
                               min_calls=config.lesson_min_calls)  # fmt: skip
        if draft is not None:
            drafts.append(draft)
    return drafts


def skill_drafts(ctx: Context, config: LearningConfig, now: datetime) -> list[Draft]:
    """Skills for step sequences repeated across ``skill_min_tasks`` sessions."""
    found = skill_candidates(
        _sessions(ctx, config.skills_window_days, now), min_tasks=config.skill_min_tasks
    )
    return [skill_draft(c) for c in found]


def learned_drafts(ctx: Context, config: LearningConfig, now: datetime) -> list[Draft]:
    """Lessons worth keeping, as permanent instructions (``core.suggestions.from_lesson``)."""
    store = ctx.store("project")
    if store is None:
        return []
    return [d for x in store.iter_lessons(("active",)) if worth_keeping(x) for d in from_lesson(x)]


# Every source of suggestions: a function turning what recurs into ``Draft``s.
SOURCES: list[Source] = [
    instinct_drafts, failure_drafts, lesson_drafts, skill_drafts, learned_drafts
]  # fmt: skip
# The pass over completed sessions for skills runs weekly at Stop (``services.learn``).
WEEKLY: tuple[Source, ...] = (skill_drafts,)


def target_path(ctx: Context, target: str) -> Path:
    """A suggestion's target file, relative to the working tree (``.cortex/...`` to the
    project's data folder)."""
    if target.startswith(".cortex/"):
        return ctx.paths.data_dir / target.removeprefix(".cortex/")
    return (ctx.paths.worktree or ctx.paths.root) / target


def read_target(ctx: Context, target: str) -> str:
    try:
        return target_path(ctx, target).read_text(encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError, UnicodeDecodeError):
        return ""


@dataclass
class ProposeReport:
    drafts: int = 0
    queued: list[Suggestion] = field(default_factory=list)
    model_errors: list[str] = field(default_factory=list)
    # Drafts whose target file cannot take them now (why).
    skipped: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {
            "drafts": self.drafts,
            "queued": [s.to_dict() for s in self.queued],
            "model_errors": self.model_errors,
            "skipped": self.skipped,
        }


# What the model may reword: prose. A settings fragment is JSON, a skill a file's whole text.
REWORDED = frozenset({"claude_md", "memory", "brain_inbox", "tool"})


def redraft(draft: Draft, ctx: Context) -> Draft:
    """The model's wording of a draft (``distill`` route); raises when there is none. Only
    prose destinations (``REWORDED``) are reworded; the others are returned as they are."""
    if draft.destination not in REWORDED:
        return draft
    from cortexmem.ai import complete, routing_for
    from cortexmem.core.privacy import for_model
    from cortexmem.core.redact import redact

    mission = for_model(
        "Rewrite this proposed instruction for an AI coding assistant's project rules so it is "
        "short, concrete and actionable (one line, imperative). Keep commands exactly as "
        f"written.\nDestination: {draft.destination}\nInstruction: {draft.text}\n"
        f"Why: {draft.rationale}\nEvidence: {'; '.join(draft.evidence)}"
    )
    schema = {
        "type": "object",
        "properties": {"text": {"type": "string"}, "rationale": {"type": "string"}},
        "required": ["text", "rationale"],
    }
    answer = complete(
        mission, use="distill", schema=schema, routing=routing_for(ctx.paths.data_dir)
    )
    data = answer.data if isinstance(answer.data, dict) else {}
    text = redact(str(data.get("text") or "")).strip()
    if not text:
        return draft
    bullet = (
        text
        if text.startswith(("-", "{", "---")) or draft.destination != "claude_md"
        else f"- {text}"
    )
    return replace(
        draft,
        text=bullet,
        rationale=redact(str(data.get("rationale") or draft.rationale)).strip(),
        drafted_by=answer.model,
    )


def propose(
    ctx: Context,
    config: LearningConfig,
    *,
    use_model: bool = False,
    extra: Iterable[Draft] = (),
    sources: Sequence[Source] | None = None,
    dry_run: bool = False,
    now: datetime | None = None,
) -> ProposeReport:
    """Draft suggestions from every source and queue the new ones (see the module)."""
    report = ProposeReport()
    moment = now or datetime.now(UTC)
    chosen_sources = SOURCES if sources is None else sources
    drafts = [d for source in chosen_sources for d in source(ctx, config, moment)] + list(extra)
    report.drafts = len(drafts)
    store = ctx.store("project") if dry_run else ctx.writable("project")
    known = store.suggestion_keys() if store is not None else set()
    contents = {d.target: read_target(ctx, d.target) for d in drafts}
    chosen = select(drafts, known, contents)
    if use_model:
        from cortexmem.ai import NoModelConfigured

        for n, d in enumerate(chosen):
            try:
                chosen[n] = redraft(d, ctx)
            except NoModelConfigured:
                break
            except Exception as exc:  # the template stays
                report.model_errors.append(f"{type(exc).__name__}: {exc}"[:300])
        chosen = select(chosen, known, contents)
    stamp = utc_now()
    for d in chosen:
        try:
            report.queued.append(to_suggestion(d, contents.get(d.target, ""), stamp))
        except ValueError as exc:  # its target cannot take it (a settings file that is not
            # JSON): that suggestion waits, the others are queued
            report.skipped.append(f"{d.target}: {exc}"[:300])
    if not dry_run and store is not None and report.queued:
        store.add_suggestions(report.queued)
    return report
