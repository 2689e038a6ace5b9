"""What an action or a lesson is about: file kind, language, framework, domain, program.

Tables, not code: a file's suffix names its language; a program names the language of the
project it runs in; words in a path or a command name a framework or a domain. ``Action`` is a
tool call about to run, in neutral terms (the host fills it in).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from cortexmem.core.extraction.commands import normalise_command
from cortexmem.core.text import clip_redacted

LANGUAGE_OF_SUFFIX: Final[dict[str, str]] = {
    ".py": "python", ".pyi": "python", ".ipynb": "python",
    ".ts": "typescript", ".tsx": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".js": "javascript", ".jsx": "javascript", ".mjs": "javascript", ".cjs": "javascript",
    ".go": "go", ".rs": "rust", ".java": "java", ".kt": "kotlin", ".scala": "scala",
    ".cs": "csharp", ".fs": "fsharp", ".rb": "ruby", ".php": "php", ".swift": "swift",
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".m": "objc",
    ".sh": "shell", ".bash": "shell", ".zsh": "shell", ".sql": "sql", ".lua": "lua",
    ".ex": "elixir", ".exs": "elixir", ".erl": "erlang", ".hs": "haskell", ".dart": "dart",
    ".vue": "vue", ".svelte": "svelte", ".html": "html", ".css": "css", ".scss": "css",
}  # fmt: skip
LANGUAGE_OF_PROGRAM: Final[dict[str, str]] = {
    "pytest": "python", "python": "python", "python3": "python", "pip": "python",
    "mypy": "python", "ruff": "python", "pyright": "python", "ty": "python", "tox": "python",
    "black": "python", "flake8": "python", "poetry": "python", "uv": "python",
    "node": "javascript", "npm": "javascript", "yarn": "javascript", "pnpm": "javascript",
    "jest": "javascript", "vitest": "javascript", "eslint": "javascript", "bun": "javascript",
    "tsc": "typescript", "deno": "typescript",
    "go": "go", "gofmt": "go", "golangci-lint": "go", "cargo": "rust", "rustc": "rust",
    "dotnet": "csharp", "mvn": "java", "gradle": "java", "javac": "java",
    "bundle": "ruby", "rake": "ruby", "rspec": "ruby", "rails": "ruby", "composer": "php",
    "mix": "elixir", "swift": "swift", "flutter": "dart",
}  # fmt: skip
FRAMEWORK_WORDS: Final[dict[str, str]] = {
    "django": "django", "flask": "flask", "fastapi": "fastapi", "jinja": "jinja",
    "react": "react", "next": "nextjs", "vue": "vue", "svelte": "svelte", "angular": "angular",
    "express": "express", "rails": "rails", "spring": "spring", "aspnet": "dotnet",
    "dbcontext": "dotnet", "sqlalchemy": "sqlalchemy", "pydantic": "pydantic",
    "textual": "textual", "cobra": "cobra", "tailwind": "tailwind",
}  # fmt: skip
DOMAIN_WORDS: Final[dict[str, str]] = {
    "docker": "infrastructure", "dockerfile": "infrastructure", "workflow": "infrastructure",
    "workflows": "infrastructure", "terraform": "infrastructure", "kubectl": "infrastructure",
    "helm": "infrastructure", "ci": "infrastructure", "act": "infrastructure",
    "auth": "auth", "login": "auth", "oauth": "auth", "token": "auth", "password": "auth",
    "session": "auth", "sql": "data", "migration": "data", "migrations": "data",
    "database": "data", "db": "data", "schema": "data", "query": "data", "cache": "data",
    "test": "testing", "tests": "testing", "pytest": "testing", "jest": "testing",
    "vitest": "testing", "spec": "testing", "git": "vcs", "commit": "vcs", "stash": "vcs",
    "install": "dependencies", "pip": "dependencies", "npm": "dependencies",
    "requirements": "dependencies", "lock": "dependencies",
    "css": "ui", "html": "ui", "template": "ui", "templates": "ui", "component": "ui",
}  # fmt: skip
# Programs that run another one: the interesting program comes after them.
RUNNERS: Final = frozenset(
    {"sudo", "env", "time", "nohup", "exec", "npx", "pnpx", "bunx", "xargs", "command"}
)
RUNNERS_WITH_VERB: Final = frozenset({"uv", "poetry", "pipenv", "hatch", "pdm", "bundle"})
# Programs whose first argument says what they do (``git stash``, ``npm install``).
WITH_SUBCOMMAND: Final = frozenset(
    {"git", "npm", "pnpm", "yarn", "cargo", "go", "docker", "kubectl", "pip", "uv", "dotnet",
     "gh", "bun", "mix", "rails", "mise", "poetry", "deno"}
)  # fmt: skip
TASK_VERBS: Final = frozenset({"run", "exec", "x", "task"})
# Programs whose first argument is the task they run (``make deploy``, ``just test``).
TASK_RUNNERS: Final = frozenset({"make", "just", "task", "rake", "invoke", "nox", "tox"})
_TARGET: Final = re.compile(r"[\w./-]*[\w-]+\.(?:[a-z]{1,5})\b(?![\w(])")
_ASSIGNMENT: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_WORD: Final = re.compile(r"[a-z][a-z0-9]+")
_SEGMENTS: Final = re.compile(r"\s*(?:&&|\|\||;|\|)\s*")
OUTPUT_READERS: Final = frozenset({"head", "tail", "grep", "less", "more", "tee", "cat", "wc"})
_TEST_NAME: Final = re.compile(r"\b(?:Test[A-Z]\w*|test_\w+)")


@dataclass(frozen=True)
class Action:
    """A tool call about to run, in neutral terms: the host's tool name, what kind of call it
    is (``shell``, ``edit``, ``write``, ...), the command or the file, and a few words of what
    it writes (``text``)."""

    tool: str
    kind: str
    command: str = ""
    path: str = ""
    text: str = ""

    @property
    def program(self) -> str | None:
        return program_of(self.command) if self.command else None

    @property
    def file_kind(self) -> str | None:
        return suffix_of(self.path)

    @property
    def language(self) -> str | None:
        return language_of(self.path, self.command)

    @property
    def words(self) -> frozenset[str]:
        return words_of(" ".join((self.command, self.path, self.text)))

    def describe(self) -> str:
        """One line for a person or a model: ``shell: pytest -q`` / ``edit src/app.ts``."""
        # Redacted, then cut: a token the cut went through would keep most of itself.
        if self.command:
            return f"{self.tool}: {clip_redacted(self.command.strip().splitlines()[0], 200)}"
        what = f"{self.tool} {self.path}".strip()
        return f"{what} — {clip_redacted(self.text, 200)}" if self.text else what


def suffix_of(path: str) -> str | None:
    name = path.rsplit("/", 1)[-1].lower()
    if "." not in name.lstrip("."):
        return None
    return "." + name.rsplit(".", 1)[-1]


def words_of(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


def programs_of(command: str) -> tuple[str, ...]:
    """The program of every part of a command's chain, in order (pipes into a reader too)."""
    parts = _SEGMENTS.split(normalise_command(command))
    return tuple(p for p in (program_of(part) for part in parts if part.strip()) if p)


