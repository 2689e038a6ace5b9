"""Small text helpers shared by the CLI and the services. Pure."""

from __future__ import annotations

import re

_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def summarise(content: str, width: int = 120) -> str:
    """A one-line gist: the first sentence or line, cut at a word boundary to ``width``."""
    text = " ".join(content.split())
    first = _SENTENCE_END.split(text, maxsplit=1)[0]
    return shorten(first, width)


def shorten(text: str, width: int) -> str:
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    cut = text[: width - 1].rsplit(" ", 1)[0] or text[: width - 1]
    return cut.rstrip(",;:") + "…"
