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

from cortexmem.core.extraction.commands import printed_a_failure
from cortexmem.core.extraction.compaction import errors_fixed
from cortexmem.core.extraction.events import EventFactory, ExtractionContext, clip
from cortexmem.core.extraction.keywords import alternative, find_markers, listed_decisions
from cortexmem.core.extraction.prose import injected, is_host_text, own_words, strip_code
from cortexmem.core.extraction.structural import (
    APPROVED_DECISION,
    LISTED_DECISION,
    StructuralLayer,
)
from cortexmem.core.extraction.tags import SELF_REPORT_CONFIDENCE, find_tags
from cortexmem.core.redact import redact_value
from cortexmem.core.session import Entry, PersonShell, ToolCall, ToolResult
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
# What the person says after stopping the assistant: a correction, said in so many words
# (shorter, "continue" or "go on", is no instruction; longer, a new request with its details:
# "instead of … print something like …" and the message, kept as the prompt it is).
MIN_CORRECTION_WORDS: Final = 3
MAX_CORRECTION_WORDS: Final = 40
_SENTENCE: Final = re.compile(r"(?<=[.!?])\s+")
# A line continued in the terminal the person typed in ("…data-groupid:\\ <newline>").
_CONTINUED: Final = re.compile(r"\\(?=\s)")
MAX_CORRECTION: Final = 600
MAX_STOPPED: Final = 60
STOPPED_CONFIDENCE: Final = 0.75
OPENING_WORDS: Final = 6
MAX_FIXED_KEPT: Final = 20
MAX_FIXED_CHARS: Final = 600
# How sure an error a compaction summary lists is: the host's own account of the session.
COMPACTED_ERROR: Final = 0.8
STATE_VERSION: Final = 1
# The id (and tool name) a command the person ran themselves goes by.
PERSON_SHELL: Final = "person-shell"
# How many of a transcript's requests are remembered to tell a request made again.
MAX_PROMPTS_KEPT: Final = 500


