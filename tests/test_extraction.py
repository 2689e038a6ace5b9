"""Three-layer extraction: structural facts, keyword markers, [MEMORY] tags → events → memories."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cortexmem.core.extraction.commands import (
    commit_details,
    display_command,
    error_line,
    normalise_command,
    run_failed,
    run_kind,
    runners,
)
from cortexmem.core.extraction.digest import session_digest
from cortexmem.core.extraction.documents import document_key
from cortexmem.core.extraction.events import EVENT_KINDS, ExtractionContext
from cortexmem.core.extraction.extractor import Extractor, extract
from cortexmem.core.extraction.keywords import (
    classify,
    find_markers,
    listed_decisions,
    still_says,
)
from cortexmem.core.extraction.memories import listings, to_memories
from cortexmem.core.extraction.prose import own_words
from cortexmem.core.extraction.summaries import entries_from_summary
from cortexmem.core.extraction.tags import find_tags
from cortexmem.core.session import Block, Entry, Role
from cortexmem.hosts.claude_code.transcript import (
    DIALECT,
    parse_file,
    tool_result_block,
    tool_use_block,
)
from cortexmem.model import Listing

from conftest import SHARED_DATA

TRANSCRIPTS = SHARED_DATA / "transcripts"
RELIABILITY = TRANSCRIPTS / "claude-reliability"


# ----------------------------------------------------------------- a tiny session builder


class Session:
    """Builds entries the way a transcript would hold them: a tool call, then its result."""

    def __init__(self, branch: str | None = "main") -> None:
        self.entries: list[Entry] = []
        self.branch = branch
        self.calls = 0

    def _add(self, role: Role, blocks: list[Block], **extra) -> None:
        line = len(self.entries) + 1
        self.entries.append(
            Entry(
                line=line,
                role=role,
                blocks=blocks,
                session_id="s-1",
                branch=self.branch,
                timestamp=f"2026-03-02T10:00:{line:02d}.000Z",
                cwd=self.cwd,
                **extra,
            )
        )

    cwd = "/home/dev/app"  # where the host says the shell is (a `cd` moves it)

    def say(self, text: str, role: Role = "assistant", branch: str | None = None, **extra):
        self._add(role, [Block("text", text)], **extra)
        if branch is not None:
            self.entries[-1].branch = branch
        return self

    def tool(
        self, name: str, tool_input: dict, output: str = "", *, error: bool = False, result=None
    ) -> Session:
        self.calls += 1
        call_id = f"toolu_{self.calls:03d}"
        self._add("assistant", [tool_use_block(name, tool_input, call_id)])
        self._add("user", [tool_result_block(output, call_id, error, result)])
        return self

    def bash(self, command: str, output: str = "", *, error: bool = False) -> Session:
        return self.tool("Bash", {"command": command}, output, error=error)

    def events(self, ctx: ExtractionContext | None = None):
        return extract(self.entries, ctx or ExtractionContext(session_id="s-1", dialect=DIALECT))


SAID = ("prompt", "reply")  # the words of each turn, kept for the session's digest


def kinds(events, *wanted: str) -> list[tuple[str, str]]:
    return [
        (e.kind, e.content) for e in events if (e.kind in wanted if wanted else e.kind not in SAID)
    ]


# ----------------------------------------------------------------- layer 1: structural


def test_edits_and_writes_become_files_modified_relative_to_the_project():
    events = (
        Session()
        .tool("Write", {"file_path": "/home/dev/app/app/idempotency.py", "content": "x"},
              result={"type": "create", "filePath": "/home/dev/app/app/idempotency.py"})
        .tool("Edit", {"file_path": "/home/dev/app/app/routes.py", "old_string": "a",
                       "new_string": "b"})
        .tool("Edit", {"file_path": "/elsewhere/x.py"}, "String not found", error=True)
        .events()
    )  # fmt: skip
    assert kinds(events, "file_modified") == [
        ("file_modified", "Created app/idempotency.py"),
        ("file_modified", "Modified app/routes.py"),
    ]
    assert kinds(events, "error") == [
        ("error", "Edit /elsewhere/x.py failed: String not found"),
    ]


def test_a_failing_test_run_then_a_fix_then_a_pass_is_an_error_resolved():
    events = (
        Session()
        .bash("cd /home/dev/app && uv run pytest -q 2>&1 | tail -5",
              "Exit code 1\nE   AssertionError: 409 != 200\n1 failed, 3 passed in 0.41s",
              error=True)
        .tool("Edit", {"file_path": "/home/dev/app/app/idempotency.py"})
        .bash("uv run pytest -q", "4 passed in 0.39s")
        .events()
    )  # fmt: skip
    assert kinds(events, "test_run", "error", "error_resolved") == [
        ("test_run", "Tests failed: `uv run pytest -q` (1 failed, 3 passed in 0.41s)"),
        ("error", "`uv run pytest -q` failed: 1 failed, 3 passed in 0.41s"),
        ("test_run", "Tests passed: `uv run pytest -q` (4 passed in 0.39s)"),
        (
            "error_resolved",
            "`uv run pytest -q` failed (1 failed, 3 passed in 0.41s) and passed after changes "
            "to app/idempotency.py",
        ),
    ]
    resolved = next(e for e in events if e.kind == "error_resolved")
    assert resolved.payload["files"] == ["app/idempotency.py"]


def test_a_test_run_the_person_made_themselves_is_read_as_the_assistants_are():
    """`!uv run pytest` in the prompt: the person ran the tests and saw 5 fail, then the
    session ended. Skipped as the host's words, the failure was nowhere: it is now a failure
    the session left open, and the project's way to run the tests; a command read in one pass
    and its output in the next change nothing."""
    run = "<bash-input>uv run pytest test/test_names.py</bash-input>"
    out = (
        "<bash-stdout>collected 11 items\nFAILED test/test_names.py::test_nested\n"
        "===== 5 failed, 6 passed in 0.37s =====</bash-stdout><bash-stderr></bash-stderr>"
    )
    session = Session().say("please fix the names", "user").say(run, "user").say(out, "user")
    whole = session.events()
    assert kinds(whole, "test_run", "error") == [
        ("test_run", "Tests failed: `uv run pytest test/test_names.py` (5 failed, 6 passed in "
                     "0.37s)"),
        ("error", "`uv run pytest test/test_names.py` failed: 5 failed, 6 passed in 0.37s"),
    ]  # fmt: skip
    digest = [m.content for m in session_digest(whole, "s.jsonl")]
    assert any(c.startswith("Open problem") and "5 failed" in c for c in digest)
    first = Extractor(ExtractionContext(session_id="s-1", dialect=DIALECT))
    events = [e for entry in session.entries[:2] for e in first.feed(entry)]
    second = Extractor(ExtractionContext(session_id="s-1", dialect=DIALECT))
    assert second.restore(first.snapshot())
    events += second.feed(session.entries[2])
    assert kinds(events, "test_run", "error") == kinds(whole, "test_run", "error")
    # an output with no command before it, or after another turn, is nobody's
    late = Session().say(run, "user").say("and then?", "user").say(out, "user").events()
    assert kinds(late, "test_run", "error") == []
    # the assistant fixing what the person saw fail: fixed with its cause, as its own would be
    fixed = (
        Session().say(run, "user").say(out, "user").say("fix it please", "user")
        .say("The problem was that the names ignored nesting.")
        .tool("Edit", {"file_path": "/home/dev/app/app/names.py"})
        .bash("uv run pytest test/test_names.py", "11 passed in 0.30s")
        .events()
    )  # fmt: skip
    assert kinds(fixed, "error_resolved") == [(
        "error_resolved",
        "`uv run pytest test/test_names.py` failed (5 failed, 6 passed in 0.37s): The problem "
        "was that the names ignored nesting. Fixed by changes to app/names.py",
    )]  # fmt: skip
    assert not any(c.startswith("Open problem") for c in
                   (m.content for m in session_digest(fixed, "s.jsonl")))  # fmt: skip


def test_a_run_the_person_made_is_never_taken_for_a_pass():
    """The host records no exit status for the person's own run: one that printed no sign of
    failure passed nothing, and settles no failure of the assistant's (a last review: `npm
    install` failing again for the person was "passed when run again"); one cut off before
    its end says nothing either."""
    err = "npm ERR! code ERESOLVE\nnpm ERR! ERESOLVE unable to resolve dependency tree"
    again = (
        Session().bash("npm install", err, error=True)
        .say("<bash-input>npm install</bash-input>", "user")
        .say(f"<bash-stdout></bash-stdout><bash-stderr>{err}</bash-stderr>", "user").events()
    )  # fmt: skip
    assert kinds(again, "error_resolved") == []
    assert any(m.content.startswith("Open problem") for m in session_digest(again, "s.jsonl"))
    quiet = Session().say("<bash-input>uv run ty check</bash-input>", "user").say(
        "<bash-stdout>Checking 40 files</bash-stdout>", "user").events()  # fmt: skip
    assert kinds(quiet, "command", "test_run", "error") == []
    cut = Session().say("<bash-input>uv run pytest</bash-input>", "user").say(
        "<bash-stdout>collected 4000 items\n… [100 more characters]", "user").events()  # fmt: skip
    assert kinds(cut, "command", "test_run", "error") == []
    checker = Session().say("<bash-input>uv run ty check</bash-input>", "user").say(
        "<bash-stdout>error[invalid-assignment]: x\nFound 5 diagnostics</bash-stdout>", "user"
    ).events()  # fmt: skip
    assert [k for k, _ in kinds(checker, "error")] == ["error"]


def test_a_failure_saved_by_an_older_version_is_still_told_fixed():
    """Failures waiting in a saved state were keyed by the shell tool's name before any shell
    ran the same command: one saved so is still settled by the passing run after an
    upgrade."""
    import json as json_module

    session = (
        Session().bash("uv run pytest -q", "1 failed, 3 passed in 0.41s", error=True)
        .tool("Edit", {"file_path": "/home/dev/app/app/parse.py"})
        .bash("uv run pytest -q", "4 passed in 0.39s")
    )  # fmt: skip
    first = Extractor(ExtractionContext(session_id="s-1", dialect=DIALECT))
    for entry in session.entries[:2]:
        first.feed(entry)
    state = json_module.loads(first.snapshot())
    for failure in state["structural"]["failures"]:
        failure[0][0] = "Bash"  # as an older version saved it
    second = Extractor(ExtractionContext(session_id="s-1", dialect=DIALECT))
    assert second.restore(json_module.dumps(state))
    events = [e for entry in session.entries[2:] for e in second.feed(entry)]
    assert [k for k, _ in kinds(events, "error_resolved")] == ["error_resolved"]


def test_a_checker_run_with_other_flags_still_resolves_the_failure():
    events = (
        Session()
        .bash("uv run ruff check --fix .", "Found 6 errors (3 fixed, 3 remaining).", error=True)
        .bash("uv run ruff check . && uv run pytest -q", "All checks passed!\n5 passed in 1s")
        .events()
    )  # fmt: skip
    assert [e.kind for e in events if e.kind == "error_resolved"] == ["error_resolved"]


def test_a_summary_that_reports_failures_fails_the_run_even_with_exit_status_zero():
    assert run_failed(False, "=== 2 failed, 10 passed in 3.2s ===")
    assert not run_failed(False, "10 passed in 3.2s")
    assert run_failed(True, "")


def test_commits_are_read_from_git_output_or_from_the_message():
    events = (
        Session(branch="feature/x")
        .bash("git add -A && git commit -m \"$(cat <<'EOF'\nAdd keys\n\nBody\nEOF\n)\"",
              "[feature/x 3f2c1a9] Add keys\n 3 files changed, 120 insertions(+)")
        .bash("git commit -m 'Fix the retry'", "")
        .bash("git commit --dry-run -m 'nothing'", "")
        .events()
    )  # fmt: skip
    assert kinds(events, "commit") == [
        ("commit", "Committed 3f2c1a9 on feature/x: Add keys"),
        ("commit", "Committed on feature/x: Fix the retry"),
    ]
    assert commit_details("git commit", "nothing") == (None, None)


def test_todo_lists_become_a_plan_and_steps_whose_status_changes_are_recorded_once():
    todo = lambda *s: {"todos": [{"content": c, "status": st_, "activeForm": c} for c, st_ in s]}  # noqa: E731
    events = (
        Session()
        .tool("TodoWrite", todo(("Add table", "in_progress"), ("Add route", "pending")))
        .tool("TodoWrite", todo(("Add table", "in_progress"), ("Add route", "pending")))
        .tool("TodoWrite", todo(("Add table", "completed"), ("Add route", "in_progress")))
        .events()
    )  # fmt: skip
    assert kinds(events, "plan", "plan_step") == [
        ("plan", "Plan (2 steps): Add table; Add route"),
        ("plan_step", "[in_progress] Add table"),
        ("plan_step", "[pending] Add route"),
        ("plan_step", "[completed] Add table"),
        ("plan_step", "[in_progress] Add route"),
    ]
    # progress is folded: no memory per step, one plan memory with the final statuses
    assert to_memories(events) == []
    digest = session_digest(events, "t.jsonl")
    assert [m.content for m in digest if "event:plan" in m.tags] == [
        "Plan (1/2 steps done): [completed] Add table; [in_progress] Add route"
    ]


def test_task_tools_of_newer_versions_are_plan_steps_too():
    events = (
        Session()
        .tool("TaskCreate", {"subject": "Port the parser"}, "ok", result={"task": {"id": "1"}})
        .tool("TaskUpdate", {"taskId": "1", "status": "completed"}, "ok")
        .events()
    )  # fmt: skip
    assert kinds(events, "plan_step") == [
        ("plan_step", "[pending] Port the parser"),
        ("plan_step", "[completed] Port the parser"),
    ]


@pytest.mark.parametrize(
    "wording",
    [
        "The user doesn't want to proceed with this tool use. The tool use was rejected.",
        "The user doesn't want to take this action right now. STOP what you are doing and wait "
        "for the user to tell you how to proceed.",
    ],
)
def test_a_refused_write_is_a_choice_not_a_failure_nor_a_file(wording: str):
    session = Session().tool("Write", {"file_path": "/home/dev/app/CLAUDE.md"}, wording,
                             error=True)  # fmt: skip
    events = session.events()
    assert [e.kind for e in events] == ["refused"]
    assert events[0].content == "The person refused Write CLAUDE.md"


def test_what_the_person_typed_when_refusing_a_call_is_their_preference_and_its_lesson():
    """Claude Code keeps the words the person types when refusing a call in the refusal
    (a real session: ``npm install`` refused with "use pnpm")."""
    from cortexmem.core.lessons.build import lessons_from_events

    refusal = ("The user doesn't want to proceed with this tool use. The tool use was rejected "
               "(eg. if it was a file edit, the new_string was NOT written to the file). The user "
               "provided the following reason for the rejection:  use pnpm")  # fmt: skip
    events = Session().tool("Bash", {"command": "npm install"}, refusal, error=True).events()
    assert [(e.kind, e.content) for e in events] == [
        ("refused", "The person refused `npm install`"),
        ("preference", "“use pnpm”, the person said refusing `npm install`"),
    ]
    assert events[1].payload["speaker"] == "user"
    (lesson,) = lessons_from_events(events)
    assert (
        lesson.text == "Do not run `npm install` unasked: the person refused it and said “use pnpm”"
    )


def test_what_the_person_says_after_stopping_the_assistant_is_their_preference():
    """Older Claude Code sessions: the refusal holds no words, the host writes "[Request
    interrupted by user for tool use]", and the person says next how they want it done."""
    refused = "The user doesn't want to proceed with this tool use. The tool use was rejected."
    session = (
        Session()
        .tool("Edit", {"file_path": "/home/dev/app/cmd/reset.go"}, refused, error=True)
        .say("[Request interrupted by user for tool use]", role="user")
        .say("fix the test, the code is right", role="user")
    )  # fmt: skip
    preferences = kinds(session.events(), "preference")
    assert preferences == [("preference", "“fix the test, the code is right”, the person said "
                                          "refusing Edit reset.go")]  # fmt: skip
    (memory,) = [m for m in to_memories(session.events()) if m.memory_type == "pattern"]
    assert memory.content == preferences[0][1]
    # a turn the person interrupted, then a statement before a question: the statement
    interrupted = (
        Session()
        .say("Let me update the git configuration with that address.")
        .say("[Request interrupted by user]", role="user")
        .say("I don't want it tied to my work address. Can you use the personal one?",
             role="user")
    )  # fmt: skip
    assert kinds(interrupted.events(), "preference") == [
        ("preference", "“I don't want it tied to my work address.”, the person said "
                       "interrupting the assistant")
    ]  # fmt: skip


CCL_SAMPLE = (
    TRANSCRIPTS / "claude-code-log-real_projects" / "-Users-dain-workspace-claude-code-log-sample"
)


@pytest.mark.skipif(not CCL_SAMPLE.exists(), reason="claude-code-log-real_projects/ is not here")
def test_a_real_refusal_followed_by_the_persons_words_keeps_them_as_a_preference():
    events = real_events(CCL_SAMPLE / "37f83ec9-f2ea-42a9-925e-0d5c105cb6e8.jsonl")
    preferences = [m.content for m in to_memories(events) if m.memory_type == "pattern"]
    assert (
        "“I'd actually love that test to be saved a permanent unit test”, the person said "
        "refusing Write test_combined_link.py"
    ) in preferences


def test_a_request_sent_again_in_full_or_words_about_a_picture_are_no_correction():
    """entireio-cli: the person interrupted their own half-typed request twice and sent it
    again in full; claude-code-log: "it's an inline style … [Image #1]" points at a
    screenshot."""
    draft = (
        Session()
        .say('instead of "Another sessions..." print something like: "You are running"',
             role="user")
        .say("[Request interrupted by user]", role="user")
        .say('instead of "Another sessions..." print something like: "You are running a '
             'session" and offer to reset', role="user")
    )  # fmt: skip
    assert kinds(draft.events(), "preference") == []
    refused = "The user doesn't want to proceed with this tool use. The tool use was rejected."
    picture = (
        Session()
        .tool("Edit", {"file_path": "/home/dev/app/timeline.css"}, refused, error=True)
        .say("[Request interrupted by user for tool use]", role="user")
        .say("I think the library is setting it, it's an inline style [Image #1]", role="user")
    )  # fmt: skip
    assert kinds(picture.events(), "preference") == []


def test_a_compaction_ends_a_stop_a_subagent_makes_none_and_a_request_sent_again_is_no_correction():
    refused = "The user doesn't want to proceed with this tool use. The tool use was rejected."
    compacted = (
        Session()
        .tool("Edit", {"file_path": "/home/dev/app/cmd/reset.go"}, refused, error=True)
        .say("[Request interrupted by user for tool use]", role="user")
        .say("Summary:\n1. Primary Request and Intent:\n   - the reset command", role="user",
             is_compact_summary=True)
        .say("now write the docs page for the reset command", role="user")
    )  # fmt: skip
    assert kinds(compacted.events(), "preference") == []
    subagent = (
        Session()
        .say("[Request interrupted by user]", role="user", is_sidechain=True)
        .say("now write the docs page for the reset command", role="user")
    )  # fmt: skip
    assert kinds(subagent.events(), "preference") == []
    resent = (
        Session()
        .say("Add a reset command. Can you make it clear the checkpoints?", role="user")
        .say("[Request interrupted by user]", role="user")
        .say("Add a reset command. Can you make it clear the checkpoints and the logs too?",
             role="user")
    )  # fmt: skip
    assert kinds(resent.events(), "preference") == []


def test_what_the_extractor_carries_between_passes_holds_no_secret():
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    extractor = Extractor(ExtractionContext(session_id="s-1", dialect=DIALECT))
    for entry in (
        Session()
        .say(f"push with token {token} to the fork", role="user")
        .tool("Bash", {"command": f"git push https://{token}@github.com/me/fork"},
              "The user doesn't want to proceed with this tool use. The tool use was rejected.",
              error=True)
        .entries
    ):  # fmt: skip
        extractor.feed(entry)
    assert token not in extractor.snapshot() and token.lower() not in extractor.snapshot()


def test_a_compaction_does_not_repeat_a_fix_the_session_keeps_with_its_cause():
    lint = "committed.go:42: appendAssign: append result not assigned to the same slice\n1 issues."
    summary = (
        "Summary:\n4. Errors and fixes:\n"
        "   - **gocritic `appendAssign`**: `append(existingSummary.Sessions, sessionFilePaths)` "
        "assigned to another slice; fixed with copy\n"
    )
    session = (
        Session()
        .bash("mise run lint", lint, error=True)
        .say("The lint error is because append(existingSummary.Sessions, sessionFilePaths) is "
             "assigned to summary.Sessions.")
        .tool("Edit", {"file_path": "/home/dev/app/committed.go"}, "ok")
        .bash("mise run lint", "0 issues.")
        .say(summary, role="user", is_compact_summary=True)
    )  # fmt: skip
    assert [e for e in session.events() if e.kind == "error_resolved"]
    assert not [e for e in session.events() if e.payload.get("layer") == "compaction"]


@pytest.mark.parametrize(
    "next_turn",
    [
        "Do we even need the helper then?",  # a question: a request, kept as the prompt
        "Implement the following plan:\n\n# Plan: add the reset command",  # the host's handoff
        "go on",  # no instruction
        "instead of the old warning print this: " + "word " * 40,  # a new request, in detail
    ],
)
def test_what_follows_a_stop_is_not_always_a_preference(next_turn: str):
    refused = "The user doesn't want to proceed with this tool use. The tool use was rejected."
    session = (
        Session()
        .tool("Write", {"file_path": "/home/dev/app/check.py"}, refused, error=True)
        .say("[Request interrupted by user for tool use]", role="user")
        .say(next_turn, role="user")
    )  # fmt: skip
    assert kinds(session.events(), "preference") == []
    # and once the assistant went on, the person's next words are a request like any other
    went_on = (
        Session()
        .tool("Write", {"file_path": "/home/dev/app/check.py"}, refused, error=True)
        .say("Understood, I will not write it. The tests pass as they are now.")
        .say("now add the reset command to the docs", role="user")
    )  # fmt: skip
    assert kinds(went_on.events(), "preference") == []


def test_paths_stay_relative_to_the_project_when_the_shell_moves_and_failures_say_where():
    """Claude Code records the shell's folder on every entry: after a `cd test` that stays in
    effect, `test/test_cache.py` is still `test/test_cache.py`, and a command that then
    misses a path relative to the project says the shell was in `test`."""
    from cortexmem.core.retrospective import cwd_drift

    session = Session().bash("cd test && uv run pytest -q", "3 passed in 0.2s")
    session.cwd = "/home/dev/app/test"
    session.tool("Edit", {"file_path": "/home/dev/app/test/test_cache.py", "old_string": "a",
                          "new_string": "b"}, "The file has been updated.")  # fmt: skip
    session.bash(
        "uv run pytest test/test_cache.py -q",
        "ERROR: file or directory not found: test/test_cache.py",
        error=True,
    )
    session.bash("ruff check src/app.py", "src/app.py:1:1: E902 No such file or directory",
                 error=True)  # fmt: skip
    events = session.events()
    assert ("file_modified", "Modified test/test_cache.py") in kinds(events, "file_modified")
    failed = [e for e in events if e.kind == "error"]
    assert [e.payload.get("moved") for e in failed] == ["test", "test"]
    assert cwd_drift(failed) == ("test", 2)  # no `cd` failed: the host's folder tells


REJECTED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it "
    "was a file edit, the new_string was NOT written to the file). "
)


@pytest.mark.parametrize(
    ("typed", "kept"),
    [
        # Claude Code 2.1 says it this way; a question asked instead is their next request
        ("To tell you how to proceed, the user said:\nare we testing any interactive "
         "confirmation in our integration test?",
         [("prompt", "are we testing any interactive confirmation in our integration test?")]),
        ("To tell you how to proceed, the user said:\nuse the fixtures in testenv.go",
         [("preference", "“use the fixtures in testenv.go”, the person said refusing "
           "`go test ./...`")]),
        ("The user provided the following reason for the rejection:  not now", []),
    ],
)  # fmt: skip
def test_words_typed_with_a_refusal_are_a_request_a_preference_or_nothing(typed: str, kept: list):
    events = Session().tool("Bash", {"command": "go test ./..."}, REJECTED + typed,
                            error=True).events()  # fmt: skip
    assert [(e.kind, e.content) for e in events] == [
        ("refused", "The person refused `go test ./...`"),
        *kept,
    ]


def test_calls_stopped_with_a_refused_one_are_not_what_the_person_refused():
    """Claude Code stops the other calls of a turn once one is refused ("doesn't want to take
    this action right now"); what the person says next is about the one they refused."""
    from cortexmem.core.lessons.build import lessons_from_events

    stopped = "The user doesn't want to take this action right now. STOP what you are doing."
    events = (
        Session()
        .tool("Bash", {"command": "which python3"}, REJECTED, error=True)
        .tool("Bash", {"command": "which node"}, stopped, error=True)
        .say("Don't assume what people have installed: find a cross-platform way", role="user")
        .events()
    )  # fmt: skip
    refused = [(e.content, e.payload.get("cancelled")) for e in events if e.kind == "refused"]
    assert refused == [("The person refused `which python3`", None),
                       ("The person refused `which node`", True)]  # fmt: skip
    (lesson,) = [x for x in lessons_from_events(events) if x.kind == "correction"]
    assert lesson.text.startswith("Do not run `which python3` unasked")


def test_an_approved_plan_is_remembered_until_carried_out_and_a_refused_one_is_not():
    session = (
        Session()
        .tool("exit_plan_mode", {"plan": "1. Add a retry table\n2. Schedule retries"}, "ok")
        .tool("ExitPlanMode", {"plan": "1. Use Celery"}, "User rejected the plan", error=True)
    )  # fmt: skip
    plans = [e for e in session.events() if e.kind == "plan"]
    assert [p.payload["approved"] for p in plans] == [True, False]
    assert digest_of(session)["plan"] == ["Plan: 1. Add a retry table\n2. Schedule retries"]
    assert not to_memories(session.events())  # the session's digest holds it, not the event
    # carried out and committed: history (its words stay an episode), no longer the plan
    session.tool("Write", {"file_path": "/home/dev/app/retry.py", "content": "x"}, "ok")
    session.bash('git commit -m "Add retries"', "[main 3f2c1a9] Add retries\n 1 file changed")
    assert "plan" not in digest_of(session)


def test_a_subagent_report_is_kept_and_read_for_markers():
    events = (
        Session()
        .tool("Task", {"description": "Survey retries", "subagent_type": "general-purpose"},
              "Retries use a fixed sleep. Gotcha: sender.py swallows ConnectionError.")
        .events()
    )  # fmt: skip
    assert kinds(events, "subagent_summary", "gotcha") == [
        (
            "subagent_summary",
            "Survey retries: Retries use a fixed sleep. Gotcha: sender.py swallows "
            "ConnectionError.",
        ),
        ("gotcha", "Gotcha: sender.py swallows ConnectionError."),
    ]
    gotcha = next(e for e in events if e.kind == "gotcha")
    assert gotcha.confidence == pytest.approx(0.7 * 0.9)


def test_a_result_without_its_call_and_a_call_without_its_result_yield_nothing():
    orphan = Entry(1, "user", [Block("tool_result", "ok", tool_use_id="toolu_zzz")])
    dangling = Entry(2, "assistant", [tool_use_block("Bash", {}, "t1")])
    assert extract([orphan, dangling]) == []


# ----------------------------------------------------------------- commands


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ("uv run pytest tests/ -q", "test"),
        ("python -m pytest", "test"),
        ("cargo test --all", "test"),
        ("npm run test", "test"),
        ("go test ./...", "test"),
        ("uv run mypy app", "check"),
        ("ruff check .", "check"),
        ("npx tsc --noEmit", "check"),
        ("uv run ty check", "check"),  # the newer Python type checkers
        ("uv run pyrefly check 2>&1 | tail -20", "check"),
        ("pretty check", None),
        ("ls -la", None),
        ("cat pytest.ini", None),
        ("echo mypy", None),
        ("uv run ruff format .", None),
        ("cd app && FOO=1 uv run python -m pytest -x 2>&1 | tail -5", "test"),
    ],
)
def test_run_kinds(command: str, kind: str | None):
    assert run_kind(command) == kind


def test_command_helpers():
    assert normalise_command("cd /a/b && uv run pytest -q 2>&1 | tail -20") == "uv run pytest -q"
    assert display_command("git commit -m \"$(cat <<'EOF'\nmsg\nEOF\n)\"").endswith(" …")
    assert runners("uv run ruff check . && uv run pytest -q") == ["ruff check", "pytest"]
    assert error_line(
        "Exit code 1\nTraceback (most recent call last):\n  File x\nKeyError: 'a'"
    ) == ("KeyError: 'a'")
    assert error_line("") == "no output"


# ----------------------------------------------------------------- layer 2: keywords


@pytest.mark.parametrize(
    ("sentence", "speaker", "kind"),
    [
        ("I decided to use a unique index instead of a Redis lock.", "assistant", "decision"),
        ("We've decided the cache lives in Redis.", "assistant", "decision"),
        ("I'm going with APScheduler rather than Celery.", "assistant", "decision"),
        ("Let's go with the simpler parser for now.", "assistant", "decision"),
        ("We rejected Celery because there is no broker in production.", "assistant", "rejected"),
        ("The fix was to compare the request hash as well as the key.", "assistant", "fix"),
        ("The root cause was a stale connection pool.", "assistant", "fix"),
        ("Watch out: the signature covers the raw body bytes.", "assistant", "gotcha"),
        ("Always use `uv run` in this repo, never bare python.", "user", "preference"),
        ("I prefer small commits with one change each.", "user", "preference"),
        ("Never commit directly to main.", "assistant", "preference"),
        ("Used Result<T, E> instead of raising exceptions.", "assistant", "decision"),
    ],
)
def test_marked_sentences(sentence: str, speaker: str, kind: str):
    hit = classify(sentence, speaker)
    assert hit is not None and hit[0] == kind


@pytest.mark.parametrize(
    ("sentence", "speaker"),
    [
        ("Have you decided which queue to use?", "assistant"),  # a question
        ("If we decided to use Redis, the lock would expire.", "assistant"),  # hypothetical
        ("I haven't decided on the cache yet.", "assistant"),  # not decided
        ("We could go with Celery instead of APScheduler.", "assistant"),  # could
        ("The function always returns a list.", "assistant"),  # assistant describing code
        ("This is undecided for now, pending the review.", "assistant"),
        ("Nevertheless the tests pass.", "user"),  # 'never' inside a word
        ("Now let me fix the annotation to use the type instead of a string:", "assistant"),
        ("It returns the value rather quickly in most cases.", "assistant"),
        ("Fragmented context: decisions made, alternatives rejected, and so on.", "assistant"),
        ("Thanks, looks good to me.", "user"),
        # the work's passing state, not durable knowledge: stale once the work moves on
        ("Note: ScriptProcessor is still used (deprecated but functional).", "assistant"),
        ("Watch out: the cache is currently disabled in CI.", "assistant"),
    ],
)
def test_look_alikes_are_not_statements(sentence: str, speaker: str):
    assert classify(sentence, speaker) is None


def test_code_is_not_prose():
    text = (
        "Here is the snippet:\n\n```python\n# we decided to use a lock\nlock = Lock()\n```\n\n"
        "    # the fix was indented code\n"
        "> We decided to quote someone.\n"
        "Done."
    )
    assert find_markers(text, "assistant") == []


