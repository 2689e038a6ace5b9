"""Lessons: where they come from, the warning gates and scores, the judge, evolution.

Pure functions are tested on plain records; the services on real SQLite files and on
transcripts in Claude Code's real format (and on the real transcripts in ``shared/data`` when
they are there).
"""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from cortexmem.core.lessons import build, evolve, judge, render, requested, score
from cortexmem.core.lessons.facts import Action, language_of, program_of
from cortexmem.hosts.claude_code.pretool import action_fields
from cortexmem.hosts.claude_code.readonly import is_read_only, is_read_only_command
from cortexmem.model import Event, Lesson, Provenance, Trigger, format_time
from cortexmem.services import warn as warn_service

from conftest import SHARED_DATA

TRANSCRIPTS = SHARED_DATA / "transcripts"
NOW = datetime(2026, 3, 1, tzinfo=UTC)


def ago(days: float) -> str:
    return format_time(NOW - timedelta(days=days))


def event(kind: str, content: str, session: str = "s1", **payload: object) -> Event:
    return Event(kind=kind, content=content, payload=dict(payload),
                 provenance=Provenance(session_id=session), created_at=ago(1))  # fmt: skip


def fixed(
    session: str = "s1",
    files: tuple[str, ...] = ("src/cache.py",),
    said: str = "`uv run pytest -q` failed and passed",
    **extra: object,
) -> Event:
    """An ``error_resolved`` event as the structural layer writes it."""
    payload: dict[str, object] = {
        "call": "shell", "tool": "Bash", "target": "uv run pytest -q", "passed": "uv run pytest -q",
        "error": "1 failed, 26 passed in 1.48s", "files": list(files), "layer": "structural",
    }  # fmt: skip
    payload.update(extra)
    return event("error_resolved", said, session, **payload)


# ----------------------------------------------------------------- facts and layer 1


@pytest.mark.parametrize(
    ("command", "program"),
    [
        ("FOO=1 uv run pytest -q", "pytest"),
        ("python -m pytest tests", "pytest"),
        ("git stash pop", "git stash"),
        ("npm install --save x", "npm install"),
        ("cd app && make build", "make build"),
        ("npm run build -- --prod", "npm run build"),
        ("mise run lint 2>&1 | head", "mise run lint"),
        ("sudo docker compose up", "docker compose"),
        ("", None),
    ],
)
def test_the_program_a_command_runs(command: str, program: str | None):
    assert program_of(command) == program


def test_languages_come_from_suffixes_then_programs():
    assert language_of("src/app.ts") == "typescript"
    assert language_of("Startup.cs") == "csharp"
    assert language_of(command="cargo test") == "rust"
    assert language_of("README") is None


