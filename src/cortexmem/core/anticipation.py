"""Anticipatory retrieval: what, if anything, to put in front of the assistant for a prompt.

Pure. The caller has ranked memories for the prompt and knows each one's cosine similarity to
it; this decides. Injecting something irrelevant on every prompt is worse than injecting
nothing (peers' warnings "fire on almost every unrelated prompt"), so the rule is strict:

* prompts that carry no question (a slash command, "ok", "thanks", "continue") get nothing;
* something must qualify: its meaning (cosine similarity to the prompt) plus
  ``INFORMATION_WEIGHT`` × the share of the prompt's information it holds plus ``LIFT_WEIGHT`` ×
  its lift (how much closer it is to the prompt than to no text at all) must reach ``GATE``.
  The information is the prompt's search words weighted by how rare each is in the store (BM25's
  idf over the store's memories and episodes): a passage holding the prompt's rare words
  ("AudioWorklet", "TestResetCmd") says it is about this project, one holding only words every
  project uses ("test", "run", "file") does not. Meaning alone reaches the gate only when very
  close; the same question style about another project reaches cosine 0.4-0.6 and holds few of
  its rare words. The share is out of at least ``INFORMATION_FLOOR``: a short, vague prompt ("why
  won't you run it?") says too little to claim it is about anything. Calibrated on
  ``bench/continuity.py``: about 2% of other projects' questions (prompts unrelated to the store)
  inject, and it is flat around the chosen values (weight 0.5-1.0, gate 0.72-0.84 give 0.61-0.64
  of the questions answered at 2-4% false); 3.3% of 276 real prompts of other projects. It
  replaced two separate bars (meaning alone over 0.70 and a margin over the median; or 40-50% of
  the prompt's words with meaning over 0.50): 0.53 answered at 3.9% false on the same set.
  The lift: with the local model a short, generic line ("Let me run the tests:") is at 0.6-0.8
  to every question, so cosine alone calls it relevant to another project's question as to its
  own; what it has beyond its closeness to no text at all tells them apart (as recall's
  relevance floor does). Calibrated on both continuity sets together (180 questions, 13
  projects; offline over the candidates' evidence): at most 2.5% of other projects' questions
  injecting, 0.57 of the questions could be answered without it, 0.61-0.63 with it, flat for
  information weights 0.4-0.5, lift weights 0.4-0.6 and gates 0.75-0.81;
* once something qualifies, the best-ranked candidates close in meaning (``COMPANION``) or found
  by the prompt's words come along: at most ``MAX_ITEMS`` in the ranking's order, and the
  whole block stays under ``TOKEN_CAP`` tokens;
* a long memory or passage is shown around the prompt's words, not only from its start.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from cortexmem.core.text import shorten
from cortexmem.core.tokens import estimate_tokens
from cortexmem.model import Memory

GATE: Final = 0.79
INFORMATION_WEIGHT: Final = 0.4
LIFT_WEIGHT: Final = 0.5
# About two words no document of the store holds (idf ln(2N) is 7-8 at a few thousand).
INFORMATION_FLOOR: Final = 12.0
COMPANION: Final = 0.35
# As many as recall's top 5, within the seed's push budget (300-500 tokens): what was said
# comes as passages, the answer is often the second or third of them, and at 400 tokens the
# excerpts of five were cut short of it (continuity inject 0.50 at 400, 0.53 at 500).
MAX_ITEMS: Final = 5
TOKEN_CAP: Final = 500
ITEM_CHARS: Final = 400
MIN_WORDS: Final = 3
__all__ = [
    "Pick",
    "coverage",
    "estimate_tokens",
    "excerpt",
    "informative",
    "rarity",
    "render",
    "select",
    "worth_asking",
]

HEADER: Final = "Cortex memory that may bear on this request (verify before relying on it):"

_TRIVIAL: Final = re.compile(
    r"^\s*(?:/\S+.*|ok(?:ay)?|yes|no|y|n|thanks?(?: you)?|ty|continue|go on|go ahead|"
    r"proceed|done|lgtm|sounds good|great|nice|cool)\W*\s*$",
    re.IGNORECASE,
)
_WORD: Final = re.compile(r"\w+")
_WORDS: Final = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Pick:
    memory: Memory
    similarity: float
    # The share of the prompt's search words it holds (``coverage``; 0: none).
    words: float = 0.0
    episode: bool = False
    # The share of the prompt's information it holds (``informative``; 0: none).
    information: float = 0.0
    # Its cosine similarity to no text at all (``None``: not found by meaning, or not known).
    generic: float | None = None

    @property
    def lift(self) -> float:
        """How much closer in meaning it is to the prompt than to no text at all (0 unknown)."""
        return 0.0 if self.generic is None else self.similarity - self.generic


def worth_asking(prompt: str) -> bool:
    """Whether a prompt says enough to look anything up for."""
    return not _TRIVIAL.match(prompt) and len(_WORD.findall(prompt)) >= MIN_WORDS


def coverage(terms: Sequence[str], text: str) -> float:
    """The share of ``terms`` (the prompt's search words, lower case) that ``text`` holds as
    words."""
    wanted = set(terms)
    if not wanted:
        return 0.0
    return len(wanted & {w.lower() for w in _WORDS.findall(text)}) / len(wanted)


def rarity(total: int, documents: Mapping[str, int]) -> dict[str, float]:
    """Each term's weight by how rare it is among ``total`` documents: BM25's idf,
    ``ln(1 + (N - n + 0.5) / (n + 0.5))`` (a word in every document weighs little, one in none
    the most: a prompt's word the store never saw is information it does not hold)."""
    n_all = max(0, total)
    return {
        term: math.log(1 + (n_all - min(n, n_all) + 0.5) / (min(n, n_all) + 0.5))
        for term, n in documents.items()
    }


def informative(weights: Mapping[str, float], text: str) -> float:
    """The share of the prompt's information (its terms' ``rarity`` weights) ``text`` holds as
    words, out of at least ``INFORMATION_FLOOR``: a short, vague prompt ("why won't you run
    it?") carries too little to say it is about this project, whatever it shares."""
    total = sum(weights.values())
    if total <= 0.0:
        return 0.0
    held = {w.lower() for w in _WORDS.findall(text)}
    return sum(v for t, v in weights.items() if t in held) / max(total, INFORMATION_FLOOR)


def select(
    ranked: Sequence[Pick],
    *,
    gate: float = GATE,
    weight: float = INFORMATION_WEIGHT,
    lift: float = LIFT_WEIGHT,
    max_items: int = MAX_ITEMS,
) -> list[Pick]:
    """The first ``max_items`` of ``ranked`` (in its order) worth showing: nothing unless one
    qualifies (meaning + ``weight`` × information + ``lift`` × its lift reaches ``gate``); then
    those that qualify and the companions close in meaning or found by the prompt's words."""

    def qualifies(p: Pick) -> bool:
        return p.similarity + weight * p.information + lift * p.lift >= gate

    if not any(qualifies(p) for p in ranked):
        return []
    shown = [p for p in ranked if qualifies(p) or p.similarity >= COMPANION or p.words > 0.0]
    return shown[:max_items]


_TERM: Final = re.compile(r"[^\W_]{3,}")
_COMMON: Final = frozenset(
    "the and for with that this what which when where how why who does did are was were "
    "can could should would will not but from into about have has had our your you they "
    "there their then than them its it's use used using get got make made need any all "
    "some one two also just like want".split()
)


# Clauses end after a sentence's stop, before a list item or heading, at a line break; not
# after a list item's own number ("by: 1. Removing …" keeps "1. Removing …" whole).
_CLAUSE: Final = re.compile(
    r"(?<=[.!?;:])(?<!\s\d\.)(?<!\s\d\d\.)(?<!^\d\.)\s+|\s+(?=- |\d+\. |#+ )|\n+"
)


# Inflection endings, each with the letters a root keeps at least: a short word stripped of
# "y" or "e" becomes another word's start ("ready" "read", "state" "stat").
_SUFFIXES: Final = (("ies", 4), ("ied", 4), ("ing", 4), ("ed", 4), ("es", 4), ("s", 4),
                    ("y", 6), ("e", 6))  # fmt: skip


def _root(word: str) -> str:
    """``word`` without one inflection ending: the prompt's "installed" finds the text's
    "install", "dependency" its "dependencies", "files" its "file". A root is matched at the
    start of a word only ("test" is not in "latest")."""
    for suffix, least in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= least:
            return word[: -len(suffix)]
    return word


def _holds(clause: str, terms: set[str], roots: set[str]) -> set[str]:
    """The ``terms`` a lower-cased clause holds: a root at the start of one of its words, any
    other term anywhere."""
    starts = set(_WORDS.findall(clause)) if roots else set()
    return {
        t for t in terms if (any(w.startswith(t) for w in starts) if t in roots else t in clause)
    }


def excerpt(text: str, prompt: str, width: int) -> str:
    """``text`` cut to ``width`` characters: when it is longer, the clauses that bear most on
    the prompt, in their order, joined by "…" (else its start).

    A clause scores by the prompt's words it holds, each weighted by how rare it is in the
    text (a word in every clause, such as the project's name, says little): what answers a
    question often sits beside its words rather than at the start of a long summary."""
    flat = " ".join(text.split())
    if len(flat) <= width or not prompt:
        return shorten(flat, width)
    # Each of the prompt's words as it is, found anywhere in a clause ("local" in "localhost"),
    # or, when it has an inflection, its root at the start of a word.
    words = {t.lower() for t in _TERM.findall(prompt)} - _COMMON
    roots = {_root(t) for t in words} - words - _COMMON
    terms = (words - {t for t in words if _root(t) in roots}) | roots
    clauses = [c.strip() for c in _CLAUSE.split(text) if c and c.strip()]
    clauses = [" ".join(c.split()) for c in clauses]
    if not terms or len(clauses) < 2:
        return shorten(flat, width)
    held = [_holds(c.lower(), terms, roots) for c in clauses]
    spread = {t: sum(t in h for h in held) for t in terms}
    weight = {t: math.log(1 + len(clauses) / n) for t, n in spread.items() if n}
    if not weight:
        return shorten(flat, width)
    scores = [sum(weight.get(t, 0.0) for t in h) for h in held]
    chosen: set[int] = set()
    used = 0
    for i in sorted(range(len(clauses)), key=lambda i: (-scores[i], i)):
        if scores[i] <= 0.0:
            break
        # A clause that matches brings its neighbour along when there is room: the answer is
        # often the next sentence. One that ends in a colon ("… by:", "Removing redundant
        # fields:", "Commits:") announces what follows and brings it, as far as the colons go.
        k = i
        while k < len(clauses) and (k == i or clauses[k - 1].endswith(":")):
            k += 1
        for n in range(i, max(k, i + 2)):
            if n >= len(clauses):
                break
            if n not in chosen:
                if used + len(clauses[n]) + 2 > width:
                    break
                chosen.add(n)
                used += len(clauses[n]) + 2
    if not chosen:  # the best clause alone is longer than the room
        best = max(range(len(clauses)), key=lambda i: (scores[i], -i))
        return ("…" if best else "") + shorten(clauses[best], width - 1)
    parts: list[str] = []
    last = -2
    for k in sorted(chosen):
        parts.append(clauses[k] if k == last + 1 and parts else ("…" if k else "") + clauses[k])
        last = k
    return shorten(" ".join(parts), width)


def _kind(memory: Memory) -> str:
    """What a line is: a memory's type, or for what was said, who said it (``said: user``, a
    command's output ``said: ran``), so the assistant knows what it is relying on."""
    role = next((t[5:] for t in memory.tags if t.startswith("role:")), None)
    return f"said: {role}" if role else memory.memory_type


def render(picks: Sequence[Pick], token_cap: int = TOKEN_CAP, prompt: str = "") -> str:
    """The context block: a header and one line per memory, cut to stay under the cap. An item
    gets ``ITEM_CHARS`` or its share of the room left, whichever is more: with fewer than five
    picks, the room of those not shown goes to those that are (the answer is often past the
    first 400 characters of a passage; continuity inject 0.54 -> 0.55, held-out 0.38 -> 0.39)."""
    if not picks:
        return ""
    lines = [HEADER]
    for n, pick in enumerate(picks):
        m = pick.memory
        where = f", {m.branch}" if m.branch else ""
        head = f"- [{_kind(m)}{where}, {m.id}] "
        room = (token_cap - estimate_tokens("\n".join(lines)) - estimate_tokens(head)) * 4
        room = min(room, max(ITEM_CHARS, room // (len(picks) - n)))
        # Characters/4 is only one side of the estimate: many short words ("a = 1, b = 2")
        # cost more, so shorten until the whole block fits.
        while room >= 60:
            line = head + excerpt(m.content, prompt, room)
            if estimate_tokens("\n".join([*lines, line])) <= token_cap:
                lines.append(line)
                break
            room -= max(4, room // 8)
        else:
            break
    return "\n".join(lines) if len(lines) > 1 else ""
