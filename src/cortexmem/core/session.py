"""Host-neutral records of what happened in a session: the input of extraction.

A host adapter (the Claude Code transcript parser, a subagent's structured work summary, a
future host) turns its own format into ``Entry`` records; extraction only ever sees these. That
keeps extraction pure and lets new sources feed it without touching it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal

BlockKind = Literal["text", "thinking", "tool_use", "tool_result", "image"]
Role = Literal["user", "assistant", "system", "summary"]

BLOCK_KINDS: Final = ("text", "thinking", "tool_use", "tool_result", "image")
ROLES: Final = ("user", "assistant", "system", "summary")


@dataclass
class Block:
    """One piece of a message.

    - ``text`` / ``thinking``: ``text`` holds the words.
    - ``tool_use``: ``tool_name``, ``tool_input`` and ``tool_use_id``.
    - ``tool_result``: ``tool_use_id``, ``text`` (the result flattened to text, possibly
      truncated), ``is_error``, and ``result`` (the host's structured result, e.g. Claude Code's
      ``toolUseResult``: Bash stdout/stderr, Edit filePath, TodoWrite newTodos ...).
    - ``image``: nothing but its kind (images are never stored).
    """

    kind: BlockKind
    text: str = ""
    tool_name: str | None = None
    tool_input: dict[str, Any] = field(default_factory=dict)
    tool_use_id: str | None = None
    is_error: bool = False
    result: dict[str, Any] | None = None


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

    @property
    def text(self) -> str:
        """The entry's words (text blocks only), joined by blank lines."""
        return "\n\n".join(b.text for b in self.blocks if b.kind == "text" and b.text)
