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


# Words that turn a claim round: every one of them reads as "not", so "never commit" and
# "don't commit" say the same and "run it" and "don't run it" do not.
_NEGATIONS: Final = frozenset(
    "not no never none nothing nor without don't doesn't didn't isn't aren't wasn't weren't "
    "won't can't cannot shouldn't mustn't".split()
)
# Words too few to tell two statements apart: articles, "to be", pointers. Not "and" / "or",
# "from" / "to", "we" / "they": each of those changes what is said.
_FILLER: Final = frozenset(
    "a an the is are was were be been being this that these those it its".split()
)
_WORD: Final = re.compile(r"[a-z0-9']+")


def _said(text: str) -> list[str]:
    """What a statement says, word by word: lower case, negations as "not", common words
    out, plural and tense endings off ("tests" is "test", "failed" is "fail")."""
    out = []
    for word in _WORD.findall(text.lower().replace("’", "'")):
        if word in _NEGATIONS:
            out.append("not")
        elif word not in _FILLER:
            out.append(re.sub(r"(?<=\w{3})(?:es|s|ed|ing)$", "", word))
    return out


def restates(a: Memory, b: Memory) -> bool:
    """Whether one of two similar memories only restates the other: the same words in the
    same order, once common words, negations and endings are evened out, the longer perhaps
    going on where the shorter ends (with why, or where). Only such a pair is merged without
    a person: a model reads "tabs over spaces" and "spaces over tabs", "allowed" and
    "forbidden", "run it" and "don't run it" alike, and each of them is two facts."""
    if specifics(a) != specifics(b):
        return False
    short, long = sorted((_said(a.content), _said(b.content)), key=len)
    return bool(short) and long[: len(short)] == short


def fuller(a: Memory, b: Memory) -> Memory:
    """Of two memories one restates, the one that says more (by words, not characters)."""
    return max((a, b), key=lambda m: (len(_said(m.content)), len(m.content)))
