"""Reading shell commands and their output: pure helpers for the structural layer."""

from __future__ import annotations

import re
from typing import Final

from cortexmem.core.text import clip_redacted

# Programs that run tests, and programs that check code, as the first words of a command
# (after wrappers such as ``uv run`` or ``npx``): ``cat pytest.ini`` runs nothing.
_TEST_RUNNERS: Final = re.compile(
    r"(?:pytest|py\.test|unittest|tox|nox|jest|vitest|mocha|karma|go test|"
    r"cargo (?:test|nextest|llvm-cov)|(?:npm|pnpm|yarn|bun)(?: run)? test|rspec|phpunit|"
    r"mvn (?:-\S+ )*test|\S*gradlew? test|make (?:test|check)|ctest|dotnet test|mix test|"
    r"deno test|swift test|zig build test|coverage run|just (?:test|check))\b"
)
_CHECKERS: Final = re.compile(
    r"(?:mypy|pyright|basedpyright|ty check|pyrefly check|pyre check|ruff check|ruff(?! format)|"
    r"flake8|pylint|eslint|tsc|"
    r"cargo (?:check|clippy)|golangci-lint|go vet|rubocop|shellcheck|biome|"
    r"(?:just|make) lint|pre-commit run)\b"
)
_SEGMENTS: Final = re.compile(r"\s*(?:&&|\|\||;|\|)\s*")
# What only picks the environment a tool runs in (``uv run``, ``npx``, ``python -m``, the
# project's ``.venv``): ``ruff format`` and ``uv run ruff format`` are one step.
_RUNNERS: Final = (
    r"(?:uv|poetry|pipenv|pdm|hatch|rye) run\s+|npx\s+|bunx\s+|pnpm exec\s+|"
    r"python3?(?:\.\d+)?(?:\.exe)? -m\s+|\.?[\\/]?\.venv[\\/](?:bin|Scripts)[\\/]"
)
_RUNNER: Final = re.compile(f"^(?:{_RUNNERS})")
# ... and what else only runs a command (an environment variable, ``time``, ``sudo``, ``env``,
# a subshell's parenthesis)
_WRAPPER: Final = re.compile(f"^(?:\\w+=\\S*\\s+|{_RUNNERS}|time\\s+|sudo\\s+|env\\s+|\\(\\s*)")
_GIT_COMMIT: Final = re.compile(r"\bgit\s+(?:-\S+\s+)*commit\b")
_COMMIT_LINE: Final = re.compile(
    r"^\[(?P<branch>[^\]\s]+)(?: \(root-commit\))? (?P<sha>[0-9a-f]{7,40})\] (?P<message>.+)$",
    re.MULTILINE,
)
_MESSAGE_FLAG: Final = re.compile(r"""-m\s+(?:"((?:[^"\\]|\\.)+)"|'([^']+)')""")
_HEREDOC: Final = re.compile(r"<<\s*'?(\w+)'?\s*\n(.*?)\n\s*\1\b", re.DOTALL)
_CD_PREFIX: Final = re.compile(
    r"^\s*(?:cd|Set-Location|pushd)\s+(?:\"[^\"]*\"|'[^']*'|\S+)\s*(?:&&|;)\s*", re.IGNORECASE
)
_OUTPUT_TAIL: Final = re.compile(r"\s*(?:2>&1|\|\s*(?:tail|head)(?:\s+-n?\s*\d+|\s+-\d+)?)\s*$")
_EXIT_CODE: Final = re.compile(r"^Exit code \d+\s*$")
_ERRORISH: Final = re.compile(
    r"error|exception|failed|failure|traceback|assert|fatal|denied|not found|no such|cannot",
    re.IGNORECASE,
)
_RAISED: Final = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning)\b")
_SUMMARY: Final = re.compile(
    r"(?:\b\d+ (?:passed|failed|errors?)\b.*|Success: no issues found.*|Found \d+ errors?.*|"
    r"All checks passed!?|test result: .*|Tests?:\s+.*(?:passed|failed).*|OK(?: \(.*\))?$|"
    r"FAILED \(.*\)$)",
    re.IGNORECASE,
)
_FAILED_SUMMARY: Final = re.compile(r"\b[1-9]\d* (?:failed|errors?)\b|\bFAILED\b|Found [1-9]")


