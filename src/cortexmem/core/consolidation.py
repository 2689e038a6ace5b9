"""Consolidation rules as pure functions: when an automatic run is due, which of two
near-duplicates to keep, and what the kept memory looks like after a merge.

When (the seed: "auto every 10 extractions or > 80 active")::

    due = extractions since the last run >= 10
          or (active memories > 80 and the last run saw 80 or fewer)

The second rule fires when the store *crosses* 80 active memories (and again whenever merges
bring it back under and it grows past again), not on every capture while it stays above:
a run takes a checkpoint (a backup of the store), and one per capture would churn the backup
folder and crowd out the backups a person may need. Above 80 the 10-extraction rule keeps
running it.
"""

from __future__ import annotations

import re
from typing import Final

from cortexmem.core.text import summarise
from cortexmem.model import Memory, utc_now

EVERY_EXTRACTIONS: Final = 10
ACTIVE_LIMIT: Final = 80

# Kinds of memory that never decay (DESIGN.md: decisions are immortal); when one of a pair is
# such a kind, it is the one kept.
_LASTING: Final = frozenset({"decision", "architecture"})


def consolidation_due(extractions: int, active: int, active_at_last_run: int) -> bool:
    """Whether an automatic run is due (see the module docstring)."""
    if extractions >= EVERY_EXTRACTIONS:
        return True
    return active > ACTIVE_LIMIT and active_at_last_run <= ACTIVE_LIMIT


def choose_keeper(a: Memory, b: Memory) -> tuple[Memory, Memory]:
    """``(keep, supersede)`` for a merge a person has not steered: the pinned one, then the
    higher priority, then a lasting kind (decision, architecture), then the more often recalled,
    then the newer (its wording is the current one), then the smaller id (a total order)."""

    def weight(m: Memory) -> tuple[bool, int, bool, int, str, str]:
        # The id is inverted so that, all else equal, the smaller id wins under max().
        inverted_id = "".join(chr(0x10FFFF - ord(ch)) for ch in m.id)
        return (
            m.pinned,
            m.priority,
            m.memory_type in _LASTING,
            m.access_count,
            m.created_at,
            inverted_id,
        )

    keep = max((a, b), key=weight)
    return keep, (b if keep is a else a)


def merged(keep: Memory, other: Memory, content: str | None = None) -> Memory:
    """The kept memory after absorbing ``other``: tags united, the higher priority and
    confidence, pinned if either was, access counts added; ``content`` (a person's edit)
    replaces the text and its summary is derived again."""
    changes: dict = {
        "tags": tuple(sorted(set(keep.tags) | set(other.tags))),
        "priority": max(keep.priority, other.priority),
        "confidence": max(keep.confidence, other.confidence),
        "pinned": keep.pinned or other.pinned,
        "access_count": keep.access_count + other.access_count,
        "updated_at": utc_now(),
    }
    if content is not None and " ".join(content.split()) != " ".join(keep.content.split()):
        text = content.strip()
        if not text:
            raise ValueError("the merged memory needs some content")
        gist = summarise(text)
        changes["content"] = text
        changes["summary"] = "" if gist == " ".join(text.split()) else gist
    return keep.with_changes(**changes)


def merge_draft(keep: Memory, other: Memory) -> str:
    """The text a person starts from when editing a merge: the kept memory, then the other."""
    return f"{keep.content.strip()}\n\n{other.content.strip()}\n"


# What makes a memory a particular fact rather than its sentence: a quoted command or name,
# a path, a number. "How to lint: `uv run ruff check .`" and "How to lint: `uv run ruff
# format .`" read alike to a model (0.96) and to words (0.86); they are two facts.
_SPECIFIC: Final = re.compile(r"`[^`\n]+`|(?<![\w.])[\w.-]*[/\\][\w./\\-]+|\b\d+(?:[.,:]\d+)*\b")


def specifics(memory: Memory) -> frozenset[str]:
    """The quoted commands and names, paths and numbers ``memory`` states."""
    return frozenset(" ".join(m.split()).lower() for m in _SPECIFIC.findall(memory.content))


# Words that turn a claim round: one memory holding one the other lacks says the opposite.
_NEGATIONS: Final = frozenset(
    "not no never none nothing nor without avoid don't doesn't didn't isn't aren't won't "
    "can't cannot shouldn't mustn't".split()
)
_WORD: Final = re.compile(r"[a-z0-9']+")


def restates(a: Memory, b: Memory) -> bool:
    """Whether one of two similar memories only restates the other. Not when one states a
    command, a path or a number the other does not, when one denies what the other says (a
    "not", a "never" only one of them holds), nor when they are one sentence with a word or
    two swapped ("run ruff check on src" / "run ruff format on src", "we always squash" /
    "we usually squash"): a model reads those alike, and they are two facts. Only a pair that
    restates is merged without a person."""
    if specifics(a) != specifics(b):
        return False
    words_a, words_b = _WORD.findall(a.content.lower()), _WORD.findall(b.content.lower())
    if _NEGATIONS & set(words_a) != _NEGATIONS & set(words_b):
        return False
    swapped = sum(x != y for x, y in zip(words_a, words_b, strict=False))
    return not (len(words_a) == len(words_b) and 0 < swapped <= 2)
