"""What a compaction summary says went wrong and how it was fixed, one item at a time.

When a host compacts a long session it writes a summary in numbered sections ("1. Primary
Request and Intent:", …, "4. Errors and fixes:", …). The summary as a whole is kept as an
episode (what was said), but a section that lists the errors met and how each was fixed is a
list of gotchas, each one a question a next session may ask ("why did the todos show 0?":
"TodoItem model mismatch: the model expected `id` and `priority` …"). In one long text each
item is a few words among thousands, diluted for recall; one item per memory is found by its
own words and meaning.

Pure: the text in, the items out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from cortexmem.core.text import EMPHASIS, LIST_ITEM

# A section heading: "4. Errors and fixes:", "## 4. Errors and fixes", "4) **Errors**:", on a line
# of its own at the start of the line (an indented "1. Import error …" is an item of a section).
_HEADING: Final = re.compile(
    r"^(?:#+[ \t]*)?(?:\*\*)?\d{1,2}[.)][ \t]+(?:\*\*)?(?P<title>[A-Z][^\n:*]{2,60}?)(?:\*\*)?:?"
    r"(?:\*\*)?[ \t]*$",
    re.MULTILINE,
)
# The sections that list errors and their fixes ("Errors and fixes", "Errors encountered and
# fixed", "Bugs fixed"), not "Problem Solving" (what was worked out, not what broke).
_ERRORS_SECTION: Final = re.compile(r"\b(?:errors?|bugs?|failures?)\b", re.IGNORECASE)
# What any project meets and a linter names: not worth a memory of its own (an unused name, a
# missing import, a linter's rule broken and fixed where it was: "Ruff F811", "flake8 E501"),
# nor a line saying there were none ("No errors were encountered").
_TRIVIAL: Final = re.compile(
    r"\b(?:unused (?:variable|import|parameter)s?|missing \S+ imports?|imported but unused)\b"
    r"|^\W*(?:ruff|flake8|pylint|pycodestyle|eslint|golangci-lint|clippy)\W+(?-i:[A-Z]{1,3}\d{3,4})\b"
    r"|^\W*(?:no|none)\b",
    re.IGNORECASE,
)
# Tests that asserted what a deliberate change changed, brought in line with it: the change's
# fallout, not a trap. The item is about the tests ("Test failures checking removed fields",
# "Multi-session test failure in …") and its fix is to them ("updated tests to …", "updated
# expectation: …"), or it names tests that checked the old behaviour.
_ABOUT_TESTS: Final = re.compile(
    r"^(?:[\w-]+ ){0,2}(?:tests?|assertions?)\b(?: \w+)? (?:checking|asserting|expecting)\b",
    re.IGNORECASE,
)
_TESTS_HEAD: Final = re.compile(r"^[^;:]*\btests?\b", re.IGNORECASE)
_TESTS_FIXED: Final = re.compile(
    r"[;:] (?:updated|rewrote|adjusted) (?:the )?(?:tests?|test expectations?|expectations?|"
    r"assertions?)\b",
    re.IGNORECASE,
)
# The names in a text that say what it is about (`appendAssign`, `existingSummary`,
# `session_ids`): two texts sharing most of them tell of the same thing.
_IDENTIFIER: Final = re.compile(r"\b(?:[a-z]+[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*|\w+_\w+)\b")
# Shorter than this an item says nothing on its own ("- Fixed").
MIN_ITEM: Final = 20
MAX_ITEM: Final = 600
MAX_ITEMS: Final = 12
MIN_NAMES: Final = 3


def sections(text: str) -> list[tuple[str, str]]:
    """``(title, body)`` for each numbered section of ``text``, in order."""
    found = list(_HEADING.finditer(text))
    return [
        (m.group("title").strip(), text[m.end() : found[i + 1].start() if i + 1 < len(found)
                                         else len(text)])
        for i, m in enumerate(found)
    ]  # fmt: skip


def items(body: str) -> list[str]:
    """The top-level items of a list, each with the lines under it (sub-items, wrapped text)
    joined into one line: "**gocritic lint error**: … - Fixed by using `copy()`" becomes
    "gocritic lint error: …; fixed by using `copy()`"."""
    out: list[list[str]] = []
    top: int | None = None
    fenced = False
    for line in body.splitlines():
        if not line.strip():
            continue
        if line.lstrip().startswith("```"):
            fenced = not fenced  # code shown in the summary: not an item, nor part of one
            continue
        if fenced:
            continue
        match = LIST_ITEM.match(line)
        indent = len(match.group("indent").expandtabs(4)) if match else None
        if match and (top is None or (indent is not None and indent <= top)):
            top = indent
            out.append([match.group("text")])
        elif out:
            out[-1].append(match.group("text") if match else line.strip())
    joined = []
    for parts in out:
        head, rest = parts[0], parts[1:]
        text = head.rstrip(" :")
        for part in rest:
            part = (
                part[:1].lower() + part[1:] if part[:1].isupper() and part[1:2].islower() else part
            )
            text += ("; " if text[-1:] not in ".:;" else " ") + part
        joined.append(" ".join(EMPHASIS.sub("", text).split()))
    return joined


def errors_fixed(summary: str, known: Sequence[str] = ()) -> list[str]:
    """The items of the sections of ``summary`` that list errors and their fixes, but for
    trivia, a change's fallout in its own tests, and what ``known`` (the fixes the session
    already keeps, with their causes) tells already."""
    found: list[str] = []
    for title, body in sections(summary):
        if not _ERRORS_SECTION.search(title):
            continue
        for item in items(body):
            if len(item) < MIN_ITEM or _TRIVIAL.search(item) or fallout(item):
                continue
            if item not in found and not any(told(item, text) for text in known):
                found.append(item if len(item) <= MAX_ITEM else item[: MAX_ITEM - 1] + "…")
    return found[:MAX_ITEMS]


def fallout(item: str) -> bool:
    """Whether an item is tests brought in line with a deliberate change, not a trap."""
    if _ABOUT_TESTS.search(item):
        return True
    return bool(_TESTS_HEAD.search(item) and _TESTS_FIXED.search(item))


def told(item: str, text: str) -> bool:
    """Whether ``text`` tells of what ``item`` does: it names at least half of the item's three or
    more identifiers ("gocritic `appendAssign`: `append(existingSummary.Sessions,
    sessionFilePaths)` …" and "The lint error is because append(existingSummary.Sessions,
    sessionFilePaths) is appending …"); two names such as `user_id` and `session_id` are shared
    by too many things to tell."""
    names = {n.lower() for n in _IDENTIFIER.findall(item)}
    if len(names) < MIN_NAMES:
        return False
    return 2 * len(names & {n.lower() for n in _IDENTIFIER.findall(text)}) >= len(names)
