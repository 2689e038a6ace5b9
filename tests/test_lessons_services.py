"""Lessons end to end on real SQLite files: learned after a capture of a transcript in Claude
Code's format (and of the real transcripts), warned about before a tool call through the hook,
judged at Stop, fed back, evolved, written to the rules file, and the model filter failing open
against a slow local server that speaks a provider's real API."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cortexmem.ai.errors import ProviderResponseError
from cortexmem.core.lessons.facts import Action
from cortexmem.hosts.claude_code.reader import READER
from cortexmem.hosts.claude_code.rules import LESSONS_FILE, lessons_writer
from cortexmem.model import Lesson, Observation, Trigger, utc_now
from cortexmem.services import judge as judge_service
from cortexmem.services import lessons as lesson_service
from cortexmem.services import warn as warn_service
from cortexmem.services.context import Context
from cortexmem.services.ingest import ingest
from cortexmem.services.session import after_capture
from model_servers import ProviderServer, Reply

from conftest import SHARED_DATA

TRANSCRIPTS = SHARED_DATA / "transcripts"
HOOK = [sys.executable, "-c", "from cortexmem.hosts.claude_code.hook import run; run()"]
SESSION = "5e231473-1e70-45c5-9c18-6510ac844c99"


def record(i: int, role: str, content: list, cwd: Path, session: str = SESSION, **extra) -> str:
    return json.dumps(
        {"type": role, "uuid": f"u-{session[:4]}-{i}", "sessionId": session, "cwd": str(cwd),
         "gitBranch": "main", "version": "2.1.29",
         "timestamp": f"2026-02-02T10:{i // 60 % 60:02d}:{i % 60:02d}.000Z",
         "message": {"role": role, "content": content}, **extra}
    )  # fmt: skip


def use(i: int, name: str, tool_input: dict, cwd: Path, session: str = SESSION) -> str:
    block = {"type": "tool_use", "id": f"toolu_01{session[:4]}{i:04d}", "name": name,
             "input": tool_input}  # fmt: skip
    return record(i, "assistant", [block], cwd, session)


def result(i: int, call: int, text: str, cwd: Path, error: bool = False, session=SESSION) -> str:
    block = {"type": "tool_result", "tool_use_id": f"toolu_01{session[:4]}{call:04d}",
             "content": text, "is_error": error}  # fmt: skip
    return record(i, "user", [block], cwd, session)


def say(i: int, role: str, text: str, cwd: Path, session: str = SESSION) -> str:
    return record(i, role, [{"type": "text", "text": text}], cwd, session)


REFUSAL = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it "
    "was a file edit, the new_string was NOT written to the file). STOP what you are doing and "
    "wait for the user to tell you how to proceed."
)


def session_lines(repo: Path, session: str = SESSION) -> list[str]:
    """A failing test run, the diagnosis, the fix, the passing run, a refused stash and why."""
    return [
        say(1, "user", "fix the cache tests please", repo, session),
        use(
            2,
            "Bash",
            {"command": "uv run pytest -q", "description": "Run the tests"},
            repo,
            session,
        ),
        result(
            3,
            2,
            "FAILED tests/test_cache.py::test_key - AssertionError\n1 failed, 3 passed in 0.21s",
            repo,
            error=True,
            session=session,
        ),
        say(4, "assistant", "The issue is that the cache key ignores the version.", repo, session),
        use(
            5,
            "Edit",
            {
                "file_path": str(repo / "src/cache.py"),
                "old_string": "key = name",
                "new_string": "key = (name, version)",
            },
            repo,
            session,
        ),
        result(6, 5, "The file src/cache.py has been updated.", repo, session=session),
        use(7, "Bash", {"command": "uv run pytest -q"}, repo, session),
        result(8, 7, "4 passed in 0.20s", repo, session=session),
        use(9, "Bash", {"command": "git stash"}, repo, session),
        result(10, 9, REFUSAL, repo, error=True, session=session),
        say(11, "user", "do not stash anything, read the files you need", repo, session),
    ]


def capture(ctx: Context, repo: Path, lines: list[str], session: str = SESSION) -> Path:
    transcript = repo.parent / f"{session}.jsonl"
    transcript.write_text("".join(x + "\n" for x in lines))
    after_capture(ctx, label="Stop", transcript=transcript, session_id=session, reader=READER,
                  deadline=time.monotonic() + 30, log=lambda _: None, full=True,
                  write_lessons=lessons_writer(ctx.paths))  # fmt: skip
    return transcript


def test_lessons_are_learned_after_a_capture_and_learning_again_changes_nothing(
    ctx: Context, repo: Path
):
    capture(ctx, repo, session_lines(repo))
    store = ctx.require("project")
    lessons = {x.kind: x for x in store.iter_lessons()}
    fix, refusal = lessons["failure"], lessons["correction"]
    assert fix.trigger.program == "pytest" and "src/cache.py" in fix.text
    assert "cache key ignores the version" in fix.text
    assert refusal.trigger.program == "git stash" and "do not stash anything" in refusal.text
    assert store.search_lessons("stash", 5)[0][1].id == refusal.id  # searchable at once
    before = list(store.iter_lessons(()))
    assert not lesson_service.learn_session(ctx, SESSION).added
    assert list(store.iter_lessons(())) == before
    # the same lesson learned in another session: the same lesson, confirmed
    capture(ctx, repo, session_lines(repo, "second-session"), "second-session")
    again = store.get_lesson(fix.id)
    assert again is not None and again.confirmed == 2 and again.sessions[1] == "second-session"
    assert [h[1] for h in store.lesson_history(fix.id)][:2] == ["learned", "confirmed"]


def test_lessons_from_the_real_transcripts(tmp_path: Path, repo: Path):
    if not TRANSCRIPTS.is_dir():
        pytest.skip(f"the real transcripts are not here ({TRANSCRIPTS})")
    result = ingest([TRANSCRIPTS / "entireio-cli", TRANSCRIPTS / "claude-code-log-real_projects"],
                    reader=READER, into=repo)  # fmt: skip
    with Context.for_cwd(repo) as ctx:
        learned = list(ctx.require("project").iter_lessons(()))  # ingest learns as Stop does
        assert result.projects[str(ctx.paths.root)]["lessons_added"] == len(learned) >= 10
        assert {"failure", "correction"} <= {x.kind for x in learned}
        stash = [x for x in learned if x.trigger.program == "git stash"]
        assert stash and "do not stash" in stash[0].text
        again = lesson_service.learn_all(ctx)  # the backfill finds nothing more: idempotent
        assert not again.added and not again.confirmed
        # a fix made in the same place in three sessions, each time for another reason
        (recurring,) = [x for x in learned if len(x.sessions) == 3]
        assert "reset_test.go: fixed there in 3 sessions, for different causes" in recurring.text
        # it warns, but as a line of CLAUDE.md it would only say where failures keep being fixed
        from cortexmem.core.suggestions import worth_keeping

        assert not worth_keeping(recurring)
        # JSSoundRecorder: `npm install` refused with "use pnpm" typed into the refusal
        (pnpm,) = [x for x in learned if x.trigger.program == "npm install"]
        assert (
            pnpm.text
            == "Do not run `npm install` unasked: the person refused it and said “use pnpm”"
        )
        preferences = [m.content for m in ctx.require("project").iter_memories()
                       if "event:preference" in m.tags]  # fmt: skip
        assert "“use pnpm”, the person said refusing `npm install`" in preferences


def route(cortex_home: Path, use: str, url: str, timeout: int = 10) -> None:
    """ai.yaml routing ``use`` to the local server that speaks Ollama's API."""
    cortex_home.mkdir(parents=True, exist_ok=True)
    (cortex_home / "ai.yaml").write_text(
        f"models:\n  {use}:\n    provider: ollama\n    model: qwen2.5\n"
        f"    base_url: {url}\n    timeout: {timeout}\n"
    )


