"""The shape of a shell command: how it was run, without what it was run on.

``command_form("cd app && FOO=1 uv run pytest -q tests/x.py 2>&1 | tail")`` is
``"uv run pytest"``: the wrappers that decide how a program runs (``uv run``, ``npx``,
``python -m``, a relative ``.venv/bin/`` path), the program, and its subcommand for programs
that have them (``git commit``, ``npm run test``). No argument, no value, no absolute path: a
form can hold no secret and no personal path, so the tool hooks may spool it.

Two runs of the same step compare equal, and a failed ``pytest`` followed by a passing
``uv run pytest`` shows how this project wants its tests run (``core.learning``).

No imports at all: the tool hooks, which run on every tool call, use it.
"""

from __future__ import annotations

_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:+@")
_SEPARATORS = ("&&", "||", ";", "|")
# Words that only change who or when runs the program: dropped.
_TRANSPARENT = frozenset({"sudo", "env", "time", "nohup", "exec", "command", "builtin"})
# Wrappers kept in the form, with how many of their own words follow (``uv run``).
_RUNNERS = {
    "uv": ("run",),
    "poetry": ("run",),
    "pipenv": ("run",),
    "hatch": ("run",),
    "pdm": ("run",),
    "rye": ("run",),
    "npx": (),
    "pnpx": (),
    "bunx": (),
    "pnpm": ("exec",),
}
# Programs whose first word is a subcommand worth keeping (``git commit``, ``npm run test``).
_SUBCOMMANDS = frozenset(
    "git npm pnpm yarn bun cargo go make just uv docker dotnet mvn gradle gradlew pip pip3 "
    "poetry kubectl terraform deno mix swift task mise ruff gh brew apt apt-get rustup conda "
    "helm bundle rails rake composer zig nx turbo pre-commit alembic django-admin tox nox "
    "hatch pdm rye pipenv".split()
)
# Options a program takes before its subcommand, with a value after them (``git -C dir
# stash``, ``make -C app test``): skipped with their value, so the form is ``git stash``, not
# ``git`` (a rule made of ``git`` alone would cover every git command). Any other option stops
# the form at the program: whether it takes a value is not known (``npm --loglevel warn
# install`` is not ``npm warn``), except the flags below and ``--name=value``.
_VALUED_OPTIONS = {
    "git": ("-C", "-c", "--git-dir", "--work-tree", "--namespace"),
    "make": ("-C", "-f", "--directory", "--file", "--makefile"),
    "docker": ("-H", "--host", "--context", "-c", "--config", "--log-level"),
    "kubectl": ("-n", "--namespace", "--context", "--kubeconfig", "--cluster", "--user"),
    "helm": ("-n", "--namespace", "--kube-context", "--kubeconfig"),
    "gh": ("-R", "--repo"),
    "npm": ("-C", "--prefix", "-w", "--workspace"),
    "pnpm": ("-C", "--dir", "-F", "--filter"),
    "yarn": ("--cwd",),
    "cargo": ("-C", "--manifest-path", "--config"),
    "go": ("-C",),
    "just": ("-f", "--justfile", "-d", "--working-directory"),
    "mise": ("-C", "--cd", "-E", "--env"),
}
_FLAGS = {
    "git": ("--no-pager", "-P", "--paginate", "--bare", "--no-replace-objects"),
    "docker": ("-D", "--debug"),
    "cargo": ("-q", "--quiet", "-v", "--verbose", "--frozen", "--locked", "--offline"),
    "npm": ("-s", "--silent", "-q", "--quiet"),
    "make": ("-s", "--silent", "-k", "--keep-going", "-B", "--always-make"),
}
# Subcommands that take a script or target name after them (``npm run test``).
_SCRIPT_RUNNERS = frozenset({"run", "exec", "x"})
MAX_WORDS = 5
MAX_WORD = 40


def _segment(command: str) -> str:
    """The first line's first segment that is not a ``cd``."""
    line = command.strip().split("\n", 1)[0]
    for sep in _SEPARATORS:
        line = line.replace(sep, "\n")
    for part in line.split("\n"):
        words = part.split()
        if words and words[0] not in ("cd", "pushd", "Set-Location", "("):
            return part.strip().lstrip("(").strip()
    return ""


