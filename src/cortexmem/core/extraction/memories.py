"""From events to typed memories: which events are worth remembering, and as what.

Events are the complete record; memories are what a later session is told. Commands, file
edits, test runs and raw errors stay events (the learning loop and the briefing read them);
what a person would want to know next time becomes a memory. Progress is folded rather than
logged: plan steps, approved plans and commits are not one memory each but go into the
session's digest (``digest``: its summary, its plan with final statuses, the plan approved while
it is not carried out, its open problems, its how-tos).
Pure: events in, memories out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from cortexmem.core.extraction.commands import step_kind
from cortexmem.core.extraction.events import clip
from cortexmem.model import DOCUMENT_TAG, Event, Listing, Memory, SourceContext


@dataclass(frozen=True)
class Rule:
    memory_type: str
    priority: int


RULES: Final[dict[str, Rule]] = {
    "decision": Rule("decision", 8),
    "rejected": Rule("decision", 7),
    "fix": Rule("gotcha", 7),
    "gotcha": Rule("gotcha", 7),
    "error_resolved": Rule("gotcha", 7),
    "preference": Rule("pattern", 7),
    "howto": Rule("pattern", 6),
    "pattern": Rule("pattern", 6),
    "architecture": Rule("architecture", 7),
    "knowledge": Rule("context", 5),
    "progress": Rule("progress", 5),
    # Not "compact_summary": a host's summary of the session so far is a snapshot the session's
    # digest overtakes (where it ended), its words stay an episode and the errors it lists are
    # gotchas of their own; kept as a memory too, it said the same things twice (memory audit).
}
MEMORY_CONTENT: Final = 2_000
# Below this an event stays an event: "instead of" alone (0.55) is as often an aside as a choice.
MIN_CONFIDENCE: Final = 0.6


def worth_remembering(event: Event) -> bool:
    """Whether ``event`` becomes a memory (not every event does)."""
    rule = RULES.get(event.kind)
    if rule is None or event.confidence < MIN_CONFIDENCE:
        return False
    if event.kind == "error_resolved":
        # A project step that failed, then passed after edits, with the cause the assistant
        # found: "failed, then passed after changes to x.py" alone teaches nothing (the event
        # still closes the failure in the session's digest, and the episodes keep the words).
        target = str(event.payload.get("target") or "")
        return (
            event.payload.get("call") == "shell"
            and bool(event.payload.get("files"))
            and bool(event.payload.get("cause"))
            and step_kind(target) is not None
        )
    return True


def to_memory(event: Event) -> Memory | None:
    if not worth_remembering(event):
        return None
    rule = RULES[event.kind]
    content = event.content
    layer = str(event.payload.get("layer") or "structural")
    document = event.payload.get("document")
    prov = event.provenance
    return Memory(
        content=clip(str(content), MEMORY_CONTENT),
        memory_type=rule.memory_type,
        confidence=event.confidence,
        priority=rule.priority,
        source_type="self_report" if layer == "self_report" else "extraction",
        source_session=prov.session_id,
        source_context=SourceContext(branch=prov.branch, commit=prov.commit),
        tags=(f"event:{event.kind}", f"layer:{layer}")
        + ((f"{DOCUMENT_TAG}{document}",) if document else ()),
        created_at=event.created_at,
    )


def to_memories(events: Iterable[Event]) -> list[Memory]:
    """The memories ``events`` make, one at most per event, same content only once."""
    out: list[Memory] = []
    seen: set[str] = set()
    for event in events:
        memory = to_memory(event)
        if memory is not None and memory.content_hash not in seen:
            seen.add(memory.content_hash)
            out.append(memory)
    return out


def listings(events: Iterable[Event]) -> list[Listing]:
    """What ``events`` say about the decisions documents list: each time a document listed
    one, each time a whole version of one dropped it (``withdrawn``). The store keeps the
    latest of each per document and decision, whether or not the event was new to it (the same
    words read again in a session are one event, but a later listing all the same)."""
    return [
        Listing(str(document), event.content, event.created_at, event.kind == "decision")
        for event in events
        if event.kind in ("decision", "withdrawn") and (document := event.payload.get("document"))
    ]