def stored(ctx: Context, n: int, **kw) -> list[Lesson]:
    store = ctx.writable("project")
    made = []
    for i in range(n):
        x = Lesson(text=f"When `uv run pytest -q` fails in module{i}, look at src/module{i}.py",
                   trigger=Trigger(program="pytest", language="python"), importance=8,
                   key=f"k{i}", **kw)  # fmt: skip
        made.append(store.add_lesson(x)[0])
    return made


def test_warnings_respect_the_session_dedup_and_the_budget(ctx: Context):
    stored(ctx, 12)
    shown: list[str] = []
    for call in range(10):
        action = Action("Bash", "shell", command=f"uv run pytest -q src/module{call}.py")
        found = warn_service.warn(ctx, action, session_id="s1", tool_use_id=f"t{call}")
        shown += [x.id for x in found.shown]
    assert len(shown) == 8 and len(set(shown)) == 8
    store = ctx.require("project")
    assert len(store.warnings_of_session("s1")) == 8
    assert store.get_lesson(shown[0]).tier == "T2"  # kept past the raw tier once shown
    again = Action("Bash", "shell", command="uv run pytest -q src/module1.py")
    other = warn_service.warn(ctx, again, session_id="s2")
    assert other.shown  # another session has its own budget
    read_only_program = Action("Bash", "shell", command="uv run mypy src")
    assert not warn_service.warn(ctx, read_only_program, session_id="s3").shown


def test_the_hook_warns_before_a_mutating_call_and_skips_read_only_ones(ctx: Context, repo: Path):
    stored(ctx, 1)
    env = {"CLAUDE_PROJECT_DIR": str(repo), "CORTEX_SERVER_IDLE": "1"}

    def pre(tool: str, tool_input: dict, call: str) -> subprocess.CompletedProcess:
        payload = {"session_id": "hook-s", "hook_event_name": "PreToolUse", "cwd": str(repo),
                   "tool_name": tool, "tool_input": tool_input, "tool_use_id": call,
                   "transcript_path": str(repo / "t.jsonl")}  # fmt: skip
        return subprocess.run([*HOOK, "PreToolUse"], input=json.dumps(payload).encode(),
                              cwd=repo, capture_output=True, timeout=60,
                              env={**__import__("os").environ, **env})  # fmt: skip

    skipped = pre("Bash", {"command": "git log --oneline | head"}, "toolu_1")
    assert skipped.returncode == 0 and skipped.stdout == b""
    warned = pre("Bash", {"command": "uv run pytest -q src/module0.py"}, "toolu_2")
    assert warned.returncode == 0
    answer = json.loads(warned.stdout)["hookSpecificOutput"]
    assert answer["hookEventName"] == "PreToolUse"
    assert answer["additionalContext"].startswith("⚠ Last time: when `uv run pytest -q` fails")
    assert "[lesson " in answer["additionalContext"]
    again = pre("Bash", {"command": "uv run pytest -q src/module0.py"}, "toolu_3")
    assert again.returncode == 0 and again.stdout == b""  # never twice in a session