def normalise_command(command: str) -> str:
    """The command without a leading ``cd dir &&`` or a trailing ``2>&1 | tail -20``,
    so two runs of the same thing compare equal."""
    text = " ".join(command.strip().split())
    while True:
        shorter = _OUTPUT_TAIL.sub("", _CD_PREFIX.sub("", text))
        if shorter == text:
            return text
        text = shorter


def without_runner(command: str) -> str:
    """``command`` without what only picks the environment it runs in (``uv run ruff
    format`` → ``ruff format``; ``RUN_SLOW=1 uv run pytest`` and ``sudo make install`` stay:
    those change what runs)."""
    while True:
        shorter = _RUNNER.sub("", command, count=1)
        if shorter == command:
            return command
        command = shorter


def without_wrappers(segment: str) -> str:
    """One command of a chain without what only runs it (``uv run``, ``npx``, ``time``,
    ``python -m``, ``FOO=1``): the program that does the work comes first."""
    while True:
        shorter = _WRAPPER.sub("", segment, count=1)
        if shorter == segment:
            return segment
        segment = shorter


# Flags that only change how much a run prints, not what it runs: ``pytest -x --tb=short`` and
# ``pytest -x --tb=short -q`` are one way to run the tests.
_OUTPUT_FLAGS: Final = re.compile(
    r"\s(?:-q{1,2}|-v{1,3}|--quiet|--verbose|--tb=\S+|--color=\S+|--no-header)(?=\s|$)"
)


# A formatter asked only to check (``ruff format --check .``, ``black --check``, ``cargo fmt
# --check``) is the same step as the formatter: one how-to says how the project is formatted.
_FORMATTER: Final = re.compile(r"(?:^|\s)(?:\S*/)?(?:format|fmt|black|prettier|isort)(?=\s|$)")
_CHECK_ONLY: Final = re.compile(r"\s--(?:check|diff)(?=\s|$)")


def step_key(command: str) -> str:
    """What a project step is, whatever it prints: the command without its output flags (and a
    formatter without its check-only flag)."""
    key = _OUTPUT_FLAGS.sub("", " " + command)
    if _FORMATTER.search(key):
        key = _CHECK_ONLY.sub("", key)
    return key.strip()


def display_command(command: str) -> str:
    """The command as one line: its first line, normalised, with " …" when there is more
    (a heredoc commit message, a script)."""
    lines = [ln for ln in command.strip().splitlines() if ln.strip()]
    if not lines:
        return ""
    first = normalise_command(lines[0])
    return first + " …" if len(lines) > 1 else first


def _programs(command: str) -> list[tuple[str, str]]:
    """``(kind, program)`` for each part of a command that runs tests or checks, in order."""
    found: list[tuple[str, str]] = []
    for segment in _SEGMENTS.split(normalise_command(command)):
        segment = without_wrappers(segment)
        for kind, pattern in (("test", _TEST_RUNNERS), ("check", _CHECKERS)):
            match = pattern.match(segment)
            if match:
                found.append((kind, match.group(0)))
                break
    return found


def runners(command: str) -> list[str]:
    """The test runners and checkers a command runs (``["ruff check", "pytest"]``), in order."""
    return list(dict.fromkeys(program for _, program in _programs(command)))


def run_kind(command: str) -> str | None:
    """``"test"`` when a command runs tests, ``"check"`` when it only runs a type checker or
    linter, else ``None``."""
    kinds = {kind for kind, _ in _programs(command)}
    return "test" if "test" in kinds else "check" if kinds else None


def is_git_commit(command: str) -> bool:
    return bool(_GIT_COMMIT.search(command)) and "--dry-run" not in command


