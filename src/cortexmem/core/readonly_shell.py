"""Shell commands that cannot change anything: a rule table, not code.

Read-only shell programs, and the subcommands that keep some of them read-only (``git log``
but not ``git push``). A command is read-only only when every part of its chain (``&&``,
``||``, ``;``, ``|``) is, and it redirects nothing into a file. Two readers: the PreToolUse
hook skips the lesson look-up for such a call (``hosts.claude_code.readonly``), and the episodes
keep what a command that acted printed, not what a look at the files printed
(``core.episodes``). Imports nothing at all (not even ``re`` or ``typing``): the hook reads it
on every tool call.
"""

from __future__ import annotations

READ_ONLY_PROGRAMS = frozenset(
    {
        "ls", "cat", "head", "tail", "less", "more", "wc", "grep", "rg", "ag", "find", "fd",
        "tree", "pwd", "echo", "printf", "which", "whereis", "type", "file", "stat", "du",
        "df", "date", "whoami", "id", "uname", "env", "printenv", "diff", "cmp", "sort",
        "uniq", "cut", "tr", "column", "jq", "yq", "realpath", "dirname", "basename",
        "readlink", "true", "false", "test", "[", "nl", "od", "hexdump", "xxd", "strings",
        "md5sum", "sha256sum", "sha1sum", "ps", "top", "free", "uptime", "hostname", "sleep",
        "awk", "history", "man", "tldr", "lsof", "netstat", "ss", "cd", "exit",
    }
)  # fmt: skip
# PowerShell's reading cmdlets and their aliases (PowerShell ignores case: compared in lower case).
POWERSHELL_READS = frozenset(
    {
        "get-childitem", "get-content", "get-item", "get-location", "get-command",
        "get-process", "select-string", "test-path", "resolve-path", "measure-object",
        "select-object", "where-object", "sort-object", "format-table", "format-list",
        "write-output", "write-host", "gci", "gc", "gi", "gl", "sls", "dir",
    }
)  # fmt: skip
# Programs read-only only with these first arguments.
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
    "gh": frozenset({"pr", "issue", "run", "repo", "api"}),  # their views and lists, mostly
    "sed": frozenset({"-n"}),
    "python": frozenset({"--version", "-V"}),
    "python3": frozenset({"--version", "-V"}),
    "node": frozenset({"--version", "-v"}),
}  # fmt: skip
CHAIN = ("&&", "||", ";", "|", "\n")
# Flags that make a reading program write (``find -delete``, ``sed -i``).
WRITING_FLAGS = frozenset({"-delete", "-exec", "-execdir", "-i", "--in-place", "-w"})
WRITING_PROGRAMS = frozenset({"tee"})
_NAME = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _assignment(word: str) -> bool:
    name, eq, _ = word.partition("=")
    return bool(eq and name and set(name) <= _NAME and not name[0].isdigit())


def writes_a_file(command: str) -> bool:
    """Whether the command redirects output into a file (``> x``, ``>> x``, ``2>x``; not
    ``2>&1``, ``> /dev/null`` or PowerShell's ``> $null``) or pipes it through ``tee``."""
    words = command.split()
    for i, word in enumerate(words):
        if word in WRITING_PROGRAMS:
            return True
        if ">" not in word:
            continue
        target = word.rsplit(">", 1)[1] or (words[i + 1] if i + 1 < len(words) else "")
        if not target.startswith("&") and target.lower() not in ("/dev/null", "$null"):
            return True
    return False


def _part_is_read_only(part: str) -> bool:
    words = [w for w in part.split() if not _assignment(w)]
    if not words:
        return True
    if WRITING_FLAGS.intersection(words):
        return False
    name = words[0].rsplit("/", 1)[-1]
    if name in READ_ONLY_PROGRAMS or name.lower() in POWERSHELL_READS:
        return True
    allowed = READ_ONLY_SUBCOMMANDS.get(name)
    if allowed is None or len(words) < 2:
        return False
    sub = next((w for w in words[1:] if not w.startswith("-")), words[1])
    return words[1] in allowed or sub in allowed


def is_read_only_command(command: str) -> bool:
    """Whether every part of a shell command's chain is read-only (and nothing is written)."""
    if not command.strip() or "$(" in command or "`" in command or writes_a_file(command):
        return False
    for separator in CHAIN:
        command = command.replace(separator, "\0")
    return all(_part_is_read_only(part) for part in command.split("\0"))
