"""The vocabulary of extraction: event kinds, the context a pass runs in, and event building.

Every layer produces ``Event`` records through ``EventFactory`` so provenance (session,
transcript, line, branch, commit) and the event's time are filled in one way everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from cortexmem.core.session import PLAIN, Dialect, Entry
from cortexmem.core.text import clip_redacted
from cortexmem.model import Event, Provenance, normalise_time, utc_now

# kind -> what it records
EVENT_KINDS: Final[dict[str, str]] = {
    "decision": "a choice made, usually with its reason (keyword or self-report)",
    "rejected": "an alternative considered and turned down",
    "withdrawn": "a decision a later whole version of a document that listed it no longer says",
    "plan": "a plan: one proposed for approval, or the set of a whole to-do list",
    "plan_step": "one step of a plan with its status (a to-do list, or one step added or updated)",
    "file_modified": "a file created or changed by an edit or write tool call",
    "command": "a shell command run, with whether it succeeded",
    "test_run": "a test or check run (pytest, jest, cargo test, mypy, ruff ...) and its outcome",
    "error": "a tool call that failed, with its first meaningful error line",
    "refused": "a tool call the person refused to allow",
    "error_resolved": "a failure followed by the same call succeeding, with what changed between",
    "fix": "a stated fix or root cause ('the fix was ...')",
    "commit": "a git commit made in the session",
    "preference": "how the person wants things done ('always ...', 'never ...', 'prefer ...')",
    "gotcha": "a trap worth remembering ('watch out', 'gotcha', 'be careful')",
    "knowledge": "a fact flagged for memory with an untyped [MEMORY: ...] tag",
    "pattern": "a convention flagged with [MEMORY:pattern]",
    "architecture": "a structural fact flagged with [MEMORY:architecture]",
    "progress": "a progress note flagged with [MEMORY:progress]",
    "subagent_summary": "the report a subagent returned",
    "compact_summary": "the summary the host wrote when it compacted the context",
    "session_summary": "a session title record (older transcripts' summary lines)",
    "working_tree": "files changed but not committed when a session stopped",
    "problem": "a failure described in words ('tests still fail', 'bug: ...')",
    "open_problem": "a failure still unresolved at the end of what was read",
    "howto": "how to build, test or run the project, stated in words",
    "prompt": "what the person asked (a real prompt, not host text)",
    "reply": "what the assistant answered in words (its text, not its tool calls)",
}

MAX_CONTENT: Final = 1_000


@dataclass(frozen=True)
class ExtractionContext:
    """What is known about the whole pass rather than one line.

    ``branch`` and ``commit`` describe a live session (from git); a backfill leaves them empty
    and each line's own branch is used. ``dialect`` is what the host writes into messages
    without anyone speaking (handed in by the host's reader).
    """

    session_id: str | None = None
    transcript_path: str | None = None
    branch: str | None = None
    commit: str | None = None
    project: str | None = None
    dialect: Dialect = PLAIN
    # A subagent's transcript: the branch of its parent session when it ran, which wins over
    # what its own lines say (a subagent in a worktree records that worktree's branch).
    parent_branch: str | None = None
    # The folder the session started in, when known from elsewhere (a subagent's transcript:
    # its parent's), so paths stay relative to the same project folder in both.
    home: str | None = None
    # The decisions the project's documents list as the store knows them, (document, its
    # (decision, when last listed) pairs) each: a later whole version of a document that no
    # longer says one drops it, whichever session read the earlier version.
    documents: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()


def clip(text: str, limit: int = MAX_CONTENT) -> str:
    return clip_redacted(text, limit)  # secrets redacted before the cut, never after


def event_time(entry: Entry) -> str:
    """The entry's own time in storage format, so backfilled events keep when they happened."""
    if entry.timestamp:
        value = normalise_time(entry.timestamp)
        if isinstance(value, str) and len(value) == 27 and value.endswith("Z"):
            return value
    return utc_now()


class EventFactory:
    """Builds events for one pass with the pass's context."""

    def __init__(self, ctx: ExtractionContext) -> None:
        self.ctx = ctx

    def make(
        self,
        kind: str,
        content: str,
        entry: Entry,
        *,
        confidence: float,
        salience: float,
        layer: str,
        limit: int = MAX_CONTENT,
        **payload: Any,
    ) -> Event:
        return Event(
            kind=kind,
            content=clip(content, limit),
            payload={"layer": layer, **{k: v for k, v in payload.items() if v is not None}},
            confidence=confidence,
            salience=salience,
            provenance=Provenance(
                session_id=self.ctx.session_id or entry.session_id,
                transcript_path=self.ctx.transcript_path or entry.transcript_path,
                line=entry.line,
                branch=self.ctx.parent_branch or entry.branch or self.ctx.branch,
                commit=self.ctx.commit,
            ),
            created_at=event_time(entry),
        )