def test_an_edit_warns_about_its_files_lesson_only_after_that_check_failed_in_the_session(
    ctx: Context, repo: Path
):
    ctx.writable("project").add_lesson(Lesson(
        text="When `mise run test -- -run TestResetCmd` fails with “[test] ERROR task failed”, "
             "look at cmd/reset_test.go: last time the tests built the old branch names",
        trigger=Trigger(program="mise run test", command="mise run test -- -run TestResetCmd",
                        language="go"),
        importance=8, key="reset-tests",
    ))  # fmt: skip
    env = {**__import__("os").environ, "CLAUDE_PROJECT_DIR": str(repo), "CORTEX_SERVER_IDLE": "1"}

    def hook(event: str, session: str, tool: str, tool_input: dict, call: str) -> bytes:
        payload = {"session_id": session, "hook_event_name": event, "cwd": str(repo),
                   "tool_name": tool, "tool_input": tool_input, "tool_use_id": call,
                   "transcript_path": str(repo / "t.jsonl")}  # fmt: skip
        done = subprocess.run([*HOOK, event], input=json.dumps(payload).encode(), cwd=repo,
                              capture_output=True, timeout=60, env=env)  # fmt: skip
        assert done.returncode == 0
        return done.stdout

    edit = {"file_path": str(repo / "cmd" / "reset_test.go"), "old_string": "a", "new_string": "b"}
    tests = {"command": "mise run test"}
    # The whole suite passes (the lesson is about one test: nothing said before the run), then
    # the session edits the file: a coincidence, nothing to say.
    assert hook("PreToolUse", "quiet", "Bash", tests, "toolu_1") == b""
    hook("PostToolUse", "quiet", "Bash", tests, "toolu_1")
    assert hook("PreToolUse", "quiet", "Edit", edit, "toolu_2") == b""
    # In another session the suite fails (the tool hooks spool it): its edit of the file is
    # likely the fix, and the lesson says where it was last time.
    assert hook("PreToolUse", "busy", "Bash", tests, "toolu_3") == b""
    hook("PostToolUseFailure", "busy", "Bash", tests, "toolu_3")
    answer = json.loads(hook("PreToolUse", "busy", "Edit", edit, "toolu_4"))
    assert "look at cmd/reset_test.go" in answer["hookSpecificOutput"]["additionalContext"]


def test_a_request_to_fix_the_tests_is_told_what_fixed_them_last_time_once(ctx: Context):
    fixed = ctx.writable("project").add_lesson(Lesson(
        text="When `mise run test` fails with “[test] ERROR task failed”, look at "
             "cmd/reset_test.go: last time the tests built the old branch names",
        trigger=Trigger(program="mise run test", command="mise run test", language="go"),
        importance=8, key="reset-tests",
    ))[0]  # fmt: skip
    told = warn_service.warn_for_prompt(ctx, "fix tests", session_id="s1")
    assert [x.id for x in told.shown] == [fixed.id]
    assert told.text.startswith(
        "⚠ Last time `mise run test` failed with “[test] ERROR task failed”, the fix was in "
        "cmd/reset_test.go; `cortex lessons show "
    )
    store = ctx.require("project")
    (shown,) = store.warnings_of_session("s1")
    assert (shown.tool, shown.action) == ("prompt", "prompt — fix tests")
    assert store.get_lesson(fixed.id).shown == 1
    # Said once a session: not at the next request, nor at the edit it leads to.
    assert not warn_service.warn_for_prompt(ctx, "fix the failing tests", session_id="s1").shown
    edit = Action("Edit", "edit", path="cmd/reset_test.go")
    assert not warn_service.warn(
        ctx, edit, session_id="s1", failed=frozenset({"mise run test"})
    ).shown
    # What a request says is stored redacted, like everything else (people paste tokens).
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    warn_service.warn_for_prompt(ctx, f"fix tests, CI uses GITHUB_TOKEN={token}", session_id="s9")
    (kept,) = store.warnings_of_session("s9")
    assert token not in kept.action and "[REDACTED" in kept.action
    assert all(token not in detail for _, _, detail in store.lesson_history(fixed.id))
    # Past the asker's deadline nothing is recorded: it would be held back, never seen.
    late = warn_service.warn_for_prompt(ctx, "fix tests", session_id="s2", deadline=time.time())
    assert not late.shown and store.warnings_of_session("s2") == []
    assert warn_service.warn_for_prompt(ctx, "fix tests", session_id="s2").shown
    assert not warn_service.warn_for_prompt(ctx, "how do I run the tests?", session_id="s3").shown
    # The judge has no call to read a request's warning by: it abstains, and nothing moves.
    judge_service.judge_session(ctx, "s1")
    assert store.get_lesson(fixed.id).followed == store.get_lesson(fixed.id).ignored == 0


