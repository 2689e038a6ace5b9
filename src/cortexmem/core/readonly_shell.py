"""Shell commands that cannot change anything: a rule table, not code.

Read-only shell programs, and the subcommands that keep some of them read-only (``git log``
but not ``git push``; ``git branch`` but not ``git branch -D x``), less the flags and operands
that make a reading program write or run something (``sed -i``, ``sort -o``, ``find -exec``,
``env X=1 cmd``). A command is read-only only when every part of its chain (``&&``, ``||``,
``;``, ``|``) is, it redirects nothing into a file and it runs no command inside another
(``$(…)``, ``<(…)``, a PowerShell script block). When in doubt, a command is not read-only: the
cost is a look-up, where the other mistake costs a warning not shown. Two readers: the PreToolUse
hook skips the lesson look-up for such a call (``hosts.claude_code.readonly``), and the episodes
keep what a command that acted printed, not what a look at the files printed
(``core.episodes``). Imports nothing at all (not even ``re`` or ``typing``): the hook reads it
on every tool call.
"""

from __future__ import annotations

READ_ONLY_PROGRAMS = frozenset(
    {
        "ls", "dir", "cat", "head", "tail", "less", "more", "wc", "grep", "rg", "ag", "find",
        "fd", "tree", "pwd", "echo", "printf", "which", "whereis", "type", "file", "stat", "du",
        "df", "date", "whoami", "id", "uname", "env", "printenv", "diff", "cmp", "sort",
        "uniq", "cut", "tr", "column", "jq", "yq", "realpath", "dirname", "basename",
        "readlink", "true", "false", "test", "[", "nl", "od", "hexdump", "xxd", "strings",
        "md5sum", "sha256sum", "sha1sum", "ps", "top", "free", "uptime", "hostname", "sleep",
        "man", "tldr", "lsof", "netstat", "ss", "cd", "exit",
    }
)  # fmt: skip
# PowerShell's reading cmdlets, by their Verb-Noun names only (PowerShell ignores case: compared
# in lower case). Not their short aliases: ``gc`` and ``gl`` are git aliases in many POSIX
# shells (commit, pull), ``sls`` is the Serverless Framework (deploy, remove).
POWERSHELL_READS = frozenset(
    {
        "get-childitem", "get-content", "get-item", "get-location", "get-command",
        "get-process", "select-string", "test-path", "resolve-path", "measure-object",
        "select-object", "where-object", "sort-object", "format-table", "format-list",
        "write-output", "write-host",
    }
)  # fmt: skip
# Programs read-only only with these first arguments (the subcommand first: ``kubectl -n logs
# delete pod x`` is not ``kubectl logs``; git's own options before it are skipped, below).
READ_ONLY_SUBCOMMANDS = {
    "git": frozenset(
        {"log", "status", "diff", "show", "branch", "blame", "rev-parse", "ls-files",
         "ls-tree", "describe", "remote", "shortlog", "grep", "reflog", "cat-file", "config",
         "worktree", "tag"}
    ),
    "docker": frozenset({"ps", "images", "logs", "inspect", "version", "info"}),
    "kubectl": frozenset({"get", "describe", "logs", "version", "explain"}),
    "npm": frozenset({"ls", "list", "view", "outdated", "--version", "-v"}),
    "pip": frozenset({"list", "show", "freeze", "--version"}),
    "cargo": frozenset({"tree", "metadata", "--version"}),
    "go": frozenset({"list", "env", "version", "doc"}),
    "gh": frozenset({"pr", "issue", "run", "repo", "release"}),  # with a viewing verb (below)
    "python": frozenset({"--version", "-V"}),
    "python3": frozenset({"--version", "-V"}),
    "node": frozenset({"--version", "-v"}),
}  # fmt: skip
_VIEWS = frozenset({"view", "list", "status", "diff", "checks", "watch"})
_BRANCH_WRITES = frozenset(
    {"-d", "-D", "-m", "-M", "-c", "-C", "-f", "-u", "--delete", "--move", "--copy", "--force",
     "--set-upstream-to", "--unset-upstream", "--edit-description", "--track", "--no-track"}
)  # fmt: skip
_TAG_WRITES = frozenset({"-d", "--delete", "-a", "--annotate", "-s", "--sign", "-f", "--force",
                         "-m", "-F", "-u"})  # fmt: skip
_CONFIG_READS = frozenset({"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l"})
_CONFIG_WRITES = frozenset({"--unset", "--unset-all", "--add", "--replace-all", "--rename-section",
                            "--remove-section", "-e", "--edit"})  # fmt: skip


def _names(rest: list[str]) -> set[str]:
    return {w.split("=", 1)[0] for w in rest}


