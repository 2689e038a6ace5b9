"""Model-assisted distillation, the pure half: the fixed prompt, the JSON schema of the
answer, and the check that keeps only what the transcript really says. Pure.

The model is shown the session's new lines, numbered by their transcript line, and asked for
typed memories — a decision with its reason and the alternatives it rejected, a gotcha with
its fix, a how-to, a preference, an open problem, a fact — each citing the lines it rests on
with words quoted from them. ``accept`` keeps an item only when every citation names a line
that was shown and its quoted words appear on that line (case and spacing aside): a memory
the model invented, or a quote it embroidered, is dropped with the reason. Scope is the
seed's rule: ``global_confidence`` above 0.8 makes a memory global, else it stays the
project's. Links between items go through the one edge-type alias table.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from cortexmem.core.edge_types import UnknownEdgeType, normalise_edge_type

JOB_KIND: Final = "distill"  # the queue's name for this work (and the ai.yaml use)
KINDS: Final = {
    "decision": "decision",
    "gotcha": "gotcha",
    "how-to": "pattern",
    "preference": "pattern",
    "open-problem": "context",
    "fact": "architecture",
}
PRIORITY: Final = {"decision": 8, "gotcha": 7, "how-to": 6, "preference": 6,
                   "open-problem": 6, "fact": 5}  # fmt: skip
GLOBAL_THRESHOLD: Final = 0.8
MIN_QUOTE: Final = 8
MAX_ITEMS: Final = 30

SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "required": ["memories"],
    "properties": {
        "memories": {
            "type": "array",
            "maxItems": MAX_ITEMS,
            "items": {
                "type": "object",
                "required": ["kind", "content", "citations"],
                "properties": {
                    "kind": {"type": "string", "enum": list(KINDS)},
                    "content": {"type": "string", "minLength": 10, "maxLength": 1200},
                    "reason": {"type": "string"},
                    "alternatives": {"type": "array", "items": {"type": "string"}},
                    "fix": {"type": "string"},
                    "global_confidence": {"type": "number", "minimum": 0, "maximum": 1},
                    "citations": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "type": "object",
                            "required": ["line", "quote"],
                            "properties": {
                                "line": {"type": "integer"},
                                "quote": {"type": "string"},
                            },
                        },
                    },
                    "links": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["to", "type"],
                            "properties": {"to": {"type": "integer"}, "type": {"type": "string"}},
                        },
                    },
                },
            },
        }
    },
}

SYSTEM: Final = (
    "You distill a coding session into memories for the next session. Keep only lasting "
    "knowledge a developer would want next time: decisions (with the reason and the "
    "alternatives rejected), gotchas (with the fix), how-tos, the user's preferences, open "
    "problems, and facts about the project. Never progress reports, never guesses. Every "
    "memory cites the numbered lines it rests on, quoting words copied exactly from each "
    "line. global_confidence is how sure you are (0 to 1) that the memory holds for any "
    "project of this user, not just this one. links say how a memory relates to another of "
    "your list (to: its index, type: relates_to, derived_from, contradicts, exemplifies, "
    'refines or generalizes). Answer {"memories": []} when there is nothing worth keeping.'
)


@dataclass(frozen=True)
class Line:
    """One transcript line as shown to the model."""

    number: int
    role: str
    text: str


@dataclass(frozen=True)
class Candidate:
    """An item the model proposed that passed every check."""

    index: int  # its place in the model's list (links refer to it)
    kind: str
    memory_type: str
    content: str
    category: str
    priority: int
    lines: tuple[int, ...]
    links: tuple[tuple[int, str], ...] = ()
    gist: str = ""  # the model's own sentence, without reason, alternatives or fix (dedup)


@dataclass
class Checked:
    kept: list[Candidate] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)


def build_prompt(lines: Sequence[Line], project: str | None = None) -> str:
    """The mission: the numbered lines, one per paragraph."""
    head = f"Session of the project {project}.\n" if project else ""
    body = "\n".join(f"[{ln.number}] ({ln.role}) {ln.text}" for ln in lines)
    return f"{head}Transcript lines:\n{body}\n\nDistill the memories worth keeping."


_SPACE = re.compile(r"\s+")
_QUOTES = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "…": "..."})


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text.translate(_QUOTES)).strip().casefold()


def _quote_parts(quote: str) -> list[str]:
    """A quote may skip words with an ellipsis: each part must appear."""
    parts = [p.strip(" \"'") for p in re.split(r"\.\.\.|\[\.\.\.\]", _norm(quote))]
    return [p for p in parts if p]


def _content(item: dict[str, Any]) -> str:
    text = " ".join(str(item["content"]).split())
    kind = item["kind"]
    reason = " ".join(str(item.get("reason") or "").split())
    if kind == "decision" and reason and reason.casefold() not in text.casefold():
        text += f" Because: {reason.rstrip('.')}."
    alternatives = [" ".join(str(a).split()) for a in item.get("alternatives") or () if a]
    if kind == "decision" and alternatives:
        text += f" Rejected: {'; '.join(alternatives)}."
    fix = " ".join(str(item.get("fix") or "").split())
    if kind == "gotcha" and fix and fix.casefold() not in text.casefold():
        text += f" Fix: {fix.rstrip('.')}."
    return text


def accept(data: dict[str, Any], lines: Sequence[Line]) -> Checked:
    """Keep the items of a schema-valid answer whose citations hold (see the module)."""
    shown = {ln.number: _norm(ln.text) for ln in lines}
    checked = Checked()
    for index, item in enumerate(data.get("memories") or []):
        citations = item.get("citations") or []
        problem = None
        for citation in citations:
            number, quote = citation["line"], str(citation["quote"])
            parts = _quote_parts(quote)
            if number not in shown:
                problem = f"cites line {number}, which was not shown"
            elif sum(len(p) for p in parts) < MIN_QUOTE:
                problem = f"quotes too little of line {number} ({quote!r})"
            elif not all(p in shown[number] for p in parts):
                problem = f"quotes words line {number} does not hold ({quote[:60]!r})"
            if problem:
                break
        if problem is None and not citations:
            problem = "cites no line"
        if problem:
            checked.dropped.append(f"item {index} ({item.get('kind')}): {problem}")
            continue
        links = []
        for link in item.get("links") or ():
            try:
                links.append((int(link["to"]), normalise_edge_type(str(link["type"]))))
            except UnknownEdgeType:
                checked.dropped.append(f"item {index}: link of unknown type {link['type']!r}")
        kind = item["kind"]
        glob = float(item.get("global_confidence") or 0.0)
        checked.kept.append(
            Candidate(
                index=index,
                kind=kind,
                memory_type=KINDS[kind],
                content=_content(item),
                category="global" if glob > GLOBAL_THRESHOLD else "project",
                priority=PRIORITY[kind],
                lines=tuple(sorted({int(c["line"]) for c in citations})),
                links=tuple(links),
                gist=" ".join(str(item["content"]).split()),
            )
        )
    return checked