@pytest.mark.parametrize(
    ("command", "read_only"),
    [
        ("ls -la", True),
        ("git log --oneline | head -5", True),
        ("cat a.txt && grep -n x b.txt", True),
        ("git status; git diff HEAD", True),
        ("find . -name '*.py'", True),
        ("git push", False),
        ("ls && rm -rf build", False),
        ("cat a > b", False),
        ("echo hi 2>/dev/null", True),
        ("sed -i s/a/b/ f", False),
        ("find . -delete", False),
        ("echo $(rm x)", False),
        ("uv run pytest -q", False),
        ("npm install", False),
        ("", False),
        # PowerShell (a Windows session): its reading cmdlets, whatever their case
        ("Get-ChildItem -Recurse src | Select-String TODO", True),
        ("get-content README.md > $null", True),
        ("Remove-Item -Recurse build", False),
        ("Get-Content a.txt | Set-Content b.txt", False),
        ("Get-ChildItem *.log | Where-Object { Remove-Item $_.FullName }", False),
        ("Write-Output (Remove-Item -Recurse build)", False),
        ("sls deploy --stage prod", False),  # not PowerShell's alias: the Serverless Framework
        ("gc -m wip", False),  # a git alias in many shells
        # reading programs that write or run something with some flags or operands
        ("grep -i -w todo src", True),
        ("env", True),
        ("env FOO=1 rm -rf build", False),
        ("find . -name '*.o' -ok rm {} +", False),
        ("sort -o out.txt in.txt", False),
        ("sort in.txt | uniq -c", True),
        ("uniq in.txt out.txt", False),
        ("sed -i.bak s/a/b/ f", False),
        ("cat <(rm -rf build)", False),
        ("awk 'BEGIN{system(\"rm -rf build\")}'", False),
        # subcommands that read with some arguments and write with others
        ("git branch -a", True),
        ("git branch -D feature", False),
        ("git branch feature", False),
        ("git tag", True),
        ("git tag -l 'v1.*'", True),
        ("git tag -d v1", False),
        ("git remote -v", True),
        ("git remote add origin x", False),
        ("git worktree list", True),
        ("git worktree add ../x", False),
        ("git config --get user.name", True),
        ("git config user.name me", False),
        ("git diff --output=patch.diff", False),
        ("gh pr view 12", True),
        ("gh pr merge 12 --squash", False),
        ("gh repo delete me/x --yes", False),
        ("git commit -m x", False),
        ("pnpm install", False),
        # found by a second review: chains, redirections, bundled flags, options' values
        ("ls & rm -rf build", False),
        ("ls 2>&1 | head", True),
        ("echo hi >& out", False),
        ("echo hi >&out", False),
        ("sort -uo words.txt words.txt", False),
        ("fd -HX rm", False),
        ("date -us 2020-01-01", False),
        ("sed -n '1,20p' app.log", True),
        ("sed -n '/ERROR/w errors.txt' app.log", False),
        ("sed -n -Ei 's/a/b/p' x", False),
        ("git remote -v add up https://example.invalid/x", False),
        ("git reflog expire --expire=now --all", False),
        ("git reflog -n 5", True),
        ("go env -w GOPROXY=direct", False),
        ("go env GOPATH", True),
        ("history -w out", False),
        ("kubectl -n logs delete pod fluentd-0", False),
        ("git -C log reset --hard", False),
        ("git -C ../other log --oneline", True),
        ("git --no-pager diff", True),
        ("git grep -O vim pattern", False),
        ("ss -tK dst 10.0.0.1", False),
    ],
)
def test_layer_1_skips_a_shell_command_only_when_every_part_is_read_only(
    command: str, read_only: bool
):
    assert is_read_only_command(command) is read_only


def test_layer_1_read_only_tools_and_mutating_ones():
    assert is_read_only("Read", {"file_path": "a.py"})
    assert is_read_only("Grep", {"pattern": "x"})
    assert is_read_only("Bash", {"command": "git log"})
    assert not is_read_only("Edit", {"file_path": "a.py"})
    assert not is_read_only("Bash", {"command": "git commit -m x"})
    assert not is_read_only("mcp__db__query", {})


# ----------------------------------------------------------------- where lessons come from


def test_a_failure_and_its_fix_is_a_lesson_only_when_files_changed_between_the_runs():
    cause = "the cache key ignored the version"
    (lesson,) = build.lessons_from_events([fixed(cause=cause)])
    assert lesson.kind == "failure"
    assert lesson.text.startswith("When `uv run pytest -q` fails with “1 failed")
    assert "src/cache.py" in lesson.text and cause in lesson.text
    assert lesson.trigger.program == "pytest" and lesson.trigger.language == "python"
    assert lesson.importance == build.IMPORTANCE["fix_with_cause"]
    assert build.lessons_from_events([fixed(files=())]) == []  # passed when run again


def test_an_edit_that_only_succeeded_when_retried_teaches_nothing():
    retried = event("error_resolved", "Edit a.py failed", call="edit", tool="Edit",
                    target="a.py", error="String to replace not found", files=["a.py"])  # fmt: skip
    assert build.lessons_from_events([retried]) == []


def test_a_retry_loop_is_a_lesson_from_three_failures():
    failed = [
        event(
            "error",
            "`make deploy` failed: timeout",
            call="shell",
            tool="Bash",
            target="make deploy",
        )
        for _ in range(build.RETRY_LOOP)
    ]
    assert build.lessons_from_events(failed[:-1]) == []
    (lesson,) = build.lessons_from_events(failed)
    assert "3 times in a row" in lesson.text and lesson.trigger.program == "make deploy"
    # in a row: a run that went through in between is two runs, not a loop
    passed = event("error_resolved", "`make deploy` failed (timeout) and passed when run again",
                   call="shell", tool="Bash", target="make deploy")  # fmt: skip
    assert build.lessons_from_events([*failed[:2], passed, failed[2]]) == []
    # an edit retried unchanged is a lesson, but not one that warns before the next edit
    edits = [event("error", "Edit src/app.py failed: String to replace not found in file.",
                   call="edit", tool="Edit", target="src/app.py")] * 3  # fmt: skip
    (loop,) = build.lessons_from_events(edits)
    assert "a retry loop" in (score.gate(loop, Action("Edit", "edit", path="src/app.py")) or "")