def _opening(words: str) -> str:
    """How a request begins: the hash of its first ``OPENING_WORDS`` words, in lower case (the
    words themselves are not kept between passes)."""
    return content_hash(" ".join(words.lower().split()[:OPENING_WORDS]))


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
        # A command the person ran themselves, then what it printed (``_person_shell``).
        self.person_shell = PersonShell(dialect)
        self.attachment = re.compile(dialect.attachment) if dialect.attachment else None
        # What the person just stopped (a call they refused without a word, the assistant's
        # turn they interrupted) until the assistant goes on: their next words correct it.
        self.stopped: str | None = None
        # The failures fixed with a cause so far (their words, newest last, bounded): what a
        # compaction summary lists again is not a gotcha twice.
        self.fixed: list[str] = []
        # How the person's last request began: the same words again after they stopped the
        # assistant are that request sent again in full, not a correction.
        self.opening: str | None = None

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
            "stopped": redact_value(self.stopped),
            "fixed": redact_value(self.fixed),
            "opening": self.opening,
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
            stopped = state.get("stopped")  # none in a state saved before it was kept
            fixed = [str(f) for f in state.get("fixed", [])][-MAX_FIXED_KEPT:]
            opening = state.get("opening")
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
            return False
        self.structural = layer
        self.prompts = prompts
        self.stopped = str(stopped) if stopped else None
        self.fixed = fixed
        self.opening = str(opening) if opening else None
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
            self.stopped = None  # the context was compacted: what follows is a new turn
            return self._compact_summary(entry)
        if entry.role == "assistant" and not entry.is_sidechain:
            self.stopped = None  # the assistant went on: what the person says next is a request
        events: list[Event] = []
        for block in entry.blocks:
            if block.kind == "tool_use" and block.call is not None:
                self.structural.tool_use(entry, block.call)
            elif block.kind == "tool_result" and block.outcome is not None:
                produced = self.structural.tool_result(entry, block.outcome)
                if not entry.is_sidechain:
                    self._note_refusal(produced)
                    self._note_fixed(produced)
                events += produced
                for event in produced:
                    if event.kind == "subagent_summary":
                        events += self.prose(
                            entry, block.outcome.text, "assistant", SUBAGENT_DISCOUNT
                        )
        if entry.is_meta:
            return events
        text = entry.text
        if text and entry.role == "user" and not entry.is_sidechain and self.person_shell:
            events += self._person_shell(entry, text)
        if not text or (entry.role == "user" and is_host_text(text, self.ctx.dialect)):
            interrupted = self.ctx.dialect.interrupted
            if (
                text
                and interrupted
                and not entry.is_sidechain
                and text.lstrip().startswith(interrupted)
            ):
                self.stopped = self.stopped or "interrupting the assistant"
            return events
        correction: list[Event] = []
        if entry.role == "user":
            # What the person pasted (logs, dumps, code, documents) is not what they decided;
            # the plan they approved, handed over by the host, lists what they agreed to.
            events += self._said("prompt", entry, text, MAX_PROMPT)
            own = own_words(text)
            words = " ".join(_CONTINUED.sub(" ", strip_code(own, self.host)).split())
            correction = self._correction(entry, text, words)
            events += correction
            if not entry.is_sidechain:
                self.opening = _opening(words)
            if self.handoff is not None and self.handoff.match(text):
                events += self.structural.decisions(
                    entry, listed_decisions(text, self.host), APPROVED_DECISION
                )
            text = own
        else:
            events += self._said("reply", entry, text, MAX_REPLY)
            if not entry.is_sidechain:
                self.structural.reply(text)
        if text:
            said = self.prose(entry, text, entry.role, 1.0)
            if correction:
                # the correction says it, with what it corrects: not twice
                said = [e for e in said if e.kind != "preference"]
            events += said
        return events

    def _person_shell(self, entry: Entry, text: str) -> list[Event]:
        """A command the person ran themselves (``!`` in Claude Code), read as a shell call
        when it failed: a failure the session may fix or leave open. The host records no exit
        status for it, so only what it printed says it failed (``printed_a_failure``); one that
        printed no sign of failure, or whose end was cut off, says nothing: it neither passed
        nor settles an earlier failure. Its command waits with the calls awaiting a result
        (saved with the cursor), under one id: only the output right after it is its own."""
        command = self.person_shell.command(text)
        if command is not None:
            if command:
                call = ToolCall("shell", PERSON_SHELL, call_id=PERSON_SHELL, command=command)
                self.structural.tool_use(entry, call)
            return []
        said = self.person_shell.output(text)
        if said is None or not said.whole or not printed_a_failure(said.text):
            self.structural.pending.pop(PERSON_SHELL, None)
            return []
        return self.structural.tool_result(
            entry, ToolResult(PERSON_SHELL, said.text, is_error=True)
        )

    def _note_refusal(self, produced: list[Event]) -> None:
        """A call the person refused without a word: what they say next is why."""
        for event in produced:
            if event.kind == "refused" and not event.payload.get("cancelled"):
                said = any(e.payload.get("said") for e in produced)
                what = event.content.removeprefix("The person refused ").strip()
                if not what.startswith("`"):
                    # "Edit cmd/entire/cli/reset.go": the file by its name (its folders' words,
                    # "cli", would bring the preference up for prompts about something else)
                    what = re.sub(r"\S*/(?=\S)", "", what)
                elif len(what) > MAX_STOPPED:  # a long command: its start says which
                    what = what[: MAX_STOPPED - 2].rstrip() + "…`"
                self.stopped = None if said else f"refusing {what}"

    def _note_fixed(self, produced: list[Event]) -> None:
        """A failure fixed with its cause: a gotcha already, whatever a compaction says later."""
        for event in produced:
            if event.kind == "error_resolved" and event.payload.get("cause"):
                self.fixed = [*self.fixed, event.content[:MAX_FIXED_CHARS]][-MAX_FIXED_KEPT:]

    def _correction(self, entry: Entry, text: str, words: str) -> list[Event]:
        """What the person said right after stopping the assistant (refusing its call without a
        word, interrupting its turn): how they want it done instead ("fix the test, the code is
        right", "I'd actually love that test to be saved as a permanent unit test"), their
        preference, as words typed with a refusal are. Not a plan the host hands over, and not
        a question (a request, kept as the prompt it is), though a statement before one is.
        ``words``: the prompt's own words (``own_words``), on one line."""
        if entry.is_sidechain:
            return []
        stopped, self.stopped = self.stopped, None
        if stopped is None:
            return []
        if self.handoff is not None and self.handoff.match(text):
            return []
        if self.attachment is not None and self.attachment.search(text):
            return []  # words about a picture the memory cannot hold
        if self.opening is not None and _opening(words) == self.opening:
            return []  # their own request again, in full
        # "I have both Node and Python, but I don't want to make it only work for me. Would
        # there be a cross-platform solution?": the statement is the preference
        sentences = _SENTENCE.split(words)
        while sentences and sentences[-1].endswith("?"):
            sentences.pop()
        words = " ".join(sentences)
        if not MIN_CORRECTION_WORDS <= len(words.split()) <= MAX_CORRECTION_WORDS:
            return []
        return [
            self.factory.make(
                "preference", f"“{clip(words, MAX_CORRECTION)}”, the person said {stopped}",
                entry, confidence=STOPPED_CONFIDENCE, salience=SALIENCE["preference"],
                layer="structural", speaker="user", said=clip(words, MAX_CORRECTION),
                stopping=True,
            )
        ]  # fmt: skip

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
        for item in errors_fixed(text, self.fixed):
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
