"""Episodes: what was said in a session, kept as it was said, in bounded, redacted chunks.

Extraction distils memories; episodes keep the words themselves, so a fact no extractor
recognised is still found by recall. Pure functions over host-neutral entries: an
``EpisodeCollector`` is fed entries in transcript order (like the extractor) and returns the
episodes of each one. What is kept: the person's prompts, the assistant's text, compaction
summaries, subagents' reports, the text of failing tool calls (a command's under the command,
as a terminal shows it), the plans the assistant proposed (``plan``), what it wrote into files
(``written``: a new file's content, an edit's new text, under the file's path; a document or
the code that answers "where is X done"), the documents of the project it read (``read``: a
status or hand-over note as it was then, under its path) and what a shell command that acted
printed (``ran``: an install's warning, the version a tool reported, what a push did, under the
command). What is not: tool-call-only turns, thinking, empty text, what a look at the files
printed (``ls``, ``cat``, ``git log``: the repository holds it), what the host wrote without
anyone speaking (command output wrappers, caveats, injected reminders) and a message repeated
in the same session.

Secrets are redacted before the text is cut, so a secret that would straddle two chunks is gone
before any cut is made.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

from cortexmem.core.extraction.documents import document_key
from cortexmem.core.extraction.prose import injected, is_host_text
from cortexmem.core.readonly_shell import is_read_only_command
from cortexmem.core.redact import redact
from cortexmem.core.session import PLAIN, Dialect, Entry, PersonShell
from cortexmem.core.text import (
    REDACT_MARGIN,
    base_folder,
    clip_redacted,
    is_document,
    project_document,
    redacted_head,
    relative_path,
    shows_lines,
)
from cortexmem.model import (
    DocumentVersion,
    Episode,
    Memory,
    SourceContext,
    normalise_time,
    parse_time,
    utc_now,
)

MAX_CHUNK: Final = 1_200
MIN_TEXT: Final = 12
# One message never takes more than this many chunks (a pasted log, a huge report).
MAX_CHUNKS_PER_MESSAGE: Final = 40
# Failing tool output is noisy: its head says what failed.
MAX_TOOL_ERROR: Final = 2_000
MAX_PENDING_CALLS: Final = 256
MAX_PENDING_WRITES: Final = 16
# What was written into a file is kept as far as its head: a whole generated file is the
# repository's business, its first screens say what it is.
MAX_WRITTEN: Final = 6_000
# A document the assistant read (a status or hand-over note, a design doc) is what it learned
# the project's state from, and such a file is rewritten between sessions: it is kept as it was
# read, as far as a long status note goes (one of 16 kB had its latest status, appended at its
# end, past a 6,000-character head). Code is the repository's; only documents count
# (``core.text.is_document``). The same text read again in a session is stored once.
MAX_READ: Final = 20_000
# What a command printed is kept as far as one chunk: its head says what happened (a warning,
# a version, the branch a push made); a long build or test log is the tool's, not knowledge.
# Commands that only look (``core.readonly_shell``) are left out: measured on the continuity
# questions, their listings and counts crowded answers out of recall's top five.
MAX_RAN: Final = MAX_CHUNK
# The command an output is kept under, as far as its head: a 2,000-character heredoc would
# otherwise crowd the output (the error, the warning) out of the chunk.
MAX_COMMAND: Final = 300
_PARAGRAPH: Final = re.compile(r"\n\s*\n")
_SENTENCE: Final = re.compile(r"(?<=[.!?:;])\s+")
_BLANKS: Final = re.compile(r"\n{3,}")


def chunk_text(text: str, limit: int = MAX_CHUNK) -> list[str]:
    """``text`` cut into pieces of at most ``limit`` characters, on paragraph boundaries when
    they fit, else on sentence boundaries, else on whitespace (a word longer than ``limit`` is
    cut where it must be). Pieces keep their words in order; blank pieces are dropped."""
    if limit < 20:
        raise ValueError("a chunk limit under 20 characters cuts words apart")
    pieces: list[str] = []
    for paragraph in _PARAGRAPH.split(text.strip()):
        paragraph = paragraph.strip()
        if not paragraph:
            continue
        if len(paragraph) <= limit:
            pieces.append(paragraph)
            continue
        for sentence in _SENTENCE.split(paragraph):
            while len(sentence) > limit:
                cut = sentence.rfind(" ", limit // 2, limit)
                cut = limit if cut <= 0 else cut
                pieces.append(sentence[:cut].strip())
                sentence = sentence[cut:].strip()
            if sentence.strip():
                pieces.append(sentence.strip())
    chunks: list[str] = []
    current = ""
    for piece in pieces:
        if not piece:
            continue
        joined = f"{current}\n\n{piece}" if current else piece
        if len(joined) <= limit:
            current = joined
        else:
            chunks.append(current)
            current = piece
    if current:
        chunks.append(current)
    return chunks


def _time(entry: Entry) -> str:
    """When the message was written (its own timestamp), else now."""
    if entry.timestamp:
        value = normalise_time(entry.timestamp)
        try:
            parse_time(value)
            return str(value)
        except (ValueError, TypeError):
            pass
    return utc_now()


class EpisodeCollector:
    """Feed entries in order; each yields its episodes (redacted, chunked, with provenance)."""

    def __init__(
        self,
        *,
        session_id: str | None = None,
        transcript_path: str | None = None,
        branch: str | None = None,
        dialect: Dialect = PLAIN,
        limit: int = MAX_CHUNK,
        home: str | None = None,
    ) -> None:
        self.session_id = session_id
        self.transcript_path = transcript_path
        self.branch = branch
        self.dialect = dialect
        self.host = injected(dialect)
        self.preamble = (
            re.compile(dialect.summary_preamble, re.IGNORECASE)
            if dialect.summary_preamble
            else None
        )
        self.limit = limit
        # Subagent calls awaiting their report (insertion-ordered, bounded like the extractor's
        # pending calls): saved with the cursor, so a pass boundary between a call and its
        # report loses nothing (``to_state`` / ``load_state``).
        self.subagent_calls: dict[str, None] = {}
        # Writes and edits awaiting their result: call id -> (path, what they ask to write).
        self.writes: dict[str, tuple[str, str]] = {}
        # Reads of documents awaiting their result: call id -> (the document's path, whether
        # the read shows the whole file: a range of its lines is not a version of it).
        self.reads: dict[str, tuple[str, bool]] = {}
        # Shell commands awaiting their output: call id -> (the command's head, redacted;
        # whether it only looks at the files). Both settled when the call is seen, so a pass
        # boundary between the call and its output changes nothing.
        self.commands: dict[str, tuple[str, bool]] = {}
        # The folder the session started in: a written file's path stays relative to it while
        # the shell is in a sub-folder (``core.text.base_folder``).
        self.home: str | None = home
        # A command the person ran themselves (its head, redacted), awaiting what it printed.
        self.person_shell = PersonShell(dialect)
        self.person_ran: str | None = None

    def to_state(self) -> dict[str, Any]:
        """What this collector carries from one entry to the next, JSON-ready."""
        return {
            "subagent_calls": list(self.subagent_calls)[-MAX_PENDING_CALLS:],
            # saved like everything else: redacted (a write awaiting its result may hold a key,
            # and so may a path or the folder); the calls' ids are kept as they are
            "writes": [
                [k, redact(path), redact(text)]
                for k, (path, text) in list(self.writes.items())[-MAX_PENDING_WRITES:]
            ],
            "reads": [
                [k, redact(path), whole]
                for k, (path, whole) in list(self.reads.items())[-MAX_PENDING_WRITES:]
            ],
            "commands": [
                [k, head, looks]
                for k, (head, looks) in list(self.commands.items())[-MAX_PENDING_WRITES:]
            ],
            "home": redact(self.home) if self.home else self.home,
            "person_ran": self.person_ran,
        }

    def load_state(self, state: object) -> None:
        """Go on from ``to_state``; anything unreadable is ignored (nothing awaits then)."""
        if not isinstance(state, dict):
            return
        calls = state.get("subagent_calls")
        if isinstance(calls, list):
            self.subagent_calls = {str(c): None for c in calls[-MAX_PENDING_CALLS:]}
        home = state.get("home")
        self.home = home if isinstance(home, str) and home else self.home
        reads = _saved(state, "reads", 3)
        if reads is not None:
            # a row of two was saved before a read said whether it showed the whole file
            older = _saved(state, "reads", 2) or []
            self.reads = {str(r[0]): (str(r[1]), bool(r[2:] and r[2])) for r in older + reads}
        commands = _saved(state, "commands", 3)
        if commands is not None:
            self.commands = {str(c[0]): (str(c[1]), bool(c[2])) for c in commands}
        writes = _saved(state, "writes", 3)
        if writes is not None:
            self.writes = {str(w[0]): (str(w[1]), str(w[2])) for w in writes}
        ran = state.get("person_ran")
        self.person_ran = ran if isinstance(ran, str) else None

    def feed(self, entry: Entry) -> list[Episode]:
        """Never raises on content: a malformed entry yields nothing."""
        try:
            return self._feed(entry)
        except (ValueError, TypeError, KeyError, AttributeError):
            return []

    def _feed(self, entry: Entry) -> list[Episode]:
        if self.home is None and entry.cwd:
            self.home = entry.cwd
        if entry.role in ("system", "summary"):
            return []
        if entry.is_compact_summary:
            text = entry.text
            text = self.preamble.sub("", text) if self.preamble else text
            return self._episodes(entry, text, "summary")
        out: list[Episode] = []
        for block in entry.blocks:
            if block.kind == "tool_use" and block.call is not None:
                if block.call.kind == "subagent" and block.tool_use_id:
                    _await(self.subagent_calls, block.tool_use_id, None, MAX_PENDING_CALLS)
                elif block.call.kind == "plan" and block.call.plan:
                    out += self._episodes(entry, block.call.plan, "plan")
                elif (
                    block.call.kind == "read" and block.tool_use_id and is_document(block.call.path)
                ):
                    whole = not block.call.partial
                    _await(self.reads, block.tool_use_id, (block.call.path, whole))
                elif (
                    block.call.kind == "shell" and block.tool_use_id and block.call.command.strip()
                ):
                    head = clip_redacted(block.call.command, MAX_COMMAND)
                    looks = is_read_only_command(block.call.command)
                    _await(self.commands, block.tool_use_id, (head, looks))
                elif block.call.written.strip() and block.tool_use_id:
                    # kept until its result says whether it was written (bounded)
                    written = block.call.written[: MAX_WRITTEN + REDACT_MARGIN]
                    _await(self.writes, block.tool_use_id, (block.call.path, written))
            elif block.kind == "tool_result" and block.outcome is not None:
                outcome = block.outcome
                if outcome.call_id in self.subagent_calls and not outcome.is_error:
                    del self.subagent_calls[outcome.call_id]
                    out += self._episodes(entry, outcome.text, "subagent")
                elif outcome.is_error and not outcome.refused:
                    failing = clip_redacted(outcome.output or outcome.text, MAX_TOOL_ERROR)
                    called = self.commands.get(outcome.call_id or "")
                    if called:  # under the command that failed, as a terminal shows it
                        failing = f"$ {called[0]}\n{failing}"
                    out += self._episodes(entry, failing, "tool_error", redacted=True)
                asked = self.writes.pop(outcome.call_id or "", None)
                document = self.reads.pop(outcome.call_id or "", None)
                command = self.commands.pop(outcome.call_id or "", None)
                if outcome.is_error:
                    continue
                if command is not None and not outcome.refused and not command[1]:
                    printed = outcome.output if outcome.output_apart else outcome.text
                    out += self._ran(entry, command[0], printed)
                if document is not None:
                    out += self._read(entry, *document, outcome.text, cut=outcome.partial)
                if outcome.written.strip():
                    out += self._written(entry, outcome.path, outcome.written)
                elif asked is not None:  # no copy in the result (a subagent's transcript)
                    out += self._written(entry, outcome.path or asked[0], asked[1])
        if entry.is_meta:
            return out
        text = entry.text
        if not text:
            return out
        if entry.role == "user":
            if not entry.is_sidechain and self.person_shell:
                out += self._person_shell(entry, text)
            if entry.is_sidechain or is_host_text(text, self.dialect):
                return out  # a subagent's task (its parent said it) or the host's own words
            out += self._episodes(entry, text, "user")
        elif entry.role == "assistant":
            out += self._episodes(entry, text, "subagent" if entry.is_sidechain else "assistant")
        return out

    def _written(self, entry: Entry, path: str, written: str) -> list[Episode]:
        """What a write or an edit put into a file, under the file's path (relative to the
        project the session started in), as far as ``MAX_WRITTEN``."""
        path = relative_path(path, base_folder(self.home, entry.cwd))
        text = f"{path}:\n{written}" if path else written
        return self._episodes(entry, clip_redacted(text, MAX_WRITTEN), "written", redacted=True)

    def _ran(self, entry: Entry, head: str, printed: str) -> list[Episode]:
        """What a command that acted printed, under the command's head (``MAX_COMMAND``,
        redacted), as far as ``MAX_RAN``; nothing when it printed nothing."""
        printed = clip_redacted(printed, MAX_RAN - len(head) - 3)
        if not printed:
            return []
        return self._episodes(entry, f"$ {head}\n{printed}", "ran", redacted=True)

    def _person_shell(self, entry: Entry, text: str) -> list[Episode]:
        """A command the person ran themselves (``!`` in Claude Code), then what it printed:
        kept as a command that acted is (``ran``), its head and its end (a test run's verdict
        comes last). What only looks (``git status``, ``ls``) is the repository's."""
        asked = self.person_shell.command(text)
        if asked is not None:
            looks = not asked or is_read_only_command(asked)
            self.person_ran = None if looks else clip_redacted(asked, MAX_COMMAND)
            return []
        said = self.person_shell.output(text)
        command, self.person_ran = self.person_ran, None
        if said is None or command is None:
            return []
        return self._ran(entry, command, head_and_end(said.text, MAX_RAN - len(command) - 3))

    def _read(
        self, entry: Entry, path: str, whole: bool, shown: str, *, cut: bool = False
    ) -> list[Episode]:
        """A document of the project as it was read, under its path, as far as ``MAX_READ``
        (one outside it, such as a person's global instructions or a plugin's notes, is not the
        project's state). A read of the whole file (no range of lines asked, nothing cut by
        the host) is a version of the document (``Episode.document``)."""
        document = project_document(path, shown, self.home or entry.cwd)
        if document is None or not shows_lines(shown):
            return []  # the host's note in the file's place ("File unchanged since last read")
        # the whole result: a cut before redacting could leave half a secret in what is kept
        inside, body = document
        text = f"{inside}:\n{body}"
        # redacted before the key is lower-cased (an AWS key id is upper case)
        version = document_key(redact(path), entry.cwd or self.home) if whole and not cut else None
        return self._episodes(
            entry, clip_redacted(text, MAX_READ), "read", redacted=True, document=version
        )

    def _episodes(
        self,
        entry: Entry,
        text: str,
        role: str,
        *,
        redacted: bool = False,
        document: str | None = None,
    ) -> list[Episode]:
        if self.host is not None:
            text = self.host.sub("\n", text)
        text = _BLANKS.sub("\n\n", text).strip()
        if len(text) < MIN_TEXT:
            return []
        if not redacted:  # before any cut; only as far as the chunks kept can reach
            text = redact(text[: self.limit * MAX_CHUNKS_PER_MESSAGE + REDACT_MARGIN])
        chunks = chunk_text(text, self.limit)[:MAX_CHUNKS_PER_MESSAGE]
        when = _time(entry)
        return [
            Episode(
                text=chunk,
                role=role,
                session_id=entry.session_id or self.session_id,
                transcript_path=entry.transcript_path or self.transcript_path,
                line=entry.line,
                chunk=i,
                branch=entry.branch or self.branch,
                created_at=when,
                document=document,
            )
            for i, chunk in enumerate(chunks)
        ]


