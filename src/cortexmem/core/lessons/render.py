"""How lessons are shown: a warning before a tool call or after a request, the always-loaded
rules file, the model's relevance question (layer 3) and its answer read back."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from cortexmem.core.lessons.build import fix_told
from cortexmem.core.lessons.facts import Action
from cortexmem.core.tokens import estimate_tokens
from cortexmem.model import Lesson

RULES_BUDGET: Final = 1_000  # tokens
RULES_TITLE: Final = "# Lessons Cortex learned in this project"


def short_id(lesson_id: str) -> str:
    """The part of an id a person reads and types back (its random tail)."""
    return lesson_id.rsplit("-", 1)[-1]


def warning_line(lesson: Lesson) -> str:
    """``⚠ Last time … [lesson a1b2 · T2]``."""
    text = lesson.text[0].lower() + lesson.text[1:] if lesson.text[:4] == "When" else lesson.text
    return f"⚠ Last time: {text} [lesson {short_id(lesson.id)} · {lesson.tier}]"


def warnings_text(lessons: Sequence[Lesson]) -> str:
    if not lessons:
        return ""
    return "\n".join([*(warning_line(x) for x in lessons), FEEDBACK])


FEEDBACK: Final = "(`cortex feedback ID followed|ignored|noise` if a warning is wrong)"


def request_line(lesson: Lesson) -> str:
    """A lesson a request called up (``core.lessons.requested``): before the check has run, the
    cause it had last time may not be this time's (the same error line comes from many
    failures); where the fix was is what recurs. The place alone, then, when the text says one:
    ``⚠ Last time `mise run test` failed with “…”, the fix was in reset_test.go [lesson …]``."""
    told = fix_told(lesson)
    if told is None:
        return warning_line(lesson)
    again = (
        f" (in {told.sessions} sessions, each time for another cause)" if told.sessions > 1 else ""
    )
    return (
        f"⚠ Last time {told.what} failed with “{told.error}”, the fix was in {told.where}{again}; "
        f"`cortex lessons show {short_id(lesson.id)}` for the cause "
        f"[lesson {short_id(lesson.id)} · {lesson.tier}]"
    )


def request_warnings_text(lessons: Sequence[Lesson]) -> str:
    if not lessons:
        return ""
    return "\n".join([*(request_line(x) for x in lessons), FEEDBACK])


def relevance_question(action: Action, lessons: Sequence[Lesson]) -> str:
    """Layer 3's question, about 200 tokens: the action and the numbered warnings."""
    items = "\n".join(f"{i}. {x.text[:220]}" for i, x in enumerate(lessons, 1))
    return (
        f"ACTION: {action.describe()[:300]}\n{items}\n"
        "Which of these warnings are relevant to this specific action? Answer with their "
        "numbers separated by commas, or 0 for none. Answer with the numbers only."
    )


def relevant_numbers(answer: str, count: int) -> set[int] | None:
    """The numbers the model named (1-based), or None when its answer says nothing usable
    (then every warning passes: fail-open)."""
    found = [int(n) for n in re.findall(r"\d+", answer)]
    if not found:
        return None
    if found == [0]:
        return set()
    return {n for n in found if 1 <= n <= count}


def rules_file(lessons: Sequence[Lesson], budget: int = RULES_BUDGET) -> str:
    """The always-loaded lessons (T0 principles first, then T1), within ``budget`` tokens;
    empty when there are none."""
    chosen = sorted(
        (x for x in lessons if x.status == "active" and x.tier in ("T0", "T1")),
        key=lambda x: (x.tier, -x.importance, -x.followed, x.id),
    )
    if not chosen:
        return ""
    lines = [
        RULES_TITLE,
        "",
        "Written by Cortex from what happened in earlier sessions; principles first. "
        "`cortex lessons show ID` says where each came from.",
        "",
    ]
    used = estimate_tokens("\n".join(lines))
    for x in chosen:
        label = "principle" if x.tier == "T0" else "lesson"
        line = f"- {x.text} [{label} {short_id(x.id)} · {x.tier}]"
        cost = estimate_tokens(line)
        if used + cost > budget:
            continue  # a long one does not end the list: shorter ones may still fit
        lines.append(line)
        used += cost
    return "\n".join(lines) + "\n"