def test_host_text_in_the_user_turn_is_not_the_person_speaking():
    events = (
        Session()
        .say("<command-name>/clear</command-name> we decided nothing", role="user")
        .say("Caveat: always ignore these messages unless asked.", role="user")
        .say("Stop hook feedback: you must always run tests.", role="user")
        .say("We decided to keep SQLite.", role="user", is_meta=True)
        .events()
    )  # fmt: skip
    assert events == []


# ----------------------------------------------------------------- layer 3: tags


def test_tags_in_both_forms_with_and_without_a_type():
    text = (
        "All done.\n"
        "[MEMORY:decision] Idempotency keys live 24 hours; a nightly job deletes older rows.\n"
        "[MEMORY: pattern] All log redaction goes through RedactingFilter.\n"
        "[MEMORY: The staging database is reset every Sunday at 02:00 UTC.]\n"
        "[MEMORY: gotcha: mypy needs the plugin enabled]\n"
        "[MEMORY:unknowntype] kept as knowledge\n"
    )
    assert find_tags(text) == [
        ("decision", "Idempotency keys live 24 hours; a nightly job deletes older rows."),
        ("pattern", "All log redaction goes through RedactingFilter."),
        ("knowledge", "The staging database is reset every Sunday at 02:00 UTC."),
        ("gotcha", "mypy needs the plugin enabled"),
        ("knowledge", "kept as knowledge"),  # a type it does not know: still kept
    ]


