"""Layer 2: keyword markers in what the assistant and the person say.

Each marker has a kind and a confidence; a sentence yields at most one event, of the first
kind that matches in ``MARKERS`` order (a fix beats a decision beats a preference). Questions,
hypotheticals and negations ("haven't decided", "if we decided") are not statements and are
left alone. Pure: text in, ``(kind, sentence, confidence)`` out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from cortexmem.core.extraction.prose import sentences


@dataclass(frozen=True)
class Marker:
    kind: str
    pattern: re.Pattern[str]
    confidence: float
    speakers: frozenset[str] = frozenset({"assistant", "user"})


def _m(kind: str, pattern: str, confidence: float, *speakers: str) -> Marker:
    who = frozenset(speakers) if speakers else frozenset({"assistant", "user"})
    return Marker(kind, re.compile(pattern, re.IGNORECASE), confidence, who)


MARKERS: Final[tuple[Marker, ...]] = (
    _m("fix", r"\bthe (?:real )?fix (?:was|is)\b", 0.8),
    _m("fix", r"\bthe root cause (?:was|is)\b", 0.8),
    _m("fix", r"\bfixed (?:it|this|that|the \w+) by\b", 0.7),
    _m("fix", r"\bthe (?:problem|issue|bug) was (?:that|caused)\b", 0.7),
    _m("rejected", r"\b(?:I|we)(?:'ve| have)? (?:\w+ )?(?:rejected|ruled out)\b", 0.75),
    _m("rejected", r"\bdecided against\b", 0.75),
    _m("rejected", r"\b(?:was|were|is|are) (?:rejected|ruled out) (?:because|since|as)\b", 0.7),
    _m("rejected", r"\b(?:we|I)(?:'ll| will)? (?:not|won't) (?:use|go with)\b", 0.6),
    _m("decision", r"\b(?:I|we)(?:'ve| have)? decided\b", 0.8),
    _m("decision", r"\bdecided to\b", 0.75),
    _m("decision", r"\b(?:the )?decision(?: was|:| is to)\b", 0.75),
    _m(
        "decision",
        r"\b(?:I'm|I am|we're|we are|I'll be|we'll be) going with\b",
        0.7,
    ),
    _m("decision", r"^going with\b", 0.7),
    _m("decision", r"\b(?:let's|I'll|we'll) go with\b", 0.7),
    _m("decision", r"\b(?:went with|went for|settled on|opted for|chose)\b", 0.65),
    _m("decision", r"\b(?:instead of|rather than)\b", 0.55),
    _m("gotcha", r"\b(?:gotcha|watch out|be careful|pitfall|footgun)\b", 0.7),
    _m("gotcha", r"^(?:note|important|warning|careful):", 0.6),
    _m("preference", r"\b(?:always|never|prefer|don't ever|do not ever)\b", 0.75, "user"),
    _m("preference", r"^(?:always|never)\b", 0.55, "assistant"),
)

_NOT_A_STATEMENT: Final = re.compile(
    r"(?:\?\s*$"
    r"|^(?:if|should|shall|would|could|do|does|did|can|may|might|when|whether|unless)\b"
    r"|^(?:now,? )?(?:let me|let's|I'll|I will|I need to|I'm going to)\b.*:\s*$"
    r"|\b(?:haven't|have not|hasn't|not yet|undecided|not decided|before deciding|"
    r"could|might|maybe|perhaps|would you|do you want|let me know)\b)",
    re.IGNORECASE,
)
_INSTEAD_NEEDS: Final = re.compile(
    r"\b(?:I|we|I'll|we'll|I've|we've|let's|using|use|used|switched|chose|picked|went)\b",
    re.IGNORECASE,
)


def classify(sentence: str, speaker: str) -> tuple[str, float] | None:
    """The kind and confidence of one sentence, or ``None`` when it states nothing to keep."""
    if _NOT_A_STATEMENT.search(sentence):
        return None
    for marker in MARKERS:
        if speaker not in marker.speakers or not marker.pattern.search(sentence):
            continue
        if "instead of" in marker.pattern.pattern and not _INSTEAD_NEEDS.search(sentence):
            continue
        return marker.kind, marker.confidence
    return None


def find_markers(
    text: str, speaker: str, host: re.Pattern[str] | None = None
) -> list[tuple[str, str, float]]:
    """``(kind, sentence, confidence)`` for every marked sentence of ``text`` (``host``: what
    the host inserted, skipped; see ``prose.injected``)."""
    found = []
    for sentence in sentences(text, host):
        hit = classify(sentence, speaker)
        if hit is not None:
            found.append((hit[0], sentence, hit[1]))
    return found