def test_a_refusal_is_a_lesson_only_with_the_reason_the_person_gave():
    refused = event("refused", "The person refused `git stash`", call="shell", tool="Bash")
    reason = event("prompt", "do not stash anything, read the files you need", speaker="user")
    assert build.lessons_from_events([refused]) == []
    lessons = build.lessons_from_events([refused, reason])
    (lesson,) = [x for x in lessons if x.source == "structural"]
    assert lesson.kind == "correction" and lesson.trigger.program == "git stash"
    assert "do not stash anything" in lesson.text


def test_corrections_and_flagged_gotchas():
    said = event("preference", "don't use the global pip, use uv", speaker="user", layer="keyword")
    liked = event("preference", "always nice to see tests", speaker="user", layer="keyword")
    gotcha = event("gotcha", "vite.config.ts must list the worker entry", layer="tag")
    heard = event("gotcha", "watch out for that", layer="keyword")
    lessons = build.lessons_from_events([said, liked, gotcha, heard])
    kinds = sorted((x.kind, x.source) for x in lessons)
    assert kinds == [("correction", "keyword"), ("correction", "keyword"), ("failure", "tag")]
    (tagged,) = [x for x in lessons if x.source == "tag"]
    assert tagged.trigger.file_kinds == (".ts",) and tagged.trigger.language == "typescript"


def test_the_same_lesson_twice_is_one_lesson_confirmed_once_per_new_session():
    first = build.lessons_from_events([fixed("s1")])[0]
    again = build.lessons_from_events([fixed("s1")])[0]
    assert build.confirm(first, again) is None  # the same events: nothing new
    more = build.lessons_from_events([fixed("s1", said="failed again, fixed again")])[0]
    merged = build.confirm(first, more)
    assert merged is not None and merged.confirmed == 1  # one session confirms nothing alone
    other = build.lessons_from_events([fixed("s2")])[0]
    assert other.key == first.key
    merged = build.confirm(first, other)
    assert merged is not None and merged.confirmed == 2 and merged.sessions == ("s1", "s2")


# ----------------------------------------------------------------- scores and gates


def lesson(**kw: object) -> Lesson:
    base: dict[str, object] = {
        "text": "When `uv run pytest -q` fails with “1 failed”, look at tests/test_cache.py",
        "trigger": Trigger(program="pytest", language="python", file_kinds=(".py",)),
        "importance": 5, "created_at": ago(0), "updated_at": ago(0), "last_confirmed_at": ago(0),
    }  # fmt: skip
    base.update(kw)
    return Lesson(**base)  # type: ignore[arg-type]


def test_the_recall_re_rank_is_similarity_times_importance_times_recency():
    fresh = lesson(importance=10)
    year_old = lesson(importance=0, last_confirmed_at=ago(365))
    assert score.recall_score(0.8, fresh, NOW) == pytest.approx(0.8 * 2.0)
    assert score.recall_score(0.8, year_old, NOW) == pytest.approx(0.8 * math.exp(-1))
    superseded = lesson(importance=10, status="superseded")
    assert score.recall_score(0.8, superseded, NOW) < score.recall_score(0.8, fresh, NOW)


def test_confidence_follows_the_judge_and_ages_toward_neutral():
    assert score.confidence(lesson(), NOW) == 0.5
    trusted = lesson(followed=8)
    assert score.confidence(trusted, NOW) == pytest.approx(0.9)
    old = lesson(followed=8, last_confirmed_at=ago(900), updated_at=ago(900))
    assert 0.5 < score.confidence(old, NOW) < 0.51
    assert score.confidence(lesson(ignored=8), NOW) == pytest.approx(0.1)


def test_hit_frequency_grows_slowly_with_confirmations():
    assert score.frequency(lesson()) == 1.0
    assert 1.0 < score.frequency(lesson(confirmed=3)) < score.frequency(lesson(confirmed=9)) < 2