def test_the_judge_at_stop_and_a_persons_feedback_move_lessons(ctx: Context):
    (x,) = stored(ctx, 1)
    store = ctx.require("project")
    action = Action("Bash", "shell", command="uv run pytest -q src/module0.py")
    for n in range(3):
        session = f"s{n}"
        warn_service.warn(ctx, action, session_id=session, tool_use_id=f"toolu_{n}")
        store.record_capture([], lambda _: [], None, observations=[
            Observation(session_id=session, tool="Bash", ok=True, at=utc_now(),
                        tool_use_id=f"toolu_{n}")])  # fmt: skip
        report = judge_service.judge_session(ctx, session, model=False)
        assert report.judged == 1
    promoted = store.get_lesson(x.id)
    assert promoted.followed == 3 and promoted.tier == "T1"
    assert store.warnings_of_session("s0")[0].verdict == "FOLLOWED"
    rules = lessons_writer(ctx.paths)
    assert lesson_service.publish(ctx, rules)
    text = (ctx.paths.root / LESSONS_FILE).read_text()
    assert "module0" in text and "T1" in text
    assert not lesson_service.publish(ctx, rules)  # unchanged: not rewritten
    noise = judge_service.feedback(ctx, x.id[-8:], "noise", "wrong_repo")
    assert noise.project_exclude == (ctx.paths.name,)
    for _ in range(2):
        judge_service.feedback(ctx, x.id, "ignored")
    assert store.get_lesson(x.id).tier == "T2"  # demoted
    assert lesson_service.publish(ctx, rules)
    assert not (ctx.paths.root / LESSONS_FILE).exists()  # nothing always loaded any more


def test_recall_scopes_re_rank_and_bump_the_counter(ctx: Context):
    store = ctx.writable("project")
    old = Lesson(text="When the cache test fails, clear the cache dir", importance=2,
                 created_at="2024-01-01T00:00:00.000000Z",
                 last_confirmed_at="2024-01-01T00:00:00.000000Z")  # fmt: skip
    new = Lesson(text="When the cache test fails, bump the cache version", importance=9)
    win = Lesson(text="What worked: the cache test passes with a fresh cache", kind="victory")
    for x in (old, new, win):
        store.add_lesson(x)
    scars = lesson_service.recall_lessons(ctx, "cache test fails", scope="scars")
    assert [r.lesson.id for r in scars] == [new.id, old.id]
    assert [
        r.lesson.id for r in lesson_service.recall_lessons(ctx, "cache", scope="victories")
    ] == [win.id]
    assert store.get_lesson(new.id).recalled == 1


def test_layer_3_fails_open_after_3_seconds_against_a_slow_model(ctx: Context, cortex_home: Path):
    stored(ctx, 2)
    server = ProviderServer()
    try:
        server.script(Reply(text="2", delay=6.0))
        route(cortex_home, "classify", server.url, timeout=20)
        action = Action("Bash", "shell", command="uv run pytest -q src/module0.py src/module1.py")
        found = warn_service.warn(ctx, action, session_id="s", dry_run=True,
                                  model_filter=warn_service.model_filter_for(ctx))  # fmt: skip
        assert found.layer3 == "no answer: all pass (fail-open)"
        assert len(found.shown) == 2
        server.script(Reply(text="2"))
        picked = warn_service.warn(ctx, action, session_id="s", dry_run=True,
                                   model_filter=warn_service.model_filter_for(ctx))  # fmt: skip
        assert picked.layer3 == "relevant: [2]" and len(picked.shown) == 1
        assert "ACTION: Bash: uv run pytest" in json.dumps(server.requests[-1]["body"])
    finally:
        server.close()


def test_what_the_heuristic_cannot_tell_is_judged_by_the_model_in_one_batch(
    ctx: Context, cortex_home: Path
):
    (x,) = stored(ctx, 1)
    server = ProviderServer()
    try:
        route(cortex_home, "judge", server.url)
        action = Action("Bash", "shell", command="uv run pytest -q src/module0.py")
        warn_service.warn(ctx, action, session_id="s1", tool_use_id="toolu_9")
        report = judge_service.judge_session(ctx, "s1")  # no outcome known: UNCLEAR
        assert report.left_for_model == 1 and judge_service.due(ctx)
        server.script(Reply(text='{"verdicts": [{"n": 1, "verdict": "FOLLOWED"}]}'))
        assert judge_service.judge_with_model(ctx) == 1
        assert ctx.require("project").get_lesson(x.id).followed == 1
        assert not judge_service.due(ctx)
        assert "WARNING: When `uv run pytest -q` fails" in json.dumps(server.requests[-1]["body"])
        # A warning a request called up has no call to read: its abstention is final, not
        # left pending for a model that could not judge it either.
        warn_service.warn_for_prompt(ctx, "fix the failing tests", session_id="s2")
        report = judge_service.judge_session(ctx, "s2")
        assert (report.judged, report.left_for_model) == (1, 0)
        assert judge_service.judge_session(ctx, "s2").judged == 0  # judged once
    finally:
        server.close()


