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

from cortexmem.core.extraction.prose import sentences, strip_code
from cortexmem.core.text import EMPHASIS, LIST_ITEM, clip_redacted


@dataclass(frozen=True)
class Marker:
    kind: str
    pattern: re.Pattern[str]
    confidence: float
    speakers: frozenset[str] = frozenset({"assistant", "user"})


def _m(kind: str, pattern: str, confidence: float, *speakers: str) -> Marker:
    """A marker matched against the lower-cased sentence: searching lower-cased text with a
    case-sensitive pattern takes half the time of a case-insensitive search (33 markers a
    sentence; about 0.1 s of a 5,000-line capture)."""
    who = frozenset(speakers) if speakers else frozenset({"assistant", "user"})
    return Marker(kind, re.compile(_lowered(pattern)), confidence, who)


def _lowered(pattern: str) -> str:
    """``pattern`` for lower-cased text: its letters lower-cased, its escapes (``\\S``,
    ``\\b``, ``\\w``) kept as they are."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern[i] == "\\" and i + 1 < len(pattern):
            out.append(pattern[i : i + 2])
            i += 2
        else:
            out.append(pattern[i].lower())
            i += 1
    return "".join(out)


_CHOICE_VERB: Final = (
    r"(?:use|switch(?:ed)? to|chose|picked|went with|go with|keep|stick with|prefer|want)"
)
_FIRST_PERSON: Final = (
    r"(?:I'll|we'll|I will|we will|let's|we should|I'm going to|we're going to|I|we)"
)

MARKERS: Final[tuple[Marker, ...]] = (
    _m("fix", r"\bthe (?:real )?fix (?:was|is)\b", 0.8),
    _m("fix", r"\bthe root cause (?:was|is)\b", 0.8),
    _m("fix", r"\bfixed (?:it|this|that|the \w+) by\b", 0.7),
    _m("fix", r"\bthe (?:problem|issue|bug) was (?:that|caused)\b", 0.7),
    _m("rejected", r"\b(?:I|we)(?:'ve| have)? (?:\w+ )?(?:rejected|ruled out)\b", 0.75),
    _m("rejected", r"\bdecided against\b", 0.75),
    _m("rejected", r"\b(?:was|were|is|are) (?:rejected|ruled out) (?:because|since|as)\b", 0.7),
    _m("rejected", r"\b(?:we|I)(?:'ll| will)? (?:not|won't) (?:use|go with)\b", 0.6),
    _m(
        "rejected",
        r"\b(?:we|I|you) (?:shouldn't|should not|don't need to) (?:use|add|go with)\b",
        0.6,
    ),
    # not "write down what we decided": a clause about a decision, not one
    _m("decision", r"(?<!what )(?<!which )\b(?:I|we)(?:'ve| have)? decided\b", 0.8),
    _m("decision", r"\bdecided to\b", 0.75),
    _m("decision", r"\b(?:the )?decision(?: was|:| is to)\b", 0.75),
    _m(
        "decision",
        r"\b(?:I'm|I am|we're|we are|I'll be|we'll be) going with\b",
        0.7,
    ),
    _m("decision", r"^going with\b", 0.7),
    _m("decision", r"\b(?:let'?s|I'll|we'll) go with\b", 0.7),
    # a choice with the alternative it beat: "I'll use X rather than Y", "X over Y because"
    _m(
        "decision",
        _FIRST_PERSON
        + r"\s+(?:\w+\s+)?"
        + _CHOICE_VERB
        + r"\b.{1,80}?\b(?:instead of|rather than)\b",
        0.75,
    ),
    _m("decision", r"^instead of\b[^,]{2,80},\s*(?:I|we|I'll|we'll|let's|use)\b", 0.7),
    _m("decision", r"\b\S+ over \S+ (?:because|since|as)\b", 0.65),
    _m(
        "decision", r"\b(?:^|let's |we should |I'll |we'll |please )use \S+(?: \S+)?,? not \S+", 0.7
    ),
    _m("decision", r"\b(?:let'?s|we should|we'll) (?:use|switch to|stick with|keep using)\b", 0.65),
    # the person moving the project onto something ("Let's also migrate to AudioWorklet", "we
    # need to migrate the store to Postgres"): "move to" and "switch to" are as often a step, a
    # file, a branch or a mode ("lets move to the next step", "switch back to the main
    # branch"); the assistant saying so echoes a request or announces its next step
    _m(
        "decision",
        r"\b(?:let'?s (?:also |just )?|we should |(?:we|I) (?:need|want|have) to )"
        r"migrate (?:\w+ ){0,3}to\b",
        0.65,
        "user",
    ),
    _m("decision", r"\b(?:went with|went for|settled on|opted for|chose|choosing)\b", 0.65),
    _m(
        "decision",
        r"\b(?:I|we)(?:'ve| have)? (?:switched|migrated) (?:\w+ )?(?:from \S+ )?to\b",
        0.65,
    ),
    _m("decision", r"\b(?:instead of|rather than)\b", 0.55),
    _m("preference", r"^the user (?:wants|prefers|doesn't want|does not want)\b", 0.7, "assistant"),
    _m("gotcha", r"\b(?:gotcha|watch out|be careful|pitfall|footgun)\b", 0.7),
    _m("gotcha", r"^(?:note|important|warning|careful):", 0.6),
    _m("gotcha", r"\b(?:must|has to|needs to) be (?:called|run|loaded|set|done) before\b", 0.65),
    _m("preference", r"\b(?:always|never|prefer|don't ever|do not ever)\b", 0.75, "user"),
    _m("preference", r"\bI(?:'d| would) (?:rather|like you to|prefer)\b", 0.7, "user"),
    # how the person wants things to be ("I want all commits to be Durban-Designer", "we want
    # the docs to stay in English"), not a request to the assistant ("I want you to …"), a
    # wish ("I want the tests to run faster") or a feature ("a way to run …")
    _m(
        "preference",
        r"\b(?:I|we) (?:just |really |only )?want (?!(?:you|it|this|that|them|these|those)\b)"
        r"(?:\w+ ){1,4}?to (?:be (?!able\b)|use\b|stay\b|go through\b)",
        0.65,
        "user",
    ),
    _m(
        "preference",
        r"^(?:(?:to be clear|also|ok(?:ay)?|and|but|so|just)[:,]?\s+)?(?:please )?"
        r"(?:don't|do not|dont|never|avoid)\s+(?:ever\s+)?(?:stash|push|force|amend|"
        r"rebase|merge|commit|delete|mock|use|add|install|touch|edit|modify|skip|disable)\b",
        0.65,
        "user",
    ),
    _m("preference", r"^(?:always|never)\b", 0.55, "assistant"),
    # a failure described in words: kept as a problem until something later resolves it
    _m("problem", r"^bug:", 0.7),
    _m("problem", r"\b(?:is|are) (?:still )?(?:failing|broken|not working)\b", 0.65),
    _m(
        "problem",
        r"\b(?:still|keeps?|keep) (?:fail(?:s|ing)?|crash(?:es|ing)?|break(?:s|ing)?)\b",
        0.65,
    ),
    _m("problem", r"\btests? (?:still )?fail(?:s|ed)?\b", 0.6),
    _m("problem", r"\b(?:doesn't|does not|isn't|is not) work(?:ing)?\b", 0.6),
    _m("problem", r"\bthere(?:'s| is) (?:a|still a) bug\b", 0.6),
    # how to build, run or test, stated: "you can run `pnpm dev`", "to run the tests, use `…`"
    _m(
        "howto",
        r"(?:\byou can (?:now )?(?:run|use|start)|\bto (?:run|test|start|build|serve|lint|"
        r"format|try|install)\b[^`]{0,60}?\b(?:run|use|with)|^(?:run|try)\b)[^`]{0,40}`[^`]{3,}`",
        0.65,
    ),
)
# what a choice turned down: "rather than Y", "instead of Y", "not Y"
_ALTERNATIVE: Final = re.compile(
    r"\b(?:instead of|rather than|over|not)\s+(`[^`]+`|[\w./@-]+)", re.IGNORECASE
)

_NOT_A_STATEMENT: Final = re.compile(
    r"(?:\?\s*$"
    r"|^(?:if|should|shall|would|could|do|does|did|can|may|might|when|whether|unless)\b(?! not\b)"
    r"|^(?:now,? )?(?:let me|let's|I'll|I will|I need to|I'm going to)\b.*:\s*$"
    r"|\b(?:haven't|have not|hasn't|not yet|undecided|not decided|before deciding|"
    r"could|might|maybe|perhaps|would you|do you want|let me know)\b)",
    re.IGNORECASE,
)
# Durable knowledge does not describe the work's passing state: "Note: ScriptProcessor is still
# used" is true until the migration three messages later, then wrong. Progress and problems
# are about that state, and are kept as what they are.
_TRANSIENT: Final = re.compile(
    r"\b(?:still|currently|for now|at the moment|right now|as of now|so far|not yet)\b",
    re.IGNORECASE,
)
_DURABLE: Final = frozenset({"gotcha", "pattern", "architecture", "knowledge"})
_INSTEAD_NEEDS: Final = re.compile(
    r"\b(?:I|we|I'll|we'll|I've|we've|let'?s|using|use|used|switched|chose|picked|went)\b",
    re.IGNORECASE,
)


# The assistant saying what it will do ("I'll help you install X since the app center isn't
# working") restates the person's problem around its own plan: the problem is theirs to state.
_INTENTION: Final = re.compile(
    r"^(?:now,? |ok(?:ay)?,? |sure,? )?"
    r"(?:I'll|I will|let me|let's|I can|I'm going to|I am going to)\b",
    re.IGNORECASE,
)


def classify(sentence: str, speaker: str) -> tuple[str, float] | None:
    """The kind and confidence of one sentence, or ``None`` when it states nothing to keep."""
    sentence = sentence.replace("’", "'")  # typed with a typographic apostrophe
    if _NOT_A_STATEMENT.search(sentence):
        return None
    lower = sentence.lower()
    for marker in MARKERS:
        if speaker not in marker.speakers or not marker.pattern.search(lower):
            continue
        if "instead of" in marker.pattern.pattern and not _INSTEAD_NEEDS.search(sentence):
            continue
        if marker.kind in _DURABLE and _TRANSIENT.search(sentence):
            return None
        if marker.kind == "problem" and speaker == "assistant" and _INTENTION.match(sentence):
            return None
        return marker.kind, marker.confidence
    return None


def alternative(sentence: str) -> str | None:
    """The alternative a decision turned down, when the sentence names it."""
    match = _ALTERNATIVE.search(sentence)
    return match.group(1).strip("`") if match else None


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


# Decisions written as a list under a heading that says so ("**Key design decisions:**",
# "### Technical Decisions Made", "## Architecture Decisions"), or one to a line ("✅ DECISION:
# C17 Standard Adoption", its reasons listed below it). Assistants write decisions this way in
# plans, status documents and summaries; a sentence-by-sentence reading finds no marker in
# "**No cuBLAS/cuFFT**: Ensures fair competition …".
_DECISIONS_HEADING: Final = re.compile(
    r"^(?:(?:key|main|major|technical|architectur(?:e|al)|critical|important|design|"
    r"implementation)\s+){0,3}decisions(?:\s+made)?:?$",
    re.IGNORECASE,
)
# (not a template's placeholder, "<describe the decision>", nor a question)
_DECISION_LINE: Final = re.compile(r"^decision:\s*([^\s<].{2,200})(?<!\?)$", re.IGNORECASE)
_LEADING_MARKS: Final = re.compile(r"^[^\w(]+")
MAX_LISTED: Final = 8
LISTED_CHARS: Final = 400


def _bare(line: str) -> str:
    """A line without its heading, emphasis and leading symbol marks (``#``, ``**``, ``✅``)."""
    return " ".join(_LEADING_MARKS.sub("", EMPHASIS.sub("", line)).split())


def listed_decisions(text: str, host: re.Pattern[str] | None = None) -> list[str]:
    """The decisions ``text`` lists under a heading that names them, and those stated one to a
    line ("Decision: …", with the list right below it as its reasons), in order."""
    lines = strip_code(text, host).splitlines()
    found: list[str] = []
    i = 0
    while i < len(lines) and len(found) < MAX_LISTED:
        bare = _bare(lines[i])
        one = _DECISION_LINE.match(bare)
        if one or _DECISIONS_HEADING.match(bare):
            items, i = _items(lines, i + 1)
            if one:
                reasons = "; ".join(items[:4])
                found.append(_clean(one.group(1) + (f": {reasons}" if reasons else "")))
            else:
                found += [_clean(item) for item in items]
            continue
        i += 1
    return [d for d in dict.fromkeys(found) if len(d) >= 8][:MAX_LISTED]


def _items(lines: list[str], start: int) -> tuple[list[str], int]:
    """The list items from ``start``, at the indent of the first one (blank lines before and
    between items are skipped; a line indented deeper continues the item above it: a nested
    item or a wrapped line; one less indented, such as the next section of an outer list,
    ends it), and where the list ended."""
    items: list[str] = []
    indent = -1
    i = start
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        item = LIST_ITEM.match(line)
        depth = len(line) - len(line.lstrip())
        if item and (indent < 0 or depth == indent):
            indent = depth
            items.append(item.group("text"))
        elif items and depth > indent:
            items[-1] += " " + line.strip()
        else:
            break
        i += 1
    return items, i


def _clean(item: str) -> str:
    """An item without emphasis, redacted before it is cut (a secret across the cut would
    otherwise keep its first characters)."""
    return clip_redacted(" ".join(EMPHASIS.sub("", item).split()), LISTED_CHARS)


_WORD: Final = re.compile(r"[^\W_]+")
# How many of a decision's first words a document must still have, in order, to still say it.
SAID_WORDS: Final = 12


def still_says(text: str, decision: str) -> bool:
    """Whether ``text`` (a later version of the document that listed ``decision``) still says
    it: its first words in order, wherever they now stand (under another heading, in a
    paragraph). A decision cut short ("…") is matched without its cut last word."""
    words = _WORD.findall(decision.lower())
    if decision.endswith("…"):
        words = words[:-1]
    if not words:
        return True
    have = " ".join(_WORD.findall(EMPHASIS.sub("", text).lower()))
    return f" {' '.join(words[:SAID_WORDS])} " in f" {have} "