PYTEST = Action("Bash", "shell", command="uv run pytest -q tests/test_cache.py")


@pytest.mark.parametrize(
    ("changes", "action", "stopped"),
    [
        ({}, PYTEST, None),
        ({"status": "archived"}, PYTEST, "status archived"),
        ({"kind": "victory"}, PYTEST, "a victory does not warn"),
        ({}, Action("Edit", "edit", path="src/app.ts"), "language gate"),
        ({"trigger": Trigger(language="typescript"), "text": "Keep barrel exports sorted"},
         Action("Edit", "edit", path="a.tsx"), None),
        ({"trigger": Trigger(language="csharp"), "text": "Scope the DbContext"},
         Action("Edit", "edit", path="Startup.cs"), None),
        ({"trigger": Trigger(program="pytest", command="pytest tests/test_cache.py")},
         Action("Bash", "shell", command="pytest tests/test_users.py"), "other files"),
        ({"trigger": Trigger(program="pytest", command="pytest tests/test_cache.py")},
         Action("Bash", "shell", command="pytest -q"), "other files"),
        ({"trigger": Trigger(program="pytest", command="pytest tests/test_cache.py")},
         Action("Bash", "shell", command="pytest -q tests/test_cache.py::test_key"), None),
        ({"trigger": Trigger(program="mise run lint"), "text": "When lint fails, run fmt"},
         Action("Bash", "shell", command="mise run fmt && mise run lint 2>&1 | head"), None),
        ({"trigger": Trigger(program="mise run lint"), "text": "When lint fails, run fmt"},
         Action("Bash", "shell", command="mise run fmt"), "about `mise run lint`"),
        ({"trigger": Trigger(tool="Edit", file_kinds=(".go",)),
          "text": "Do not run Edit cmd/reset.go unasked"},
         Action("Bash", "shell", command="go test ./..."), "not this command"),
        ({"trigger": Trigger(tool="Edit", file_kinds=(".go",)),
          "text": "Do not run Edit cmd/reset.go unasked"},
         Action("Edit", "edit", path="/repo/cmd/status.go"), "about other files"),
        ({"trigger": Trigger(tool="Edit", file_kinds=(".go",)),
          "text": "Do not run Edit cmd/reset.go unasked"},
         Action("Edit", "edit", path="/repo/cmd/reset.go"), None),
        ({"lang_exclude": ("python",)}, PYTEST, "excluded for python"),
        ({"project_exclude": ("shop",)}, PYTEST, "excluded for this project"),
        ({}, Action("Bash", "shell", command="uv run mypy"), "about `pytest`"),
        ({"trigger": Trigger(file_kinds=(".sql",))}, Action("Edit", "edit", path="a.md"),
         "about .sql files"),
        ({"noise": (("wrong_task", 3),)}, PYTEST, "noise"),
        ({"text": "When `pytest` fails with “1 failed”, the fix was a change to src/cache.py"},
         Action("Bash", "shell", command="uv run pytest -q"), "files its fix changed"),
        ({"text": "When `pytest` fails with “1 failed”, the fix was a change to src/cache.py"},
         Action("Edit", "edit", path="/repo/src/cache.py"), None),
        ({"trigger": Trigger(framework="django")},
         Action("Edit", "edit", path="app.py", text="from flask import Flask"), "framework gate"),
    ],
)  # fmt: skip
def test_the_gates(changes: dict, action: Action, stopped: str | None):
    found = score.gate(lesson(**changes), action, project="shop")
    assert (found is None) if stopped is None else (found is not None and stopped in found)


def test_an_edit_of_a_file_a_fix_changed_warns_once_its_failure_is_back_in_the_session():
    fixed_in_cache = lesson(
        trigger=Trigger(program="mise run lint", command="mise run fmt && mise run lint"),
        text="When `mise run fmt && mise run lint` fails with “dupl”, look at src/cache.go",
    )
    edit = Action("Edit", "edit", path="/repo/src/cache.go")
    # The session has not run lint, or ran it fine: the file alone is a coincidence.
    assert "has not failed" in (score.gate(fixed_in_cache, edit, failed=frozenset()) or "")
    assert score.gate(fixed_in_cache, edit, failed=frozenset({"pytest"})) is not None
    # Lint failed (the spool keeps a chain's first form: any program of the trigger's chain).
    assert score.gate(fixed_in_cache, edit, failed=frozenset({"mise run lint"})) is None
    assert score.gate(fixed_in_cache, edit, failed=frozenset({"mise run fmt"})) is None
    # Not known (``cortex warn --dry-run`` outside a session): as before, the file decides.
    assert score.gate(fixed_in_cache, edit) is None