# What may follow a subcommand for it to stay read-only (``git branch`` lists, ``git branch
# -D x`` deletes, ``git branch x`` creates; ``gh pr view`` reads, ``gh pr merge`` merges).
FURTHER = {
    ("git", "branch"): lambda rest: all(w.startswith("-") for w in rest)
    and not _names(rest) & _BRANCH_WRITES,
    ("git", "tag"): lambda rest: not rest
    or (bool({"-l", "--list"} & set(rest)) and not _names(rest) & _TAG_WRITES),
    ("git", "remote"): lambda rest: [w for w in rest if w not in ("-v", "--verbose")][:1]
    in ([], ["show"], ["get-url"]),
    ("git", "reflog"): lambda rest: not {"expire", "delete"} & set(rest),
    ("git", "worktree"): lambda rest: rest[:1] == ["list"],
    ("git", "config"): lambda rest: bool(_names(rest) & _CONFIG_READS)
    and not _names(rest) & _CONFIG_WRITES,
    ("go", "env"): lambda rest: not {"-w", "-u"} & set(rest),
    **{("gh", sub): lambda rest: bool(rest) and rest[0] in _VIEWS
       for sub in ("pr", "issue", "run", "repo", "release")},
}  # fmt: skip
CHAIN = ("&&", "||", ";", "|", "\n")
# Flags that make a reading program write or run something: ``find``'s actions, for any program.
WRITING_FLAGS = frozenset(
    {"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"}
)
# ... and one program's: a long one at a word's start (``--output=x``), a one-letter one
# anywhere in a bundle of them (``sort -uo x``, ``sed -Ei``, ``-i.bak``).
WRITING_FLAGS_OF = {
    "yq": ("-i", "--inplace"),
    "sort": ("-o", "--output"),
    "tree": ("-o",),
    "fd": ("-x", "--exec", "-X", "--exec-batch"),
    "rg": ("--pre",),
    "date": ("-s", "--set"),
    "git": ("--output", "-O", "--open-files-in-pager"),
    "ss": ("-K", "--kill"),
}
# git's own options that take a value before the subcommand (``git -C dir log``).
GIT_VALUE_OPTIONS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})
# Programs that write (or run) what follows past this many operands: ``uniq in out`` writes
# out, ``env X=1 rm -rf build`` runs rm, ``hostname name`` renames the machine.
MOST_OPERANDS = {"uniq": 1, "xxd": 1, "hostname": 0, "env": 0}
# Text that runs another command inside this one.
SUBSTITUTIONS = ("$(", "`", "<(", ">(")
WRITING_PROGRAMS = frozenset({"tee"})
_NAME = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _assignment(word: str) -> bool:
    name, eq, _ = word.partition("=")
    return bool(eq and name and set(name) <= _NAME and not name[0].isdigit())


def writes_a_file(command: str) -> bool:
    """Whether the command redirects output into a file (``> x``, ``>> x``, ``2>x``, ``>& x``;
    not ``2>&1``, ``>&-``, ``> /dev/null`` or PowerShell's ``> $null``) or pipes it through
    ``tee``."""
    words = command.split()
    for i, word in enumerate(words):
        if word in WRITING_PROGRAMS:
            return True
        if ">" not in word:
            continue
        following = words[i + 1] if i + 1 < len(words) else ""
        target = word.rsplit(">", 1)[1] or following
        if target.startswith("&"):  # onto another descriptor, or ``>& file``
            target = target[1:] or following
            if target.isdigit() or target == "-":
                continue
        if target.lower() not in ("/dev/null", "$null"):
            return True
    return False


def _writes_with(flag: str, word: str) -> bool:
    if flag.startswith("--") or not word.startswith("-") or word.startswith("--"):
        return word.startswith(flag)
    return flag[1] in word[1:]


def _sed_prints(args: list[str]) -> bool:
    """``sed -n '1,20p' file``: lines printed by number, nothing written or run (a script's
    ``w``, ``W`` or ``e`` command writes a file or runs one; ``-i`` edits in place)."""
    flags = [w for w in args if w.startswith("-")]
    scripts = [w.strip("'\"") for w in args if not w.startswith("-")][:1]
    return (
        flags == ["-n"]
        and len(scripts) == 1
        and scripts[0].endswith("p")
        and set(scripts[0][:-1]) <= set("0123456789,$")
    )


def _subcommand(name: str, args: list[str]) -> int:
    """Where ``name``'s subcommand is in ``args``: first for every program but git, whose own
    options (``--no-pager``, ``-C dir``) may come before it."""
    if name != "git":
        return 0
    at = 0
    while at < len(args) and args[at].startswith("-"):
        at += 2 if args[at] in GIT_VALUE_OPTIONS else 1
    return min(at, len(args) - 1)


def _part_is_read_only(part: str) -> bool:
    words = [w for w in part.split() if not _assignment(w)]
    if not words:
        return True
    if WRITING_FLAGS.intersection(words):
        return False
    name, args = words[0].rsplit("/", 1)[-1], words[1:]
    if any(_writes_with(flag, w) for flag in WRITING_FLAGS_OF.get(name, ()) for w in args):
        return False
    if name == "sed":
        return _sed_prints(args)
    if sum(not w.startswith("-") for w in args) > MOST_OPERANDS.get(name, len(args)):
        return False
    if name in READ_ONLY_PROGRAMS:
        return True
    if name.lower() in POWERSHELL_READS:
        return "{" not in part and "(" not in part  # a script block runs whatever it holds
    allowed = READ_ONLY_SUBCOMMANDS.get(name)
    if allowed is None or not args:
        return False
    at = _subcommand(name, args)
    if args[at] not in allowed:
        return False
    further = FURTHER.get((name, args[at]))
    return further is None or further(args[at + 1 :])


def is_read_only_command(command: str) -> bool:
    """Whether every part of a shell command's chain is read-only (and nothing is written)."""
    if not command.strip() or writes_a_file(command):
        return False
    if any(inner in command for inner in SUBSTITUTIONS):
        return False
    for separator in CHAIN:
        command = command.replace(separator, "\0")
    if "&" in command:  # a lone ``&`` starts another command too; ``>&``, ``&>`` do not
        command = "".join(
            "\0" if c == "&" and command[i - 1 : i] not in (">", "<")
            and command[i + 1 : i + 2] != ">" else c
            for i, c in enumerate(command)
        )  # fmt: skip
    return all(_part_is_read_only(part) for part in command.split("\0"))
