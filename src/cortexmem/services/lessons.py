"""Lessons: learned from a session's events after its capture, confirmed when learned again,
searchable the moment they are made (full text at once; the recall server embeds them within
seconds, ``cortex reindex`` with the memories), recalled with the seeds' importance × recency
re-rank. With a model configured, the recall server's worker puts the newest ones in better
words from their evidence (``draft_with_model``).

Learning is idempotent: a lesson's evidence names the events it came from, so a pass over the
same events again changes nothing (``core.lessons.build.confirm``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from cortexmem.core.lessons.build import KINDS, confirm, lessons_from_events
from cortexmem.core.lessons.evolve import contradicts, supersede
from cortexmem.core.lessons.render import rules_file
from cortexmem.core.lessons.score import recall_score
from cortexmem.model import Event, Lesson, format_time, utc_now
from cortexmem.services.context import Context
from cortexmem.store.protocols import LessonStore, Store

# How many of a session's events one pass reads (the newest; a session is read at every Stop).
SESSION_EVENTS = 5_000
SCOPES_OF_RECALL: dict[str, tuple[str, ...]] = {
    "lessons": ("failure", "victory", "correction"),
    "scars": ("failure", "correction"),
    "victories": ("victory",),
}
# Recall over-fetches, then re-ranks by importance × recency.
OVER_FETCH = 4


@dataclass
class LearnReport:
    added: list[Lesson] = field(default_factory=list)
    confirmed: list[Lesson] = field(default_factory=list)
    superseded: list[tuple[str, str]] = field(default_factory=list)

    def __str__(self) -> str:
        return f"{len(self.added)} lessons learned, {len(self.confirmed)} confirmed" + (
            f", {len(self.superseded)} superseded" if self.superseded else ""
        )


def apply(store: LessonStore, lessons: Iterable[Lesson]) -> LearnReport:
    """Keep ``lessons``: new keys are added, known ones confirmed (idempotently); a newer
    lesson that contradicts an older confirmed one supersedes it."""
    report = LearnReport()
    for lesson in lessons:
        kept, added = store.add_lesson(lesson, "learned", f"from {lesson.source} evidence")
        if added:
            report.added.append(kept)
            continue
        merged = confirm(kept, lesson)
        if merged is None:
            continue
        what = "confirmed" if merged.confirmed > kept.confirmed else "more evidence"
        store.update_lesson(merged, what, f"{len(merged.sessions)} sessions")
        report.confirmed.append(merged)
    for new in report.added + report.confirmed:
        for old in _rivals(store, new):
            if contradicts(new, old):
                older, edge = supersede(old, new)
                store.update_lesson(older, "superseded", f"by {new.id}")
                store.add_lesson_edge(new.id, old.id, edge)
                report.superseded.append((old.id, new.id))
    return report


def _rivals(store: LessonStore, lesson: Lesson) -> list[Lesson]:
    """Older active lessons close in words to ``lesson`` (candidates it may contradict)."""
    if lesson.kind != "correction":
        return []
    hits = store.search_lessons(lesson.text, 10)
    return [
        found
        for _, found, _ in hits
        if found.id != lesson.id and found.status == "active" and found.kind == lesson.kind
    ]


def session_events(store: Store, session_id: str) -> list[Event]:
    """A session's events of the kinds lessons come from, oldest first."""
    return list(reversed(store.recent_events(KINDS, SESSION_EVENTS, session_id)))


def learn_session(ctx: Context, session_id: str | None) -> LearnReport:
    """What the session's captured events teach, kept in the project store."""
    if not session_id:
        return LearnReport()
    store = ctx.writable("project")
    return apply(store, lessons_from_events(session_events(store, session_id)))


def learn_all(ctx: Context) -> LearnReport:
    """Learn from every session in the project store (a backfill: ``cortex lessons learn``)."""
    store = ctx.writable("project")
    by_session: dict[str | None, list[Event]] = {}
    for event in store.iter_events():
        if event.kind in KINDS:
            by_session.setdefault(event.provenance.session_id, []).append(event)
    total = LearnReport()
    ordered = sorted(by_session.items(), key=lambda kv: kv[1][0].created_at)
    for _, events in ordered:
        part = apply(store, lessons_from_events(events))
        total.added += part.added
        total.confirmed += part.confirmed
        total.superseded += part.superseded
    return total