RESET_TESTS = lesson(
    trigger=Trigger(program="mise run test", command="mise run test -- -run TestResetCmd",
                    domain="testing"),
    text="When `mise run test -- -run TestResetCmd` fails with “[test] ERROR task failed”, "
         "look at cmd/reset_test.go: last time the tests built the old branch names",
)  # fmt: skip
LINT = lesson(
    trigger=Trigger(program="mise run lint", command="mise run fmt && mise run lint",
                    domain="testing"),
    text="When `mise run fmt && mise run lint` fails with “dupl”, look at cmd/reset_test.go",
)  # fmt: skip
PYTEST_LOOP = lesson(
    trigger=Trigger(program="pytest", command="uv run pytest test/test_cache.py"),
    text=f"When `uv run pytest test/test_cache.py` fails with “file not found”, "
         f"{build.RETRY_ADVICE}: it failed 5 times in a row last time",
)  # fmt: skip


@pytest.mark.parametrize(
    ("prompt", "called"),
    [
        ("fix tests", [RESET_TESTS]),  # the request of a session that opens on a red suite
        ("fix mise test", [RESET_TESTS]),
        ("The tests are failing again, can you look?", [RESET_TESTS]),
        ("the linter is unhappy", [LINT]),
        ("Please fix these lint errors", [LINT]),
        # a failure asked about, not a check to repair now: recall's business
        ("Why did the system-message browser test fail after the refactor?", []),
        ("run the tests", []),
        ("write a test for the cache", []),
        # a plan pasted below the request says "fix" and "test" at random
        ("Implement the following plan:\n\n1. fix the tests of the parser", []),
        # a pasted log naming another test: that lesson says nothing about it
        ("A couple of tests are unhappy now:\n___ TestRewindCmd ___\nFAIL", []),
        ("A couple of tests are unhappy now:\n___ TestResetCmd ___\nFAIL", [RESET_TESTS]),
    ],
)
def test_a_request_to_fix_a_check_calls_up_what_fixed_it_last_time(prompt: str, called: list):
    assert requested.called_up(prompt, [RESET_TESTS, LINT, PYTEST_LOOP]) == called


def test_a_check_is_named_by_what_it_is_or_by_the_program_that_runs_it():
    pytest_fix = lesson()  # `uv run pytest -q` fails …, look at tests/test_cache.py
    eslint_fix = lesson(trigger=Trigger(program="eslint"), text="When `npx eslint .` fails …")
    assert requested.check_words(pytest_fix) == {"pytest", "test"}
    assert requested.check_words(RESET_TESTS) == {"test"}
    assert requested.called_up("fix the failing tests", [pytest_fix, eslint_fix]) == [pytest_fix]
    assert requested.called_up("the linter fails on CI", [pytest_fix, eslint_fix]) == [eslint_fix]
    # the store is looked up by the request's words and the programs of the check it names
    assert (
        requested.lookup_words("fix the tests")
        == " ".join(requested.CHECK_PROGRAMS["test"]) + " the tests"
    )
    # a program that runs two checks meets both
    tsc = lesson(trigger=Trigger(program="tsc"), text="When `npx tsc` fails …")
    assert requested.check_words(tsc) == {"tsc", "type", "build"}
    assert requested.called_up("fix the type errors, they fail CI", [tsc]) == [tsc]
    assert requested.lookup_words("how do the tests run?") == ""


def test_only_active_fixes_not_excluded_here_are_called_up():
    assert requested.called_up("fix the tests", [PYTEST_LOOP]) == []  # a retry loop: no fix
    archived = lesson(**{**_fields(RESET_TESTS), "status": "archived"})
    assert requested.called_up("fix the tests", [archived]) == []
    elsewhere = lesson(**{**_fields(RESET_TESTS), "project_exclude": ("shop",)})
    assert requested.called_up("fix the tests", [elsewhere], project="shop") == []
    assert requested.called_up("fix the tests", [elsewhere], project="other") == [elsewhere]
    often = lesson(**{**_fields(RESET_TESTS), "confirmed": 3, "text": "often"})
    assert requested.called_up("fix the tests", [RESET_TESTS, often], limit=1) == [often]


