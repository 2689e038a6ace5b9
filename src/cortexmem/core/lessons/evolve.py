"""Evolution, pure: the judge's verdicts and a person's feedback move a lesson between tiers.

* T3 (just learned) → T2 once it is kept (confirmed in a second session, or shown once);
* T2 → T1 after ``PROMOTE_AFTER`` confirmed follows;
* a cluster of ``CLUSTER`` similar T1 lessons → a drafted T0 principle (status ``pending``
  until a person approves it); an approved principle retires the lessons it generalises;
* ``DEMOTE_AFTER`` ignored or noise verdicts demote one tier, then archive;
* noise reasons narrow the scope (``wrong_language``, ``wrong_repo``) or count toward
  supersession (``wrong_task``, ``stale_rule``);
* a newer confirmed lesson that contradicts an older one supersedes it (kept, ranked lower).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from cortexmem.core.lessons.facts import words_of
from cortexmem.model import Lesson, Trigger, content_hash, utc_now

PROMOTE_AFTER: Final = 3
DEMOTE_AFTER: Final = 3
CLUSTER: Final = 3
CLUSTER_OVERLAP: Final = 0.3
VERDICTS: Final = ("FOLLOWED", "IGNORED", "IRRELEVANT", "UNCLEAR")
_NEGATION: Final = re.compile(r"\b(?:not|don'?t|do not|never|no|avoid|stop|instead of)\b", re.I)
_DOWN: Final = {"T0": "T1", "T1": "T2", "T2": "T3"}


def _bump(noise: tuple[tuple[str, int], ...], reason: str) -> tuple[tuple[str, int], ...]:
    counts = dict(noise)
    counts[reason] = counts.get(reason, 0) + 1
    return tuple(sorted(counts.items()))


def after_shown(lesson: Lesson) -> Lesson:
    """A lesson shown as a warning: counted, and kept past the raw tier."""
    return lesson.with_changes(
        shown=lesson.shown + 1, tier="T2" if lesson.tier == "T3" else lesson.tier,
        updated_at=utc_now(),
    )  # fmt: skip


def verdict_applied(
    lesson: Lesson,
    verdict: str,
    reason: str | None = None,
    *,
    language: str | None = None,
    project: str | None = None,
    weight: int = 1,
) -> tuple[Lesson, str]:
    """``lesson`` after one verdict (``weight`` 2 for a person's feedback: a stronger signal),
    and what happened to it, for its history."""
    now = utc_now()
    if verdict == "FOLLOWED":
        followed = lesson.followed + weight
        changed = lesson.with_changes(followed=followed, last_confirmed_at=now, updated_at=now)
        if lesson.tier in ("T3", "T2") and followed >= PROMOTE_AFTER:
            return changed.with_changes(tier="T1"), f"followed ×{followed}: promoted to T1"
        return changed, f"followed ×{followed}"
    if verdict == "IGNORED":
        changed = lesson.with_changes(ignored=lesson.ignored + weight, updated_at=now)
        return _maybe_demoted(lesson, changed, f"ignored ×{changed.ignored}")
    if verdict == "IRRELEVANT":
        changed = lesson.with_changes(irrelevant=lesson.irrelevant + weight, updated_at=now)
        note = f"irrelevant ×{changed.irrelevant}"
        if reason == "wrong_language" and language:
            excluded = tuple(sorted({*lesson.lang_exclude, language}))
            return changed.with_changes(lang_exclude=excluded), f"{note}: not for {language}"
        if reason == "wrong_repo" and project:
            excluded = tuple(sorted({*lesson.project_exclude, project}))
            return changed.with_changes(project_exclude=excluded), f"{note}: not for {project}"
        if reason in ("wrong_task", "stale_rule"):
            changed = changed.with_changes(noise=_bump(lesson.noise, reason))
            if reason == "stale_rule" and changed.noise_count("stale_rule") >= DEMOTE_AFTER:
                return changed.with_changes(status="superseded"), f"{note}: stale, superseded"
            return _maybe_demoted(lesson, changed, f"{note} ({reason})")
        return changed, note
    return lesson, "unclear"


def _strikes(lesson: Lesson) -> int:
    return lesson.ignored + lesson.noise_count()


def _maybe_demoted(before: Lesson, lesson: Lesson, note: str) -> tuple[Lesson, str]:
    """Every ``DEMOTE_AFTER`` strikes (ignored or noise) a lesson goes down a tier; from T2 or
    T3 it is archived."""
    if _strikes(lesson) // DEMOTE_AFTER <= _strikes(before) // DEMOTE_AFTER:
        return lesson, note
    if lesson.tier in ("T3", "T2"):
        return lesson.with_changes(status="archived"), f"{note}: archived"
    return lesson.with_changes(tier=_DOWN[lesson.tier]), f"{note}: demoted to {_DOWN[lesson.tier]}"


def similar(a: Lesson, b: Lesson) -> float:
    """Word overlap of two lessons (Jaccard), with their triggers' programs and kinds."""
    wa = (words_of(a.text) | {a.trigger.program or "", *a.trigger.file_kinds}) - {""}
    wb = (words_of(b.text) | {b.trigger.program or "", *b.trigger.file_kinds}) - {""}
    return len(wa & wb) / len(wa | wb) if wa and wb else 0.0


def clusters(lessons: Sequence[Lesson], size: int = CLUSTER) -> list[list[Lesson]]:
    """Groups of at least ``size`` active T1 lessons of one kind alike enough to generalise
    (greedy, oldest first; each lesson in one group at most)."""
    pool = [x for x in lessons if x.tier == "T1" and x.status == "active"]
    used: set[str] = set()
    out = []
    for seed in pool:
        if seed.id in used:
            continue
        group = [seed] + [
            x for x in pool
            if x.id != seed.id and x.id not in used and x.kind == seed.kind
            and similar(seed, x) >= CLUSTER_OVERLAP
        ]  # fmt: skip
        if len(group) >= size:
            out.append(group)
            used.update(x.id for x in group)
    return out


def draft_principle(group: Sequence[Lesson], text: str | None = None) -> Lesson:
    """A T0 principle generalising ``group``, pending a person's approval; ``text`` is the
    model's draft when one was asked, else it is drawn from what the group shares."""
    if text is None:
        shared = set.intersection(*(set(words_of(x.text)) for x in group)) - {"when", "the", "with"}
        about = " ".join(sorted(shared)[:8]) or group[0].trigger.program or "this"
        text = (
            f"When a failure like these appears ({about}), do what fixed them: "
            + "; ".join(x.text[:120] for x in group[:3])
            + f" — because it happened {sum(x.confirmed for x in group)} times"
        )
    programs = {x.trigger.program for x in group}
    languages = {x.trigger.language for x in group}
    return Lesson(
        text=text,
        kind=group[0].kind,
        key=content_hash("principle", *sorted(x.id for x in group)),
        trigger=Trigger(
            program=programs.pop() if len(programs) == 1 else None,
            language=languages.pop() if len(languages) == 1 else None,
        ),
        importance=max(x.importance for x in group),
        tier="T0",
        status="pending",
        source="principle",
        events=tuple(e for x in group for e in x.events)[:50],
        sessions=tuple(dict.fromkeys(s for x in group for s in x.sessions)),
        confirmed=sum(x.confirmed for x in group),
    )


def retired_by_principle(lesson: Lesson, principle_id: str) -> Lesson:
    """A lesson a principle now generalises: superseded by it (memory shrinks as capability
    grows)."""
    return lesson.with_changes(
        status="superseded", superseded_by=principle_id, updated_at=utc_now()
    )


def contradicts(newer: Lesson, older: Lesson) -> bool:
    """Whether ``newer`` says the opposite of ``older`` about the same thing: the same kind,
    mostly the same words, one negated and the other not. Only a confirmed newer lesson (two
    sessions or more) may contradict: one remark does not overturn a lesson."""
    if newer.kind != older.kind or newer.id == older.id or newer.confirmed < 2:
        return False
    if (older.last_confirmed_at or older.created_at) > (
        newer.last_confirmed_at or newer.created_at
    ):
        return False
    if similar(newer, older) < 0.4:
        return False
    return bool(_NEGATION.search(newer.text)) != bool(_NEGATION.search(older.text))


def supersede(older: Lesson, newer: Lesson) -> tuple[Lesson, str]:
    """``older`` superseded by ``newer`` (kept, ranked lower) and the edge's type."""
    return older.with_changes(status="superseded", superseded_by=newer.id, updated_at=utc_now()), (
        "supersedes"
    )


RAW_TTL_DAYS: Final = 30


def expired(lesson: Lesson, age_days: float) -> bool:
    """A raw lesson (T3) past its 30 days that nothing ever used: never confirmed again, never
    shown, never recalled. Only these are pruned (archived); anything served is kept."""
    return (
        lesson.tier == "T3"
        and lesson.status == "active"
        and age_days > RAW_TTL_DAYS
        and lesson.confirmed <= 1
        and lesson.shown == 0
        and lesson.recalled == 0
    )