def after_capture(
    ctx: Context,
    session_id: str | None,
    log: Callable[[str], None],
    write: Callable[[str], bool] | None = None,
) -> None:
    """After a session's capture: learn from it, judge its warnings, and bring the always-loaded
    lessons file up to date. Never raises; says what it did in the log."""
    from cortexmem.services.judge import judge_after_capture

    try:
        report = learn_session(ctx, session_id)
    except Exception as exc:  # lessons must never cost a capture
        log(f"lessons: not learned: {type(exc).__name__}: {exc}")
        return
    if report.added or report.confirmed or report.superseded:
        log(f"lessons: {report}")
    judge_after_capture(ctx, session_id, log)
    try:
        evolved = evolve(ctx)
        if evolved.drafted or evolved.pruned:
            log(f"lessons: {evolved}")
    except Exception as exc:
        log(f"lessons: evolution failed: {type(exc).__name__}: {exc}")
    if write is not None:
        try:
            if publish(ctx, write):
                log("lessons: rules file rewritten")
        except Exception as exc:
            log(f"lessons: rules file not written: {type(exc).__name__}: {exc}")


def publish(ctx: Context, write: Callable[[str], bool]) -> bool:
    """Write the always-loaded lessons (T0 then T1, ~1,000 tokens); True when it changed."""
    store = ctx.store("project")
    if store is None:
        return False
    return write(rules_file(list(store.iter_lessons(("active",), tiers=("T0", "T1")))))


# ----------------------------------------------------------------- recall


@dataclass(frozen=True)
class RecalledLesson:
    lesson: Lesson
    score: float
    similarity: float

    def to_dict(self) -> dict[str, Any]:
        return {"score": round(self.score, 4), "similarity": round(self.similarity, 4),
                "lesson": self.lesson.to_dict()}  # fmt: skip


def recall_lessons(
    ctx: Context,
    query: str,
    *,
    scope: str = "lessons",
    limit: int = 10,
    count_access: bool = True,
    similarities: dict[str, float] | None = None,
) -> list[RecalledLesson]:
    """The lessons of ``scope`` (``lessons``, ``scars``, ``victories``) best matching
    ``query``: over-fetched by meaning (``similarities``: lesson id → cosine, when the caller
    has them) and words, then re-ranked by similarity × (1 + importance/10) × exp(−age/365).
    Every lesson served has its recall counter bumped (the anti-forgetting bump)."""
    kinds = SCOPES_OF_RECALL[scope]
    store = ctx.store("project")
    if store is None:
        return []
    hits = store.search_lessons(query, limit * OVER_FETCH)
    best = max((score for *_, score in hits), default=0.0) or 1.0
    by_id: dict[str, tuple[Lesson, float]] = {}
    for _, lesson, score in hits:
        by_id[lesson.id] = (lesson, score / best)
    for lesson_id, cosine in (similarities or {}).items():
        found = store.get_lesson(lesson_id)
        if found is not None:
            by_id[lesson_id] = (found, max(cosine, by_id.get(lesson_id, (found, 0.0))[1]))
    now = datetime.now(UTC)
    ranked = sorted(
        (
            RecalledLesson(lesson, recall_score(similarity, lesson, now), similarity)
            for lesson, similarity in by_id.values()
            if lesson.kind in kinds and lesson.status in ("active", "superseded")
        ),
        key=lambda r: (-r.score, r.lesson.id),
    )[:limit]
    if count_access and ranked:
        when = utc_now()
        for r in ranked:
            bumped = r.lesson.with_changes(
                recalled=r.lesson.recalled + 1, last_recalled_at=when, updated_at=when
            )
            store.update_lesson(bumped, "recalled")
    return ranked


# ----------------------------------------------------------------- evolution


PRINCIPLE_SCHEMA = {
    "type": "object",
    "properties": {"principle": {"type": "string"}},
    "required": ["principle"],
}


@dataclass
class EvolveReport:
    drafted: list[Lesson] = field(default_factory=list)
    pruned: list[Lesson] = field(default_factory=list)

    def __str__(self) -> str:
        return f"{len(self.drafted)} principles drafted, {len(self.pruned)} raw lessons pruned"


def evolve(ctx: Context, *, model: bool = False, now: datetime | None = None) -> EvolveReport:
    """Draft a T0 principle for each cluster of similar T1 lessons (pending a person's yes:
    ``review``), by the model when ``model`` and one is configured, else from the cluster; and
    prune raw lessons nothing ever used past their 30 days."""
    from cortexmem.core.lessons.evolve import RAW_TTL_DAYS, clusters, draft_principle, expired
    from cortexmem.core.lessons.score import days_between

    store = ctx.writable("project")
    report = EvolveReport()
    behavioural = list(store.iter_lessons(("active",), tiers=("T1",)))
    edges = store.lesson_edges(x.id for x in behavioural)
    generalised = {target for _, target, kind in edges if kind == "generalizes"}
    candidates = [x for x in behavioural if x.id not in generalised]
    for group in clusters(candidates):
        text = _model_principle(ctx, group) if model else None
        principle, added = store.add_lesson(draft_principle(group, text), "drafted",
                                            f"from {len(group)} lessons")  # fmt: skip
        if added:
            for member in group:
                store.add_lesson_edge(principle.id, member.id, "generalizes")
            report.drafted.append(principle)
    moment = now or datetime.now(UTC)
    cutoff = format_time(moment - timedelta(days=RAW_TTL_DAYS))
    for x in store.iter_lessons(("active",), tiers=("T3",), learned_before=cutoff):
        if expired(x, days_between(x.created_at, moment)):
            store.update_lesson(x.with_changes(status="archived"), "pruned", "raw, never used")
            report.pruned.append(x)
    return report