def test_a_retry_loop_is_not_sent_to_the_model_to_reword(ctx: Context):
    """Its words are what the warnings know it by (a retry loop warns only once its program
    failed in the session); a model's rewording would lose that."""
    from cortexmem.core.lessons.build import RETRY_ADVICE

    store = ctx.writable("project")
    store.add_lesson(Lesson(text=f"When `uv run pytest -q` fails with “1 failed”, {RETRY_ADVICE}: "
                            "it failed 4 times in a row last time", key="loop",
                            trigger=Trigger(program="pytest")))  # fmt: skip
    assert lesson_service.drafts_waiting(ctx) == 0
    stored(ctx, 1)
    assert lesson_service.drafts_waiting(ctx) == 1


def test_the_model_puts_offline_lessons_in_better_words_without_inventing_commands(
    ctx: Context, repo: Path, cortex_home: Path
):
    capture(ctx, repo, session_lines(repo))
    store = ctx.require("project")
    fix = next(x for x in store.iter_lessons() if x.kind == "failure")
    refusal = next(x for x in store.iter_lessons() if x.kind == "correction")
    assert not lesson_service.drafts_due(ctx)  # no model configured: the offline text stays
    server = ProviderServer()
    try:
        route(cortex_home, "distill", server.url)
        assert lesson_service.drafts_due(ctx)
        for wrong in ("I cannot help with that.", '{"lessons": "none"}'):  # not the shape
            server.script(Reply(text=wrong))
            with pytest.raises(ProviderResponseError):
                lesson_service.draft_with_model(ctx)
        assert lesson_service.drafts_due(ctx)  # nothing marked: asked again next time
        better = ("When `uv run pytest -q` fails on the cache tests, bump the version in the "
                  "cache key in src/cache.py, because the key ignores the version.")  # fmt: skip
        made_up = "When you need the original code, run `git worktree add`, because it is safe."
        server.script(
            Reply(
                text=json.dumps(
                    {"lessons": [{"n": 1, "lesson": better}, {"n": 2, "lesson": made_up}]}
                )
            )
        )
        assert lesson_service.draft_with_model(ctx) == 1
        sent = json.dumps(server.requests[-1]["body"])
        assert "LESSON: " in sent and "EVIDENCE: " in sent
        drafted, kept = store.get_lesson(fix.id), store.get_lesson(refusal.id)
        assert drafted.text == better and drafted.source == "model" and drafted.key == fix.key
        assert kept.text == refusal.text  # `git worktree add` is in no evidence: refused
        assert kept.source == refusal.source and kept.model_asked_at is not None  # asked once
        history = store.lesson_history(refusal.id)
        assert history[-1][1] == "model draft refused" and "git worktree add" in history[-1][2]
        assert store.lesson_history(fix.id)[-1][1:] == ("drafted by the model", fix.text[:300])
        assert store.search_lessons("key ignores the version", 3)[0][1].id == fix.id
        assert not lesson_service.drafts_due(ctx)  # each lesson is asked about once
        requests = len(server.requests)
        capture(ctx, repo, session_lines(repo, "second-session"), "second-session")
        assert store.get_lesson(fix.id).text == better  # confirmed, still in the model's words
        assert store.get_lesson(fix.id).confirmed == 2 and len(server.requests) == requests
    finally:
        server.close()


def test_a_lesson_confirmed_in_two_sessions_is_proposed_for_claude_md_and_the_settings(
    ctx: Context, repo: Path
):
    from cortexmem.core.learning import LearningConfig
    from cortexmem.services import review
    from cortexmem.services.suggest import learned_drafts, propose

    capture(ctx, repo, session_lines(repo))
    assert learned_drafts(ctx, LearningConfig(), datetime.now(UTC)) == []  # one session: not yet
    capture(ctx, repo, session_lines(repo, "second-session"), "second-session")
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"permissions": {"allow": []},}')  # a trailing comma: not JSON
    first = propose(ctx, LearningConfig(), sources=[learned_drafts])
    assert [s.destination for s in first.queued] == ["claude_md", "claude_md"]  # the rest go on
    assert len(first.skipped) == 1 and first.skipped[0].startswith(".claude/settings.json")
    settings.write_text('{"permissions": {"allow": ["Bash(uv run pytest:*)"]}, "model": "opus"}')
    report = propose(ctx, LearningConfig(), sources=[learned_drafts])  # fixed: now it comes
    queued = {(s.destination, s.title): s for s in report.queued}
    ask = queued[("settings_json", "Ask before `git stash`")]
    assert json.loads(ask.text) == {"permissions": {"ask": ["Bash(git stash:*)"]}}
    rules = [s for s in first.queued if s.destination == "claude_md"]
    assert sorted(s.text[:40] for s in rules) == [
        "- Do not run `git stash` unasked: the pe", "- When `uv run pytest -q` fails with “1 ",
    ]  # fmt: skip
    assert all("2 sessions" in s.rationale for s in first.queued + report.queued)
    assert propose(ctx, LearningConfig(), sources=[learned_drafts]).queued == []  # once

    review.apply(ctx, ask.id, who="test")
    assert json.loads(settings.read_text()) == {
        "permissions": {"allow": ["Bash(uv run pytest:*)"], "ask": ["Bash(git stash:*)"]},
        "model": "opus",
    }