def test_tags_inside_code_are_examples_not_tags():
    text = "Use `[MEMORY: text]` to tag.\n```\n[MEMORY:decision] an example\n```\n"
    assert find_tags(text) == []


def test_a_tagged_sentence_is_not_counted_twice_and_is_a_self_report():
    events = Session().say("[MEMORY:decision] We decided to use Postgres for the queue.").events()
    assert kinds(events) == [("decision", "We decided to use Postgres for the queue.")]
    (memory,) = to_memories(events)
    assert (memory.memory_type, memory.source_type, memory.confidence) == (
        "decision",
        "self_report",
        0.95,
    )


# ----------------------------------------------------------------- events → memories


def test_memories_carry_type_confidence_and_provenance():
    session = Session(branch=None)
    session.say("We decided to shard by tenant id.")
    session.say("Watch out: the migration locks the table.", branch="feature/shard")
    events = session.events(
        ExtractionContext(session_id="s-9", transcript_path="/t.jsonl", branch="main",
                          commit="abc1234")
    )  # fmt: skip
    decision, gotcha = [e for e in events if e.kind not in SAID]
    assert decision.provenance.to_dict() == {
        "session_id": "s-9",
        "transcript_path": "/t.jsonl",
        "line": 1,
        "branch": "main",  # the line has none: the live session's branch
        "commit": "abc1234",
    }
    assert gotcha.provenance.branch == "feature/shard"  # the line's own branch wins
    assert decision.created_at == "2026-03-02T10:00:01.000000Z"  # when it was said
    memories = to_memories(events)
    assert [(m.memory_type, m.priority) for m in memories] == [("decision", 8), ("gotcha", 7)]
    assert memories[0].source_session == "s-9"
    assert memories[0].source_context.commit == "abc1234"
    assert "event:decision" in memories[0].tags