def _model_principle(ctx: Context, group: list[Lesson]) -> str | None:
    """The model's principle for ``group`` ("when X class of failure appears, do Y because
    Z"), or None (no model, or it failed: the offline draft is used)."""
    from cortexmem.services.models import ask

    mission = (
        "These lessons were learned from separate coding sessions. Write ONE principle that "
        "generalises them, in the form: when <class of failure> appears, do <what> because "
        "<why>. At most 40 words.\n\n" + "\n".join(f"- {x.text[:300]}" for x in group)
    )
    try:
        answer = ask(ctx, mission, use="distill", schema=PRINCIPLE_SCHEMA)
    except Exception:  # no model, over budget, provider down: the offline draft
        return None
    text = (answer.data or {}).get("principle")
    return text.strip() if isinstance(text, str) and text.strip() else None


# Lessons drawn offline that the model may put in better words (once each).
OFFLINE_SOURCES = frozenset({"structural", "keyword", "tag"})
DRAFT_BATCH = 8
DRAFT_WORDS = 60
_EVIDENCE_CHARS = 600
DRAFT_SCHEMA = {
    "type": "object",
    "properties": {
        "lessons": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"n": {"type": "integer"}, "lesson": {"type": "string"}},
                "required": ["n", "lesson"],
            },
        }
    },
    "required": ["lessons"],
}


def _undrafted(store: LessonStore, limit: int) -> list[Lesson]:
    """The newest active lessons drawn offline that no model was asked about yet. Not a retry
    loop: its advice is a template with nothing to put better, and its words say what it is
    (``core.lessons.build.is_retry_loop``: the warnings gate it on them)."""
    from cortexmem.core.lessons.build import is_retry_loop

    found = [
        x
        for x in store.iter_lessons(("active",))
        if x.source in OFFLINE_SOURCES and x.model_asked_at is None and not is_retry_loop(x)
    ]
    return found[-limit:] if limit > 0 else []


def drafts_waiting(ctx: Context) -> int:
    """How many lessons drawn offline no model was asked about yet."""
    store = ctx.store("project")
    return len(_undrafted(store, 1 << 30)) if store is not None else 0


def drafts_due(ctx: Context) -> bool:
    """Whether the background worker has lessons for the model to draft and a model is
    configured for ``distill``."""
    from cortexmem.errors import CortexError
    from cortexmem.services.models import routing_of

    store = ctx.store("project")
    if store is None:
        return False
    try:  # the route first: without a model (the default) no lesson is read at all
        if not routing_of(ctx).route("distill").configured:
            return False
    except CortexError:
        return False
    return bool(_undrafted(store, 1))