def test_a_principle_waits_for_review_then_retires_what_it_generalises(ctx: Context):
    store = ctx.writable("project")
    group = []
    for name in ("users", "orders", "items"):
        x = Lesson(text=f"When `uv run pytest -q` fails on the cache of {name}, clear the key",
                   trigger=Trigger(program="pytest"), tier="T1")  # fmt: skip
        group.append(store.add_lesson(x)[0])
    report = lesson_service.evolve(ctx)
    (principle,) = report.drafted
    assert principle.status == "pending" and lesson_service.pending(ctx) == [principle]
    assert lesson_service.evolve(ctx).drafted == []  # drafted once
    active, retired = lesson_service.review(ctx, principle.id, approve=True)
    assert active.status == "active" and {x.id for x in retired} == {x.id for x in group}
    member = store.get_lesson(group[0].id)
    assert member.status == "superseded" and member.superseded_by == principle.id
    rows = lesson_service.timeline(ctx, group[0].id)
    assert [r["what"] for r in rows if r["lesson"] == group[0].id] == ["learned", "retired"]
    assert any(r["what"] == "approved" and r["lesson"] == principle.id for r in rows)
    text = (lesson_service.publish(ctx, lessons_writer(ctx.paths)),
            (ctx.paths.root / LESSONS_FILE).read_text())[1]  # fmt: skip
    assert "[principle " in text and "cache of users" in text


def test_lessons_travel_with_an_export_with_their_timeline_and_graph(
    ctx: Context, repo: Path, tmp_path: Path
):
    from click.testing import CliRunner

    from cortexmem.cli.app import cli

    capture(ctx, repo, session_lines(repo))
    store = ctx.writable("project")
    group = [
        store.add_lesson(Lesson(text=f"When `uv run pytest -q` fails on {name}, clear the key",
                                trigger=Trigger(program="pytest"), tier="T1"))[0]
        for name in ("users", "orders", "items")
    ]  # fmt: skip
    (principle,) = lesson_service.evolve(ctx).drafted
    lesson_service.review(ctx, principle.id, approve=True)
    runner = CliRunner()
    dump = tmp_path / "dump.jsonl"
    assert runner.invoke(cli, ["-C", str(repo), "export", "-o", str(dump)]).exit_code == 0
    # a secret pasted into a lesson by hand is never carried into another store
    lines = dump.read_text().splitlines()
    lines.append(json.dumps({"record": "lesson", **Lesson(
        text="Deploy with the token ghp_Zq8vN2kP4xR7tY1wB5mC9dF3gH6jL0sA2eQ4").to_dict(),
        "history": [["2026-01-01T00:00:00.000Z", "learned", "by hand"]]}))  # fmt: skip
    dump.write_text("\n".join(lines) + "\n")

    other = tmp_path / "other"
    other.mkdir()
    first = runner.invoke(cli, ["-C", str(other), "import", "--json", str(dump)])
    assert first.exit_code == 0, first.output
    counts = json.loads(first.output)
    mine = list(store.iter_lessons(()))
    assert counts["lessons_added"] == len(mine) + 1 and counts["skipped"] == []
    assert counts["lesson_edges_added"] == len(store.lesson_edges(x.id for x in mine)) >= 3
    with Context.for_cwd(other) as there:
        theirs = there.require("project")
        for lesson in mine:
            copy = theirs.get_lesson(lesson.id)
            assert copy == lesson  # tier, status, counters, superseded_by: all of it
            assert theirs.lesson_history(lesson.id) == store.lesson_history(lesson.id)
        assert theirs.lesson_edges([principle.id]) == store.lesson_edges([principle.id])
        assert [x.id for x in theirs.iter_lessons(("superseded",))] == [x.id for x in group]
        (pasted,) = [x for x in theirs.iter_lessons() if "Deploy" in x.text]
        assert "ghp_Zq8" not in pasted.text and "[REDACTED" in pasted.text
        assert theirs.search_lessons("stash", 5)  # the words index came along
    again = json.loads(runner.invoke(cli, ["-C", str(other), "import", "--json", str(dump)]).output)
    assert (again["lessons_added"], again["lesson_edges_added"]) == (0, 0)


def test_only_raw_lessons_nothing_used_are_pruned_after_30_days(ctx: Context):
    from datetime import UTC, datetime, timedelta

    store = ctx.writable("project")
    unused = store.add_lesson(Lesson(text="raw and never used"))[0]
    recalled = store.add_lesson(Lesson(text="raw but recalled once", recalled=1))[0]
    later = datetime.now(UTC) + timedelta(days=31)
    assert lesson_service.evolve(ctx, now=datetime.now(UTC)).pruned == []
    assert [x.id for x in lesson_service.evolve(ctx, now=later).pruned] == [unused.id]
    assert store.get_lesson(recalled.id).status == "active"


