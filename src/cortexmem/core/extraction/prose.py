"""Turning message text into candidate sentences: the part of extraction that reads prose.

Code is not prose: fenced blocks, indented blocks and inline code spans that hold the markers
themselves are removed before anything is matched, so a snippet that says ``# we decided``
or an example of the ``[MEMORY: ...]`` syntax is never taken for a statement.
"""

from __future__ import annotations

import re
from typing import Final

_FENCE: Final = re.compile(r"(?ms)^[ \t]*(```|~~~).*?(?:^[ \t]*\1[ \t]*$|\Z)")
_REMINDER: Final = re.compile(
    r"(?s)<(system-reminder|command-[a-z-]+|local-command-[a-z-]+)>.*?</\1>"
)
_TAG_LIKE: Final = re.compile(r"<[a-z-]+>|</[a-z-]+>")
_INLINE_MARKER: Final = re.compile(r"`[^`\n]*\[MEMORY[^`\n]*`")
_BULLET: Final = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)]|#{1,6})\s+")
_EMPHASIS: Final = re.compile(r"\*\*|__")
_SENTENCE_END: Final = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(\[*])")

# Text the host writes into the user's turn: not the person speaking.
HOST_PREFIXES: Final = (
    "Caveat:",
    "[Request interrupted",
    "Stop hook feedback",
    "This session is being continued",
    "<command-",
    "<local-command",
    "<bash-",
    "<user-prompt-submit-hook>",
    "<task-notification>",
    "Base directory for this skill",
)

MIN_SENTENCE: Final = 12
MAX_SENTENCE: Final = 600


def strip_code(text: str) -> str:
    """Text with fenced code, host reminders and inline examples of tags removed."""
    text = _FENCE.sub("\n", text)
    text = _REMINDER.sub("\n", text)
    return _INLINE_MARKER.sub("", text)


def is_host_text(text: str) -> bool:
    return text.lstrip().startswith(HOST_PREFIXES)


def sentences(text: str) -> list[str]:
    """Prose sentences of ``text`` (code removed), each trimmed of list and emphasis marks."""
    out: list[str] = []
    for raw_line in strip_code(text).splitlines():
        if raw_line.startswith(("    ", "\t", ">", "|")):
            continue  # indented code, quotes and tables are not statements
        line = _TAG_LIKE.sub("", _EMPHASIS.sub("", _BULLET.sub("", raw_line))).strip()
        if not line:
            continue
        for part in _SENTENCE_END.split(line):
            part = part.strip()
            if MIN_SENTENCE <= len(part) <= MAX_SENTENCE:
                out.append(part)
    return out