def draft_with_model(ctx: Context, limit: int = DRAFT_BATCH) -> int:
    """The newest lessons drawn offline, put by the model as "when X, do Y, because Z" from
    their evidence (the lesson and the passages it came from), in one call (``use="distill"``).
    A draft that names a command, path or identifier the evidence does not is refused (the
    offline text stays); one the model finds teaches nothing reusable is no longer learnable.
    Each lesson is asked about once (``model_asked_at``), answered or not; a rewritten one's
    ``source`` becomes ``model``. Returns how many were rewritten. Raises what
    ``services.models.ask`` raises (NoModelConfigured, NotAllowed, ProviderError)."""
    from cortexmem.core.lessons.build import invented
    from cortexmem.core.redact import redact
    from cortexmem.services.models import ask

    store = ctx.writable("project")
    batch = _undrafted(store, limit)
    if not batch:
        return 0
    evidence = [_evidence(store, x) for x in batch]
    items = "\n".join(f"{n}. LESSON: {x.text[:400]}\n   EVIDENCE: {e}"
                      for n, (x, e) in enumerate(zip(batch, evidence, strict=True), 1))  # fmt: skip
    mission = (
        "Each item is a lesson a coding assistant learned from one of its sessions (a failure "
        "and what fixed it, a person's correction, a gotcha, a success), with the evidence it "
        "was drawn from. Rewrite each as ONE instruction for a future session on this project: "
        f"'When <situation>, do <action>, because <reason>.', at most {DRAFT_WORDS} words. Keep "
        "commands, paths and identifiers exactly as the evidence writes them and add none it "
        "does not name. When the evidence teaches nothing that would help another session, "
        "answer an empty lesson.\n\n" + items
    )
    answer = ask(ctx, mission, use="distill", schema=DRAFT_SCHEMA)
    answered = answer.data.get("lessons") if isinstance(answer.data, dict) else None
    if not isinstance(answered, list):
        return 0  # no answer in the shape asked for: nothing is marked, asked again next time
    drafts: dict[int, str] = {}
    for item in answered:
        n, text = (item.get("n"), item.get("lesson")) if isinstance(item, dict) else (None, None)
        if isinstance(n, int) and 1 <= n <= len(batch) and isinstance(text, str):
            drafts[n] = redact(" ".join(text.split()))
    rewritten = 0
    for n, (asked_about, seen) in enumerate(zip(batch, evidence, strict=True), 1):
        # The model took seconds: a capture, a warning or evolution may have changed the
        # lesson meanwhile. Its latest state is written, and a text or status that changed
        # since it was asked about is left alone (asked again next time).
        lesson = store.get_lesson(asked_about.id)
        if lesson is None or (lesson.text, lesson.status) != (asked_about.text, asked_about.status):
            continue
        now = utc_now()
        asked = lesson.with_changes(model_asked_at=now, updated_at=now)  # each one asked once
        draft = drafts.get(n)
        if draft is None:  # not answered: the offline text stays
            store.update_lesson(asked, "model: no answer")
        elif not draft:
            store.update_lesson(asked.with_changes(learnable=False), "model: nothing reusable")
        elif len(draft.split()) > DRAFT_WORDS * 1.5 or invented(draft, f"{lesson.text} {seen}"):
            store.update_lesson(asked, "model draft refused", draft[:300])
        else:
            store.update_lesson(asked.with_changes(text=draft, source="model"),
                                "drafted by the model", lesson.text[:300])  # fmt: skip
            rewritten += 1
    return rewritten


def _evidence(store: Store, lesson: Lesson) -> str:
    """The passages a lesson was drawn from, clipped (what the model may draw on)."""
    texts = []
    for episode_id in lesson.episodes[:3]:
        episode = store.get_episode(episode_id)
        if episode is not None:
            texts.append(" ".join(episode.text.split()))
    return " … ".join(texts)[:_EVIDENCE_CHARS] or "(the lesson itself)"


def pending(ctx: Context) -> list[Lesson]:
    """Principles drafted and waiting for a person's yes or no."""
    store = ctx.store("project")
    return [] if store is None else list(store.iter_lessons(("pending",)))


def review(ctx: Context, lesson_id: str, approve: bool) -> tuple[Lesson, list[Lesson]]:
    """A person's answer on a drafted principle: approved, it becomes active and retires the
    lessons it generalises (memory shrinks as capability grows); refused, it is archived."""
    from cortexmem.core.lessons.evolve import retired_by_principle
    from cortexmem.errors import CortexError, NotFound

    store = ctx.writable("project")
    principle = store.get_lesson(lesson_id)
    if principle is None:
        raise NotFound(f"no lesson {lesson_id}")
    if principle.status != "pending":
        raise CortexError(f"lesson {principle.id} is {principle.status}, not waiting for review")
    if not approve:
        store.update_lesson(principle.with_changes(status="archived"), "refused", "by a person")
        return principle.with_changes(status="archived"), []
    active = principle.with_changes(status="active", updated_at=utc_now())
    store.update_lesson(active, "approved", "by a person")
    retired = []
    for source, target, kind in store.lesson_edges([principle.id]):
        if source == principle.id and kind == "generalizes":
            member = store.get_lesson(target)
            if member is not None and member.status == "active":
                store.update_lesson(retired_by_principle(member, principle.id), "retired",
                                    f"generalised by principle {principle.id}")  # fmt: skip
                retired.append(member)
    return active, retired


def timeline(ctx: Context, lesson_id: str) -> list[dict[str, str]]:
    """How a piece of knowledge evolved: the history of the lesson and of the lessons linked
    to it (what it supersedes or is superseded by, generalises or is generalised by), in time
    order."""
    from cortexmem.errors import NotFound

    store = ctx.require("project")
    lesson = store.get_lesson(lesson_id)
    if lesson is None:
        raise NotFound(f"no lesson {lesson_id}")
    linked = {lesson.id: "this lesson"}
    for source, target, kind in store.lesson_edges([lesson.id]):
        other = target if source == lesson.id else source
        linked[other] = f"{kind} (this → it)" if source == lesson.id else f"{kind} (it → this)"
    if lesson.superseded_by:
        linked.setdefault(lesson.superseded_by, "supersedes this")
    rows = []
    for other, relation in linked.items():
        for at, what, detail in store.lesson_history(other):
            rows.append({"at": at, "lesson": other, "relation": relation, "what": what,
                         "detail": detail})  # fmt: skip
    return sorted(rows, key=lambda r: (r["at"], r["lesson"]))