def _fields(x: Lesson) -> dict:
    return {f: getattr(x, f) for f in ("text", "trigger", "kind")}


def test_a_retry_loop_warns_about_running_it_again_not_about_the_first_run():
    loop = replace(PYTEST_LOOP)
    run = Action("Bash", "shell", command="uv run pytest test/test_cache.py")
    assert "has not failed" in (score.gate(loop, run, failed=frozenset()) or "")
    assert score.gate(loop, run, failed=frozenset({"pytest"})) is None
    assert score.gate(loop, run) is None  # not known (``cortex warn --dry-run``): it may warn


def test_the_warning_score_weighs_every_factor():
    base = score.warn_score(lesson(), 0.9, PYTEST, NOW)
    assert base > score.WARN_THRESHOLD
    assert score.warn_score(lesson(), 0.2, PYTEST, NOW) == 0.0  # below the similarity floor
    assert score.warn_score(lesson(importance=10), 0.9, PYTEST, NOW) > base
    assert score.warn_score(lesson(last_confirmed_at=ago(400)), 0.9, PYTEST, NOW) < base
    assert score.warn_score(lesson(status="superseded"), 0.9, PYTEST, NOW) < base
    assert score.warn_score(lesson(noise=(("wrong_task", 1),)), 0.9, PYTEST, NOW) < base
    other_domain = lesson(trigger=Trigger(program="pytest", domain="auth"))
    cache = Action("Bash", "shell", command="pytest tests/test_cache_db.py")
    assert score.warn_score(other_domain, 0.9, cache, NOW) < score.warn_score(
        lesson(), 0.9, cache, NOW
    )


def test_dedup_and_the_budget_of_eight_a_session():
    scored = [
        score.Scored(lesson(text=f"lesson {i}"), 0.9, 1.0 - i / 100, "score") for i in range(4)
    ]
    chosen, held = score.select(scored, shown=set(), shown_count=0)
    assert len(chosen) == score.PER_CALL
    chosen, held = score.select(scored, shown={scored[0].lesson.id}, shown_count=1)
    assert scored[0].lesson.id not in {s.lesson.id for s in chosen}
    assert "already shown" in held[0].why
    chosen, held = score.select(scored, shown=set(), shown_count=score.BUDGET - 1)
    assert len(chosen) == 1
    chosen, _ = score.select(scored, shown=set(), shown_count=score.BUDGET)
    assert chosen == []


def test_the_warning_names_the_lesson_and_its_tier():
    shown = lesson(id="ls-01m859xg8p-a1b2c3d4", tier="T2")
    line = render.warning_line(shown)
    assert line.startswith("⚠ Last time: when `uv run pytest -q` fails")
    assert line.endswith("[lesson a1b2c3d4 · T2]")


def test_a_request_is_told_where_the_fix_was_not_a_cause_that_may_not_be_this_times():
    line = render.request_line(replace(RESET_TESTS, id="ls-01m859xg8p-a1b2c3d4", tier="T2"))
    assert line == (
        "⚠ Last time `mise run test -- -run TestResetCmd` failed with “[test] ERROR task "
        "failed”, the fix was in cmd/reset_test.go; `cortex lessons show a1b2c3d4` for the "
        "cause [lesson a1b2c3d4 · T2]"
    )
    again = replace(RESET_TESTS, text=RESET_TESTS.text.split(": last time")[0]
                    + ": fixed there in 3 sessions, for different causes (last: x)")  # fmt: skip
    assert "(in 3 sessions, each time for another cause)" in render.request_line(again)
    # words a model or a person wrote say what they say
    worded = replace(RESET_TESTS, text="Run the reset tests alone before the suite.")
    assert render.request_line(worded) == render.warning_line(worded)


