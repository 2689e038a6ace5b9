"""Layer 1: what tool calls and their results say, exactly (no interpretation of prose).

A tool call is remembered until its result arrives (bounded: a result that never comes does
not hold memory forever), and the pair becomes events: files modified, commands, test and check
runs with their outcome, commits, plans and plan steps, failures, and a failure's resolution
when the same call later succeeds. A resolution is worth keeping for what it teaches: the
assistant's own diagnosis between the failing and the passing run ("the tests expect …"), when
it gave one, is its cause (``cause``). Calls are told apart by their neutral ``ToolCall.kind``;
the host's tool name is only shown and kept in the event's payload (``tool``), beside the
kind (``call``).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import asdict
from functools import lru_cache
from typing import Any, Final

from cortexmem.core.extraction import commands
from cortexmem.core.extraction.documents import Documents, document_key
from cortexmem.core.extraction.events import EventFactory, clip, event_time
from cortexmem.core.extraction.keywords import listed_decisions
from cortexmem.core.extraction.prose import ANNOUNCES
from cortexmem.core.session import Entry, ToolCall, ToolResult
from cortexmem.core.text import (
    base_folder,
    is_document,
    path_inside,
    project_document,
    relative_path,
    shows_lines,
)
from cortexmem.model import Event, content_hash

MAX_PENDING: Final = 256
MAX_FAILURES: Final = 64
MAX_TODOS: Final = 500
MAX_RECENT_FILES: Final = 200
MAX_ERRORS_SAID: Final = 500
# A call stopped within this many lines of a refused one was stopped with it.
CANCELLED_WITHIN: Final = 4
# Words typed with a refusal that give no reason.
_FILLER: Final = re.compile(
    r"(?:no|nope|n|not now|not yet|wait|stop|later|cancel|hold on|hang on|don't|skip)\W*"
)

MAX_CAUSE: Final = 300
# A sentence that diagnoses a failure, in the assistant's words (not an intention to look).
_DIAGNOSIS: Final = re.compile(
    r"\b(?:the (?:root )?(?:issue|problem|error|cause|bug|failure)s? (?:is|was|are|were|here)"
    r"|the (?:fix|solution|answer) (?:is|was)|must|has to|have to"
    r"|because|caused by|due to|the tests? (?:expects?|expected|assumes?|checks?|uses?)"
    r"|(?:is|are|was|were) (?:missing|undefined|not defined|not found|not set|outdated|stale|"
    r"wrong|incorrect|unused|deprecated|duplicated|too)"
    r"|doesn't|does not|didn't|did not|isn't|wasn't|aren't|weren't|can't|cannot|no longer"
    r"|instead of|should (?:be|use|have)|expects?|expected|requires?|mismatch)\b",
    re.IGNORECASE,
)
# An announcement to look further ("Let me check that function:"), not to act or to move on.
_LOOKS_FURTHER: Final = re.compile(
    ANNOUNCES.pattern + r"\s+(?:\w+\s+){0,3}?(?:check|look|see|examine|investigate|inspect|read|"
    r"find|search|trace|explore|dig|understand|figure|open)\b",
    re.IGNORECASE,
)
# A sentence that rules a cause out ("The other callers are fine because they check the length
# first"): no diagnosis of the failure.
# (Its subject said to be fine, with no "but" after: "The test is correct, but the code …" is one.)
_RULED_OUT: Final = re.compile(
    r"^(?:[\w`'().-]+ ){1,6}(?:is|are|looks?|seems?|was|were) (?:all )?"
    r"(?:fine|ok|okay|correct|good|not the (?:issue|problem|cause))\b"
    r"(?!.*\b(?:but|however|although|though|yet|except)\b)",
    re.IGNORECASE,
)
_ANAPHORA: Final = re.compile(r"^(?:this|that|it|so|which)\b", re.IGNORECASE)
_SENTENCES: Final = re.compile(r"(?<=[.!?])\s+|\n+")
_MARKUP: Final = re.compile(r"\*\*|`|^\s*(?:#+|>|[-*]|\d+\.)\s+")


def diagnosis(text: str) -> tuple[str, bool] | None:
    """The sentence of an assistant's reply that says why something failed, and whether it is
    only a lead; None when the reply diagnoses nothing.

    The first sentence that diagnoses (a cause, an expectation, something missing or wrong),
    not one that only announces what comes next ("Let me check …"); a short opener ("I see the
    issue!") brings the sentence after it along, and one that starts by pointing back ("This
    means …") the sentence before it. A diagnosis the reply ends by announcing a look further
    ("The issue is that `ListSessions` calls `ListCheckpoints()`. Let me check that function:")
    is a lead: where the assistant looks next, and a later diagnosis says what it found there."""
    sentences = [" ".join(_MARKUP.sub("", s).split()) for s in _SENTENCES.split(text) if s.strip()]
    for i, sentence in enumerate(sentences):
        if len(sentence) < 12 or ANNOUNCES.match(sentence) or not _DIAGNOSIS.search(sentence):
            continue
        if _RULED_OUT.search(sentence):
            continue
        end = i + 1
        if len(sentence) < 40 and i + 1 < len(sentences) and not ANNOUNCES.match(sentences[i + 1]):
            sentence = f"{sentence} {sentences[i + 1]}"
            end = i + 2
        elif i > 0 and _ANAPHORA.match(sentence) and not ANNOUNCES.match(sentences[i - 1]):
            sentence = f"{sentences[i - 1]} {sentence}"
        lead = end == len(sentences) - 1 and bool(_LOOKS_FURTHER.match(sentences[end]))
        return clip(sentence, MAX_CAUSE), lead
    return None


# A file name in a tool's output: ``cmd/reset_test.go:20:1:``, ``File "src/app.py", line 3``.
_NAMED_FILE: Final = re.compile(r"[\w.-]+\.[A-Za-z][A-Za-z0-9]{0,5}\b")
# How much of a failure's output is read for the files it names (their errors come first).
NAMED_FROM_CHARS: Final = 20_000
MAX_NAMED: Final = 50


def files_named(output: str) -> list[str]:
    """The names (lower case, without folders) of the files a failure's output names."""
    found = (m.rsplit("/", 1)[-1].lower() for m in _NAMED_FILE.findall(output[:NAMED_FROM_CHARS]))
    return list(dict.fromkeys(found))[:MAX_NAMED]


def fixed_files(changed: list[str], named: list[str]) -> list[str]:
    """The files a failure's fix changed: of those changed between the failing and the passing
    run, the ones its output named, when it named any; else all of them. A session often
    changes other files meanwhile (another bug, a refactor), and the error said where it was:
    "`mise run lint` failed … Fixed by changes to reset_test.go", not to every file touched
    before lint passed."""
    wanted = set(named)
    hit = [path for path in changed if path.rsplit("/", 1)[-1].lower() in wanted]
    return hit or changed


@lru_cache(maxsize=512)
def _parts(command: str) -> frozenset[str]:
    """The steps of a chain (``a && b``), each normalised."""
    return frozenset(commands.normalise_command(part) for part in command.split("&&"))


@lru_cache(maxsize=512)
def _step_kind(command: str) -> str | None:
    return commands.step_kind(command)


FILE_KINDS: Final = frozenset({"edit", "write"})
# The cause of a failure the session moved on from without a word (another kind of step passed
# before any diagnosis): what the assistant diagnoses later is about that other work. Shorter
# than any diagnosis (``diagnosis`` keeps sentences of 12 characters or more).
MOVED_ON: Final = "-"
# How sure a decision listed under a heading that names decisions is
# (``keywords.listed_decisions``): one in a plan the person approved, one written down or said.
APPROVED_DECISION: Final = 0.8
LISTED_DECISION: Final = 0.75
TODO_STATUSES: Final = ("pending", "in_progress", "completed")


class _Bounded(OrderedDict):
    """An insertion-ordered dict that forgets its oldest items past ``limit``."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def __setitem__(self, key: Any, value: Any) -> None:
        super().__setitem__(key, value)
        self.move_to_end(key)
        while len(self) > self.limit:
            self.popitem(last=False)


def _runner(call: ToolCall) -> str:
    """Who ran a call, for telling its failure fixed: any shell (the assistant's shell tool, a
    command the person ran themselves) runs the same command; other tools by their name."""
    return "shell" if call.kind == "shell" else call.name


class StructuralLayer:
    def __init__(self, factory: EventFactory) -> None:
        self.make = factory.make
        self.pending: _Bounded = _Bounded(MAX_PENDING)
        # key -> (what failed, error line, files seen index, the diagnosis given since or "",
        # the names of the files its output names)
        self.failures: _Bounded = _Bounded(MAX_FAILURES)
        self.todos: _Bounded = _Bounded(MAX_TODOS)  # step text -> status
        # step text -> the statuses it has had: a step that comes back to one (reopened, then
        # done again) says so anew (``again``), or the store, which keeps an event once per
        # session, would keep the older status as the step's last word
        self.todos_had: _Bounded = _Bounded(MAX_TODOS)
        self.tasks: _Bounded = _Bounded(MAX_TODOS)  # TaskCreate id -> subject
        self.files_seen = 0
        self.recent_files: list[str] = []
        self.plan_key: tuple[str, ...] = ()
        # The failures said so far (hashes of their words): the same failure again is another
        # occurrence (a retry loop, an error that recurs), not the same event read twice.
        self.errors_said: _Bounded = _Bounded(MAX_ERRORS_SAID)
        # Where the session started (the first folder an entry names): the project. A `cd`
        # moves the shell, and the host records the new folder on every later entry; paths
        # stay relative to the project, and a failure while the shell is elsewhere says so.
        self.home: str | None = factory.ctx.home
        own = factory.ctx.dialect.own_files
        self.own_files = re.compile(own) if own else None  # the host's own (a plan mode plan)
        self.refused_at = -CANCELLED_WITHIN - 1  # the line of the last call the person refused
        # call id -> the decisions a pending write to a document lists (the written text itself
        # is not carried between passes)
        self.listed: _Bounded = _Bounded(MAX_PENDING)
        # The failures whose cause so far is a lead (``diagnosis``): a later one replaces it.
        self.leads: _Bounded = _Bounded(MAX_FAILURES)
        # What the project's documents list (``documents``), as the store knew it when the
        # pass began and as this session read or wrote them.
        self.documents = Documents(factory.ctx.documents)
        # call id -> (the document a pending write or edit is to, the decisions a whole new
        # version no longer says; ``None`` for an edit, which shows only its part)
        self.versions: _Bounded = _Bounded(MAX_PENDING)

    # ------------------------------------------------------------- state between passes

    def to_state(self) -> dict[str, Any]:
        """Everything carried from one entry to the next, as JSON-ready data: saved with the
        cursor so the next pass goes on exactly where this one stopped."""
        return {
            # what a write asks to put into a file is the episodes' business, not extraction's
            "pending": [[k, {**asdict(call), "written": ""}] for k, call in self.pending.items()],
            "failures": [[list(k), list(v)] for k, v in self.failures.items()],
            "todos": list(self.todos.items()),
            "todos_had": list(self.todos_had.items()),
            "tasks": list(self.tasks.items()),
            "files_seen": self.files_seen,
            "recent_files": self.recent_files,
            "plan_key": list(self.plan_key),
            "errors_said": list(self.errors_said),
            "home": self.home,
            "refused_at": self.refused_at,
            "listed": list(self.listed.items()),
            "leads": [list(k) for k in self.leads],
            "documents": self.documents.to_state(),
            "versions": [[k, list(v)] for k, v in self.versions.items()],
        }

    def load_state(self, state: dict[str, Any]) -> None:
        """The state ``to_state`` gave (raises on a malformed one; the caller starts afresh)."""
        for key, fields in state["pending"]:
            steps = fields.get("steps")
            fields["steps"] = None if steps is None else tuple((t, s) for t, s in steps)
            self.pending[key] = ToolCall(**fields)
        for (name, target), (failed, line, seen, *rest) in state["failures"]:
            # a state saved before causes (or the named files) were kept has three (or four)
            said = str(rest[0]) if rest else ""
            named = [str(n) for n in rest[1]] if len(rest) > 1 else []
            self.failures[(name, target)] = (failed, line, int(seen), said, named)
        for text, status in state["todos"]:
            self.todos[text] = status
        for text, had in state.get("todos_had", []):  # none in a state saved before they were
            self.todos_had[str(text)] = [str(h) for h in had]
        for task_id, subject in state["tasks"]:
            self.tasks[task_id] = subject
        self.files_seen = int(state["files_seen"])
        self.recent_files = [str(f) for f in state["recent_files"]][-MAX_RECENT_FILES:]
        self.plan_key = tuple(str(t) for t in state["plan_key"])
        for said in state.get("errors_said", []):  # a state saved before they were kept has none
            self.errors_said[str(said)] = None
        home = state.get("home")
        self.home = str(home) if home else self.home
        self.refused_at = int(state.get("refused_at", self.refused_at))
        for call_id, decisions in state.get("listed", []):
            self.listed[str(call_id)] = [str(d) for d in decisions]
        for name, target in state.get("leads", []):  # none in a state saved before leads
            self.leads[(name, target)] = None
        # none in a state saved before documents were followed
        self.documents.load_state(state.get("documents") or {})
        for call_id, (document, gone) in state.get("versions", []):
            self.versions[str(call_id)] = (
                str(document),
                None if gone is None else [str(d) for d in gone],
            )

    # ------------------------------------------------------------- feeding

    def base(self, entry: Entry) -> str | None:
        """The folder paths are made relative to: the project the session started in while
        the shell is inside it (a `cd test` does not make `test/a.py` into `a.py`), else the
        entry's own folder."""
        if self.home is None and entry.cwd:
            self.home = entry.cwd
        return base_folder(self.home, entry.cwd)

    def moved_to(self, entry: Entry) -> str | None:
        """The folder the shell moved to, relative to the project, while it is elsewhere."""
        return path_inside(entry.cwd, self.base(entry)) or None

    def tool_use(self, entry: Entry, call: ToolCall) -> None:
        self.base(entry)
        if call.call_id:
            self.pending[call.call_id] = call
            # the decisions a document lists ("STATUS.md", "docs/decisions.md") are the
            # project's own record, once the write succeeded
            if call.kind in FILE_KINDS and is_document(call.path):
                decisions = listed_decisions(call.written)
                if decisions:
                    self.listed[call.call_id] = decisions
                document = self._document(call.path, entry)
                if document is not None:
                    whole = call.kind == "write" and not call.partial
                    now = event_time(entry)
                    gone = self.documents.gone(document, call.written, now) if whole else None
                    self.versions[call.call_id] = (document, gone)

    def tool_result(self, entry: Entry, result: ToolResult) -> list[Event]:
        if not result.call_id or result.call_id not in self.pending:
            return []
        call: ToolCall = self.pending.pop(result.call_id)
        if result.is_error and result.refused and call.kind != "plan":
            # a call stopped because another of its turn was just refused was not refused
            # itself: said, but not a refusal the person's words are about
            along = result.cancelled and entry.line - self.refused_at <= CANCELLED_WITHIN
            if not result.cancelled:
                self.refused_at = entry.line
            return self._refused(entry, call, result.reason, along=along)
        handler = getattr(self, "_on_" + call.kind, None)
        events: list[Event] = list(handler(entry, call, result)) if handler else []
        if call.kind in FILE_KINDS:
            events += self._on_file(entry, call, result)
            written = self.listed.pop(result.call_id, [])
            version = self.versions.pop(result.call_id, None)
            if not result.is_error:
                if version is None:
                    events += self.decisions(entry, written, LISTED_DECISION)
                else:
                    events += self._version(entry, version[0], written, version[1])
        elif call.kind == "read" and not result.is_error:
            # and so are those of a document of the project the session read (a status note
            # another assistant or a person keeps), whoever wrote them
            shown = project_document(call.path, result.text, self.home or entry.cwd)
            if shown is not None:
                document, text = document_key(call.path, entry.cwd or self.home), shown[1]
                whole = not (call.partial or result.partial) and shows_lines(result.text)
                now = event_time(entry)
                gone = self.documents.gone(document, text, now) if whole else None
                events += self._version(entry, document, listed_decisions(text), gone)
        if result.is_error and call.kind not in ("shell", "plan"):
            events += self._failure(entry, call, self._target(call, entry), result.text)
        elif not result.is_error and call.kind != "shell":
            events += self._success(entry, call, self._target(call, entry))
        return events

    def reply(self, text: str) -> None:
        """An assistant reply of the main conversation: a diagnosis in it is the cause of the
        failures still waiting for one, or whose cause so far was only a lead."""
        waiting = [
            key for key, value in self.failures.items() if not value[3] or key in self.leads
        ]  # fmt: skip
        if not waiting:
            return
        found = diagnosis(text)
        if found is None:
            return
        cause, lead = found
        for key in waiting:
            failed, line, seen, _, named = self.failures[key]
            self.failures[key] = (failed, line, seen, cause, named)
            if lead:
                self.leads[key] = None
            else:
                self.leads.pop(key, None)

    # ------------------------------------------------------------- failures and resolutions

    def _refused(
        self, entry: Entry, call: ToolCall, reason: str = "", *, along: bool = False
    ) -> list[Event]:
        if call.kind == "shell":
            what = f"`{clip(commands.display_command(call.command), 300)}`"
        else:
            what = f"{call.name} {self._target(call, entry)}".strip()
        content = f"The person refused {what}"
        # the same refusal later in the session is another one (a session that ends on it)
        again = self._again(entry, content)
        refused = self.make(
            "refused", content, entry, confidence=1.0, salience=0.5, layer="structural",
            tool=call.name, call=call.kind, cancelled=along or None, again=again,
        )  # fmt: skip
        words = " ".join(reason.split())
        if not words or _FILLER.fullmatch(words.lower()):
            return [refused]  # nothing typed, or only "not now": no reason to keep
        if words.endswith("?"):
            # a question asked instead ("are we testing any interactive confirmation?") is
            # what they asked next: a request, the refusal's context
            said = self.make(
                "prompt", words, entry, confidence=1.0, salience=0.2, layer="structural",
                speaker="user", said=words,
            )  # fmt: skip
        else:
            # what they typed with the refusal ("use pnpm" refusing `npm install`) is how they
            # want it done: the person's preference, and the reason a refusal lesson tells
            said = self.make(
                "preference", f"“{words}”, the person said refusing {what}", entry,
                confidence=0.9, salience=0.7, layer="structural", speaker="user", said=words,
            )  # fmt: skip
        return [refused, said]

    def _again(self, entry: Entry, content: str) -> int | None:
        """The line of a failure or a refusal said before in the session (another occurrence
        of it, not the same event read twice), else None."""
        said = content_hash(entry.session_id or "", content)
        again = entry.line if said in self.errors_said else None
        self.errors_said[said] = None
        return again

    def _target(self, call: ToolCall, entry: Entry) -> str:
        return relative_path(call.path, self.base(entry)) or clip(call.pattern, 100)

    def _failure(
        self, entry: Entry, call: ToolCall, target: str, output: str, keys: list[str] | None = None
    ) -> list[Event]:
        shell = call.kind == "shell"
        if shell:
            line = commands.outcome_summary(output) or commands.error_line(output)
        else:
            line = commands.tool_error_line(output)
        named = files_named(output)
        for key in keys or [target]:
            self.failures[(_runner(call), key)] = (target, line, self.files_seen, "", named)
            self.leads.pop((_runner(call), key), None)
        what = f"`{target}`" if shell else f"{call.name} {target}".strip()
        content = f"{what} failed: {line}"
        again = self._again(entry, content)
        return [
            self.make(
                "error", content, entry,
                confidence=1.0, salience=0.5 if shell else 0.2, layer="structural",
                tool=call.name, call=call.kind, target=target, again=again,
                path_missing=commands.path_missing(output) or None, moved=self.moved_to(entry),
            )
        ]  # fmt: skip

    def _success(
        self, entry: Entry, call: ToolCall, target: str, shown: str | None = None
    ) -> list[Event]:
        key = (_runner(call), target)
        if key not in self.failures and call.kind == "shell":
            # a state saved before shells were one runner keys a failure by its tool's name
            key = next((k for k in self.failures if k[1] == target and k[0] != "shell"), key)
        failed = self.failures.pop(key, None)
        self.leads.pop(key, None)
        if failed is None:
            return []
        failed_call, line, seen, cause, named = failed
        cause = "" if cause == MOVED_ON else cause
        changed = self.recent_files[max(0, len(self.recent_files) - (self.files_seen - seen)) :]
        changed = fixed_files(list(dict.fromkeys(changed)), named)
        shell = call.kind == "shell"
        what = f"`{failed_call}`" if shell else f"{call.name} {failed_call}".strip()
        where = ", ".join(changed[:8])
        if cause and changed:
            content = f"{what} failed ({line}): {cause.rstrip('.')}. Fixed by changes to {where}"
        else:
            how = f" after changes to {where}" if changed else " when run again"
            content = f"{what} failed ({line}) and passed{how}"
        return [
            self.make(
                "error_resolved", content, entry,
                confidence=0.9, salience=0.7 if shell else 0.2, layer="structural",
                tool=call.name, call=call.kind, target=failed_call, passed=shown, error=line,
                files=changed or None, cause=cause or None,
            )
        ]  # fmt: skip

    # ------------------------------------------------------------- tools

    def _on_file(self, entry: Entry, call: ToolCall, result: ToolResult) -> list[Event]:
        if result.is_error:
            return []
        path = relative_path(call.path or result.path, self.base(entry))
        if not path or (self.own_files is not None and self.own_files.search(path)):
            return []  # (the host's own file changes nothing of the project: not a fix's cause)
        self.files_seen += 1
        self.recent_files.append(path)
        del self.recent_files[:-MAX_RECENT_FILES]
        created = call.kind == "write" and result.created
        return [
            self.make(
                "file_modified", f"{'Created' if created else 'Modified'} {path}", entry,
                confidence=1.0, salience=0.3, layer="structural", path=path, tool=call.name,
                call=call.kind,
            )
        ]  # fmt: skip

    def _on_shell(self, entry: Entry, call: ToolCall, result: ToolResult) -> list[Event]:
        command = call.command
        if not command:
            return []
        output = result.text or result.output
        kind = commands.run_kind(command)
        failed = commands.run_failed(result.is_error, output) if kind else result.is_error
        shown = clip(commands.display_command(command), 300)
        events = [
            self.make(
                "command", f"Ran `{shown}`" + (" (failed)" if failed else ""), entry,
                confidence=1.0, salience=0.2, layer="structural", command=shown, ok=not failed,
                description=call.description or None,
            )
        ]  # fmt: skip
        if kind:
            summary = commands.outcome_summary(output)
            verdict = "failed" if failed else "passed"
            label = "Tests" if kind == "test" else "Checks"
            events.append(
                self.make(
                    "test_run",
                    f"{label} {verdict}: `{shown}`" + (f" ({summary})" if summary else ""),
                    entry, confidence=1.0, salience=0.6 if failed else 0.4, layer="structural",
                    command=shown, run=kind, ok=not failed, summary=summary,
                )
            )  # fmt: skip
        # Runs of a tool resolve each other whatever their flags ("ruff check --fix ." fails,
        # "ruff check ." passes); other commands must match exactly.
        targets = commands.runners(command) if kind else [shown]
        if failed:
            events += self._failure(entry, call, shown, output, keys=targets)
        else:
            for target in targets:
                events += self._success(entry, call, target, shown=shown)
            if commands.step_kind(command):
                self._moved_on(command, targets)
            if commands.is_git_commit(command):
                events += self._commit(entry, command, output)
        return events

    def _moved_on(self, command: str, targets: list[str]) -> None:
        """Another kind of step passed (the tests after a lint failure) after files were
        edited: the failures still waiting for a diagnosis stop waiting. A session that fixed a
        lint error without a word and went on to run its tests explains, later, something else
        ("the import resolver doesn't know about src/"), and that is not why the lint failed.
        Nothing edited since the failure, its diagnosis may still come (a check run before
        looking into a failing test); a step of the same kind (``mise run dup`` after ``mise
        run lint``) is still that work."""
        waiting = [(k, v) for k, v in self.failures.items() if not v[3] or k in self.leads]
        if not waiting:
            return
        kind = commands.step_kind(command)
        ran = _parts(command) | set(targets)
        for key, (failed, line, seen, cause, named) in waiting:
            edited = seen < self.files_seen  # fixed meanwhile, without a word
            if edited and _step_kind(key[1]) not in (None, kind) and not _parts(key[1]) & ran:
                # a lead the session moved on from is the last word on it: nothing later
                # replaces it
                self.leads.pop(key, None)
                self.failures[key] = (failed, line, seen, cause or MOVED_ON, named)

    def _commit(self, entry: Entry, command: str, output: str) -> list[Event]:
        sha, subject = commands.commit_details(command, output)
        if sha is None and subject is None:
            return []
        where = f" on {entry.branch}" if entry.branch else ""
        content = f"Committed {sha or ''}{where}: {subject or '(no message)'}".replace("  ", " ")
        return [
            self.make(
                "commit", content, entry, confidence=1.0, salience=0.6, layer="structural",
                sha=sha, subject=subject,
            )
        ]  # fmt: skip

    def _on_todo(self, entry: Entry, call: ToolCall, result: ToolResult) -> list[Event]:
        if result.is_error or call.steps is None:
            return []
        steps = [(text, s if s in TODO_STATUSES else "pending") for text, s in call.steps if text]
        return self._steps(entry, steps, call)

    def _steps(self, entry: Entry, steps: list[tuple[str, str]], call: ToolCall) -> list[Event]:
        events: list[Event] = []
        key = tuple(text for text, _ in steps)
        if key and key != self.plan_key:
            self.plan_key = key
            listing = "; ".join(clip(t, 120) for t in key[:15])
            events.append(
                self.make(
                    "plan", f"Plan ({len(key)} steps): {listing}", entry,
                    confidence=1.0, salience=0.6, layer="structural", tool=call.name,
                    call=call.kind, steps=[clip(t, 200) for t in key[:50]],
                    statuses=[status for _, status in steps[:50]],
                )
            )  # fmt: skip
        for position, (text, status) in enumerate(steps, 1):
            events += self._step(entry, text, status, position=position, total=len(steps))
        return events

    def _step(self, entry: Entry, text: str, status: str, **where: int) -> list[Event]:
        """A step's new status, as an event; nothing when the status is the one it has."""
        if self.todos.get(text) == status:
            return []
        self.todos[text] = status
        had = self.todos_had.get(text) or []
        self.todos_had[text] = had if status in had else [*had, status]
        return [
            self.make(
                "plan_step", f"[{status}] {text}", entry,
                confidence=1.0, salience=0.5 if status == "completed" else 0.3,
                layer="structural", step=clip(text, 300), status=status,
                again=entry.line if status in had else None, **where,
            )
        ]  # fmt: skip

    def _on_task_create(self, entry: Entry, call: ToolCall, result: ToolResult) -> list[Event]:
        if result.is_error or not call.subject:
            return []
        if result.task_id is not None:
            self.tasks[result.task_id] = call.subject
        return self._step(entry, call.subject, "pending")

    def _on_task_update(self, entry: Entry, call: ToolCall, result: ToolResult) -> list[Event]:
        status = call.status
        subject = self.tasks.get(call.task_id) if call.task_id is not None else None
        if result.is_error or status not in TODO_STATUSES or not subject:
            return []
        return self._step(entry, subject, status)

    def _on_plan(self, entry: Entry, call: ToolCall, result: ToolResult) -> list[Event]:
        plan = call.plan
        if not plan:
            return []
        approved = not result.is_error
        return [
            self.make(
                "plan", plan if approved else f"Plan not approved: {plan}", entry,
                confidence=1.0 if approved else 0.6, salience=0.8 if approved else 0.3,
                layer="structural", limit=4_000, tool=call.name, call=call.kind,
                approved=approved,
            ),
            *(self.decisions(entry, listed_decisions(plan), APPROVED_DECISION) if approved else []),
        ]  # fmt: skip

    def decisions(
        self, entry: Entry, decisions: list[str], confidence: float, document: str | None = None
    ) -> list[Event]:
        """Decisions a plan, a document or a reply lists, one event each (``document``: the
        project document that lists them: the store keeps when each document last listed it,
        even where the event itself was stored before)."""
        return [
            self.make(
                "decision", text, entry, confidence=confidence, salience=0.8, layer="keyword",
                speaker="assistant", listed=True, document=document,
            )
            for text in decisions
        ]  # fmt: skip

    # ------------------------------------------------------------- documents

    def _document(self, path: str, entry: Entry) -> str | None:
        """The key of the project document ``path`` names (``documents.document_key``), or
        ``None`` for a file that is not one."""
        if project_document(path, "", self.home or entry.cwd) is None:
            return None
        return document_key(path, entry.cwd or self.home)

    def _version(
        self, entry: Entry, document: str, listed: list[str], gone: list[str] | None
    ) -> list[Event]:
        """A version of ``document`` that lists ``listed``: their decision events, and for a
        whole version (``gone`` not ``None``) the withdrawal of each decision it no longer
        says. An edit (``gone`` is ``None``) shows only its part: what it lists is added."""
        gone = None if gone is None else [text for text in gone if text not in listed]
        withdrawn = [
            self.make(
                "withdrawn", text, entry, confidence=1.0, salience=0.3, layer="structural",
                document=document,
            )
            for text in gone or []
        ]  # fmt: skip
        self.documents.record(document, listed, gone, event_time(entry))
        return withdrawn + self.decisions(entry, listed, LISTED_DECISION, document)

    def _on_subagent(self, entry: Entry, call: ToolCall, result: ToolResult) -> list[Event]:
        report = result.text.strip()
        if result.is_error or not report:
            return []
        label = call.description or call.agent
        return [
            self.make(
                "subagent_summary", f"{label}: {report}" if label else report, entry,
                confidence=0.8, salience=0.4, layer="structural", agent=call.agent or None,
            )
        ]  # fmt: skip
