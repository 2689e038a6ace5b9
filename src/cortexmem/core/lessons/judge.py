"""The judge's heuristic, offline: did the call after a warning follow it?

From the call (``Action``), whether it succeeded, and the errors the session showed after it:

* the lesson is about another language than the call's → IRRELEVANT (``wrong_language``);
* a correction ("do not run X") and the call runs X anyway → IGNORED; does something else
  and succeeds → FOLLOWED;
* a failure lesson and the call failed the same way again → IGNORED; succeeded → FOLLOWED;
  failed some other way → UNCLEAR;
* no outcome known → UNCLEAR (abstain: the model, when configured, may decide).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from cortexmem.core.lessons.build import error_shape
from cortexmem.core.lessons.facts import Action
from cortexmem.model import Lesson

_ERROR_IN_LESSON: Final = re.compile(r"fails with “([^”]+)”")


@dataclass(frozen=True)
class Verdict:
    verdict: str  # FOLLOWED, IGNORED, IRRELEVANT, UNCLEAR
    reason: str | None = None


def judge(lesson: Lesson, action: Action, ok: bool | None, errors: Sequence[str] = ()) -> Verdict:
    """The verdict on the call ``action`` that followed a warning from ``lesson``: ``ok`` is
    its outcome (None: unknown), ``errors`` the error lines the session showed after it."""
    language = action.language
    t = lesson.trigger
    if language and t.language and language != t.language:
        return Verdict("IRRELEVANT", "wrong_language")
    if lesson.kind == "correction":
        program = action.program
        if t.program and program and program == t.program:
            return Verdict("IGNORED") if ok is not False else Verdict("UNCLEAR")
        if ok is None:
            return Verdict("UNCLEAR")
        return Verdict("FOLLOWED") if ok else Verdict("UNCLEAR")
    if ok is None:
        return Verdict("UNCLEAR")
    if ok:
        return Verdict("FOLLOWED")
    said = _ERROR_IN_LESSON.search(lesson.text)
    if said is not None:
        shape = error_shape(said.group(1).rstrip("…"))[:40]
        if any(error_shape(e).startswith(shape) for e in errors):
            return Verdict("IGNORED")
    return Verdict("UNCLEAR")