def test_the_model_answer_is_read_or_fails_open():
    assert render.relevant_numbers("1", 3) == {1}
    assert render.relevant_numbers("1, 3", 3) == {1, 3}
    assert render.relevant_numbers("0", 3) == set()
    assert render.relevant_numbers("none of them", 3) is None
    question = render.relevance_question(PYTEST, [lesson(), lesson(text="x")])
    assert question.startswith("ACTION: Bash: uv run pytest") and "\n2. x\n" in question
    assert len(question.split()) < 200


# ----------------------------------------------------------------- the judge


def real_action(tool: str, tool_input: dict) -> Action:
    return warn_service.action_of(action_fields(tool, tool_input))


def test_the_judge_on_real_tool_call_shapes():
    pytest_call = real_action("Bash", {"command": "uv run pytest -q", "description": "Run tests"})
    failure = lesson()
    assert judge.judge(failure, pytest_call, ok=True).verdict == "FOLLOWED"
    again = judge.judge(failure, pytest_call, ok=False, errors=["1 failed, 3 passed in 0.2s"])
    assert again.verdict == "IGNORED"
    assert judge.judge(failure, pytest_call, ok=False, errors=["SyntaxError"]).verdict == "UNCLEAR"
    assert judge.judge(failure, pytest_call, ok=None).verdict == "UNCLEAR"
    edit = real_action("Edit", {"file_path": "/repo/src/app.ts", "old_string": "a",
                                "new_string": "b"})  # fmt: skip
    assert judge.judge(failure, edit, ok=True) == judge.Verdict("IRRELEVANT", "wrong_language")
    stash = lesson(kind="correction", text="Do not run `git stash` unasked",
                   trigger=Trigger(program="git stash"))  # fmt: skip
    assert judge.judge(stash, real_action("Bash", {"command": "git stash"}), ok=True).verdict == (
        "IGNORED"
    )
    diff = real_action("Bash", {"command": "git diff > /tmp/x.patch"})
    assert judge.judge(stash, diff, ok=True).verdict == "FOLLOWED"


def test_action_fields_from_real_payloads():
    edits = [{"old_string": "x", "new_string": "y = 1"}]
    multi = action_fields("MultiEdit", {"file_path": "/r/a.py", "edits": edits})
    assert multi == {"tool": "MultiEdit", "kind": "edit", "command": "", "path": "/r/a.py",
                     "text": "y = 1"}  # fmt: skip
    write = action_fields("Write", {"file_path": "/r/b.ts", "content": "export {}"})
    assert write["kind"] == "write" and write["text"] == "export {}"


# ----------------------------------------------------------------- evolution


def test_shown_once_a_raw_lesson_is_kept():
    assert evolve.after_shown(lesson()).tier == "T2"
    assert evolve.after_shown(lesson(tier="T1")).tier == "T1"


def test_three_follows_promote_to_behavioural():
    x = lesson(tier="T2")
    for _ in range(evolve.PROMOTE_AFTER - 1):
        x, _ = evolve.verdict_applied(x, "FOLLOWED")
        assert x.tier == "T2"
    x, note = evolve.verdict_applied(x, "FOLLOWED")
    assert x.tier == "T1" and "promoted" in note


def test_a_persons_feedback_counts_twice():
    x, _ = evolve.verdict_applied(lesson(tier="T2"), "FOLLOWED", weight=2)
    x, _ = evolve.verdict_applied(x, "FOLLOWED", weight=2)
    assert x.tier == "T1"


def test_three_ignored_archive_a_lesson_and_demote_a_behavioural_one():
    x = lesson(tier="T2")
    for _ in range(evolve.DEMOTE_AFTER):
        x, note = evolve.verdict_applied(x, "IGNORED")
    assert x.status == "archived" and "archived" in note
    y = lesson(tier="T1")
    for _ in range(evolve.DEMOTE_AFTER):
        y, _ = evolve.verdict_applied(y, "IRRELEVANT", "wrong_task")
    assert y.tier == "T2" and y.status == "active" and y.noise_count("wrong_task") == 3


def test_noise_reasons_narrow_the_scope():
    x, _ = evolve.verdict_applied(lesson(), "IRRELEVANT", "wrong_language", language="go")
    assert x.lang_exclude == ("go",) and x.status == "active"
    x, _ = evolve.verdict_applied(x, "IRRELEVANT", "wrong_repo", project="shop")
    assert x.project_exclude == ("shop",)
    y = lesson()
    for _ in range(evolve.DEMOTE_AFTER):
        y, note = evolve.verdict_applied(y, "IRRELEVANT", "stale_rule")
    assert y.status == "superseded" and "stale" in note