def last_program(command: str) -> str | None:
    """The program a chain ends with (``mise run fmt && mise run lint`` → ``mise run lint``):
    the check a chained command is run for, and the one whose failure it reports; outputs
    piped into a reader (``| head``, ``| tail``) are not it."""
    found = [p for p in programs_of(command) if p not in OUTPUT_READERS]
    return found[-1] if found else None


def program_of(command: str) -> str | None:
    """The program the first part of a shell command runs, with its subcommand when that says
    what it does: ``FOO=1 uv run pytest -q`` → ``pytest``; ``git stash pop`` → ``git stash``."""
    first = _SEGMENTS.split(normalise_command(command), maxsplit=1)[0]
    words = first.split()
    i = 0
    while i < len(words):
        word = words[i]
        name = word.rsplit("/", 1)[-1]
        if _ASSIGNMENT.match(word) or word.startswith("-") or name in RUNNERS:
            i += 1
        elif (
            name in RUNNERS_WITH_VERB and i + 1 < len(words) and words[i + 1] in ("run", "exec")
        ) or (
            re.fullmatch(r"python3?(?:\.\d+)?", name)
            and i + 2 < len(words)
            and (words[i + 1] == "-m")
        ):
            i += 2
        else:
            break
    if i >= len(words):
        return None
    name = words[i].rsplit("/", 1)[-1].lower()
    if not re.fullmatch(r"[a-z0-9][a-z0-9_.+-]{0,39}", name):
        return None
    rest = words[i + 1 :]
    if name in WITH_SUBCOMMAND and rest and re.fullmatch(r"[a-z][a-z-]*", rest[0]):
        # ``npm run build``, ``mise run lint``: what a task runner runs is the task
        if rest[0] in TASK_VERBS and len(rest) > 1 and re.fullmatch(r"[\w:.-]+", rest[1]):
            return f"{name} {rest[0]} {rest[1]}"
        return f"{name} {rest[0]}"
    if name in TASK_RUNNERS and rest and re.fullmatch(r"[\w:.-]+", rest[0]):
        return f"{name} {rest[0]}"
    return name


def targets(text: str) -> frozenset[str]:
    """The files and tests a command or a lesson names (``test_cache.py`` for
    ``pytest tests/test_cache.py -v``, ``testresetcmd`` for ``go test -run TestResetCmd``):
    what tells one run of a program from another."""
    files = {m.rsplit("/", 1)[-1].lower() for m in _TARGET.findall(text)}
    return frozenset(files | {name.lower() for name in _TEST_NAME.findall(text)})


def targets_meet(lesson: str, action: str) -> bool:
    """Whether a command is about what a lesson's command was about: any run when the lesson
    named no file or test; else a run naming one of them."""
    ta = targets(lesson)
    return not ta or bool(ta & targets(action))


def language_of(path: str = "", command: str = "") -> str | None:
    suffix = suffix_of(path) if path else None
    if suffix and suffix in LANGUAGE_OF_SUFFIX:
        return LANGUAGE_OF_SUFFIX[suffix]
    program = program_of(command) if command else None
    if program:
        return LANGUAGE_OF_PROGRAM.get(program.split()[0])
    return None


def framework_of(words: frozenset[str]) -> str | None:
    for word in sorted(words):
        if word in FRAMEWORK_WORDS:
            return FRAMEWORK_WORDS[word]
    return None


def domain_of(words: frozenset[str]) -> str | None:
    found = sorted({DOMAIN_WORDS[w] for w in words if w in DOMAIN_WORDS})
    # the most specific first: testing and vcs are everywhere
    for domain in found:
        if domain not in ("testing", "vcs", "dependencies"):
            return domain
    return found[0] if found else None