def test_commands_edits_and_low_confidence_markers_stay_events():
    events = (
        Session()
        .bash("ls", "a b")
        .tool("Edit", {"file_path": "/home/dev/app/x.py"})
        .say("I used a dict instead of a list here.")
        .events()
    )  # fmt: skip
    assert {e.kind for e in events} == {"command", "file_modified", "decision"}
    assert to_memories(events) == []


def test_every_event_kind_is_documented():
    events = (
        Session()
        .say("We decided X. We rejected Y because Z. The fix was W. Watch out for V.")
        .say("Always do U.", role="user")
        .bash("pytest", "1 failed", error=True)
        .bash("pytest", "1 passed")
        .bash("git commit -m 'm'", "[main abc1234] m")
        .events()
    )  # fmt: skip
    assert {e.kind for e in events} <= set(EVENT_KINDS)


def test_structured_summaries_are_fed_like_a_transcript():
    entries = entries_from_summary(
        {
            "summary": "Surveyed the webhook sender.",
            "decisions": ["Retries use exponential backoff capped at one hour"],
            "gotchas": ["sender.py swallows ConnectionError"],
            "done": ["Mapped every call site"],
        },
        session_id="s-2",
        branch="feature/retry",
    )
    events = extract(entries)
    assert kinds(events) == [
        ("decision", "Retries use exponential backoff capped at one hour"),
        ("gotcha", "sender.py swallows ConnectionError"),
        ("progress", "Mapped every call site"),
    ]
    assert all(e.confidence == 0.95 and e.provenance.branch == "feature/retry" for e in events)
    assert entries_from_summary({}) == []


def test_extraction_is_deterministic():
    session = Session().say("We decided to use Postgres.").bash("pytest", "3 passed")
    first = [(e.kind, e.content, e.provenance) for e in session.events()]
    second = [(e.kind, e.content, e.provenance) for e in session.events()]
    assert first == second


# ----------------------------------------------------------------- never raises


texts = st.text(max_size=300) | st.sampled_from(
    ["We decided to", "[MEMORY:decision] x", "[MEMORY: ", "```", "the fix was", "?", ""]
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=10,
)


def host_block(kind, text, tool_name, tool_input, tool_use_id, is_error, result) -> Block:
    """A block as Claude Code's reader would make it (tool blocks carry their neutral call)."""
    if kind == "tool_use":
        return tool_use_block(tool_name, tool_input, tool_use_id)
    if kind == "tool_result":
        return tool_result_block(text, tool_use_id, is_error, result)
    return Block(kind, text)


blocks = st.builds(
    host_block,
    kind=st.sampled_from(["text", "thinking", "tool_use", "tool_result", "image"]),
    text=texts,
    tool_name=st.sampled_from(
        [
            None,
            "Bash",
            "Edit",
            "Write",
            "TodoWrite",
            "ExitPlanMode",
            "Task",
            "TaskCreate",
            "TaskUpdate",
            "Weird",
        ]
    ),
    tool_input=st.dictionaries(
        st.sampled_from(["command", "file_path", "todos", "plan", "subject", "taskId", "status"]),
        json_values,
        max_size=4,
    ),
    tool_use_id=st.sampled_from([None, "t1", "t2"]),
    is_error=st.booleans(),
    result=st.none() | st.dictionaries(st.text(max_size=8), json_values, max_size=3),
)
entries = st.builds(
    Entry,
    line=st.integers(0, 10_000),
    role=st.sampled_from(["user", "assistant", "system", "summary"]),
    blocks=st.lists(blocks, max_size=4),
    branch=st.none() | st.text(max_size=10),
    timestamp=st.none() | st.text(max_size=30) | st.just("2026-01-01T00:00:00.000Z"),
    is_compact_summary=st.booleans(),
    is_meta=st.booleans(),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(entries, max_size=8))
def test_extraction_never_raises(items: list[Entry]):
    extractor = Extractor(ExtractionContext(session_id="s", dialect=DIALECT))
    events = [e for entry in items for e in extractor.feed(entry)] + extractor.finish()
    to_memories(events)


@settings(max_examples=300, deadline=None)
@given(texts, st.sampled_from(["user", "assistant"]))
def test_text_layers_never_raise(text: str, speaker: str):
    find_markers(text, speaker)
    find_tags(text)


# ----------------------------------------------------------------- real sessions


def real_events(path):
    return extract(
        parse_file(path),
        ExtractionContext(session_id="s", transcript_path=str(path), dialect=DIALECT),
    )


@pytest.mark.skipif(not RELIABILITY.exists(), reason=f"{RELIABILITY} is not here")
def test_real_session_coverage_test_fix():
    """A real CC 2.1.14 run: add a function and its test, a Stop hook forces a commit, then a
    second commit finds nothing to commit. Expected list written after reading the file."""
    events = real_events(RELIABILITY / "coverage-test-fix.jsonl")
    wanted = [
        (e.provenance.line, e.kind, e.content)
        for e in events
        if e.kind != "command" and e.kind not in SAID
    ]
    assert wanted == [
        (13, "file_modified", "Modified src/math_utils.py"),
        (14, "file_modified", "Modified tests/test_math_utils.py"),
        (21, "test_run",
         "Tests passed: `python -m pytest tests/test_math_utils.py -v` (2 passed in 0.00s)"),
        (24, "commit", "Committed 6322cf4 on master: Add multiply_numbers function with test"),
        (33, "file_modified", "Modified .gitignore"),
        (37, "error",
         "`git add .gitignore && git commit -m \"$(cat <<'EOF' …` failed: On branch master"),
    ]  # fmt: skip
    assert to_memories(events) == []  # the commit goes into the session's summary
    (summary,) = [m for m in session_digest(events, "t") if "event:session_summary" in m.tags]
    assert "Commits: 6322cf4 Add multiply_numbers function with test" in summary.content
    assert summary.content.startswith("Session ")
    assert "goal: Add a function called multiply_numbers" in summary.content
    # the Stop hook's feedback ("Cannot exit with unstaged changes ... always") is the host
    assert not [e for e in events if e.payload.get("layer") == "keyword"]


@pytest.mark.skipif(not RELIABILITY.exists(), reason=f"{RELIABILITY} is not here")
def test_real_session_python_to_rust_port():
    """A real run porting a Python library to Rust: a survey subagent, a 10-step todo list
    worked through, cargo test and coverage runs, one commit."""
    events = real_events(RELIABILITY / "python-to-rust-port.jsonl")
    by_kind = lambda k: [(e.provenance.line, e.content) for e in events if e.kind == k]  # noqa: E731
    assert [line for line, _ in by_kind("subagent_summary")] == [4]
    assert by_kind("subagent_summary")[0][1].startswith("Explore Python project structure: ")
    assert [c.split(":")[0] for _, c in by_kind("plan")] == ["Plan (10 steps)", "Plan (9 steps)"]
    completed = [c for _, c in by_kind("plan_step") if c.startswith("[completed]")]
    assert completed == [
        "[completed] Initialize Rust library project structure",
        "[completed] Port string_utils module",
        "[completed] Port math_utils module",
        "[completed] Port list_utils module",
        "[completed] Port dict_utils module",
        "[completed] Port validation module",
        "[completed] Run tests and ensure 100% coverage",
        "[completed] Update Justfile for Rust",
        "[completed] Delete Python source files",
    ]
    assert [line for line, _ in by_kind("test_run")] == [44, 49, 52, 75, 79]
    assert all(c.split(":")[0] in ("Tests passed", "Checks passed") for _, c in by_kind("test_run"))
    assert by_kind("file_modified") == [
        (13, "Modified Cargo.toml"),
        (18, "Modified src/lib.rs"),
        (22, "Created src/string_utils.rs"),
        (26, "Created src/math_utils.rs"),
        (31, "Created src/list_utils.rs"),
        (35, "Created src/dict_utils.rs"),
        (39, "Created src/validation.rs"),
        (59, "Modified Justfile"),
    ]
    assert by_kind("commit") == [
        (94, "Committed 7e2d976 on master: Port Python utility library to Rust")
    ]
    assert by_kind("decision") == [
        (86, "Used `Result<T, E>` instead of raising exceptions for `factorial()`")
    ]
    assert not by_kind("error")
    memories = to_memories(events)
    assert not [m for m in memories if m.memory_type == "progress"]  # folded into the digest
    # every step done: the session's summary says what was done, the plan adds nothing
    assert not [m for m in session_digest(events, "t") if "event:plan" in m.tags]
    assert not [m for m in memories if m.memory_type == "decision"]  # 0.55: below the bar


@pytest.mark.skipif(not (TRANSCRIPTS / "slopometry").exists(), reason="slopometry/ is not here")
def test_real_session_with_a_compaction():
    events = real_events(TRANSCRIPTS / "slopometry" / "transcript.jsonl")
    (summary,) = [e for e in events if e.kind == "compact_summary"]
    assert summary.provenance.line == 399
    assert not summary.content.startswith("This session is being continued")
    plans = [e for e in events if e.kind == "plan" and e.payload.get("tool") == "ExitPlanMode"]
    assert [p.provenance.line for p in plans] == [51, 133]
    resolved = [
        (e.provenance.line, e.payload["target"])
        for e in events
        if e.kind == "error_resolved" and e.payload["tool"] == "Bash"
    ]
    assert resolved == [(269, "uv run ruff check --fix ."), (701, "uv run ruff check .")]
    # the errors the summary lists with their fixes are gotchas of their own, the trivial ones
    # (an unused variable removed) left in the summary
    gotchas = [m.content for m in to_memories(events) if m.memory_type == "gotcha"]
    assert any(g.startswith("TodoItem model mismatch: Model expected `id` and `priority`")
               for g in gotchas)  # fmt: skip
    assert any("uv tool install . --reinstall" in g for g in gotchas)
    assert not any("total_events" in g for g in gotchas)


# ----------------------------------------------------------------- issue 13: knowledge, not a log


def digest_of(session: Session) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for memory in session_digest(session.events(), "t.jsonl"):
        kind = next(t for t in memory.tags if t.startswith("event:"))[len("event:") :]
        found.setdefault(kind, []).append(memory.content)
    return found


@pytest.mark.parametrize(
    ("text", "speaker"),
    [
        ("Let's go with SQLite for the cache.", "user"),
        ("I'll use httpx rather than requests, since we need async.", "assistant"),
        ("We should use pnpm for this repo.", "user"),
        ("Instead of polling, we'll subscribe to the webhook.", "assistant"),
        ("I chose a bounded queue over an unbounded one because memory matters.", "assistant"),
        ("We opted for JSON lines.", "assistant"),
        ("Use ruff, not flake8.", "user"),
        ("The user wants every push built by CI, not only main.", "assistant"),
        # the person's words as people type them in real sessions
        ("And lets go with the latest C release that works everywhere", "user"),
        ("Let’s go with SQLite for the cache.", "user"),
        ("Let's also Migrate to AudioWorklet", "user"),
        ("we need to migrate the session store to Postgres", "user"),
        ("To be clear: don't use ClMail for communication, use the builtin subagent teams.",
         "user"),
        ("I want all commits to be Durban-Designer since thats me.", "user"),
        ("We want the docs to stay in English.", "user"),
    ],
)  # fmt: skip
def test_choices_said_in_prose_are_decisions_above_the_bar(text, speaker):
    hit = classify(text, speaker)
    assert hit is not None and hit[0] in ("decision", "preference") and hit[1] >= 0.6