def head_and_end(text: str, width: int) -> str:
    """``text`` redacted, as far as ``width``: its first third and its last two thirds around
    "…" when it is longer. Each part is redacted with a margin before it is cut, and the end's
    window starts after a blank: a token longer than the margin (a 4 kB access token) would
    otherwise begin before it, and its tail not be known for one."""
    whole = redacted_head(text.strip(), width)  # the whole text when it ends in the window
    if len(whole) <= width:
        return whole
    head = clip_redacted(text, width // 3)
    keep = width - len(head) - 3
    window = text[-(keep + REDACT_MARGIN) :]
    blank = re.search(r"\s", window)
    window = window[blank.end() :] if blank else ""
    end = redact(window)[-keep:]
    return f"{head}\n…\n{end.lstrip()}" if end.strip() else head


def _await(
    pending: dict[str, Any], call_id: str, what: Any, limit: int = MAX_PENDING_WRITES
) -> None:
    """Note a call awaiting its result; the oldest go once more than ``limit`` wait (bounded)."""
    pending[call_id] = what
    while len(pending) > limit:
        del pending[next(iter(pending))]


def _saved(state: dict[str, Any], key: str, width: int) -> list[list[Any]] | None:
    """The pending calls ``to_state`` saved under ``key`` (the last ``MAX_PENDING_WRITES``),
    each a list of ``width`` fields; None when the state has none."""
    rows = state.get(key)
    if not isinstance(rows, list):
        return None
    return [r for r in rows[-MAX_PENDING_WRITES:] if isinstance(r, list) and len(r) == width]


def superseded(
    episodes: Iterable[Episode], newest: Mapping[tuple[str, str | None], DocumentVersion]
) -> set[str]:
    """The ids of ``episodes`` that show a document as an earlier whole read showed it, when a
    later whole read of it on the same branch is stored (``newest`` by document and branch): a
    status note read on Monday and again, rewritten, on Friday says Friday's state; Monday's
    "next: X" is history, not where the work stands. Another branch's copy is another file."""
    out = set()
    for e in episodes:
        latest = newest.get((e.document, e.branch)) if e.document else None
        if latest is None or (e.transcript_path, e.line) == (latest.transcript_path, latest.line):
            continue
        if e.created_at <= latest.created_at:  # both in the store's one format: text order
            out.add(e.id)
    return out


# How an episode ranks beside memories: below a typical extracted memory on the rank formula,
# so a typed memory wins a tie, while relevance (most of the blend) still decides.
EPISODE_CONFIDENCE: Final = 0.6
EPISODE_PRIORITY: Final = 3
EPISODE_TAG: Final = "episode"


def as_memory(episode: Episode) -> Memory:
    """An episode in the shape recall ranks and renders (never stored as a memory)."""
    return Memory(
        content=episode.text,
        memory_type="context",
        id=episode.id,
        confidence=EPISODE_CONFIDENCE,
        priority=EPISODE_PRIORITY,
        source_type="extraction",
        source_session=episode.session_id,
        source_context=SourceContext(branch=episode.branch),
        tags=(EPISODE_TAG, f"role:{episode.role}"),
        created_at=episode.created_at,
    )


def provenance(episode: Episode) -> dict[str, object]:
    """Where an episode was read, for results: role, session, transcript and line, branch,
    time."""
    return {
        "role": episode.role,
        "session_id": episode.session_id,
        "transcript_path": episode.transcript_path,
        "line": episode.line,
        "chunk": episode.chunk,
        "branch": episode.branch,
        "created_at": episode.created_at,
    }