def commit_details(command: str, output: str) -> tuple[str | None, str | None]:
    """(short sha, subject) of a commit from git's output, else the subject from the command."""
    match = _COMMIT_LINE.search(output)
    if match:
        return match.group("sha")[:12], match.group("message").strip()
    heredoc = _HEREDOC.search(command)
    if heredoc:
        subject = next((ln.strip() for ln in heredoc.group(2).splitlines() if ln.strip()), None)
        return None, subject
    flag = _MESSAGE_FLAG.search(command)
    if flag:
        return None, (flag.group(1) or flag.group(2)).splitlines()[0].strip()
    return None, None


def error_line(output: str) -> str:
    """The most telling line of a failure: the first that reads like an error."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    lines = [ln for ln in lines if not _EXIT_CODE.match(ln)]
    if not lines:
        return "no output"
    if any(ln.startswith("Traceback (most recent call last)") for ln in lines):
        raised = [ln for ln in lines if _RAISED.match(ln)]
        return clip_redacted(raised[-1] if raised else lines[-1], 240)
    for ln in lines:
        if _ERRORISH.search(ln):
            return clip_redacted(ln, 240)
    return clip_redacted(lines[0], 240)


# A task runner's own word that a task failed: it says that the command failed, not how (the
# same line for a build error, a failing test or a missing module).
_WRAPPER_FAILURE: Final = re.compile(
    r"^\[[\w:.-]+\] ERROR task failed\b|^make(?:\[\d+\])?: \*\*\* .*Error \d+|^npm ERR!|"
    r"^(?:ERR_PNPM_|ELIFECYCLE)|^error: Recipe `[^`]*` failed|^error Command failed with exit code|"
    r"^Error: Process completed with exit code|^Exit code \d+\s*$",
    re.IGNORECASE,
)


def says_only_that_it_failed(line: str) -> bool:
    """Whether an error line is a task runner's "task failed" (``[test] ERROR task failed``,
    ``make: *** [test] Error 2``): two failures with it may have nothing else in common."""
    return _WRAPPER_FAILURE.search(line.strip()) is not None


_TOOL_ERROR_TAG: Final = re.compile(r"</?tool_use_error>")
_PATH_MISSING: Final = re.compile(
    r"no such file or directory|file or directory not found|cannot find the path|"
    r"does not exist|\bE902\b",
    re.IGNORECASE,
)


def tool_error_line(output: str) -> str:
    """A failed tool call's message (an edit, a read): its first line, without the host's
    ``<tool_use_error>`` tag. Not the first error-like line: what follows the message is the
    call's own input quoted back (an edit's text may say ``assert``)."""
    for line in _TOOL_ERROR_TAG.sub("", output).splitlines():
        if line.strip():
            return clip_redacted(line.strip(), 240)
    return "no output"


def path_missing(output: str) -> bool:
    """Whether a failure's output says a file or folder it was given does not exist."""
    return _PATH_MISSING.search(output) is not None


def outcome_summary(output: str) -> str | None:
    """A test or check run's own summary line ("1 failed, 3 passed in 0.4s"), last one wins."""
    found = None
    for ln in output.splitlines():
        ln = ln.strip(" =")
        if _SUMMARY.fullmatch(ln) or _SUMMARY.match(ln):
            found = clip_redacted(ln, 200)
    return found


def run_failed(is_error: bool, output: str) -> bool:
    """A run failed when the host says so or its own summary reports failures."""
    if is_error:
        return True
    summary = outcome_summary(output)
    return bool(summary and _FAILED_SUMMARY.search(summary))


# What only a failed run prints (a test's FAILED line, a checker's "error[...]:", npm's
# "npm ERR!", a traceback, a timeout): how a run that reports no exit status is known to have
# failed.
_FAILURE_LINE: Final = re.compile(
    r"(?im)^\s*(?:FAILED\b|ERROR:?\s|error(?:\[[\w-]+\])?:|npm ERR!|"
    r"Traceback \(most recent call last\)|fatal:)"
    r"|\bFound [1-9]\d* (?:diagnostics?|errors?)\b|\btimed out after\b"
)


def printed_a_failure(output: str) -> bool:
    """Whether a run whose exit status is not known failed, by what it printed (its summary
    reports failures, or a line only a failure prints)."""
    return run_failed(False, output) or bool(_FAILURE_LINE.search(output))


