"""Layer 1 of the warnings: calls that cannot change anything skip the lesson lookup, for free.

A rule table, not code: Claude Code's read-only tools by name, and its shell tools' commands
judged by the host-neutral table of read-only programs (``core.readonly_shell``). This runs in
the PreToolUse hook before anything else is imported, so it imports nothing else at all (not
even ``re`` or ``typing``).
"""

from __future__ import annotations

from cortexmem.core.readonly_shell import is_read_only_command

READ_ONLY_TOOLS = frozenset(
    {
        "Read", "Grep", "Glob", "LS", "WebFetch", "WebSearch", "TodoWrite", "TaskList",
        "TaskGet", "TaskOutput", "BashOutput", "ToolSearch", "ListMcpResourcesTool",
        "ReadMcpResourceTool", "AskUserQuestion", "NotebookRead", "ExitPlanMode",
        "EnterPlanMode", "Skill", "SlashCommand",
    }
)  # fmt: skip
SHELL_TOOLS = frozenset({"Bash", "PowerShell"})


def is_read_only(tool: str, tool_input: object) -> bool:
    """Layer 1: whether a tool call skips the lesson lookup."""
    if tool in READ_ONLY_TOOLS:
        return True
    if tool in SHELL_TOOLS and isinstance(tool_input, dict):
        command = tool_input.get("command")
        return isinstance(command, str) and is_read_only_command(command)
    return False