def _program_word(word: str) -> str | None:
    """A program as the form keeps it: a relative path stays (``.venv/bin/pytest``), an
    absolute or home path becomes its last part (it may name a person), quotes are refused."""
    if word.startswith(("/", "~")):
        word = word.rsplit("/", 1)[-1]
    if word.startswith("./"):
        word = word[2:]
    if not word or len(word) > MAX_WORD or ".." in word:
        return None
    if all(ch in _SAFE or ch == "/" for ch in word):
        return word
    return None


def _plain(word: str) -> bool:
    return (
        0 < len(word) <= 24
        and word[0].isalpha()
        and word.islower()
        and all(ch in _SAFE for ch in word)
    )


def command_form(command: object) -> str | None:
    """The command's form (see the module), or None when it runs nothing recognisable."""
    if not isinstance(command, str):
        return None
    words = _segment(command).split()
    out: list[str] = []
    i = 0
    while i < len(words) and len(out) < MAX_WORDS:
        word = words[i]
        name = word.rsplit("/", 1)[-1]
        if not out and "=" in word and not word.startswith(("=", "-")):
            i += 1  # an environment assignment: its value may be a secret
            continue
        if not out and name in _TRANSPARENT:
            i += 1
            continue
        if word.startswith("-") and not out:
            i += 1  # an option of a dropped word (``sudo -E``)
            continue
        program = _program_word(word)
        if program is None:
            return " ".join(out) or None
        out.append(program)
        i += 1
        if name in _RUNNERS:
            follow = _RUNNERS[name]
            if follow and i < len(words) and words[i] in follow:
                out.append(words[i])
                i += 1
            elif follow:  # ``uv sync``: uv is the program itself
                if name in _SUBCOMMANDS and i < len(words) and _plain(words[i]):
                    out.append(words[i])
                return " ".join(out)
            while i < len(words) and words[i].startswith("-"):
                i += 1  # ``uv run --frozen pytest``
            continue
        if name in ("python", "python3") or name.startswith("python3."):
            if i + 1 < len(words) and words[i] == "-m" and _program_word(words[i + 1]):
                out += ["-m", words[i + 1]]
                sub = words[i + 1]
                i += 2
                if sub in _SUBCOMMANDS and i < len(words) and _plain(words[i]):
                    out.append(words[i])
            return " ".join(out)
        if name in _SUBCOMMANDS:
            i = _past_options(words, i, _VALUED_OPTIONS.get(name, ()), _FLAGS.get(name, ()))
        if name in _SUBCOMMANDS and i < len(words) and _plain(words[i]):
            out.append(words[i])
            if words[i] in _SCRIPT_RUNNERS and i + 1 < len(words) and _plain(words[i + 1]):
                out.append(words[i + 1])
        return " ".join(out)
    return " ".join(out) or None


def _past_options(words: list[str], i: int, valued: tuple[str, ...], flags: tuple[str, ...]) -> int:
    """The index of the first word after the options at ``i`` (``-C dir`` when ``valued``
    has it, a flag of ``flags``, ``--git-dir=x``); ``len(words)`` at an option not known,
    so no subcommand is taken (its value might be taken for one)."""
    while i < len(words) and words[i].startswith("-") and len(words[i]) > 1:
        if words[i] in valued:
            i += 2
        elif words[i] in flags or (words[i].startswith("--") and "=" in words[i]):
            i += 1
        else:
            return len(words)
    return i


def form_step(form: str) -> str:
    """The step a form runs, whatever runs it: ``pytest`` for ``uv run pytest``,
    ``python -m pytest`` and ``.venv/bin/pytest``; ``mise run fmt`` for itself."""
    words = form.split()
    i = 0
    while i < len(words):
        name = words[i].rsplit("/", 1)[-1]
        if name in _RUNNERS and i + 1 < len(words) and words[i + 1] in _RUNNERS[name]:
            i += 2
            continue
        if name in _RUNNERS and not _RUNNERS[name]:
            i += 1
            continue
        if (name in ("python", "python3") or name.startswith("python3.")) and (
            i + 2 < len(words) and words[i + 1] == "-m"
        ):
            i += 2
            continue
        return " ".join([name, *words[i + 1 :]])
    return words[-1].rsplit("/", 1)[-1] if words else ""


def form_program(form: str) -> str:
    """The program of a form's step (``pytest`` for ``uv run pytest``, ``git`` for
    ``git commit``)."""
    step = form_step(form)
    return step.split()[0] if step else ""