# Commands that build, run, serve, install or check a project as a whole: a session's own steps.
_BUILD_RUN: Final = re.compile(
    r"(?:make(?: [\w:-]+)?|(?:npm|pnpm|yarn|bun)(?: run)? [\w:-]+|mise(?: run)? [\w:-]+|"
    r"just [\w:-]+|task [\w:-]+|cargo (?:build|run|fmt)|go (?:build|run|generate)|"
    r"act\b.*|docker(?: compose| build| run)\b.*|gradlew? \w+|mvn \w+|dotnet (?:build|run)|"
    r"uv (?:sync|build)|pip install -e\b.*|ruff format|prettier|black|gofmt|goimports)(?=\s|$)"
)
# Arguments that make a run specific to one file or test (not the project's own step).
_SPECIFIC: Final = re.compile(
    r"\s--?(?:help|version|list|markers|collect-only|co|l|h|V)\b|::|\s-k\s|\s--?(?:run|filter|grep|testNamePattern|lf|last-failed)\b|"
    r"\s\S+\.(?:py|ts|tsx|js|jsx|go|rs|rb|java|kt|cs|php|swift)\b|\s\S*/\S*test\S*|\|"
    # one package and those under it (``go test ./cmd/cli/checkpoint/...``), not ``./...``
    r"|\s(?:\./)?[\w-]+(?:/[\w.-]+)*/\.\.\."
)


def step_kind(command: str) -> str | None:
    """``"test"``, ``"check"`` or ``"build"`` when a command is one of a project's own steps
    (run tests, lint or type-check, build / run / install / format), else ``None``."""
    kind = run_kind(command)
    if kind == "test":
        return kind
    found = {kind} if kind else set()
    for segment in _SEGMENTS.split(normalise_command(command)):
        segment = without_wrappers(segment)
        step = _BUILD_RUN.match(segment)
        if step:
            # The step's own last word says what it is (``test:unit`` of ``npm run
            # test:unit``, ``format`` of ``ruff format .``), not the path it was given.
            words = step.group(0).split()
            task = words[-1] if len(words) > 1 else step.group(0)
            if "test" in task:
                found.add("test")
            elif re.search(r"lint|check|fmt|format|vet|clippy|dup", task):
                found.add("check")
            else:
                found.add("build")
    return next((k for k in ("test", "check", "build") if k in found), None)


# A run of one test file or of tests picked by name (``pytest test/test_cache.py``, ``go test
# -run TestReset``, ``vitest src/app.test.ts``, ``pytest a.py::test_b``).
_ONE_TEST: Final = re.compile(
    r"(?:^|[\s/])(?:test_[\w-]+\.py|[\w-]+_test\.(?:py|go)|[\w-]+\.(?:test|spec)\.[jt]sx?)\b"
    r"|::|\s-k\s|\s--?run[\s=]|--testNamePattern|--grep\b"
)


# One source file named as an argument (no glob): ``ruff check app/renderer.py``.
_ONE_FILE: Final = re.compile(
    r"\s[^\s*?]+\.(?:py|ts|tsx|js|jsx|go|rs|rb|java|kt|cs|php|swift)(?=\s|$)"
)


def checks_one_file(command: str) -> bool:
    """Whether a test runner or checker is given one source file (``ruff check app/x.py``):
    that moment's run, not how the project is checked (``python manage.py test`` runs a file,
    it does not check one)."""
    text = normalise_command(command)
    return run_kind(text) is not None and _ONE_FILE.search(" " + without_wrappers(text)) is not None


def runs_one_test(command: str) -> bool:
    """Whether a command runs one test file or tests picked by name: that moment's run, not how
    the project is tested."""
    return _ONE_TEST.search(normalise_command(command)) is not None


def is_general_step(command: str) -> bool:
    """Whether a (one-line) command runs the project's step as a whole, not one file or test."""
    text = normalise_command(command)
    return "\n" not in command.strip() and not _SPECIFIC.search(" " + text) and len(text) <= 160