@pytest.mark.parametrize(
    ("text", "speaker"),
    [
        # one-off requests in the same words
        ("lets remove any orphan comments we added.", "user"),
        ("as a first step let's figure out the simplest way to serve it on localhost", "user"),
        ("lets talk through these points please", "user"),
        ("It lets you switch branches without a stash.", "assistant"),
        # the assistant announcing its next step, describing code: not a choice of its own
        ("Let's migrate to AudioWorklet for proper modern audio processing.", "assistant"),
        ("The parser reads the header instead of the whole file.", "assistant"),
        # a log line pasted with the words
        ("Note, selecting 'wi-fiman-desktop' instead of './wi-fiman.deb'", "user"),
    ],
)
def test_the_same_words_without_a_choice_are_not_decisions(text, speaker):
    hit = classify(text, speaker)
    assert hit is None or hit[0] != "decision" or hit[1] < 0.6


@pytest.mark.parametrize(
    "said",
    [
        "I want you to run the tests again.",
        "I want to pick it up again and fix the broken APIs.",
        "I want to run the benchmark again.",
        "I want to create a new migration for the users table.",
        "I want to keep going",
        "I really want this to work",
        "Let's move on to the next task.",
        "lets move on to the tests",
        "I need to move the old handler to the new module",
        # a step, a file, a branch or a mode; a wish; a feature
        "lets move to the next step",
        "I need to switch back to the main branch",
        "Let's switch over to the feature branch",
        "we should move to the bottom of the file",
        "I want the tests to run faster",
        "I want to be able to run the benchmark from the CLI",
        "I want a way to run the tests in parallel",
        "I want a script to create the release notes",
    ],
)
def test_what_the_person_asks_for_now_is_no_decision_or_preference(said):
    assert classify(said, "user") is None


def test_the_assistant_saying_what_the_person_wants_is_their_preference():
    assert classify("The user wants all commits to be Durban-Designer.", "assistant") == (
        "preference", 0.7)  # fmt: skip


def test_a_decision_keeps_the_alternative_it_rejected():
    (event,) = kinds_events(Session().say("I'll use httpx rather than requests for async."))
    assert event.kind == "decision" and event.payload["rejected"] == "requests"


def kinds_events(session: Session):
    return [e for e in session.events() if e.kind not in SAID]


def test_pasted_logs_docs_and_code_are_not_mined():
    paste = "\n".join(
        ["Here is the README of the other project:", ""]
        + ["# Contributing", "We decided to use tabs.", "Always squash commits."]
        + [f"- rule {i}: never use globals" for i in range(14)]
        + ["", "2026-01-01 10:00:00 ERROR we decided to retry forever", "  at main(app.js:3)", ""]
        + ["What do you think about it?"]
    )
    events = Session().say(paste, role="user").events()
    assert not [e for e in events if e.kind in ("decision", "preference", "gotcha")]
    # a short message of the person's own is still read
    own = Session().say("Always use pnpm in this repo.", role="user").events()
    assert [e.kind for e in own if e.kind not in SAID] == ["preference"]


def test_a_request_typed_on_continued_lines_above_a_pasted_diff_is_the_persons():
    """A terminal continuation (a backslash ending the line, then a line of only one) is the
    blank line the person typed, not one 40-line paragraph taken for pasted."""
    request = "I changed my mind: take the least nested path first, the latest on equal depths."
    diff = [f"-    old_line_{i} = compute({i});" for i in range(30)]
    text = "\\\n".join([request, ""]) + "\\\n" + "\n".join(["diff --git a/x.py b/x.py", *diff])
    assert own_words(text).startswith(request)
    assert "old_line" not in own_words(text)


def test_failures_described_in_words_are_problems():
    for text in (
        "The build is failing because the lockfile is stale.",
        "Tests still fail on Windows.",
        "Bug: the export drops the last line.",
        "This doesn't work when the file is empty.",
    ):
        assert classify(text, "assistant") == ("problem", classify(text, "assistant")[1]), text


def test_an_unresolved_failure_is_an_open_problem_until_a_later_run_passes():
    failing = (
        Session()
        .say("Fix the parser", role="user")
        .bash("uv run pytest -q", "1 failed, 3 passed in 0.2s", error=True)
    )
    assert [c for c in digest_of(failing)["open_problem"] if "1 failed" in c]
    failing.tool("Edit", {"file_path": "/home/dev/app/parser.py"}).bash(
        "uv run pytest -q", "4 passed in 0.2s"
    )
    assert "open_problem" not in digest_of(failing)
    prose = Session().say("Fix it", role="user").say("The tests still fail on empty input.")
    assert digest_of(prose)["open_problem"]


def test_resolved_only_claims_files_that_changed_successfully_between_the_runs():
    events = (
        Session()
        .bash("pytest", "1 failed", error=True)
        .tool("Edit", {"file_path": "/home/dev/app/a.py"}, "refused", error=True)
        .tool("Write", {"file_path": "/home/dev/app/b.py"}, "EACCES", error=True)
        .bash("pytest", "3 passed")
        .events()
    )
    (resolved,) = [e for e in events if e.kind == "error_resolved"]
    assert "a.py" not in resolved.content and "b.py" not in resolved.content
    assert not [e for e in events if e.kind == "file_modified"]  # nothing claims those writes
    assert not [m for m in to_memories(events) if "event:error_resolved" in m.tags]


def test_the_plan_folds_into_one_memory_with_final_states_and_dropped_steps_gone():
    todo = lambda *s: {"todos": [{"content": c, "status": st_} for c, st_ in s]}  # noqa: E731
    session = (
        Session()
        .tool("TodoWrite", todo(("Add table", "pending"), ("Add route", "pending"), ("D", "")))
        .tool("TodoWrite", todo(("Add table", "completed"), ("Add route", "in_progress")))
        .tool("TodoWrite", todo(("Add table", "completed"), ("Add route", "in_progress")))
    )  # fmt: skip
    assert digest_of(session)["plan"] == [
        "Plan (1/2 steps done): [completed] Add table; [in_progress] Add route"
    ]
    assert not [m for m in to_memories(session.events()) if m.memory_type == "progress"]
    # once every step is done the plan is a progress log: the session's summary says it
    session.tool("TodoWrite", todo(("Add table", "completed"), ("Add route", "completed")))
    assert "plan" not in digest_of(session)


def test_a_plan_left_stale_by_finished_work_is_not_reported_open():
    todo = lambda *s: {"todos": [{"content": c, "status": st_} for c, st_ in s]}  # noqa: E731
    session = (
        Session()
        .say("Simplify the checkpoint summary", role="user")
        .tool("TodoWrite", todo(("Change struct", "completed"), ("Fix tests", "in_progress")))
        .tool("Edit", {"file_path": "/home/dev/app/summary_test.go"}, "ok")
    )  # fmt: skip
    assert "plan" in digest_of(session)  # the work stops here: the plan says what is left
    # ... but the session went on after the to-do list's last update: checks passed and the
    # closing message says the work is complete
    session.bash("mise run test", "ok  entire.io/cli 1.2s")
    session.say("All tests pass and the implementation is complete: the summary is an array.")
    assert "plan" not in digest_of(session)


def test_a_fixed_failure_is_remembered_with_the_cause_the_assistant_found():
    session = (
        Session()
        .bash("uv run pytest -q", "FAILED tests/test_a.py::test_x - assert 409 == 200\n1 failed",
              error=True)
        .say("Let me look at the handler.")
        .say("I see the issue! The handler returns the stored response even when the body "
             "differs, so a replayed key must be compared with the request hash.")
        .tool("Edit", {"file_path": "/home/dev/app/idempotency.py"}, "ok")
        .bash("uv run pytest -q", "4 passed")
    )  # fmt: skip
    (memory,) = [m for m in to_memories(session.events()) if "event:error_resolved" in m.tags]
    assert memory.content.startswith("`uv run pytest -q` failed (")
    assert ": The handler returns the stored response even when the body differs" in memory.content
    assert memory.content.endswith("Fixed by changes to idempotency.py")
    assert "Let me look" not in memory.content  # an intention is no diagnosis


def test_a_lead_the_assistant_looks_into_gives_way_to_what_it_found_there():
    """entireio-cli: "The issue is that `ListSessions` calls `ListCheckpoints()`. Let me check
    that function:" is where the assistant looked next; what it found there is the cause."""
    failing = 'auto_commit_test.go:809: Session "2025-12-12-test" not found\nFAIL'
    session = (
        Session()
        .bash("go test ./strategy/...", failing, error=True)
        .say("The issue is that `ListSessions` calls `ListCheckpoints()`. Let me check that "
             "function:")
        .say("The issue is on line 142 - it unmarshals into a `CheckpointInfo`, but the root "
             "metadata.json is now a `CheckpointSummary`. Let me fix this:")
        .tool("Edit", {"file_path": "/home/dev/app/strategy/common.go"}, "ok")
        .bash("go test ./strategy/...", "ok  entire.io/cli/strategy 1.2s")
    )  # fmt: skip
    (memory,) = [m for m in to_memories(session.events()) if "event:error_resolved" in m.tags]
    assert "the root metadata.json is now a CheckpointSummary" in memory.content
    assert "ListSessions calls" not in memory.content
    # a lead nothing later explains stays the cause: it is the best the session said
    kept = (
        Session()
        .bash("mise run test -- -run TestResetCmd", "[test] ERROR task failed", error=True)
        .say("I see! The `Reset()` method writes directly to `os.Stderr`. This means the "
             "command's `SetErr()` doesn't capture it. Let me check how clean_test.go handles "
             "this:")
        .say("The clean command passes a writer to `runClean`. Let me fix the tests to check "
             "stdout instead:")
        .tool("Edit", {"file_path": "/home/dev/app/reset_test.go"}, "ok")
        .bash("mise run test -- -run TestResetCmd", "ok")
    )  # fmt: skip
    (memory,) = [m for m in to_memories(kept.events()) if "event:error_resolved" in m.tags]
    assert "SetErr() doesn't capture it" in memory.content
    # a diagnosis followed by moving on (not by a look further) is no lead
    moved = (
        Session()
        .bash("mise run fmt && mise run lint", "reset_test.go: duplicate (dupl)", error=True)
        .tool("Edit", {"file_path": "/home/dev/app/reset_test.go"}, "ok")
        .say("The duplication we addressed with //nolint:dupl is expected test setup code "
             "duplication. Let's verify the implementation is complete by testing it manually:")
        .say("You're right! In `reset.go` it's returning `nil` instead of calling the handler.")
        .bash("mise run fmt && mise run lint", "0 issues.")
    )  # fmt: skip
    (memory,) = [m for m in to_memories(moved.events()) if "event:error_resolved" in m.tags]
    assert "expected test setup code duplication" in memory.content


