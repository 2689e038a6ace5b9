"""Anticipatory retrieval: what, if anything, to put in front of the assistant for a prompt.

Pure. The caller has ranked memories for the prompt and knows each one's cosine similarity to
it; this decides. Injecting something irrelevant on every prompt is worse than injecting
nothing (peers' warnings "fire on almost every unrelated prompt"), so the rule is strict:

* prompts that carry no question (a slash command, "ok", "thanks", "continue") get nothing;
* a memory qualifies only when its cosine similarity to the prompt clears ``THRESHOLD`` and
  stands ``MARGIN`` above the median similarity of the candidates (the baseline every memory
  of the project reaches, partly through the shared ``[project:name]`` prefix). Both were
  measured with ``bench/anticipation.py``: 95% of related prompts get context, 2.5% of
  unrelated ones;
* at most ``MAX_ITEMS`` memories, and the whole block stays under ``TOKEN_CAP`` tokens.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from cortexmem.core.text import shorten
from cortexmem.core.tokens import estimate_tokens
from cortexmem.model import Memory

THRESHOLD: Final = 0.60
MARGIN: Final = 0.15
MAX_ITEMS: Final = 3
TOKEN_CAP: Final = 200
MIN_WORDS: Final = 3
__all__ = ["Pick", "baseline", "estimate_tokens", "render", "select", "worth_asking"]

HEADER: Final = "Cortex memory that may bear on this request (verify before relying on it):"

_TRIVIAL: Final = re.compile(
    r"^\s*(?:/\S+.*|ok(?:ay)?|yes|no|y|n|thanks?(?: you)?|ty|continue|go on|go ahead|"
    r"proceed|done|lgtm|sounds good|great|nice|cool)\W*\s*$",
    re.IGNORECASE,
)
_WORD: Final = re.compile(r"\w+")


@dataclass(frozen=True)
class Pick:
    memory: Memory
    similarity: float


def worth_asking(prompt: str) -> bool:
    """Whether a prompt says enough to look anything up for."""
    return not _TRIVIAL.match(prompt) and len(_WORD.findall(prompt)) >= MIN_WORDS


def baseline(similarities: Sequence[float]) -> float:
    """The median similarity of the candidates: what "related to nothing in particular" scores."""
    ordered = sorted(similarities)
    if not ordered:
        return 0.0
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def select(
    ranked: Sequence[Pick],
    *,
    floor: float = 0.0,
    threshold: float = THRESHOLD,
    margin: float = MARGIN,
    max_items: int = MAX_ITEMS,
) -> list[Pick]:
    """The first ``max_items`` of ``ranked`` (in its order) whose similarity clears both the
    threshold and ``floor + margin``."""
    bar = max(threshold, floor + margin)
    return [p for p in ranked if p.similarity >= bar][:max_items]


def render(picks: Sequence[Pick], token_cap: int = TOKEN_CAP) -> str:
    """The context block: a header and one line per memory, cut to stay under the cap."""
    if not picks:
        return ""
    lines = [HEADER]
    for pick in picks:
        m = pick.memory
        where = f", {m.branch}" if m.branch else ""
        head = f"- [{m.memory_type}{where}, {m.id}] "
        room = (token_cap - estimate_tokens("\n".join(lines)) - estimate_tokens(head)) * 4
        room = min(room, 400)
        # Characters/4 is only one side of the estimate: many short words ("a = 1, b = 2")
        # cost more, so shorten until the whole block fits.
        while room >= 60:
            line = head + shorten(m.content, room)
            if estimate_tokens("\n".join([*lines, line])) <= token_cap:
                lines.append(line)
                break
            room -= max(4, room // 8)
        else:
            break
    return "\n".join(lines) if len(lines) > 1 else ""
