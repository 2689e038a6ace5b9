"""Host-neutral records of what happened in a session: the input of extraction.

A host adapter (a host's transcript parser, a subagent's structured work summary, a
future host such as Codex CLI or Gemini CLI) turns its own format into ``Entry`` records;
extraction only ever sees these. Tool calls arrive as ``ToolCall`` / ``ToolResult`` with a
neutral ``kind`` and the fields extraction reads already pulled out of the host's payload, and
what a host writes into the conversation without anyone speaking is described by a ``Dialect``
the host hands in. That keeps extraction pure and lets new hosts feed it without touching it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final, Literal, NamedTuple

BlockKind = Literal["text", "thinking", "tool_use", "tool_result", "image"]
Role = Literal["user", "assistant", "system", "summary"]
# What a tool call does, whatever the host calls the tool.
ToolKind = Literal[
    "edit",  # changes a file in place
    "write",  # writes a whole file (creates it or replaces it)
    "shell",  # runs a shell command
    "plan",  # proposes a plan for the person to approve
    "todo",  # sets the whole to-do list
    "task_create",  # adds one step to the to-do list
    "task_update",  # changes one step's status
    "subagent",  # delegates to a subagent and returns its report
    "read",
    "search",
    "other",
]

BLOCK_KINDS: Final = ("text", "thinking", "tool_use", "tool_result", "image")
ROLES: Final = ("user", "assistant", "system", "summary")
TOOL_KINDS: Final = (
    "edit", "write", "shell", "plan", "todo", "task_create", "task_update", "subagent", "read",
    "search", "other",
)  # fmt: skip


@dataclass(frozen=True)
class ToolCall:
    """One tool call, as extraction needs it.

    ``kind`` decides what the call means; ``name`` is the host's own name for the tool, kept
    so events read the way the session did ("<tool> app.py failed"). The other fields are what
    the host's input says, already found in it: ``path`` (the file an edit or write touches),
    ``pattern`` (what a search looks for), ``command`` and ``description`` (shell),
    ``plan`` (a proposed plan), ``steps`` (a whole to-do list as ``(text, status)``; ``None``
    when the input had no list), ``subject`` / ``task_id`` / ``status`` (one to-do step),
    ``agent`` (a subagent's type), ``written`` (what a write or an edit asks to put into the
    file: the new file's content, an edit's new text; only taken as written once its result
    says it succeeded), ``partial`` (what the call reaches is part of the file: a read of a
    range of its lines, a written text the host cut).
    """

    kind: ToolKind
    name: str
    call_id: str | None = None
    path: str = ""
    pattern: str = ""
    command: str = ""
    description: str = ""
    plan: str = ""
    steps: tuple[tuple[str, str], ...] | None = None
    subject: str = ""
    task_id: str | None = None
    status: str | None = None
    agent: str = ""
    written: str = ""
    partial: bool = False


@dataclass(frozen=True)
class ToolResult:
    """What a tool call returned, as extraction needs it.

    ``text`` is the result flattened to text (possibly cut); ``refused`` means the person
    declined the call (a choice, not a failure); ``output`` is the command's own output when
    the host keeps it apart from ``text``; ``path`` the file the host says it touched,
    ``created`` whether a write made a new file, ``task_id`` the id a new to-do step got,
    ``written`` the text a successful write or edit put into the file (a new file's content,
    an edit's replacement text), when the host reports it; ``reason`` what the person typed
    when refusing the call, when the host keeps it with the refusal; ``cancelled`` that the
    host stopped the call in the host's own words for a call not run because another one was
    refused ("doesn't want to take this action right now"), which alone is also a refusal.
    ``partial`` says the host cut ``text``: it is not all the tool returned. ``output_apart``:
    the host keeps a command's own output apart from its message, so ``output`` is all the
    command printed even when empty (a command sent to the background printed nothing yet;
    ``text`` is then the host's own words, "Command running in background with ID: …").
    """

    call_id: str | None
    text: str = ""
    is_error: bool = False
    refused: bool = False
    output: str = ""
    path: str = ""
    created: bool = False
    task_id: str | None = None
    written: str = ""
    reason: str = ""
    cancelled: bool = False
    partial: bool = False
    output_apart: bool = False


@dataclass(frozen=True)
class Dialect:
    """What a host writes into a conversation that nobody said, so prose extraction skips it.

    ``injected_tags``: regular expressions of tag names whose whole element the host inserted
    (``<name>...</name>``); ``injected_prefixes``: how a user turn the host wrote begins;
    ``summary_preamble``: a regular expression of the boilerplate before a compaction summary;
    ``edit_tools``: the tools that change files (the core knows no tool by name);
    ``plan_handoff``: a regular expression of how a user turn the host wrote to start work on a
    plan the person approved begins (the plan follows it); ``interrupted``: how a user turn the
    host wrote when the person stopped the assistant begins (what they say next corrects it);
    ``attachment``: a regular expression of how the host marks a picture pasted into a prompt;
    ``shell_input`` and ``shell_output``: regular expressions of the turns the host writes when
    the person runs a command themselves (its group ``command``; then what it printed, groups
    ``out`` and ``err``, and ``end``, matched when the output is whole: a long one may be cut);
    ``own_files``: a regular expression of the paths of files the host keeps for itself (a
    plan written in plan mode): writing one changes nothing of the project.
    """

    injected_tags: tuple[str, ...] = ()
    injected_prefixes: tuple[str, ...] = ()
    summary_preamble: str | None = None
    # The host's tools that change files: the "edit" steps of the learning loop's workflows.
    edit_tools: frozenset[str] = frozenset()
    plan_handoff: str | None = None
    interrupted: tuple[str, ...] = ()
    attachment: str | None = None
    shell_input: str | None = None
    shell_output: str | None = None
    own_files: str | None = None


PLAIN: Final = Dialect()


class PersonShell:
    """The turns a host writes when the person runs a command themselves (``Dialect``'s
    ``shell_input`` and ``shell_output``), read the one way episodes and extraction need."""

    def __init__(self, dialect: Dialect) -> None:
        self.asked = re.compile(dialect.shell_input) if dialect.shell_input else None
        self.printed = re.compile(dialect.shell_output) if dialect.shell_output else None

    def __bool__(self) -> bool:
        return self.asked is not None and self.printed is not None

    def command(self, text: str) -> str | None:
        """The command, when ``text`` is the turn that ran one ("" for an empty one)."""
        found = self.asked.match(text) if self.asked else None
        return found.group("command").strip() if found else None

    def output(self, text: str) -> Printed | None:
        """What the command printed (its output, then its errors), when ``text`` says it, and
        whether that is all of it (a long output's end may be cut off)."""
        found = self.printed.match(text) if self.printed else None
        if found is None:
            return None
        said = "\n".join(p.strip() for p in (found.group("out"), found.group("err")) if p)
        return Printed(said, "end" in found.re.groupindex and bool(found.group("end")))


class Printed(NamedTuple):
    """What a command the person ran printed; ``whole``: its end was not cut off."""

    text: str
    whole: bool


@dataclass
class Block:
    """One piece of a message.

    - ``text`` / ``thinking``: ``text`` holds the words.
    - ``tool_use``: ``call`` (what extraction reads); ``tool_name``, ``tool_input`` and
      ``tool_use_id`` keep the host's own record of it.
    - ``tool_result``: ``outcome`` (what extraction reads); ``tool_use_id``, ``text`` (the
      result flattened to text, possibly truncated), ``is_error`` and ``result`` (the host's
      structured result, opaque to the core) keep the host's own record of it.
    - ``image``: nothing but its kind (images are never stored).
    """

    kind: BlockKind
    text: str = ""
    tool_name: str | None = None
    tool_input: dict[str, Any] = field(default_factory=dict)
    tool_use_id: str | None = None
    is_error: bool = False
    result: dict[str, Any] | None = None
    call: ToolCall | None = None
    outcome: ToolResult | None = None


@dataclass
class Entry:
    """One record of a session, in order.

    ``line`` is the 1-based line of the transcript it came from (provenance); ``role`` is who
    spoke. ``is_compact_summary`` marks the summary written by a compaction, ``is_meta`` a
    message the host injected rather than the person typed (command output, caveats,
    hook context), and ``subtype`` a system record's kind (``compact_boundary`` ...).
    """

    line: int
    role: Role
    blocks: list[Block] = field(default_factory=list)
    session_id: str | None = None
    uuid: str | None = None
    timestamp: str | None = None
    cwd: str | None = None
    branch: str | None = None
    is_sidechain: bool = False
    agent_id: str | None = None
    is_compact_summary: bool = False
    is_meta: bool = False
    subtype: str | None = None
    transcript_path: str | None = None
    # What the model's answer cost (new input, cache writes and output tokens) and the id of
    # the answer it belongs to (a host may split one answer over several records).
    tokens: int = 0
    message_id: str | None = None

    @property
    def text(self) -> str:
        """The entry's words (text blocks only), joined by blank lines."""
        return "\n\n".join(b.text for b in self.blocks if b.kind == "text" and b.text)


# ----------------------------------------------------------------- reading a transcript


@dataclass(frozen=True, slots=True)
class RawLine:
    """One complete line: its 1-based number, byte span ``[start, end)`` (``end`` is just past
    the newline, i.e. where the next read starts) and its bytes (``None`` when oversized)."""

    number: int
    start: int
    end: int
    data: bytes | None


@dataclass
class ParseStats:
    """What a read saw, so a caller can report it rather than lose it silently."""

    lines: int = 0
    entries: int = 0
    blank: int = 0
    malformed: int = 0
    oversized: int = 0
    skipped_types: dict[str, int] = field(default_factory=dict)
    partial_tail: bool = False

    def skip(self, kind: str) -> None:
        self.skipped_types[kind] = self.skipped_types.get(kind, 0) + 1


@dataclass(frozen=True)
class SessionInfo:
    """What a transcript says about itself in its first lines."""

    session_id: str | None
    cwd: str | None
    branch: str | None
    version: str | None
    first_timestamp: str | None
    # How the session was started (Claude Code: ``cli``, ``sdk-cli`` for ``claude -p``...).
    entrypoint: str | None = None

    @property
    def automated(self) -> bool:
        """Started by a program (an SDK, ``claude -p``), not by a person at a terminal."""
        return bool(self.entrypoint) and str(self.entrypoint).startswith("sdk")