def test_a_lead_the_session_moved_on_from_stays_and_a_short_one_is_still_a_lead():
    lint = "F401 `re` imported but unused\n --> src/app/coverage.py:5:8\nFound 1 error."
    moved = (
        Session()
        .bash("uv run ruff check .", lint, error=True)
        .say("The error is because `re` is no longer used in coverage.py. Let me check the file:")
        .tool("Edit", {"file_path": "/home/dev/app/src/app/coverage.py"}, "ok")
        .bash("uv run pytest -x", "173 passed")
        .say("The issue is that the import resolver doesn't know about the src/ prefix.")
        .tool("Edit", {"file_path": "/home/dev/app/src/app/paths.py"}, "ok")
        .bash("uv run ruff check . && uv run pytest -x -q", "All checks passed!\n173 passed")
    )  # fmt: skip
    (resolved,) = [e for e in moved.events() if e.kind == "error_resolved"]
    assert "re is no longer used" in resolved.content
    assert "import resolver" not in resolved.content
    # a diagnosis shorter than a sentence or two, then the look further: still a lead
    short = (
        Session()
        .bash("uv run pytest -q", "FAILED test_time.py::test_utc\n1 failed", error=True)
        .say("The test expects UTC. Let me take a look at the fixture:")
        .say("The problem is that the fixture builds naive datetimes in local time.")
        .tool("Edit", {"file_path": "/home/dev/app/tests/conftest.py"}, "ok")
        .bash("uv run pytest -q", "4 passed")
    )  # fmt: skip
    (resolved,) = [e for e in short.events() if e.kind == "error_resolved"]
    assert "naive datetimes in local time" in resolved.content
    assert "Let me" not in resolved.content


def test_a_sentence_ruling_a_cause_out_does_not_replace_a_lead():
    session = (
        Session()
        .bash("uv run pytest -q", "FAILED test_parse.py::test_empty\n1 failed", error=True)
        .say("The issue is that `parse()` returns None for empty input instead of an empty "
             "list. Let me check the other callers:")
        .say("The other callers are fine because they check the length first. Let me fix "
             "`parse()`:")
        .tool("Edit", {"file_path": "/home/dev/app/parse.py"}, "ok")
        .bash("uv run pytest -q", "5 passed")
    )  # fmt: skip
    (resolved,) = [e for e in session.events() if e.kind == "error_resolved"]
    assert "returns None for empty input" in resolved.content
    assert "other callers are fine" not in resolved.content


def test_a_failure_the_session_moved_on_from_takes_no_later_diagnosis_as_its_cause():
    """slopometry: ruff failed on an unused import, the import went without a word, the tests
    ran and passed, and a diagnosis of another bug came later, before ruff passed again."""
    lint = "F401 `re` imported but unused\n --> src/app/coverage.py:5:8\nFound 1 error."
    session = (
        Session()
        .bash("uv run ruff check .", lint, error=True)
        .tool("Edit", {"file_path": "/home/dev/app/src/app/coverage.py"}, "ok")
        .bash("uv run pytest -x", "173 passed")
        .say("The issue is that the import resolver doesn't know about the src/ prefix.")
        .tool("Edit", {"file_path": "/home/dev/app/src/app/coverage.py"}, "ok")
        .bash("uv run ruff check . && uv run pytest -x -q", "All checks passed!\n173 passed")
    )  # fmt: skip
    (resolved,) = [e for e in session.events() if e.kind == "error_resolved"]
    assert "import resolver" not in resolved.content and not resolved.payload.get("cause")
    assert not [m for m in to_memories(session.events()) if "event:error_resolved" in m.tags]
    # another check of the same kind in between is still that work: its explanation stands
    same = (
        Session()
        .bash("mise run fmt && mise run lint", "reset_test.go: duplicate of clean_test.go (dupl)",
              error=True)
        .tool("Edit", {"file_path": "/home/dev/app/reset_test.go"}, "ok")
        .bash("mise run dup", "no new duplication")
        .say("The duplication we addressed with //nolint:dupl is expected test setup code "
             "duplication.")
        .bash("mise run fmt && mise run lint", "0 issues.")
    )  # fmt: skip
    (kept,) = [m for m in to_memories(same.events()) if "event:error_resolved" in m.tags]
    assert "expected test setup code duplication" in kept.content
    # nothing edited since the failure: a check run before looking into it moves nothing on
    looked = (
        Session()
        .bash("uv run pytest -q", "FAILED test_cache.py::test_key\n1 failed", error=True)
        .bash("uv run ruff check .", "All checks passed!")
        .say("The test fails because the cache key ignores the tenant id.")
        .tool("Edit", {"file_path": "/home/dev/app/app/cache.py"}, "ok")
        .bash("uv run pytest -q", "4 passed")
    )  # fmt: skip
    (cause,) = [m for m in to_memories(looked.events()) if "event:error_resolved" in m.tags]
    assert "the cache key ignores the tenant id" in cause.content


def test_a_fix_is_claimed_for_the_files_the_error_named_not_every_file_changed_meanwhile():
    lint_output = (
        "[lint] $ golangci-lint run\ncmd/entire/cli/reset_test.go:20:1: 36-64 lines are "
        "duplicate of `cmd/entire/cli/clean_test.go:18-46` (dupl)\n1 issues.\n"
        "[lint] ERROR task failed"
    )
    session = (
        Session()
        .bash("mise run lint", lint_output, error=True)
        .say("The duplication is expected test setup code, so it gets a nolint:dupl comment.")
        .tool("Edit", {"file_path": "/home/dev/app/cmd/entire/cli/reset_test.go"}, "ok")
        # meanwhile, another bug: the reset command itself
        .tool("Edit", {"file_path": "/home/dev/app/cmd/entire/cli/reset.go"}, "ok")
        .tool("Edit", {"file_path": "/home/dev/app/cmd/entire/cli/manual_commit_reset.go"}, "ok")
        .bash("mise run lint", "0 issues.")
    )  # fmt: skip
    (memory,) = [m for m in to_memories(session.events()) if "event:error_resolved" in m.tags]
    assert memory.content.endswith("Fixed by changes to cmd/entire/cli/reset_test.go")
    # an error that names none of the changed files leaves them all claimed
    unnamed = (
        Session()
        .bash("uv run pytest -q", "E   assert 409 == 200\n1 failed", error=True)
        .say("I see the issue! The handler returns the stored response even when the body "
             "differs, so a replayed key must be compared with the request hash.")
        .tool("Edit", {"file_path": "/home/dev/app/idempotency.py"}, "ok")
        .tool("Edit", {"file_path": "/home/dev/app/store.py"}, "ok")
        .bash("uv run pytest -q", "4 passed")
    )  # fmt: skip
    (memory,) = [m for m in to_memories(unnamed.events()) if "event:error_resolved" in m.tags]
    assert memory.content.endswith("Fixed by changes to idempotency.py, store.py")


def test_a_session_that_was_one_fix_does_not_say_its_cause_twice():
    cause = ("The tests expect custom error messages printed to stderr, but the command is "
             "returning plain errors.")  # fmt: skip
    session = (
        Session()
        .say("fix the test, the code is right", role="user")
        .bash("mise run test", "--- FAIL: TestResetCmd_NotGitRepo\n[test] ERROR task failed",
              error=True)
        .say(f"Now I understand the issue. {cause}")
        .tool("Edit", {"file_path": "/home/dev/app/reset_test.go"}, "ok")
        .bash("mise run test", "ok  entire.io/cli 1.2s")
        .say(f"Now I understand the issues. {cause}")
    )  # fmt: skip
    (summary,) = digest_of(session)["session_summary"]
    (gotcha,) = [m for m in to_memories(session.events()) if "event:error_resolved" in m.tags]
    assert "custom error messages" in gotcha.content  # the cause is the gotcha's
    assert "custom error messages" not in summary
    assert "Outcome: `mise run test` passed after changes to reset_test.go" in summary
    # a closing reply that says more than the cause is the session's own outcome
    session.say(
        "Fixed the reset tests: they now expect the plain errors the command returns, "
        "since you said the code is right; the four reset tests and the rest of the "
        "suite pass, and the interactive confirmation path is still untested."
    )
    (summary,) = digest_of(session)["session_summary"]
    assert "interactive confirmation path is still untested" in summary


def test_a_fixed_failure_without_a_cause_stays_an_event():
    session = (
        Session()
        .bash("uv run pytest -q", "1 failed", error=True)
        .tool("Edit", {"file_path": "/home/dev/app/a.py"}, "ok")
        .bash("uv run pytest -q", "4 passed")
    )
    events = session.events()
    assert [e for e in events if e.kind == "error_resolved"]  # it still closes the failure
    assert not [m for m in to_memories(events) if "event:error_resolved" in m.tags]


def test_the_outcome_is_the_closing_reply_to_the_last_request_not_an_intention():
    session = (
        Session()
        .say("fix the failing reset tests", role="user")
        .say("Now I understand the issue. The tests expect custom errors on stderr, but the "
             "command returns plain errors. I need to update the reset command to match.")
        .say("fix the test, the code is right", role="user")
        .say("Updated reset_test.go: the tests now assert the plain error the command returns, "
             "and the reset command itself is unchanged. All reset tests pass.")
        .say("Let me run the whole suite once more to be sure nothing else depends on it.")
    )  # fmt: skip
    (summary,) = digest_of(session)["session_summary"]
    assert "Outcome: Updated reset_test.go" in summary
    assert "I need to update the reset command" not in summary
    # a reply that only introduces the call it makes ("… Now check formatters.py:") is no end
    cut = (
        Session()
        .say("lets address all redundant and orphaned comments for staged files", role="user")
        .say("Removed orphan comments from plan_analyzer.py and formatters.py; the docstrings "
             "that explain the metrics stay.")
        .say("Now check complexity_analyzer.py and formatters.py:")
    )  # fmt: skip
    (summary,) = digest_of(cut)["session_summary"]
    outcome, left = summary.split(" Still open: ")
    assert "Outcome: Removed orphan comments" in outcome and "Now check" not in outcome
    # ... and nothing came after it: the session stopped there
    assert left == (
        "unfinished: the last reply stops at “Now check complexity_analyzer.py and formatters.py:”."
    )


def test_a_session_cut_off_mid_turn_says_where_it_stopped():
    """Closed or interrupted before the assistant came back: the last request is not done."""

    def asked() -> Session:
        return (
            Session()
            .say("add the retry decorator to the webhook sender", role="user")
            .say("Added the retry decorator to sender.py; the webhook tests pass.")
            .say("great, now make the /1 folder the first one created instead of /0", role="user")
        )  # fmt: skip

    (summary,) = digest_of(asked())["session_summary"]
    assert summary.endswith("Still open: unanswered: the last request has no reply.")
    exploring = asked().say("This is a new request: the folders should start at 1. Let me "
                            "explore where the session folders are numbered.")  # fmt: skip
    (summary,) = digest_of(exploring.tool("Task", {"prompt": "find"}))["session_summary"]
    assert (
        "unfinished: the last reply stops at “Let me explore where the session folders are "
        "numbered.”" in summary
    )
    # a turn that ends as turns end says nothing of the kind, nor one that went on to act
    signed_off = asked().say("Done: the folders start at 1. Let me know if /0 should stay.")
    acted = asked().say("Let me run the tests:").bash("pytest -q", "3 passed")
    for last in ("Let me run the tests again.", "Let me check if the tests pass.",
                 "Let me see what happens when the folder is created."):  # fmt: skip
        said = f"The folders are numbered in session.py now. {last}"
        (summary,) = digest_of(asked().say(said))["session_summary"]
        assert f"stops at “{last}”" in summary
    # nor one that puts the next step off until later
    later = [
        "Done. Let's revisit the backoff numbers once we see production traffic.",
        "Done. Let me check back when you have run it against staging.",
        "Done. Let's look at the /0 folder again if it comes back.",
    ]
    for session in (signed_off, acted, *(asked().say(text) for text in later)):
        (summary,) = digest_of(session)["session_summary"]
        assert "Still open" not in summary, summary


