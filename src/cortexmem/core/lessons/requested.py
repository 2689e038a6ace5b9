"""The lessons a person's request calls up: "fix the tests" when a test run's failure was
learned before.

A failure lesson warns before a tool call that names its program or its files; but a repeated
failure often comes back before any call: a session opens with "fix tests" (or "the lint job
is failing"), and its first call runs the check that fails the same way again. That request is
the moment to say what fixed it last time. A request calls a lesson up when it asks to repair
a check (``fix``, ``failing``, ``fails``, ``broken``, ``unhappy``) and names that check: the
word its program ends with (``test`` for ``mise run test`` or ``go test``, ``lint`` for
``golangci-lint``), or the check a program runs under its own name (``CHECK_PROGRAMS``:
``pytest`` runs the tests). When the request names files or tests (``test_cache.py``,
``TestResetCmd``, in a pasted log too) and the lesson's command named some, they must meet: a
lesson about one test file says nothing about another's failure. Questions about a past
failure ("why did the browser test fail?") are recall's business, not a warning's: past tenses
do not call lessons up. Only the request is read (its first line: a plan or a log pasted below
it says "fix" and "test" at random), and only lessons that tell a fix (a retry loop's "stop
and find the cause" is for the moment of the retry). Pure: the request and the project's
lessons in, the lessons to show out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from cortexmem.core.lessons.build import is_retry_loop
from cortexmem.core.lessons.facts import targets
from cortexmem.core.lessons.score import NOISE_LIMIT, PER_CALL
from cortexmem.model import Lesson

_REPAIR: Final = re.compile(
    r"\b(?:fix|fixes|fixing|repair|failing|fails|broken|breaks|unhappy)\b", re.IGNORECASE
)
_WORD: Final = re.compile(r"[a-z][a-z0-9]+")
_PARTS: Final = re.compile(r"[\s:_./-]+")
# Words a program's name carries that say nothing about which check it is.
_NOT_A_CHECK: Final = frozenset(
    {"run", "exec", "task", "uv", "npm", "npx", "pnpm", "yarn", "mise", "go", "make", "just",
     "cargo", "bun", "python", "python3", "all"}
)  # fmt: skip
_SUFFIXES: Final = ("ing", "ers", "er", "s")
# The checks a person names ("fix the tests", "lint is failing") and the programs that run
# them under their own names: a request for the tests meets a ``pytest`` lesson.
CHECK_PROGRAMS: Final[dict[str, tuple[str, ...]]] = {
    "test": ("pytest", "unittest", "tox", "nox", "jest", "vitest", "mocha", "ava", "karma",
             "playwright", "cypress", "rspec", "phpunit", "ctest", "gotestsum", "nextest"),
    "lint": ("eslint", "pylint", "ruff", "flake8", "golangci", "clippy", "stylelint",
             "shellcheck", "rubocop", "biome", "oxlint"),
    "type": ("mypy", "pyright", "tsc", "ty"),
    "build": ("tsc", "webpack", "vite", "esbuild", "rollup", "gradle", "mvn", "msbuild"),
}  # fmt: skip
# The checks a program runs (``tsc`` type-checks and builds).
_CHECKS_OF_PROGRAM: Final = {
    p: frozenset(c for c, ps in CHECK_PROGRAMS.items() if p in ps)
    for p in {p for ps in CHECK_PROGRAMS.values() for p in ps}
}


def fold(word: str) -> str:
    """A word without its plural or ``-ing``/``-er`` ending (``tests``, ``testing`` → ``test``;
    ``linter`` → ``lint``), so a request and a program name meet."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def check_words(lesson: Lesson) -> frozenset[str]:
    """The words that name the check a failure lesson is about (folded): the parts of the word
    its program ends with, and the check a program runs under its own name (``CHECK_PROGRAMS``:
    ``pytest`` runs the tests, ``eslint`` the lint)."""
    t = lesson.trigger
    if not t.program:
        return frozenset()
    last = t.program.split()[-1].lower()
    parts = [w for w in _PARTS.split(last) if w and w not in _NOT_A_CHECK]
    found = {fold(w) for w in parts}.union(*(_CHECKS_OF_PROGRAM.get(w, ()) for w in parts))
    return frozenset(w for w in found if len(w) >= 3)


def request_of(prompt: str) -> str:
    """What the person asks, without what they pasted after it (a plan, a log, a document):
    the first non-empty line, at most ``REQUEST_CHARS``."""
    for line in prompt.splitlines():
        if line.strip():
            return line.strip()[:REQUEST_CHARS]
    return ""


REQUEST_CHARS: Final = 300


def lookup_words(prompt: str) -> str:
    """The words to look a request's lessons up by (its request without the words asking for
    a repair), or "" when it asks to repair nothing: the store is not read for most prompts."""
    request = request_of(prompt)
    if _REPAIR.search(request) is None:
        return ""
    words = _REPAIR.sub(" ", request).split()
    runners = [p for w in _WORD.findall(request.lower()) for p in CHECK_PROGRAMS.get(fold(w), ())]
    return " ".join([*runners, *words])  # the runners first: a long request's words are cut


def called_up(
    prompt: str, lessons: Iterable[Lesson], project: str | None = None, limit: int = PER_CALL
) -> list[Lesson]:
    """The active failure lessons with a fix to tell that ``prompt`` asks about, best first
    (confirmed in more sessions, then the newest), at most ``limit``; none when its request
    (``request_of``) asks to repair nothing."""
    request = request_of(prompt)
    if _REPAIR.search(request) is None:
        return []
    said = {fold(w) for w in _WORD.findall(request.lower())}
    named = targets(prompt)  # the files and tests it names, in a pasted log too
    found = [
        x
        for x in lessons
        if x.status == "active"
        and x.kind == "failure"
        and not is_retry_loop(x)
        and x.noise_count() < NOISE_LIMIT
        and not (project and project in x.project_exclude)
        and check_words(x) & said
        and _meet(named, targets(x.trigger.command or ""))
    ]
    found.sort(key=lambda x: x.last_confirmed_at or x.created_at, reverse=True)
    found.sort(key=lambda x: x.confirmed, reverse=True)
    return found[: max(0, limit)]


def _meet(named: frozenset[str], about: frozenset[str]) -> bool:
    """Whether what a request names and what a lesson's command named meet: either named
    nothing, or they share a file or test."""
    return not named or not about or bool(named & about)
