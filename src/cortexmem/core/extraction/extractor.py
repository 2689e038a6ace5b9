"""The extractor: host-neutral entries in, events out, one entry at a time.

It runs the three layers over each entry: structural (tool calls and results), keyword
markers (prose), and ``[MEMORY: ...]`` tags (self-report). An LLM pass can be added as one
more layer with the same shape (entries in, events out) without touching these; structured
input such as a subagent's work summary goes through ``entries_from_summary`` first.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Final

from cortexmem.core.extraction.compaction import errors_fixed
from cortexmem.core.extraction.events import EventFactory, ExtractionContext
from cortexmem.core.extraction.keywords import alternative, find_markers, listed_decisions
from cortexmem.core.extraction.prose import injected, is_host_text, own_words, strip_code
from cortexmem.core.extraction.structural import (
    APPROVED_DECISION,
    LISTED_DECISION,
    StructuralLayer,
)
from cortexmem.core.extraction.tags import SELF_REPORT_CONFIDENCE, find_tags
from cortexmem.core.redact import redact_value
from cortexmem.core.session import Entry
from cortexmem.model import Event, content_hash

# salience of what prose says, by kind
SALIENCE: Final = {
    "decision": 0.8,
    "rejected": 0.7,
    "fix": 0.7,
    "gotcha": 0.7,
    "preference": 0.7,
    "knowledge": 0.6,
    "pattern": 0.6,
    "architecture": 0.7,
    "progress": 0.4,
    "problem": 0.6,
    "howto": 0.6,
}
# What a prompt or a reply keeps (the session's digest reads them: goal and outcome).
MAX_PROMPT: Final = 1_000
MAX_REPLY: Final = 1_500
MIN_REPLY: Final = 40
SUBAGENT_DISCOUNT: Final = 0.9
_SUMMARY_HEADING: Final = re.compile(r"^\s*(?:#+\s*)?Summary:?\s*$", re.MULTILINE)
MAX_COMPACT_SUMMARY: Final = 4_000
# How sure an error a compaction summary lists is: the host's own account of the session.
COMPACTED_ERROR: Final = 0.8
STATE_VERSION: Final = 1
# How many of a transcript's requests are remembered to tell a request made again.
MAX_PROMPTS_KEPT: Final = 500


class Extractor:
    """Feed entries in transcript order; collect the events each one yields."""

    def __init__(self, ctx: ExtractionContext | None = None) -> None:
        self.ctx = ctx or ExtractionContext()
        self.factory = EventFactory(self.ctx)
        self.structural = StructuralLayer(self.factory)
        self.seen_session: str | None = None  # the session the entries say they belong to
        # The requests already made in this transcript (hashes, oldest first, bounded): the
        # same words said again later are a new request (the last one decides what was asked).
        self.prompts: dict[str, None] = {}
        dialect = self.ctx.dialect
        self.host = injected(dialect)
        # What the host writes before every compaction summary: no information in it.
        self.preamble = (
            re.compile(dialect.summary_preamble, re.IGNORECASE)
            if dialect.summary_preamble
            else None
        )
        self.handoff = re.compile(dialect.plan_handoff) if dialect.plan_handoff else None

    def feed(self, entry: Entry) -> list[Event]:
        """Events from one entry. Never raises on content: a malformed entry yields nothing."""
        try:
            return self._feed(entry)
        except (ValueError, TypeError, KeyError, AttributeError):
            return []

    def snapshot(self) -> str:
        """What this extractor carries between entries, as text to save with the cursor
        (redacted: pending commands and outputs are stored like everything else)."""
        state = {
            "v": STATE_VERSION,
            "structural": redact_value(self.structural.to_state()),
            "prompts": list(self.prompts),
        }
        return json.dumps(state)

    def restore(self, text: str) -> bool:
        """Go on from a ``snapshot``; an unreadable one (another version, damaged) is ignored
        and the extractor starts afresh. Whether it was restored."""
        try:
            state = json.loads(text)
            if not isinstance(state, dict) or state.get("v") != STATE_VERSION:
                return False
            layer = StructuralLayer(self.factory)
            layer.load_state(state["structural"])
            # a state saved before requests were remembered has none
            prompts = dict.fromkeys(str(h) for h in state.get("prompts", []))
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
            return False
        self.structural = layer
        self.prompts = prompts
        return True

    def finish(self) -> list[Event]:
        """Events that need the end of the input. None yet: every layer decides per entry, and
        unanswered tool calls are dropped (their result may come in the next pass)."""
        return []

    # ------------------------------------------------------------- dispatch

    def _feed(self, entry: Entry) -> list[Event]:
        if self.seen_session is None and entry.session_id:
            self.seen_session = entry.session_id
        self.structural.base(entry)  # the first folder an entry names is the session's home
        if entry.role == "summary":
            return self._session_summary(entry)
        if entry.role == "system":
            return []
        if entry.is_compact_summary:
            return self._compact_summary(entry)
        events: list[Event] = []
        for block in entry.blocks:
            if block.kind == "tool_use" and block.call is not None:
                self.structural.tool_use(entry, block.call)
            elif block.kind == "tool_result" and block.outcome is not None:
                produced = self.structural.tool_result(entry, block.outcome)
                events += produced
                for event in produced:
                    if event.kind == "subagent_summary":
                        events += self.prose(
                            entry, block.outcome.text, "assistant", SUBAGENT_DISCOUNT
                        )
        if entry.is_meta:
            return events
        text = entry.text
        if not text or (entry.role == "user" and is_host_text(text, self.ctx.dialect)):
            return events
        if entry.role == "user":
            # What the person pasted (logs, dumps, code, documents) is not what they decided;
            # the plan they approved, handed over by the host, lists what they agreed to.
            events += self._said("prompt", entry, text, MAX_PROMPT)
            if self.handoff is not None and self.handoff.match(text):
                events += self.structural.decisions(
                    entry, listed_decisions(text, self.host), APPROVED_DECISION
                )
            text = own_words(text)
        else:
            events += self._said("reply", entry, text, MAX_REPLY)
            if not entry.is_sidechain:
                self.structural.reply(text)
        if text:
            events += self.prose(entry, text, entry.role, 1.0)
        return events

    def _said(self, kind: str, entry: Entry, text: str, limit: int) -> list[Event]:
        """The words of a prompt or a reply of the main conversation, as one event."""
        if entry.is_sidechain:
            return []
        words = " ".join(strip_code(text, self.host).split())
        if len(words) < (MIN_REPLY if kind == "reply" else 3):
            return []
        again = None
        if kind == "prompt":
            key = content_hash(words)
            if key in self.prompts:
                again = entry.line
            self.prompts.pop(key, None)
            self.prompts[key] = None
            while len(self.prompts) > MAX_PROMPTS_KEPT:
                del self.prompts[next(iter(self.prompts))]
        return [
            self.factory.make(
                kind, words, entry, confidence=1.0, salience=0.2, layer="structural", limit=limit,
                again=again,
            )
        ]  # fmt: skip

    def prose(self, entry: Entry, text: str, speaker: str, discount: float) -> list[Event]:
        """Tags first (they are explicit), then keyword markers in sentences not tagged."""
        events: list[Event] = []
        tagged: list[str] = []
        for kind, body in find_tags(text, self.host):
            tagged.append(body)
            events.append(
                self.factory.make(
                    kind, body, entry,
                    confidence=round(SELF_REPORT_CONFIDENCE * discount, 3),
                    salience=SALIENCE.get(kind, 0.6), layer="self_report", speaker=speaker,
                )
            )  # fmt: skip
        if speaker == "assistant":
            listed = listed_decisions(text, self.host)
            tagged += listed
            events += self.structural.decisions(entry, listed, round(LISTED_DECISION * discount, 3))
        for kind, sentence, confidence in find_markers(text, speaker, self.host):
            if "[MEMORY" in sentence or any(
                sentence in body or body in sentence for body in tagged
            ):
                continue
            alt = alternative(sentence) if kind == "decision" else None
            events.append(
                self.factory.make(
                    kind, sentence, entry, confidence=round(confidence * discount, 3),
                    salience=SALIENCE.get(kind, 0.5), layer="keyword", speaker=speaker,
                    rejected=alt,
                )
            )  # fmt: skip
        return events

    def _compact_summary(self, entry: Entry) -> list[Event]:
        text = entry.text
        text = (self.preamble.sub("", text) if self.preamble else text).strip()
        # Some hosts' summaries think aloud first ("Analysis: ...") then give the summary.
        parts = _SUMMARY_HEADING.split(text, maxsplit=1)
        text = parts[-1].strip() or text
        if not text:
            return []
        events = [
            self.factory.make(
                "compact_summary", text, entry, confidence=0.9, salience=0.6,
                layer="structural", limit=MAX_COMPACT_SUMMARY,
            )
        ]  # fmt: skip
        # each error the summary lists with its fix is a gotcha of its own (``compaction``)
        for item in errors_fixed(text):
            events.append(
                self.factory.make(
                    "gotcha", item, entry, confidence=COMPACTED_ERROR,
                    salience=SALIENCE["gotcha"], layer="compaction",
                )
            )  # fmt: skip
        return events

    def _session_summary(self, entry: Entry) -> list[Event]:
        text = entry.text.strip()
        if not text:
            return []
        return [
            self.factory.make(
                "session_summary", text, entry, confidence=0.8, salience=0.3, layer="structural"
            )
        ]


def extract(entries: Iterable[Entry], ctx: ExtractionContext | None = None) -> list[Event]:
    """Every event of ``entries`` (a whole transcript, or a summary's entries)."""
    extractor = Extractor(ctx)
    events: list[Event] = []
    for entry in entries:
        events += extractor.feed(entry)
    return events + extractor.finish()