def test_a_session_that_ended_on_a_failure_or_a_refusal_says_so():
    """The closing reply alone ("I found the installer") would read as where the work stands."""
    session = (
        Session()
        .say("install wifiman, the app center is not working", role="user")
        .say("I can see the wifiman-desktop-1.1.3-amd64.deb installer in your Downloads folder.")
        .bash("sudo dpkg -i wifiman.deb", "sudo: a password is required", error=True)
        .say("Let me try installing it with apt:")
        .tool("Bash", {"command": "sudo apt install ./wifiman.deb"}, REJECTED, error=True)
    )  # fmt: skip
    (summary,) = digest_of(session)["session_summary"]
    assert (
        "in your Downloads folder. Then `sudo dpkg -i wifiman.deb` failed: sudo: a password is "
        "required; the person refused `sudo apt install ./wifiman.deb`. Still open:"
    ) in summary
    # more tries between: the first failure (what went wrong) and the end, the tries counted
    tries = (
        Session()
        .say("search the history", role="user")
        .say("The README now documents the search skill and its options.")
    )
    for repo in ("", " --repo a/b", " repo:*"):
        tries.bash(f"entire search x{repo}", "could not find 'origin' remote", error=True)
    tries.tool("Bash", {"command": "entire search x --repo '*'"}, REJECTED, error=True)
    (summary,) = digest_of(tries)["session_summary"]
    assert summary.endswith(
        "Then `entire search x` failed: could not find 'origin' remote; 2 more tries; the person "
        "refused `entire search x --repo '*'`."
    )
    # calls the host stopped because one was refused are not the person's refusals, and a
    # failure the summary lists as still open is not told again
    stopped = "The user doesn't want to take this action right now. STOP what you are doing."
    cancelled = (
        Session()
        .say("clean up the build folders", role="user")
        .say("The build, dist and cache folders hold 2 GB of old artefacts from March.")
        .tool("Bash", {"command": "rm -rf build"}, REJECTED, error=True)
        .tool("Bash", {"command": "rm -rf dist"}, stopped, error=True)
    )  # fmt: skip
    (summary,) = digest_of(cancelled)["session_summary"]
    assert summary.endswith("Then the person refused `rm -rf build`.")
    still = (
        Session()
        .say("fix the cache tests", role="user")
        .say("The cache key ignores the tenant id; the tests below check that it no longer does.")
        .bash("uv run pytest -q", "FAILED test_cache.py::test_key\n1 failed", error=True)
    )  # fmt: skip
    (summary,) = digest_of(still)["session_summary"]
    assert "Then" not in summary and "Still open: `uv run pytest -q` failed" in summary
    # a session that went on to work after the failure ended on that work
    session.tool("Write", {"file_path": "/home/dev/app/INSTALL.md", "content": "x"}, "ok")
    (summary,) = digest_of(session)["session_summary"]
    assert "Then" not in summary


def test_one_session_summary_with_goal_outcome_files_and_commits():
    session = (
        Session()
        .say("Add retries to the webhook sender", role="user")
        .tool("Write", {"file_path": "/home/dev/app/retry.py"}, "ok")
        .bash('git commit -m "Add retries"', "[main 3f2c1a9] Add retries\n 1 file changed")
        .say("Done: retries with backoff are in retry.py; the sender still needs a timeout.")
    )
    (summary,) = digest_of(session)["session_summary"]
    assert "goal: Add retries to the webhook sender" in summary
    assert "Outcome: Done: retries with backoff" in summary
    assert "Files changed: retry.py" in summary and "3f2c1a9 Add retries" in summary


def test_the_plan_plan_mode_writes_is_the_hosts_file_not_a_change_to_the_project():
    plan = "/Users/dev/.claude/plans/zany-strolling-eich.md"
    session = (
        Session()
        .say("Add retries to the webhook sender", role="user")
        .tool("Write", {"file_path": plan, "content": "# Plan\n1. retry with backoff"}, "ok")
        .tool("Edit", {"file_path": "/home/dev/app/retry.py"}, "ok")
        .say("Done: retries with backoff are in retry.py.")
    )
    assert kinds(session.events(), "file_modified") == [("file_modified", "Modified retry.py")]
    (summary,) = digest_of(session)["session_summary"]
    assert "Files changed: retry.py" in summary and "zany-strolling-eich" not in summary


def test_howto_comes_from_the_steps_the_session_ran_successfully_deduplicated():
    session = (
        Session()
        .bash("uv run pytest -q", "3 passed")
        .bash("cd /home/dev/app && uv run pytest -q 2>&1 | tail -5", "3 passed")
        .bash("uv run pytest tests/test_a.py::test_x", "1 passed")
        .bash("act --container-architecture linux/amd64 -j test", "Job succeeded")
        .bash("pnpm build", "boom", error=True)
        .bash("go test ./cmd/entire/cli/checkpoint/... -v -count=1", "ok")  # one package
        .bash("go vet ./...", "ok")  # the whole module
    )
    howto = digest_of(session)["howto"]
    assert "How to run the tests: `uv run pytest -q`" in howto
    assert any("act --container-architecture linux/amd64 -j test" in h for h in howto)
    assert not [h for h in howto if "test_a.py" in h or "pnpm build" in h]
    assert not [h for h in howto if "checkpoint" in h]
    assert any("`go vet ./...`" in h for h in howto)


def test_one_step_run_with_other_output_flags_is_one_how_to():
    session = Session().bash("uv run pytest -x --tb=short", "3 passed")
    session.bash("uv run pytest -x --tb=short -q", "3 passed")
    session.bash("uv run pytest -m browser", "2 passed")  # another selection: another how-to
    assert digest_of(session)["howto"] == [
        "How to run the tests: `uv run pytest -x --tb=short`",
        "How to run the tests: `uv run pytest -m browser`",
    ]


def test_a_formatter_asked_only_to_check_is_the_formatters_how_to():
    session = Session().bash("uv run ruff format .", "3 files reformatted")
    session.bash("uv run ruff format --check .", "12 files already formatted")
    session.bash("uv run ruff check --diff .", "All checks passed!")  # not a formatter
    assert digest_of(session)["howto"] == [
        "How to lint / type-check: `uv run ruff format .`",
        "How to lint / type-check: `uv run ruff check --diff .`",
    ]


def test_a_formatter_given_a_folder_is_a_check_not_a_build():
    session = Session().bash("uv run ruff format .", "3 files left unchanged")
    session.bash("npm run test:unit", "ok")
    assert digest_of(session)["howto"] == [
        "How to lint / type-check: `uv run ruff format .`",
        "How to run the tests: `npm run test:unit`",
    ]


def test_a_chain_of_steps_is_remembered_as_its_steps():
    session = Session().bash("mise run fmt && mise run lint && git add -A", "ok")
    session.bash("mise run lint && mise run test:ci", "ok")
    howto = digest_of(session)["howto"]
    assert not [h for h in howto if "&&" in h or "git add" in h]
    assert sorted(h.split("`")[1] for h in howto) == [
        "mise run fmt", "mise run lint", "mise run test:ci",
    ]  # fmt: skip


def test_windows_paths_are_relative_to_the_project_and_powershell_is_a_shell():
    session = Session()
    session.tool("Edit", {"file_path": "C:\\Users\\me\\proj\\src\\a.py"}, "ok")
    session.tool("PowerShell", {"command": "cd C:\\Users\\me\\proj; uv run pytest -q"}, "2 passed")
    for entry in session.entries:
        entry.cwd = "c:\\users\\me\\proj"
    events = session.events()
    assert ("file_modified", "Modified src/a.py") in kinds(events)
    assert [e.payload["ok"] for e in events if e.kind == "test_run"] == [True]


# The keyword markers search the lower-cased sentence with lower-cased patterns (twice as fast
# as a case-insensitive search); the escapes must survive: ``\S`` is not ``\s``.
_SAMPLE_PATTERNS = [
    r"\b\S+ over \S+ (?:because|since|as)\b",
    r"\bI(?:'d| would) (?:rather|like you to|prefer)\b",
    r"^(?:Note|IMPORTANT|warning):",
    r"\b(?:doesn't|Does Not) Work(?:ing)?\b\W",
    r"[A-Z]{2,}\d+",
]


_SAMPLE_TEXTS = [
    "We picked Postgres over MySQL because it scales.",
    "I'd Rather you ran the tests first",
    "NOTE: the fixture needs TZ=UTC",
    "It Does Not Work, again",
    "see ABC123 in the log",
    "nothing to see here",
]


@pytest.mark.parametrize("pattern", _SAMPLE_PATTERNS)
@pytest.mark.parametrize("text", _SAMPLE_TEXTS)
def test_a_lowered_pattern_matches_lowered_text_as_the_case_insensitive_one(pattern, text):
    import re

    from cortexmem.core.extraction.keywords import _lowered

    assert bool(re.search(_lowered(pattern), text.lower())) == bool(
        re.search(pattern, text, re.IGNORECASE)
    )


@given(
    st.sampled_from(_SAMPLE_PATTERNS),
    st.text(alphabet=st.sampled_from(list("aBcIi' dDoOeEsSnNtTwWrRkKgG:.,0129XYZ")), max_size=60),
)
def test_a_lowered_pattern_on_any_lowered_text_matches_as_the_case_insensitive_one(pattern, text):
    import re

    from cortexmem.core.extraction.keywords import _lowered

    assert bool(re.search(_lowered(pattern), text.lower())) == bool(
        re.search(pattern, text, re.IGNORECASE)
    )


# ----------------------------------------------------------------- decisions written as a list

STATUS_EDIT = """## Universal Interface Rewrite

**✅ DECISION: C17 Standard Adoption**
- Moving from C99 to C17 for modern features
- C23 rejected (incomplete CUDA/ROCm support)

**Key Architectural Decisions:**
- Run-time plugin system (dlopen) for backend selection
- Single `vsla.h` header with opaque handles
  for ABI stability

## Development Notes
- Architecture supports multi-GPU
"""


def test_decisions_listed_under_a_heading_or_one_to_a_line_are_read_as_decisions():
    assert listed_decisions(STATUS_EDIT) == [
        "C17 Standard Adoption: Moving from C99 to C17 for modern features; "
        "C23 rejected (incomplete CUDA/ROCm support)",
        "Run-time plugin system (dlopen) for backend selection",
        "Single `vsla.h` header with opaque handles for ABI stability",
    ]
    # a heading that does not name decisions, or names one case of a decision, lists none
    assert listed_decisions("**Per-question decision:** yes\n- keep it\n") == []
    assert listed_decisions("## Next steps\n- Decide on a database\n") == []
    # a request about decisions is not one
    assert classify("Write down what we decided in STATUS.md", "user") is None
    # a list under a heading that is itself an item; loose lists; the next section is not one
    nested = ("- **Key decisions:**\n  - Use SQLite for storage\n  - Keep FTS5 for search\n"
              "- **Next steps:**\n  - delete the old backups\n")  # fmt: skip
    assert listed_decisions(nested) == ["Use SQLite for storage", "Keep FTS5 for search"]
    loose = "## Key decisions\n\n- Use SQLite\n\n- Use one worker\n\nThen more."
    assert listed_decisions(loose) == ["Use SQLite", "Use one worker"]
    # what is not decided yet, a template's placeholder, a question
    assert listed_decisions("### Decisions (still open)\n- Whether to use Postgres\n") == []
    assert listed_decisions("Decision: <describe the decision here>\n") == []
    assert listed_decisions("**Decision:** should we drop Python 3.9 support?\n") == []
    # an item cut to its room is redacted first: no secret keeps its first characters
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    (long,) = listed_decisions("## Key decisions\n- " + "word " * 76 + f"clone with {token}\n")
    assert "ghp_" not in long and long.endswith("…")
    # a heading inside a code block is the code's, not the session's
    assert listed_decisions("```md\n## Decisions\n- use tabs\n```\n") == []


