"""Layer 1 of the warnings: calls that cannot change anything skip the lesson lookup, for free.

A rule table, not code: read-only tools by name, and read-only shell programs (with the
subcommands that keep some of them read-only, ``git log`` but not ``git push``). A shell
command is read-only only when every part of its chain (``&&``, ``||``, ``;``, ``|``) is, and
it redirects nothing into a file. Stdlib only (``re``): this runs in the PreToolUse hook
before anything else is imported.
"""

from __future__ import annotations

import re
from typing import Final

READ_ONLY_TOOLS: Final = frozenset(
    {
        "Read", "Grep", "Glob", "LS", "WebFetch", "WebSearch", "TodoWrite", "TaskList",
        "TaskGet", "TaskOutput", "BashOutput", "ToolSearch", "ListMcpResourcesTool",
        "ReadMcpResourceTool", "AskUserQuestion", "NotebookRead", "ExitPlanMode",
        "EnterPlanMode", "Skill", "SlashCommand",
    }
)  # fmt: skip
READ_ONLY_PROGRAMS: Final = frozenset(
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
# Programs read-only only with these first arguments.
READ_ONLY_SUBCOMMANDS: Final[dict[str, frozenset[str]]] = {
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
_CHAIN: Final = re.compile(r"&&|\|\||;|\||\n")
# Writing into a file (not into /dev/null or another descriptor) is not read-only.
_REDIRECT: Final = re.compile(r"(?<![0-9&])>>?\s*(?!&|/dev/null)\S|\btee\b")
_ASSIGNMENT: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S*$")
# Flags that make a reading program write (``find -delete``, ``sed -i``).
_WRITING_FLAGS: Final = frozenset({"-delete", "-exec", "-execdir", "-i", "--in-place", "-w"})
_SHELL_TOOLS: Final = frozenset({"Bash", "PowerShell"})


def _part_is_read_only(part: str) -> bool:
    words = [w for w in part.strip().split() if not _ASSIGNMENT.match(w)]
    if not words:
        return True
    if _WRITING_FLAGS.intersection(words):
        return False
    name = words[0].rsplit("/", 1)[-1]
    if name in READ_ONLY_PROGRAMS:
        return True
    allowed = READ_ONLY_SUBCOMMANDS.get(name)
    if allowed is None or len(words) < 2:
        return False
    sub = next((w for w in words[1:] if not w.startswith("-")), words[1])
    return words[1] in allowed or sub in allowed


def is_read_only_command(command: str) -> bool:
    """Whether every part of a shell command's chain is read-only (and nothing is written)."""
    if not command.strip() or _REDIRECT.search(command) or "$(" in command or "`" in command:
        return False
    return all(_part_is_read_only(part) for part in _CHAIN.split(command))


def is_read_only(tool: str, tool_input: object) -> bool:
    """Layer 1: whether a tool call skips the lesson lookup."""
    if tool in READ_ONLY_TOOLS:
        return True
    if tool in _SHELL_TOOLS and isinstance(tool_input, dict):
        command = tool_input.get("command")
        return isinstance(command, str) and is_read_only_command(command)
    return False