def test_a_lesson_is_found_by_the_start_of_the_short_id_the_list_shows(ctx: Context):
    """`cortex lessons` shows each lesson's short id (its random tail); the start of it was
    "no lesson", though the start of the long id works (an independent review)."""
    from cortexmem.core.lessons.render import short_id

    store = ctx.writable("project")
    x = store.add_lesson(Lesson(text="When `uv run pytest` fails on the cache, clear it"))[0]
    assert store.get_lesson(short_id(x.id)[:5]).id == x.id
    assert store.get_lesson(short_id(x.id)).id == x.id and store.get_lesson(x.id[:12]).id == x.id
    middle = x.id.split("-")[1]  # the time part: no short id starts with it
    assert store.get_lesson(middle[:4]) is None


def test_the_cli(ctx: Context, repo: Path):
    from conftest import cortex

    x, y = stored(ctx, 2)
    ctx.close()
    common = next(n for n in range(len(x.id), 0, -1) if x.id[:n] == y.id[:n])
    ambiguous = cortex("lessons", "show", x.id[:common], cwd=repo)
    assert ambiguous.returncode == 1 and "give more of the id" in ambiguous.stderr
    listed = cortex("lessons", cwd=repo)
    assert listed.returncode == 0 and "module0" in listed.stdout
    dry = cortex("warn", "--dry-run", "Bash uv run pytest -q src/module0.py", cwd=repo)
    assert dry.returncode == 0, dry.stderr
    assert "layer 1: mutating" in dry.stdout and "⚠ Last time" in dry.stdout
    skipped = cortex("warn", "--dry-run", "Bash git log -3", cwd=repo)
    assert "read-only" in skipped.stdout
    # the lesson's fix was in src/module0.py: its edit warns once pytest failed in the session
    quiet = cortex("warn", "--dry-run", "--after-failure", "uv run mypy", "Edit src/module0.py",
                   cwd=repo)  # fmt: skip
    assert "has not failed in this session" in quiet.stdout and "⚠" not in quiet.stdout
    after = cortex("warn", "--dry-run", "--after-failure", "uv run pytest -q",
                   "Edit src/module0.py", cwd=repo)  # fmt: skip
    assert "⚠ Last time" in after.stdout, after.stdout
    # what the prompt hook would say to a request (its lesson runs pytest: a test runner)
    asked = cortex("warn", "--dry-run", "--prompt", "the tests are failing, fix them", cwd=repo)
    assert asked.returncode == 0 and "⚠ Last time" in asked.stdout, asked.stderr
    idle = cortex("warn", "--dry-run", "--prompt", "write the release notes", cwd=repo)
    assert idle.stdout.startswith("(no lesson")
    fed = cortex("feedback", x.id[-8:], "followed", cwd=repo)
    assert fed.returncode == 0 and "✓2" in fed.stdout
    shown = cortex("lessons", "timeline", x.id, cwd=repo)
    assert "followed" in shown.stdout
    noise = cortex("feedback", x.id, "noise", cwd=repo)
    assert noise.returncode != 0 and "--reason" in noise.stderr
    assert cortex("lessons", "review", cwd=repo).stdout.startswith("No principle")
    # recall's lesson scopes are the lessons' search
    scars = cortex("recall", "module0", "--scope", "scars", "--json", cwd=repo)
    assert scars.returncode == 0, scars.stderr
    assert [r["lesson"]["id"] for r in json.loads(scars.stdout)][:1] == [x.id]


def test_the_mcp_tools_look_lessons_up_for_an_action_and_take_feedback(ctx: Context):
    from cortexmem.errors import CortexError
    from cortexmem.services import mcp_tools

    (x,) = stored(ctx, 1)
    found = mcp_tools.lessons_for_action(ctx, "Bash", command="uv run pytest -q src/module0.py")
    assert found["warnings"].startswith("⚠ Last time") and found["ids"] == [x.id]
    assert found["lessons"][0]["lesson"]["id"] == x.id
    assert not ctx.require("project").warnings_of_session("")  # a look-up records nothing
    fed = mcp_tools.lesson_feedback(ctx, x.id, "noise", reason="wrong_language",
                                    language="go")  # fmt: skip
    assert fed["lang_exclude"] == ["go"]
    with pytest.raises(CortexError):
        mcp_tools.lesson_feedback(ctx, x.id, "noise")


def test_the_recall_server_embeds_lessons_and_warns_by_meaning_too(ctx: Context, repo: Path):
    from cortexmem.recall.server import RecallServer

    (x,) = stored(ctx, 1)
    ctx.close()
    server = RecallServer(repo, idle=60)
    try:
        assert server.embed_lessons() == 1  # embedded within seconds of its making
        request = {"op": "warn", "session_id": "srv", "tool_use_id": "toolu_1",
                   "action": {"tool": "Bash", "kind": "shell",
                              "command": "uv run pytest -q src/module0.py"}}  # fmt: skip
        reply = server.handle(request)
        assert reply["ok"] and reply["ids"] == [x.id]
        edit = {"op": "warn", "session_id": "srv", "tool_use_id": "toolu_2",
                "action": {"tool": "Edit", "kind": "edit", "path": "src/module0.py",
                           "text": "def module0(): return 1"}}  # fmt: skip
        by_meaning = server.handle(edit)["layer2"]
        assert by_meaning and by_meaning[0]["lesson"] == x.id  # found, then shown already
        assert reply["context"].startswith("⚠ Last time")
        assert server.handle(request)["ids"] == []  # never twice in a session
        assert server.handle({"op": "warn", "action": {}})["ok"] is False
    finally:
        server.ctx.close()