def test_a_reply_that_lists_its_decisions_leaves_one_decision_memory_each():
    reply = "The reset command is in place.\n\n**Key design decisions:**\n" + (
        "- **No `checkDisabledGuard()`**: reset is maintenance and works when Entire is off\n"
        "- **Use `SilentError`**: when we print our own messages\n"
    )
    events = Session().say("add a reset command", role="user").say(reply).events()
    decisions = [e.content for e in events if e.kind == "decision"]
    assert decisions == [
        "No `checkDisabledGuard()`: reset is maintenance and works when Entire is off",
        "Use `SilentError`: when we print our own messages",
    ]
    assert [m.memory_type for m in to_memories(e for e in events if e.kind == "decision")] == [
        "decision", "decision",
    ]  # fmt: skip


def test_decisions_written_into_a_document_count_once_the_write_succeeded():
    edit = {"file_path": "/home/dev/app/STATUS.md", "old_string": "x", "new_string": STATUS_EDIT}
    written = Session().tool("Edit", edit, "The file has been updated.").events()
    assert len([e for e in written if e.kind == "decision"]) == 3
    failed = Session().tool("Edit", edit, "String to replace not found", error=True).events()
    assert not [e for e in failed if e.kind == "decision"]
    code = {**edit, "file_path": "/home/dev/app/notes.py"}  # a code file's text is code
    assert not [e for e in Session().tool("Edit", code, "ok").events() if e.kind == "decision"]


def test_decisions_a_document_of_the_project_lists_count_when_the_session_reads_it():
    """A status note another assistant or the person keeps is the project's record too."""
    shown = "".join(f"{n:>6}\u2192{line}\n" for n, line in enumerate(STATUS_EDIT.splitlines(), 1))
    read = Session().tool("Read", {"file_path": "/home/dev/app/docs/../STATUS.md"}, shown)
    assert len([e for e in read.events() if e.kind == "decision"]) == 3
    # one outside the project (a person's global notes, another repository's) is not
    for path in ("/home/dev/NOTES.md", "/home/dev/app/../other/STATUS.md"):
        away = Session().tool("Read", {"file_path": path}, shown).events()
        assert not [e for e in away if e.kind == "decision"], path
    failed = Session().tool("Read", {"file_path": "/home/dev/app/STATUS.md"}, shown, error=True)
    assert not [e for e in failed.events() if e.kind == "decision"]
    # nor a dependency's inside the project folder
    vendored = {"file_path": "/home/dev/app/node_modules/left-pad/README.md"}
    assert not [e for e in Session().tool("Read", vendored, shown).events() if e.kind == "decision"]


def numbered(text: str) -> str:
    """``text`` as Claude Code's Read shows a file: each line numbered."""
    return "".join(f"{n:>6}\u2192{line}\n" for n, line in enumerate(text.splitlines(), 1))


STATUS_V1 = "# Status\n\n### Technical Decisions Made\n- **No cuBLAS**: fair competition\n" + (
    "- **gcc-12**: CUDA 12.0 needs gcc 12 or older\n"
)
STATUS_V2 = "# Status\n\nRewritten. Roadmap: CUDA backend with cuBLAS + cuFFT.\n"


def withdrawn_of(session: Session, ctx: ExtractionContext | None = None) -> list[str]:
    return [e.content for e in session.events(ctx) if e.kind == "withdrawn"]


def test_a_whole_later_version_of_a_document_withdraws_the_decisions_it_no_longer_says():
    """The project's status note is its record while it says a decision: rewritten without
    it, the decision is withdrawn (the store archives it); still said anywhere in it, kept."""
    path = {"file_path": "/home/dev/app/STATUS.md"}
    session = Session().tool("Read", path, numbered(STATUS_V1))
    session.tool("Read", path, numbered(STATUS_V2 + "gcc-12: CUDA 12.0 needs gcc 12 or older"))
    events = session.events()
    assert [e.content for e in events if e.kind == "withdrawn"] == ["No cuBLAS: fair competition"]
    gone = next(e for e in events if e.kind == "withdrawn")
    assert gone.payload["document"] == "/home/dev/app/status.md"
    listed = [m for m in to_memories(events) if m.memory_type == "decision"]
    assert all("doc:/home/dev/app/status.md" in m.tags for m in listed) and len(listed) == 2
    status = "/home/dev/app/status.md"
    assert [x for x in listings(events) if not x.listed] == [
        Listing(status, "No cuBLAS: fair competition", gone.created_at, False)
    ]
    # a whole write of it does the same
    written = Session().tool("Read", path, numbered(STATUS_V1))
    written.tool("Write", {**path, "content": STATUS_V2}, "File created successfully")
    assert len(withdrawn_of(written)) == 2
    # so does a read in the tab-numbered form of later Claude Code versions
    tabbed = "".join(f"{n}\t{line}\n" for n, line in enumerate(STATUS_V2.splitlines(), 1))
    later = Session().tool("Read", path, numbered(STATUS_V1)).tool("Read", path, tabbed)
    assert len(withdrawn_of(later)) == 2


def test_only_a_whole_version_of_a_document_withdraws_a_decision():
    path = {"file_path": "/home/dev/app/STATUS.md"}
    cases = {
        "a read of some of its lines": Session().tool(
            "Read", {**path, "offset": 40, "limit": 20}, numbered(STATUS_V2)
        ),
        "a note in place of its lines": Session().tool(
            "Read", path, "File unchanged since last read. Refer to the earlier result."
        ),
        "an edit, which shows only its part": Session().tool(
            "Edit", {**path, "old_string": "x", "new_string": STATUS_V2}, "updated"
        ),
        "a read that failed": Session().tool("Read", path, numbered(STATUS_V2), error=True),
        "a read the host stopped at its 2,000 lines": Session().tool(
            "Read",
            path,
            numbered(STATUS_V2),
            result={"type": "text", "file": {"numLines": 2000, "totalLines": 2400}},
        ),
        "a write the host cut": Session().tool(
            "Write", {**path, "content": STATUS_V2 + "x" * 30_000}, "File created successfully"
        ),
        "another document": Session().tool(
            "Read", {"file_path": "/home/dev/app/docs/PLAN.md"}, numbered(STATUS_V2)
        ),
    }
    for case, later in cases.items():
        session = Session().tool("Read", path, numbered(STATUS_V1))
        session.entries += [replace(e, line=e.line + len(session.entries)) for e in later.entries]
        assert withdrawn_of(session) == [], case


def test_each_version_of_a_document_gives_its_word_on_each_decision_it_listed():
    """Listed, dropped, listed again: the store keeps the latest of each (``listings``), so
    the same words read again in a session (one event) still count as a later listing."""
    path = {"file_path": "/home/dev/app/STATUS.md"}
    session = Session().tool("Read", path, numbered(STATUS_V1))
    session.tool("Read", path, numbered(STATUS_V2)).tool("Read", path, numbered(STATUS_V1))
    events = session.events()
    words = [(x.listed, x.at) for x in listings(events) if x.decision.startswith("No cuBLAS")]
    assert [listed for listed, _ in words] == [True, False, True]
    assert words[0][1] < words[1][1] < words[2][1]


def test_what_the_store_knows_a_document_listed_is_withdrawn_by_a_later_session():
    path = {"file_path": "/home/dev/app/STATUS.md"}
    session = Session().tool("Read", path, numbered(STATUS_V2))  # at 2026-03-02T10:00
    status, decision = "/home/dev/app/status.md", "No cuBLAS: fair competition"
    known = ((status, ((decision, "2026-03-01T09:00:00.000000Z"),)),)
    ctx = ExtractionContext(session_id="s-1", dialect=DIALECT, documents=known)
    assert withdrawn_of(session, ctx) == [decision]
    # a decision listed again after this version (a later session captured first) is not
    later = ((status, ((decision, "2026-03-03T09:00:00.000000Z"),)),)
    ctx = ExtractionContext(session_id="s-1", dialect=DIALECT, documents=later)
    assert withdrawn_of(session, ctx) == []


def test_a_decision_still_said_is_found_under_another_heading_or_cut_short():
    assert still_says("## Notes\n- **No cuBLAS**: fair competition, still", "No cuBLAS: fair …")
    assert still_says("We keep: No cuBLAS: fair competition.", "No cuBLAS: fair competition")
    assert not still_says("cuBLAS: fair competition", "No cuBLAS: fair competition")
    assert not still_says("Roadmap: cuBLAS + cuFFT", "No cuBLAS: fair competition")
    # cut inside a word, the cut word is not asked for
    assert still_says("No cuBLAS: fair competition", "No cuBLAS: fa…")


def test_a_decision_with_a_secret_is_still_said_by_the_document_that_says_it():
    """What is kept of a decision is redacted; so is the version it is looked for in."""
    key = "AKIA" + "IOSFODNN7EXAMPLE"
    secret = f"# S\n\n## Decisions\n- Use key {key} for uploads to the bucket\n"
    moved = f"# S\n\nUploads: use key {key} for uploads to the bucket, as before.\n"
    path = {"file_path": "/home/dev/app/STATUS.md"}
    session = Session().tool("Read", path, numbered(secret)).tool("Read", path, numbered(moved))
    events = session.events()
    assert [e.content for e in events if e.kind == "decision"] != []
    assert withdrawn_of(session) == []


def test_a_document_is_one_whichever_folder_the_session_started_in():
    assert document_key("/repo/pkg/../STATUS.md", "/repo/pkg") == "/repo/status.md"
    assert document_key("../STATUS.md", "/repo/pkg") == "/repo/status.md"
    assert document_key("C:\\Proj\\STATUS.md", None) == "c:/proj/status.md"
    assert document_key("STATUS.md", "/repo/pkg") != document_key("STATUS.md", "/repo")


def test_the_plan_the_person_approved_lists_decisions_a_pasted_document_does_not():
    plan = "# Plan: reset command\n\n**Key design decisions:**\n- Reset works when disabled\n"
    approved = Session().say("Implement the following plan:\n\n" + plan, role="user")
    assert [e.content for e in approved.events() if e.kind == "decision"] == [
        "Reset works when disabled"
    ]
    pasted = Session().say("Here is their old design doc:\n\n" + plan, role="user")
    assert not [e for e in pasted.events() if e.kind == "decision"]


def test_the_assistant_announcing_its_plan_around_a_problem_is_not_a_problem():
    announced = (
        "I'll help you install WiFiMan from a repository since the app center isn't working."
    )
    assert classify(announced, "assistant") is None
    assert classify("The app center isn't working.", "assistant") == ("problem", 0.6)
    assert classify("install wifiman, the app center is not working", "user") is not None
