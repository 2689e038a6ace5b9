"""Layer 2 of the warnings, and recall's re-rank: every score and gate a pure function.

A candidate lesson meets an action only through the gates (``gate``: its status, the language
and framework gates, the project and language exclusions, what its trigger names); then it is
scored by similarity, confidence (aged toward neutral without recent signals), recency, hit
frequency, importance and domain match, with the superseded and noise penalties; the warnings
shown are the best above ``WARN_THRESHOLD``, never one already shown in the session, at most
``BUDGET`` a session and ``PER_CALL`` a call.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from cortexmem.core.lessons.build import is_retry_loop
from cortexmem.core.lessons.facts import (
    Action,
    domain_of,
    framework_of,
    programs_of,
    targets,
    targets_meet,
)
from cortexmem.model import Lesson, parse_time

BUDGET: Final = 8
PER_CALL: Final = 2
WARN_THRESHOLD: Final = 0.35
# The similarity a lesson must reach by meaning or words before it is scored at all.
MIN_SIMILARITY: Final = 0.3
RECENCY_DAYS: Final = 365.0
CONFIDENCE_AGING_DAYS: Final = 90.0
SUPERSEDED_PENALTY: Final = 0.3
DOMAIN_MISMATCH: Final = 0.6
NOISE_LIMIT: Final = 3
# The kinds that warn (a victory is recalled, not warned about).
WARNING_KINDS: Final = frozenset({"failure", "correction"})
# Languages that are one another's: a gate lets them meet.
SAME_LANGUAGE: Final = {"javascript": "typescript", "typescript": "javascript"}


def days_between(earlier: str | None, now: datetime) -> float:
    if not earlier:
        return 0.0
    return max(0.0, (now - parse_time(earlier)).total_seconds() / 86400.0)


def recency(lesson: Lesson, now: datetime) -> float:
    """exp(−age/365), the age counted from the last confirmation."""
    return math.exp(
        -days_between(lesson.last_confirmed_at or lesson.created_at, now) / RECENCY_DAYS
    )


def recall_score(similarity: float, lesson: Lesson, now: datetime) -> float:
    """The seeds' scar re-rank: similarity × (1 + importance/10) × exp(−age_days/365);
    a superseded lesson ranks lower."""
    score = similarity * (1 + lesson.importance / 10) * recency(lesson, now)
    return score * (SUPERSEDED_PENALTY if lesson.status == "superseded" else 1.0)


def confidence(lesson: Lesson, now: datetime) -> float:
    """How far the judge's signals trust the lesson, 0..1 (Laplace: 0.5 with none), aged
    toward neutral when no signal came for a while."""
    signals = lesson.followed + lesson.ignored + lesson.irrelevant
    raw = (lesson.followed + 1) / (signals + 2)
    age = days_between(lesson.last_confirmed_at or lesson.updated_at, now)
    return 0.5 + (raw - 0.5) * math.exp(-age / CONFIDENCE_AGING_DAYS)


def frequency(lesson: Lesson) -> float:
    """Hit frequency: a lesson confirmed in more sessions weighs more (slowly)."""
    return 1.0 + 0.25 * math.log1p(max(0, lesson.confirmed - 1) + lesson.followed)


def _languages_meet(a: str, b: str) -> bool:
    return a == b or SAME_LANGUAGE.get(a) == b


def gate(
    lesson: Lesson,
    action: Action,
    project: str | None = None,
    failed: frozenset[str] | None = None,
) -> str | None:
    """Why ``lesson`` may not warn about ``action`` (a short reason), or None when it may.

    ``failed``: the programs whose runs failed earlier in the session (None: not known)."""
    if lesson.status != "active":
        return f"status {lesson.status}"
    if lesson.kind not in WARNING_KINDS:
        return f"a {lesson.kind} does not warn"
    if lesson.noise_count() >= NOISE_LIMIT:
        return "noise"
    language = action.language
    t = lesson.trigger
    if language and t.language and not _languages_meet(language, t.language):
        return f"language gate: {language} meets no {t.language} lesson"
    if language and language in lesson.lang_exclude:
        return f"excluded for {language}"
    if project and project in lesson.project_exclude:
        return "excluded for this project"
    framework = framework_of(action.words)
    if framework and t.framework and framework != t.framework:
        return f"framework gate: {framework} is not {t.framework}"
    # A failure fixed by changing files is about those files: it meets a call that names one
    # (a run of the program on it, an edit of it), not every run of the program. An edit of one
    # is about that failure once the failure is back (the program failed in this session): then
    # the edit is likely the fix, and the lesson says where it was last time; before, the file
    # alone is a coincidence (a lint lesson shown at every edit of a file lint once flagged).
    fixed = targets(lesson.text) - targets(t.command or "") if lesson.kind == "failure" else set()
    # A retry loop says "stop and find the cause before running it again": about a run once the
    # program failed in the session, not about the first run of it (which may well pass).
    not_failed = failed is not None and not failed & {t.program, *programs_of(t.command or "")}
    if t.program and is_retry_loop(lesson) and not_failed:
        return f"a retry loop, and `{t.program}` has not failed in this session"
    if not t.program and is_retry_loop(lesson):
        # an edit retried unchanged: nothing to say before the next edit of the file, and
        # whether this session's edits of it failed is not known here
        return "a retry loop of a tool call, not a command"
    if t.program:
        if action.path and action.path.rsplit("/", 1)[-1].lower() in fixed:
            if not_failed:
                return f"about its files, but `{t.program}` has not failed in this session"
            return None
        if t.program not in programs_of(action.command):
            return f"about `{t.program}`, not this call"
        if t.command and not targets_meet(t.command, action.command):
            return f"about `{t.command[:60]}`, other files"
        if fixed and not targets_meet(" ".join(sorted(fixed)), action.command):
            return "about the files its fix changed, which this call does not name"
        return None
    if t.file_kinds and action.file_kind and action.file_kind not in t.file_kinds:
        return f"about {', '.join(t.file_kinds)} files"
    about = targets(lesson.text) if lesson.source == "structural" else frozenset()
    if about and action.command and not about & targets(action.command):
        return "about files, not this command"
    if about and action.path and action.path.rsplit("/", 1)[-1].lower() not in about:
        return "about other files"
    return None


def domain_match(lesson: Lesson, action: Action) -> float:
    domain = domain_of(action.words)
    if not domain or not lesson.trigger.domain or domain == lesson.trigger.domain:
        return 1.0
    return DOMAIN_MISMATCH


def warn_score(lesson: Lesson, similarity: float, action: Action, now: datetime) -> float:
    """similarity × confidence × recency × frequency × importance × domain match, then the
    superseded and noise penalties; 0 below ``MIN_SIMILARITY``."""
    if similarity < MIN_SIMILARITY:
        return 0.0
    score = (
        similarity
        * (2 * confidence(lesson, now))
        * recency(lesson, now)
        * frequency(lesson)
        * (1 + lesson.importance / 10)
        / 2
        * domain_match(lesson, action)
    )
    if lesson.status == "superseded":
        score *= SUPERSEDED_PENALTY
    return score * 0.5 ** lesson.noise_count()


@dataclass(frozen=True)
class Scored:
    lesson: Lesson
    similarity: float
    score: float
    why: str  # the gate that stopped it, or how it scored

    @property
    def passed(self) -> bool:
        return not self.why.startswith("✗")


def score_all(
    candidates: list[tuple[Lesson, float]],
    action: Action,
    now: datetime,
    project: str | None,
    failed: frozenset[str] | None = None,
) -> list[Scored]:
    """Each candidate (lesson, similarity) gated and scored, best first; ``failed`` as in
    ``gate``."""
    out = []
    for lesson, similarity in candidates:
        stopped = gate(lesson, action, project, failed)
        if stopped is not None:
            out.append(Scored(lesson, similarity, 0.0, f"✗ {stopped}"))
            continue
        score = warn_score(lesson, similarity, action, now)
        if score < WARN_THRESHOLD:
            out.append(Scored(lesson, similarity, score, f"✗ score {score:.2f} < {WARN_THRESHOLD}"))
        else:
            out.append(Scored(lesson, similarity, score, f"score {score:.2f}"))
    return sorted(out, key=lambda s: (-s.score, s.lesson.id))


def select(
    scored: list[Scored], shown: set[str], shown_count: int, budget: int = BUDGET
) -> tuple[list[Scored], list[Scored]]:
    """``(to show, held back)``: those that passed, minus any already shown in the session
    (dedup), at most ``PER_CALL`` and what is left of the session's ``budget``."""
    room = max(0, min(PER_CALL, budget - shown_count))
    chosen: list[Scored] = []
    held: list[Scored] = []
    for s in scored:
        if not s.passed:
            continue
        if s.lesson.id in shown:
            held.append(Scored(s.lesson, s.similarity, s.score, "✗ already shown this session"))
        elif len(chosen) >= room:
            held.append(Scored(s.lesson, s.similarity, s.score, "✗ over the session's budget"
                               if room < PER_CALL else "✗ over the per-call limit"))  # fmt: skip
        else:
            chosen.append(s)
    return chosen, held


def word_similarity(action_words: frozenset[str], lesson: Lesson) -> float:
    """How much of the action's words the lesson shares (0..1), for the fallback with no
    vectors: the share of the action's distinctive words found in the lesson."""
    from cortexmem.core.lessons.facts import words_of

    t = lesson.trigger
    lesson_words = words_of(" ".join([lesson.text, t.program or "", *(t.file_kinds)]))
    wanted = {w for w in action_words if len(w) > 2}
    if not wanted:
        return 0.0
    return len(wanted & lesson_words) / len(wanted)