def test_a_cluster_of_behavioural_lessons_drafts_a_pending_principle():
    group = [
        lesson(
            tier="T1",
            text=f"When `uv run pytest -q` fails on the cache of {name}, clear the cache key",
        )
        for name in ("users", "orders", "items")
    ]
    unrelated = lesson(tier="T1", text="Do not force push to main", trigger=Trigger())
    (cluster,) = evolve.clusters([*group, unrelated])
    assert {x.id for x in cluster} == {x.id for x in group}
    principle = evolve.draft_principle(cluster)
    assert principle.tier == "T0" and principle.status == "pending"
    assert principle.trigger.program == "pytest" and principle.confirmed == 3
    retired = evolve.retired_by_principle(group[0], principle.id)
    assert retired.status == "superseded" and retired.superseded_by == principle.id


def test_a_newer_confirmed_contradiction_supersedes_the_older_lesson():
    older = lesson(kind="correction", text="Use the singleton HttpClient for the api client",
                   created_at=ago(60), trigger=Trigger())  # fmt: skip
    newer = lesson(kind="correction", text="Do not use the singleton HttpClient for the api client",
                   confirmed=2, trigger=Trigger())  # fmt: skip
    assert evolve.contradicts(newer, older)
    assert not evolve.contradicts(newer.with_changes(confirmed=1), older)
    assert not evolve.contradicts(older, newer)
    superseded, edge = evolve.supersede(older, newer)
    assert superseded.status == "superseded" and superseded.superseded_by == newer.id
    assert edge == "supersedes"


def test_the_rules_file_puts_principles_first_within_its_budget():
    rules = render.rules_file([
        lesson(tier="T1", text="behavioural one", importance=9),
        lesson(tier="T0", text="a principle"),
        lesson(tier="T2", text="not always loaded"),
        *[lesson(tier="T1", text="long " * 200) for _ in range(10)],
    ])  # fmt: skip
    assert rules.index("a principle") < rules.index("behavioural one")
    assert "not always loaded" not in rules
    from cortexmem.core.tokens import estimate_tokens

    assert estimate_tokens(rules) <= render.RULES_BUDGET
    assert render.rules_file([lesson()]) == ""


@pytest.mark.parametrize(
    ("draft", "made_up"),
    [
        ("When `uv run pytest -q` fails on src/cache.py, bump the key's version.", []),
        (
            "When the tests fail, run `make test` in tests/unit/x.py.",
            ["make test", "tests/unit/x.py"],
        ),
        ("When `UV RUN  pytest -q` fails, read the error and/or the log.", []),
    ],
)
def test_a_drafted_lesson_may_reword_but_never_name_a_command_its_evidence_does_not(
    draft: str, made_up: list[str]
):
    evidence = "`uv run pytest -q` failed: AssertionError in src/cache.py (the key ignores it)"
    assert build.invented(draft, evidence) == made_up


def test_a_fix_learned_again_with_another_cause_keeps_the_place_not_one_cause():
    def fixed(session: str, cause: str) -> Lesson:
        head = "When `mise run test` fails with “task failed”, look at reset_test.go"
        return Lesson(text=f"{head}: last time {cause}", key="k", sessions=(session,),
                      events=(f"e-{session}",))  # fmt: skip

    first = fixed("s1", "Reset() wrote to os.Stderr")
    again = build.confirm(first, fixed("s2", "the branch naming changed"))
    assert again is not None and again.text.endswith(
        "look at reset_test.go: fixed there in 2 sessions, for different causes "
        "(last: the branch naming changed)"
    )
    third = build.confirm(again, fixed("s3", "errors were plain"))
    assert (
        third is not None
        and "in 3 sessions" in third.text
        and third.text.endswith("(last: errors were plain)")
    )
    same_cause = build.confirm(first, fixed("s2", "Reset() wrote to os.Stderr"))
    assert same_cause is not None and same_cause.text == first.text  # one cause, twice: as is
    worded = first.with_changes(source="model", text="When the reset tests fail, read the test.")
    assert build.confirm(worded, fixed("s2", "other")).text == worded.text  # a model's words stay
