"""Turning message text into candidate sentences: the part of extraction that reads prose.

Code is not prose: fenced blocks, indented blocks and inline code spans that hold the markers
themselves are removed before anything is matched, so a snippet that says ``# we decided``
or an example of the ``[MEMORY: ...]`` syntax is never taken for a statement.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

from cortexmem.core.session import Dialect

_FENCE: Final = re.compile(r"(?ms)^[ \t]*(```|~~~).*?(?:^[ \t]*\1[ \t]*$|\Z)")
_INLINE_MARKER: Final = re.compile(r"`[^`\n]*\[MEMORY[^`\n]*`")
_BULLET: Final = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)]|#{1,6})\s+")
_EMPHASIS: Final = re.compile(r"\*\*|__")
_SENTENCE_END: Final = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(\[*])")

# A sentence that only announces the speaker's next step ("Now let me check …", "Got it, I'll
# fix the test", "Next I run the suite"): no finding, no outcome.
ANNOUNCES: Final = re.compile(
    r"^(?:(?:now,? |first,? |next,? |ok(?:ay)?[,!.]? |got it[,!.]? )*"
    r"(?:let me|let's|i'll|i will|i need to|i should|i'm going to|i am going to)"
    r"|(?:now )?next,? i)\b",
    re.IGNORECASE,
)

MIN_SENTENCE: Final = 12
MAX_SENTENCE: Final = 600


@lru_cache(maxsize=8)
def injected(dialect: Dialect) -> re.Pattern[str] | None:
    """The elements ``dialect``'s host inserts into messages, as one pattern (``None``: none):
    whole elements, and a stray opening or closing tag of theirs. Only the host's own tags:
    ``<div>``, ``fix/<ticket-id>`` or ``Bearer <token>`` in prose are what someone wrote."""
    if not dialect.injected_tags:
        return None
    names = "|".join(dialect.injected_tags)
    return re.compile(r"(?s)<(" + names + r")>.*?</\1>|</?(?:" + names + r")>")


def strip_code(text: str, host: re.Pattern[str] | None = None) -> str:
    """Text with fenced code, what the host inserted (``host``, from ``injected``) and inline
    examples of tags removed."""
    text = _FENCE.sub("\n", text)
    if host is not None:
        text = host.sub(_cut_out, text)
    return _INLINE_MARKER.sub("", text)


def _cut_out(match: re.Match[str]) -> str:
    """A whole inserted element ends the line it was in; a stray tag just goes."""
    return "\n" if match.group(1) else ""


def is_host_text(text: str, dialect: Dialect) -> bool:
    """Whether a user turn is something the host wrote rather than the person typed."""
    return bool(dialect.injected_prefixes) and text.lstrip().startswith(dialect.injected_prefixes)


# Lines that a program wrote, not a person: log records, stack frames, compiler diagnostics.
_LOG_LINE: Final = re.compile(
    r"^\s*(?:\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d|\d\d:\d\d:\d\d|\[?(?:DEBUG|INFO|WARN(?:ING)?|"
    r"ERROR|FATAL|TRACE|CRITICAL)\]?[\s:]|at \S+\(|File \"[^\"]+\", line \d+|Traceback \(|"
    r"\S+\.\w{1,5}:\d+(?::\d+)?[:\s]|\w*(?:Error|Exception):|npm (?:ERR|WARN)|warning:|"
    r"error(?:\[\w+\])?:|"
    r"[-=+*#~_]{6,}|\$ |> |PS [A-Z]:\\|[A-Z]:\\|/(?:usr|home|Users|var|opt|tmp)/)",
)
_CODE_LINE: Final = re.compile(
    r"[{};]\s*$|^\s*(?:def |class |import |from \S+ import|function |const |let |var |"
    r"return\b|#include|public |private |func |fn |package )"
)
# a backslash ending a line the person typed on (``…depths.\`` then ``\`` for a blank line)
_CONTINUATION: Final = re.compile(r"(?m)(?<=\S)[ \t]*\\[ \t]*$|^[ \t]*\\[ \t]*$")
MAX_OWN_PARAGRAPH: Final = 600
PASTE_LINES: Final = 12
PASTE_CHARS: Final = 1_500


def _pasted_paragraph(lines: list[str]) -> bool:
    """Whether a paragraph reads as material pasted in: a log or dump, code, or a document
    (headings, long runs of lines)."""
    if not lines:
        return False
    machine = sum(1 for ln in lines if _LOG_LINE.match(ln) or _CODE_LINE.search(ln))
    if machine * 3 >= len(lines) and (machine >= 2 or (len(lines) <= 2 and machine)):
        return True
    if len(lines) >= PASTE_LINES:
        return True
    return lines[0].lstrip().startswith("#") and len(lines) > 1


def own_words(text: str) -> str:
    """What the person wrote themselves in a message that may quote other material: pasted
    logs, error dumps, code and documents are dropped (they are not the project's rules).

    A long message (many lines or characters) is mostly pasted: only its short paragraphs that
    do not look pasted are kept, and of those the first and the last (the request around it).
    The backslash that ends a line the person continued in the terminal goes, and a line of
    only one is blank: read as typed, a request above a pasted diff is its own paragraph, not
    part of the diff."""
    body = _CONTINUATION.sub("", strip_code(text))
    paragraphs = [p for p in re.split(r"\n\s*\n", body) if p.strip()]
    lines = [ln for ln in body.splitlines() if ln.strip()]
    kept = [
        p for p in paragraphs
        if not _pasted_paragraph([ln for ln in p.splitlines() if ln.strip()])
    ]  # fmt: skip
    if len(lines) > PASTE_LINES * 2 or len(body) > PASTE_CHARS * 2:
        short = [p for p in kept if len(p) <= MAX_OWN_PARAGRAPH]
        kept = short[:1] + short[-1:] if len(short) > 1 else short
    return "\n\n".join(kept)


def sentences(text: str, host: re.Pattern[str] | None = None) -> list[str]:
    """Prose sentences of ``text`` (code removed), each trimmed of list and emphasis marks."""
    out: list[str] = []
    for raw_line in strip_code(text, host).splitlines():
        if raw_line.startswith(("    ", "\t", ">", "|")):
            continue  # indented code, quotes and tables are not statements
        line = _EMPHASIS.sub("", _BULLET.sub("", raw_line)).strip()
        if not line:
            continue
        for part in _SENTENCE_END.split(line):
            part = part.strip()
            if MIN_SENTENCE <= len(part) <= MAX_SENTENCE:
                out.append(part)
    return out