def test_a_warning_asked_for_too_late_is_not_recorded_as_shown(ctx: Context, repo: Path):
    """The hook stopped waiting and looks the lessons up itself: had the server recorded the
    warning as shown, the hook's own look-up would hold it back, and nobody would see it."""
    import time

    from cortexmem.recall.server import RecallServer

    (x,) = stored(ctx, 1)
    ctx.close()
    server = RecallServer(repo, idle=60)
    request = {"op": "warn", "session_id": "late", "tool_use_id": "toolu_1",
               "action": {"tool": "Bash", "kind": "shell",
                          "command": "uv run pytest -q src/module0.py"}}  # fmt: skip
    try:
        late = server.handle({**request, "deadline": time.time() - 1})
        assert late == {"ok": True, "context": "", "ids": []}  # not even looked up
        assert server.ctx.require("project").warnings_of_session("late") == []
        assert server.handle({**request, "deadline": time.time() + 5})["ids"] == [x.id]
        assert len(server.ctx.require("project").warnings_of_session("late")) == 1
    finally:
        server.ctx.close()


def test_a_hook_whose_server_did_not_answer_in_time_warns_by_itself(
    ctx: Context, repo: Path, monkeypatch: pytest.MonkeyPatch
):
    """The server's deadline is past once the hook stops waiting: the hook's own look-up is
    not bound by it (else nobody would warn at all)."""
    import time

    from cortexmem.hosts.claude_code import pretool
    from cortexmem.recall import client as recall_client

    (x,) = stored(ctx, 1)
    ctx.close()

    def too_late(_key, _request, timeout, data_dir=None):
        time.sleep(timeout + 0.05)  # the server was busy past the wait
        return None

    monkeypatch.setattr(recall_client, "ask", too_late)
    monkeypatch.setattr(recall_client, "start", lambda *_a, **_k: True)
    payload = {
        "tool_name": "Bash",
        "cwd": str(repo),
        "session_id": "own",
        "tool_use_id": "t-1",
        "tool_input": {"command": "uv run pytest -q src/module0.py"},
    }
    told = pretool.warnings(payload, wait=0.1)  # fmt: skip
    assert told is not None and x.id[-8:] in told["hookSpecificOutput"]["additionalContext"]


def test_a_warning_whose_deadline_passes_while_it_is_looked_up_is_not_recorded(ctx: Context):
    """A relevance model can take its 3 s: a look-up that ends after the asker stopped
    waiting records nothing (the asker looks the lessons up itself)."""
    import time

    from cortexmem.services.warn import action_of, warn

    (x,) = stored(ctx, 1)
    action = action_of({"tool": "Bash", "kind": "shell",
                        "command": "uv run pytest -q src/module0.py"})  # fmt: skip

    def slow_model(_action, lessons):
        time.sleep(0.3)
        return set(range(1, len(lessons) + 1))

    told = warn(ctx, action, session_id="slow", model_filter=slow_model,
                deadline=time.time() + 0.2)  # fmt: skip
    assert told.shown == [] and ctx.require("project").warnings_of_session("slow") == []
    assert warn(ctx, action, session_id="slow").shown[0].id == x.id


def test_reindex_embeds_lessons_with_the_memories(ctx: Context, repo: Path):
    """Without a recall server, `cortex reindex` (the same sync) makes new lessons findable by
    meaning too."""
    from click.testing import CliRunner

    from cortexmem.cli.app import cli
    from cortexmem.services.embedding import Embedder

    stored(ctx, 3)
    store = ctx.require("project")
    model = Embedder.for_context(ctx).model
    assert len(store.lesson_embedding_backlog(model, 10)) == 3
    done = CliRunner().invoke(cli, ["-C", str(repo), "reindex", "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["embedded"] >= 3
    assert store.lesson_embedding_backlog(model, 10) == []


def test_cortex_lessons_learn_model_drafts_each_lesson_once(
    ctx: Context, repo: Path, cortex_home: Path
):
    from click.testing import CliRunner

    from cortexmem.cli.app import cli

    capture(ctx, repo, session_lines(repo))
    server = ProviderServer()
    try:
        route(cortex_home, "distill", server.url)
        better = ("When `uv run pytest -q` fails on the cache tests, bump the version in the "
                  "cache key in src/cache.py, because the key ignores the version.")  # fmt: skip
        server.script(Reply(text=json.dumps({"lessons": [{"n": 1, "lesson": better},
                                                         {"n": 2, "lesson": ""}]})))  # fmt: skip
        done = CliRunner().invoke(cli, ["-C", str(repo), "lessons", "learn", "--model"])
        assert done.exit_code == 0, done.output
        assert "1 lessons drafted by the model" in done.output
        assert len(server.requests) == 1 and not lesson_service.drafts_due(ctx)
        kept = {x.text: x for x in ctx.require("project").iter_lessons()}
        assert better in kept
        assert [x.learnable for t, x in kept.items() if t != better] == [False]  # nothing reusable
    finally:
        server.close()
