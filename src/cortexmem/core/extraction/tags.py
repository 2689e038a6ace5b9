"""Layer 3: ``[MEMORY: ...]`` self-report tags, the assistant flagging what to keep.

Two forms, as taught by ``.claude/rules/cortex-memory-instructions.md``:

* ``[MEMORY: text]`` (the text may run over lines up to the closing bracket);
* ``[MEMORY:type] text`` or ``[MEMORY: type] text`` (the text runs to the end of the line).

Tags inside code (fences, inline code) are examples, not tags, and are ignored.
"""

from __future__ import annotations

import re
from typing import Final

from cortexmem.core.extraction.prose import strip_code

SELF_REPORT_CONFIDENCE: Final = 0.95

# tag type -> event kind
TAG_KINDS: Final[dict[str, str]] = {
    "decision": "decision",
    "rejected": "rejected",
    "pattern": "pattern",
    "convention": "pattern",
    "preference": "preference",
    "gotcha": "gotcha",
    "warning": "gotcha",
    "lesson": "fix",
    "fix": "fix",
    "architecture": "architecture",
    "progress": "progress",
    "context": "knowledge",
    "knowledge": "knowledge",
    "fact": "knowledge",
    "note": "knowledge",
}

_TYPED: Final = re.compile(r"\[MEMORY:\s*([A-Za-z_-]{2,20})\s*\][ \t:—-]*([^\n]+)", re.IGNORECASE)
_UNTYPED: Final = re.compile(r"\[MEMORY:\s*([^\]]{3,2000})\]", re.IGNORECASE)


def find_tags(text: str, host: re.Pattern[str] | None = None) -> list[tuple[str, str]]:
    """``(kind, text)`` for every tag in ``text``, in order of appearance (``host``: what the
    host inserted, skipped; see ``prose.injected``)."""
    prose = strip_code(text, host)
    found: list[tuple[int, str, str]] = []
    typed_spans: list[tuple[int, int]] = []
    for match in _TYPED.finditer(prose):
        word = match.group(1).lower()
        body = match.group(2).strip()
        if not body:
            continue
        typed_spans.append(match.span())
        found.append((match.start(), TAG_KINDS.get(word, "knowledge"), body))
    for match in _UNTYPED.finditer(prose):
        if any(start <= match.start() < end for start, end in typed_spans):
            continue
        body = " ".join(match.group(1).split())
        kind = "knowledge"
        head, sep, rest = body.partition(":")
        if sep and head.strip().lower() in TAG_KINDS and rest.strip():
            kind, body = TAG_KINDS[head.strip().lower()], rest.strip()
        found.append((match.start(), kind, body))
    return [(kind, body) for _, kind, body in sorted(found)]
