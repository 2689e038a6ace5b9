"""The session-start briefing: budget, order, redistribution, anchoring, cache, delivery."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cortexmem.core.briefing import (
    LINE_BUDGETS,
    MAX_BUDGET,
    OVERFLOW_SHARE,
    BriefingInput,
    Command,
    Item,
    Plan,
    PlanStep,
    build,
    may_overflow,
    section_of,
)
from cortexmem.core.tokens import count_tokens, estimate_tokens
from cortexmem.hosts.claude_code import rules
from cortexmem.model import Memory, SourceContext
from cortexmem.services import briefing_cache
from cortexmem.services.brief import anchor, make_briefing, mentioned_paths
from cortexmem.services.context import Context
from cortexmem.services.projections import write_projections

from conftest import SHARED_DATA, git

NOW = datetime(2026, 3, 20, 12, 0, tzinfo=UTC)
HOOK = [sys.executable, "-c", "from cortexmem.hosts.claude_code.hook import run; run()"]


def mem(text: str, kind: str = "decision", *, priority: int = 5, confidence: float = 0.9,
        branch: str | None = "main", day: int = 1, pinned: bool = False,
        event: str | None = None) -> Memory:  # fmt: skip
    return Memory(
        text, kind, priority=priority, confidence=confidence, pinned=pinned,
        id=f"m-{kind[:4]}-{abs(hash((text, kind))) % 10**8:08d}",
        source_context=SourceContext(branch=branch, commit="3f2c1a9e" if branch else None),
        created_at=f"2026-03-{day:02d}T10:00:00.000000Z",
        tags=(f"event:{event}",) if event else (),
    )  # fmt: skip


def snapshot_input() -> BriefingInput:
    items = [
        Item(mem("Use a unique index on (merchant_id, key) instead of a Redis lock", priority=8),
             0.9),
        Item(mem("Retries run on APScheduler rather than Celery", confidence=0.7,
                 branch="feature/retry"), 0.7, "other branch"),
        Item(mem("The webhook signature covers the raw body bytes", "gotcha", priority=7), 0.8),
        Item(mem("Replayed requests with a different body still return 200", "gotcha",
                 event="open_problem", day=19), 0.8),
        Item(mem("Always use `uv run` to run things, never bare python", "pattern",
                 event="preference"), 0.7),
        Item(mem("Run the tests with `uv run pytest -q`", "pattern", event="howto"), 0.7),
        Item(mem("Done: wire the Idempotency-Key header", "progress", day=19, event="plan_step"),
             0.6),
        Item(mem("Done: create the idempotency table", "progress", day=18, event="plan_step"),
             0.6),
        Item(mem("Committed 3f2c1a9 on main: Add idempotency keys", "progress", day=18,
                 event="commit"), 0.6),
        Item(mem("All log redaction goes through RedactingFilter", "pattern", confidence=0.4),
             0.5, "⚠ app/logging.py no longer exists"),
        # the same as the decision above in other words: left out
        Item(mem("Use a unique index on (merchant_id, key), not a Redis lock", "gotcha"), 0.4),
    ]  # fmt: skip
    plan = Plan("3 steps from session 424b1fee", (
        PlanStep("Create the idempotency table", "completed"),
        PlanStep("Wire the Idempotency-Key header", "in_progress"),  # a done step reports it
        PlanStep("Purge old keys nightly", "pending"),
    ), "main")  # fmt: skip
    return BriefingInput("payments-api", "main", NOW, items, plan,
                         (Command("uv run pytest -q", 3), Command("uv run mypy app", 2)),
                         ("app/idempotency.py", "app/api.py"))  # fmt: skip


def test_snapshot_of_a_briefing():
    result = build(snapshot_input(), estimate_tokens)
    assert result.markdown == (
        "# Cortex briefing — payments-api (branch main)\n"
        "From earlier sessions (● sure ◐ likely ○ unsure: verify before relying on it); "
        "`cortex recall <question>` for more.\n"
        "## Open problems\n"
        "- ● Replayed requests with a different body still return 200 — 1d ago\n"
        "## Where the work stands\n"
        "- Files worked on most, in `app/`: `idempotency.py`, `api.py`\n"
        "- Recent work: 3 steps done on main, last (1d ago): wire the Idempotency-Key header\n"
        "## Decisions\n"
        "- ● Use a unique index on (merchant_id, key) instead of a Redis lock — 19d ago\n"
        "- ◐ Retries run on APScheduler rather than Celery (other branch) — 19d ago\n"
        "## Preferences\n"
        "- ● Always use `uv run` to run things, never bare python — 19d ago\n"
        "## How to build, test, run\n"
        "- ● Run the tests with `uv run pytest -q` — 19d ago\n"
        "- `uv run mypy app` (ran 2×)\n"
        "## Gotchas\n"
        "- ● The webhook signature covers the raw body bytes — 19d ago\n"
        "## Active plan: 3 steps from session 424b1fee — 2/3 done\n"
        "- [ ] Purge old keys nightly\n"
        "## Also known\n"
        "- ○ All log redaction goes through RedactingFilter (⚠ app/logging.py no longer exists) "
        "— 19d ago\n"
    )
    assert result.tokens <= result.budget
    assert result.lines == {"open": 1, "state": 2, "decisions": 2, "howto": 2, "gotchas": 1,
                            "preferences": 1, "plan": 1, "rest": 1}  # fmt: skip


def test_an_empty_store_says_so():
    result = build(BriefingInput("p", None, NOW), estimate_tokens)
    assert "Nothing remembered for this project yet." in result.markdown


def test_unused_lines_go_to_categories_with_more_to_say():
    gotchas = [Item(mem(f"Gotcha number {i}: watch out", "gotcha"), 1 - i / 100) for i in range(12)]
    result = build(BriefingInput("p", "main", NOW, gotchas), estimate_tokens)
    assert result.lines["gotchas"] > LINE_BUDGETS["gotchas"]


def test_one_item_too_long_does_not_end_the_briefing():
    huge = Item(mem("word " * 2000, "decision"), 1.0)
    small = [Item(mem(f"Small decision {i}"), 0.5) for i in range(3)]
    gotcha = Item(mem("A gotcha after the long one", "gotcha"), 0.4)
    result = build(BriefingInput("p", "main", NOW, [huge, *small, gotcha]), estimate_tokens)
    assert (
        "Small decision 0" in result.markdown and "A gotcha after the long one" in result.markdown
    )


def test_high_value_decisions_may_overflow_the_budget_but_nothing_else():
    decisions = [Item(mem(f"Key decision {i} " + "because " * 12, priority=9), 1 - i / 100)
                 for i in range(20)]  # fmt: skip
    result = build(BriefingInput("p", "main", NOW, decisions), estimate_tokens)
    assert result.overflow, "some decisions came in as overflow"
    assert result.budget < result.tokens <= result.budget * (1 + OVERFLOW_SHARE)
    items = f"{len(result.overflow)} high-value item{'s' if len(result.overflow) > 1 else ''}"
    said = f"{result.tokens} of {result.budget} tokens, with {items} beyond the budget"
    assert result.size() == said


def test_a_gotcha_with_its_fix_may_overflow_a_budget_the_work_state_filled():
    state = [Item(mem(f"Session {i}: goal: task {i} " + "word " * 80, "context",
                      event="session_summary"), 1 - i / 100) for i in range(4)]  # fmt: skip
    decisions = [Item(mem(f"Decision {i} " + "because " * 20, priority=8), 0.9) for i in range(3)]
    fixed = Item(mem("`make test` failed: the fixture needs TZ=UTC. Fixed by changes to "
                     "conftest.py", "gotcha", priority=7), 0.5)  # fmt: skip
    minor = Item(mem("A minor gotcha of no consequence at all", "gotcha", priority=5), 0.5)
    result = build(BriefingInput("p", "main", NOW, [*state, *decisions, fixed, minor]),
                   estimate_tokens)  # fmt: skip
    assert "the fixture needs TZ=UTC" in result.markdown
    assert fixed.memory.id in result.overflow and minor.memory.id not in result.overflow


memories = st.builds(
    mem,
    st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=300).filter(str.strip),
    st.sampled_from(["decision", "gotcha", "progress", "pattern", "context", "architecture"]),
    priority=st.integers(1, 10),
    confidence=st.floats(0, 1),
    branch=st.sampled_from([None, "main", "feature/x"]),
    day=st.integers(1, 28),
    pinned=st.booleans(),
    event=st.sampled_from(
        [
            None,
            "open_problem",
            "howto",
            "preference",
            "session_summary",
            "plan_step",
            "commit",
            "plan",
            "decision",
        ]
    ),
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(memories, st.floats(0, 2)), max_size=40),
    st.booleans(),
    st.lists(st.text(min_size=1, max_size=120).filter(str.strip), max_size=8),
    st.lists(st.text(min_size=1, max_size=80).filter(str.strip), max_size=8),
)
def test_the_budget_holds_except_for_the_overflow_rule(pairs, with_plan, commands, files):
    items = [Item(m, score) for m, score in pairs]
    plan = Plan("p", (PlanStep("step one", "pending"),)) if with_plan else None
    runs = tuple(Command(c, 2) for c in commands)
    data = BriefingInput("proj", "main", NOW, items, plan, runs, tuple(files))
    result = build(data, estimate_tokens)
    assert result.budget <= MAX_BUDGET
    by_id = {m.id: m for m, _ in pairs}
    if not result.overflow:
        assert result.tokens <= result.budget or len(result.ids) == 0
    else:
        # what the budget counts as high value: is_high_value, a how-to, a preference
        assert all(may_overflow(section_of(by_id[i]) or "", Item(by_id[i], 0))
                   for i in result.overflow)  # fmt: skip
        assert result.tokens <= result.budget * (1 + OVERFLOW_SHARE)


def test_tokens_are_counted_by_a_subword_tokenizer():
    path = "src/cortexmem/services/brief.py::make_briefing"
    assert count_tokens(path) > len(path.split("/"))  # pieces, not words
    assert count_tokens("") == 0


# ----------------------------------------------------------------- anchoring


def test_reality_anchoring(tmp_path: Path):
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "retry.py").write_text("x")
    assert mentioned_paths("see app/retry.py and pyproject.toml, not http://x.io/a.py") == [
        "app/retry.py", "pyproject.toml"]  # fmt: skip
    gone = mem("The parser lives in app/old_parser.py", "architecture")
    assert anchor(gone, tmp_path, "main") == (True, "⚠ app/old_parser.py no longer exists")
    assert (
        anchor(mem("Halfway through app/old_parser.py", "progress"), tmp_path, "main")[0] is False
    )
    assert anchor(mem("Backoff is in app/retry.py", "gotcha"), tmp_path, "main") == (True, "")
    other = mem("Use APScheduler", branch="feature/x")
    assert anchor(other, tmp_path, "main") == (True, "from branch feature/x")


# ----------------------------------------------------------------- delivery


def seed(repo: Path) -> None:
    with Context.for_cwd(repo) as ctx:
        store = ctx.writable("project")
        store.add_memory(Memory("Use SQLite WAL for the local store", "decision", priority=8))
        store.add_memory(Memory("The FTS index needs the porter tokenizer", "gotcha"))


def session_start(repo: Path, source: str = "startup") -> dict:
    payload = {"session_id": "s", "cwd": str(repo), "source": source,
               "hook_event_name": "SessionStart"}  # fmt: skip
    proc = subprocess.run([*HOOK, "SessionStart"], input=json.dumps(payload).encode(),
                          capture_output=True, cwd=repo, timeout=60)  # fmt: skip
    assert proc.returncode == 0
    return json.loads(proc.stdout) if proc.stdout else {}


def test_session_start_delivers_the_briefing_for_every_source_and_caches_it(repo: Path):
    seed(repo)
    for source in ("startup", "resume", "clear", "compact"):
        out = session_start(repo, source)["hookSpecificOutput"]
        assert out["hookEventName"] == "SessionStart"
        assert "Use SQLite WAL" in out["additionalContext"]
    rules = repo / ".claude" / "rules" / "cortex-briefing.md"
    assert "Use SQLite WAL" in rules.read_text()
    assert git(repo, "status", "--porcelain") == ""  # the briefing file is excluded locally
    # the cache serves while nothing changed: prove it by planting a marked copy
    with Context.for_cwd(repo) as ctx:
        branch, _ = ctx.paths.branch_and_commit()
        cache = briefing_cache.cache_path(str(ctx.paths.data_dir), branch, str(repo))
        token = briefing_cache.combined_token(str(ctx.paths.db), str(ctx.paths.global_db))
    assert token is not None
    briefing_cache.write_cached(cache, token, "# planted\n")
    assert session_start(repo)["hookSpecificOutput"]["additionalContext"] == "# planted\n"
    # new knowledge invalidates it
    with Context.for_cwd(repo) as ctx:
        ctx.writable("project").add_memory(Memory("Decided: no ORM, plain SQL", "decision"))
    fresh = session_start(repo)["hookSpecificOutput"]["additionalContext"]
    assert "no ORM" in fresh and "planted" not in fresh


def test_two_processes_writing_the_briefing_at_once_never_leave_it_half_written(
    tmp_path: Path,
):
    worktree, data = tmp_path / "w", tmp_path / "w" / ".cortex"
    data.mkdir(parents=True)
    texts = {"A": "A" * 200_000 + "\n", "B": "B" * 150_000 + "\n"}
    writer = (
        "import sys; from cortexmem.hosts.claude_code.rules import write_rules_file\n"
        "text = sys.argv[3] * int(sys.argv[4]) + '\\n'\n"
        "for i in range(60):\n"
        "    write_rules_file(sys.argv[1], sys.argv[2], text if i % 2 else text + ' ')\n"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", writer, str(worktree), str(data), "A", "200000"]),
        subprocess.Popen([sys.executable, "-c", writer, str(worktree), str(data), "B", "150000"]),
    ]
    target = worktree / rules.RULES_FILE
    seen = 0
    while any(p.poll() is None for p in procs):
        if target.exists():
            content = target.read_text().rstrip(" ")
            assert content in texts.values(), f"a torn file of {len(content)} characters"
            seen += 1
    assert all(p.returncode == 0 for p in procs) and seen > 0
    assert not (data / briefing_cache.LOCK_NAME).exists()
    assert not [p for p in target.parent.iterdir() if p.name.startswith(".")]  # no temp files


def test_a_stale_lock_is_taken_over(tmp_path: Path):
    lock = tmp_path / "briefing.lock"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()  # fmt: skip
    lock.write_text(dead)
    with briefing_cache.PidLock(str(lock), wait=0.5):
        assert lock.read_text() == str(os.getpid())
    assert not lock.exists()


def test_a_lock_is_never_held_by_two_processes_at_once(tmp_path: Path):
    """Eight processes race for one lock (as two dreams or two sessions' briefings would): a
    newcomer must never read the file between its creation and its PID and take it over."""
    lock, log, go = tmp_path / "dream.lock", tmp_path / "log", tmp_path / "go"
    script = (
        "import os, sys, time\n"
        "from cortexmem.services.briefing_cache import PidLock\n"
        "give_up = time.monotonic() + 30\n"
        "while not os.path.exists(sys.argv[3]):\n"
        "    if time.monotonic() > give_up: sys.exit(3)\n"
        "    time.sleep(0.001)\n"
        "for _ in range(5):\n"
        "    try:\n"
        "        with PidLock(sys.argv[1], wait=0, stale_after=3600):\n"
        "            with open(sys.argv[2], 'a') as f: f.write('in\\n')\n"
        "            time.sleep(0.02)\n"
        "            with open(sys.argv[2], 'a') as f: f.write('out\\n')\n"
        "    except TimeoutError:\n"
        "        pass\n"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(lock), str(log), str(go)])
        for _ in range(8)
    ]
    try:
        time.sleep(1.0)
        go.touch()
        assert all(p.wait(timeout=60) == 0 for p in procs)
    finally:
        for p in procs:
            p.kill()
    lines = log.read_text().split()
    assert lines and lines == ["in", "out"] * (len(lines) // 2)  # never two "in" in a row
    assert not lock.exists()


def test_projections_are_stable_and_regenerated_after_a_conflict(repo: Path):
    seed(repo)
    with Context.for_cwd(repo) as ctx:
        first = write_projections(ctx)
        assert sorted(first.written) == ["active-plan.md", "decisions-archive.md", "decisions.md"]
        assert write_projections(ctx).written == []  # nothing changed: no churn
        decisions = ctx.paths.data_dir / "decisions.md"
        before = decisions.read_text()
        assert "Use SQLite WAL" in before
        decisions.write_text("<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> other\n")
        assert write_projections(ctx).written == ["decisions.md"]
        assert decisions.read_text() == before
    tracked = git(repo, "status", "--porcelain", "--untracked-files=all")
    assert ".cortex/decisions.md" in tracked and ".cortex/cortex.db" not in tracked


def test_make_briefing_reads_the_store(repo: Path):
    seed(repo)
    with Context.for_cwd(repo) as ctx:
        result = make_briefing(ctx)
    assert result.lines["decisions"] == 1 and result.lines["gotchas"] == 1
    assert result.tokens <= result.budget


def test_a_teammates_decisions_arriving_by_git_are_kept(repo: Path):
    seed(repo)
    with Context.for_cwd(repo) as ctx:
        write_projections(ctx)
        decisions = ctx.paths.data_dir / "decisions.md"
        pulled = "- Use Redis streams for the event bus (2026-03-01, main, confidence 0.90)"
        decisions.write_text(decisions.read_text() + pulled + "\n")  # as after a git pull
        write_projections(ctx)
        text = decisions.read_text()
        assert "Use SQLite WAL" in text and pulled in text
        assert "From the repository" in text
        write_projections(ctx)
        assert decisions.read_text() == text  # stable: no churn on the next Stop


# ----------------------------------------------------------------- state, order, dedup


def test_sections_come_in_order_of_value_to_a_next_session():
    text = build(snapshot_input(), estimate_tokens).markdown
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert [h.split(":")[0] for h in headings] == [
        "## Open problems", "## Where the work stands", "## Decisions", "## Preferences",
        "## How to build, test, run", "## Gotchas", "## Active plan",
        "## Also known",
    ]  # fmt: skip


def test_progress_logs_are_folded_into_one_line_and_do_not_crowd_out_knowledge():
    steps = [Item(mem(f"Done: step {i} of the refactor on the parser module", "progress",
                      day=1 + i, event="plan_step"), 2.0) for i in range(25)]  # fmt: skip
    gotcha = Item(mem("The parser chokes on CRLF line endings", "gotcha"), 0.1)
    result = build(BriefingInput("p", "main", NOW, [*steps, gotcha]), estimate_tokens)
    folded = [line for line in result.markdown.splitlines() if "Recent work" in line]
    assert folded == ["- Recent work: 25 steps done on main, last (today): "
                      "step 24 of the refactor on the parser module"]  # fmt: skip
    assert "Done:" not in result.markdown
    assert "CRLF" in result.markdown


def test_a_request_asked_again_in_a_later_session_supersedes_the_earlier_outcome():
    goal = "Search if claude -p can use WebSearch and the Task tool. Summarize the findings"
    sessions = [
        Item(mem(f"Session 2026-03-{d:02d}: goal: {goal}. Outcome: {outcome}.", "progress",
                 day=d, event="session_summary"), 0.5)
        for d, outcome in ((2, "I could not run claude -p: permission needed"),
                           (3, "Yes: allow it with --allowedTools WebSearch"))
    ] + [Item(mem("Session 2026-03-01: goal: List the tools you have. Outcome: Read, Write.",
                  "progress", day=1, event="session_summary"), 0.5)]  # fmt: skip
    text = build(BriefingInput("p", "main", NOW, sessions), estimate_tokens).markdown
    assert "--allowedTools WebSearch" in text and "List the tools" in text
    assert "permission needed" not in text  # the same request's older, superseded outcome
    # asked once more, today, and left without an outcome: the last outcome still stands
    again = Item(mem(f"Session 2026-03-04: goal: {goal}.", "progress", day=4,
                     event="session_summary"), 0.5)  # fmt: skip
    text = build(BriefingInput("p", "main", NOW, [again, *sessions]), estimate_tokens).markdown
    assert "--allowedTools WebSearch" in text and "permission needed" not in text


def wifi_session(still: str) -> list[Item]:
    """A session's summary, which says what is still open, and its open problem's own line."""
    summary = mem(
        "Session 2026-03-02: goal: Install the wifi tool from its .deb. Outcome: "
        f"Installed with apt. Still open: {still}",
        "context",
        day=2,
        event="session_summary",
    ).with_changes(source_session="s-2")
    problem = mem(
        "Open problem (as of 2026-03-02): The wifiman service is failing.",
        "gotcha",
        priority=7,
        day=2,
        event="open_problem",
    ).with_changes(source_session="s-2")
    return [Item(summary, 0.5), Item(problem, 0.9)]


def test_what_a_session_left_open_is_said_once():
    """A session's open problems have lines of their own: its summary does not repeat them."""
    items = wifi_session("The wifiman service is failing.")
    both = build(BriefingInput("p", "main", NOW, items), estimate_tokens).markdown
    assert both.count("service is failing") == 1 and "Installed with apt" in both
    # with no line of its own (another session's summary), the summary says it
    alone = build(BriefingInput("p", "main", NOW, items[:1]), estimate_tokens)
    assert "still open: The wifiman service is failing" in alone.markdown


@pytest.mark.parametrize(
    ("still", "said"),
    [
        ("unfinished: the last reply stops at “Let me check the service logs.”",
         "still open: stopped at “Let me check the service logs.”"),
        ("unanswered: the last request has no reply", "still open: last request unanswered"),
    ],
)  # fmt: skip
def test_where_a_session_stopped_mid_turn_is_said_beside_its_open_problems(still, said):
    items = wifi_session(f"{still}; The wifiman service is failing.")
    text = build(BriefingInput("p", "main", NOW, items), estimate_tokens).markdown
    assert said in text and text.count("service is failing") == 1


def test_no_two_lines_say_the_same_thing():
    items = [
        Item(mem("Use uv run for everything, never bare python", "pattern",
                 event="preference"), 0.9),
        Item(mem("use `uv run` for everything — never bare python!", "pattern"), 0.8),
        Item(mem("Run tests with uv run pytest -q", "pattern", event="howto"), 0.8),
    ]  # fmt: skip
    data = BriefingInput("p", "main", NOW, items, commands=(Command("uv run pytest -q", 5),))
    text = build(data, estimate_tokens).markdown
    assert text.count("never bare python") == 1
    assert text.count("pytest -q") == 1


def test_a_plan_step_a_commit_reports_is_not_listed_as_open():
    plan = Plan("2 steps", (PlanStep("Add retry tests and run them", "pending"),
                            PlanStep("Document the retry schedule", "pending")))  # fmt: skip
    commit = Item(mem("Done: Add retry tests and run them", "progress", event="plan_step"), 0.5)
    text = build(BriefingInput("p", "main", NOW, [commit], plan), estimate_tokens).markdown
    assert "## Active plan: 2 steps — 1/2 done" in text
    assert "- [ ] Document the retry schedule" in text
    assert "[ ] Add retry tests" not in text


def test_howto_commands_and_worked_files_from_events():
    from cortexmem.model import Event, Provenance
    from cortexmem.services.brief import howto_commands, worked_files

    def run(command: str, ok: bool = True) -> Event:
        return Event("command", f"Ran `{command}`", {"command": command, "ok": ok},
                     provenance=Provenance("s"))  # fmt: skip

    events = [run("mise run test"), run("ls -la"), run("mise run test"), run("make build", False),
              run("grep -r foo ."), run("mise run lint | tee x"),
              # a run of one test file is that moment's, not how the project is tested
              *[run("uv run pytest test/test_cache.py -v")] * 3,
              *[run("ruff check /home/dev/app/app/renderer.py")] * 2,  # nor a check of one file
              run("npx vitest --run"), run("uv run pytest ./tests"),  # the whole suite: kept
              run("python manage.py test"),  # a project's step, though it names a file
              # scripts and inspections, run however, are that moment's
              run("uv run python3 -c 'import app; print(app.run())'"),
              run("uv run pytest -q \\\n  --tb=short")]  # fmt: skip
    assert [(c.text, c.runs) for c in howto_commands(events)] == [
        ("mise run test", 2), ("npx vitest --run", 1), ("uv run pytest ./tests", 1),
        ("python manage.py test", 1)]  # fmt: skip

    def edit(path: str) -> Event:
        return Event("file_modified", f"Modified {path}", {"path": path})

    edits = [edit("app/a.py"), edit("/Users/x/repo/app/b.py"), edit("app/a.py"),
             edit("/Users/x/.claude/plans/p.md"), edit("/tmp/scratch.py")]  # fmt: skip
    files = worked_files(edits)
    assert files == ["app/a.py", "app/b.py"]


def test_how_tos_of_one_kind_fold_into_one_line():
    howtos = [
        Item(mem(f"How to run the tests: `{c}`", "pattern", event="howto"), 1 - n / 10)
        for n, c in enumerate(
            ["uv run pytest", "uv run pytest -m browser", "ruff format && uv run pytest"]
        )
    ] + [
        Item(mem(f"How to lint / type-check: `{c}`", "pattern", event="howto"), 0.5 - n / 10)
        for n, c in enumerate(["uv run ruff format", "ruff format", "uv run ty check",
                               "RUN_SLOW=1 uv run ty check"])
    ]  # fmt: skip
    text = build(BriefingInput("p", "main", NOW, howtos), estimate_tokens).markdown
    assert "How to run the tests: `uv run pytest`; `uv run pytest -m browser`" in text
    assert "&&" not in text  # a chain of commands each listed on its own adds nothing
    assert text.count("How to run the tests") == 1
    # one step run bare by one session and through `uv run` by another is one command
    assert "How to lint / type-check: `uv run ruff format`; `uv run ty check`; `RUN_SLOW=1" in text


def test_a_summary_shows_its_outcome_behind_a_long_goal():
    goal = "please look at this " * 40
    summary = mem(f"Session 2026-03-01: goal: {goal}. Outcome: Perfect! The retry now uses "
                  "`backoff.expo`. Files changed: app/retry.py.", "context",
                  event="session_summary")  # fmt: skip
    text = build(BriefingInput("p", "main", NOW, [Item(summary, 1.0)]), estimate_tokens).markdown
    assert "outcome: The retry now uses `backoff.expo`" in text
    assert "files: app/retry.py" in text
    assert "Perfect" not in text


REAL_SAMPLE = (
    Path(__file__).resolve().parents[1].parent / "shared" / "data" / "transcripts"
    / "claude-code-log-real_projects" / "-Users-dain-workspace-claude-code-log-sample"
)  # fmt: skip


@pytest.mark.skipif(not REAL_SAMPLE.exists(), reason=f"{REAL_SAMPLE} is not here")
def test_titles_an_older_transcript_carries_for_other_sessions_are_not_its_recent_sessions(
    repo: Path, tmp_path: Path
):
    """A `summary` line names the session its leafUuid ends, and of 77 in the shared sessions
    76 name one in another file or in none: "Recent sessions: TUI Improvements …" described
    work days older than the sessions captured last (an independent reading)."""
    import shutil

    from cortexmem.hosts.claude_code.reader import READER
    from cortexmem.services.ingest import ingest

    folder = tmp_path / "sessions"
    folder.mkdir()
    shutil.copy(REAL_SAMPLE / "89488521-e2e7-4d97-bc02-38197efdddc8.jsonl", folder)
    ingest([folder], reader=READER, into=repo)
    with Context.for_cwd(repo) as ctx:
        text = make_briefing(ctx).markdown
    assert "TUI Improvements" not in text and "Recent sessions" not in text


def test_overflow_goes_breadth_first_to_what_the_budget_counts_as_high_value():
    state = [Item(mem(f"Session {i}: goal: task {i} " + "word " * 80, "context",
                      event="session_summary"), 1 - i / 100) for i in range(4)]  # fmt: skip
    decisions = [Item(mem(f"Decision {i} " + "because " * 20, priority=8), 0.9) for i in range(3)]
    gotchas = [Item(mem(f"`make test` failed: cause number {i} " + "detail " * 30, "gotcha",
                        priority=7), 0.5 - i / 100) for i in range(3)]  # fmt: skip
    howto = Item(mem("How to run the tests: `make test-all` " + "then more " * 10, "pattern",
                     event="howto"), 0.5)  # fmt: skip
    result = build(BriefingInput("p", "main", NOW, [*state, *decisions, *gotchas, howto]),
                   estimate_tokens)  # fmt: skip
    # the how-to is the best line its section left out: it comes before a second gotcha
    assert howto.memory.id in result.overflow and gotchas[0].memory.id in result.overflow
    assert gotchas[1].memory.id not in result.ids
    assert result.tokens <= result.budget * (1 + OVERFLOW_SHARE)


def test_a_line_that_says_more_than_a_command_listed_above_is_kept():
    why = Item(mem("Global tool not updating: run `uv tool install . --reinstall` after code "
                   "changes", "gotcha", priority=7), 0.8)  # fmt: skip
    data = BriefingInput(
        "p", "main", NOW, [why], commands=(Command("uv tool install . --reinstall", 3),)
    )
    text = build(data, estimate_tokens).markdown
    assert "- `uv tool install . --reinstall` (ran 3×)" in text and "after code changes" in text


def test_a_chain_of_listed_commands_and_a_failures_run_counts_are_not_said_again():
    howto = Item(mem("How to run the tests: `mise run test`", "pattern", event="howto"), 0.8)
    fail = Item(mem("`mise run lint` failed (3 failed, 10 passed in 1.2s): the fixture needs "
                    "TZ=UTC", "gotcha", priority=7), 0.8)  # fmt: skip
    runs = (Command("mise run lint", 3), Command("mise run test && mise run lint", 2))
    text = build(BriefingInput("p", "main", NOW, [howto, fail], commands=runs),
                 estimate_tokens).markdown  # fmt: skip
    assert "&&" not in text and "- `mise run lint` (ran 3×)" in text
    assert "`mise run lint` failed: the fixture needs TZ=UTC" in text


def todo_call(i: int, *steps: tuple[str, str]) -> list[str]:
    """A TodoWrite call and its result, as Claude Code records them."""
    todos = [{"content": t, "status": s, "activeForm": t} for t, s in steps]
    at = {"sessionId": "s-1", "gitBranch": "main", "timestamp": f"2026-01-01T00:00:{i:02d}.000Z"}
    return [
        json.dumps({"type": "assistant", "uuid": f"a-{i}", **at, "message": {
            "role": "assistant", "content": [{"type": "tool_use", "id": f"t-{i}",
                                              "name": "TodoWrite", "input": {"todos": todos}}]}}),
        json.dumps({"type": "user", "uuid": f"r-{i}", **at, "message": {
            "role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t-{i}",
                                         "content": "Todos have been modified successfully."}]}}),
    ]  # fmt: skip


def test_a_rewritten_to_do_list_keeps_its_steps_as_it_gives_them(repo: Path, tmp_path: Path):
    """A step added to a list carries the done ones over, and a step reopened is pending
    again, though no event records either (a status is recorded when it changes, and an
    event once)."""
    from cortexmem.hosts.claude_code.reader import READER
    from cortexmem.services import capture
    from cortexmem.services.brief import active_plan

    lines = [
        *todo_call(1, ("Add table", "in_progress"), ("Add route", "pending")),
        *todo_call(2, ("Add table", "completed"), ("Add route", "pending")),
        # a step added: the list is recorded again, the done step with it
        *todo_call(
            3, ("Add table", "completed"), ("Add route", "in_progress"), ("Test it", "pending")
        ),
        *todo_call(
            4, ("Add table", "completed"), ("Add route", "completed"), ("Test it", "completed")
        ),
        # all done, then a new list reopens a step done before
        *todo_call(5, ("Add route", "pending"), ("Document it", "pending")),
    ]
    transcript = tmp_path / "s-1.jsonl"
    with Context.for_cwd(repo) as ctx:
        store = ctx.writable("project")
        for upto in (6, len(lines)):
            transcript.write_text("".join(x + "\n" for x in lines[:upto]), encoding="utf-8")
            capture.capture_transcript(store, transcript, reader=READER, session_id="s-1")
            found = active_plan(ctx, None)
            assert found is not None and found.session == "s-1"
            if upto == 6:
                assert [(s.text, s.status) for s in found.steps] == [
                    ("Add table", "completed"), ("Add route", "in_progress"),
                    ("Test it", "pending")]  # fmt: skip
    assert [(s.text, s.status) for s in found.steps] == [
        ("Add route", "pending"), ("Document it", "pending")]  # fmt: skip


def test_a_step_that_comes_back_to_a_status_it_had_shows_the_latest(repo: Path, tmp_path: Path):
    """Reopened, then done again in the same list: the second "done" is an event of its own,
    not the first one read again, whether the transcript arrives whole or a line at a time."""
    from cortexmem.hosts.claude_code.reader import READER
    from cortexmem.services import capture
    from cortexmem.services.brief import active_plan

    lines = [
        *todo_call(1, ("Add table", "in_progress"), ("Add route", "pending")),
        *todo_call(2, ("Add table", "completed"), ("Add route", "in_progress")),
        *todo_call(3, ("Add table", "in_progress"), ("Add route", "in_progress")),  # reopened
        *todo_call(4, ("Add table", "completed"), ("Add route", "in_progress")),  # done again
        *todo_call(5, ("Add table", "completed"), ("Add route", "pending")),  # put back
    ]
    seen = []
    for pieces in ([len(lines)], range(1, len(lines) + 1)):
        project = tmp_path / f"in-{len(seen)}"
        shutil.copytree(repo, project)
        transcript = tmp_path / f"s-{len(seen)}.jsonl"
        with Context.for_cwd(project) as ctx:
            store = ctx.writable("project")
            for upto in pieces:
                transcript.write_text("".join(x + "\n" for x in lines[:upto]), encoding="utf-8")
                capture.capture_transcript(store, transcript, reader=READER, session_id="s-1")
            found = active_plan(ctx, None)
            assert found is not None
            seen.append([(s.text, s.status) for s in found.steps])
            steps = [e.content for e in store.recent_events(("plan_step",), 50)]
        assert steps.count("[completed] Add table") == 2
    assert seen[0] == seen[1] == [("Add table", "completed"), ("Add route", "pending")]


ENTIRE_CLI = SHARED_DATA / "transcripts" / "entireio-cli"


@pytest.mark.skipif(not ENTIRE_CLI.exists(), reason=f"{ENTIRE_CLI} is not here")
def test_the_same_sessions_ingested_into_two_stores_brief_alike(tmp_path: Path):
    """Memories get random ids, so ties broken by id ordered two stores of the same sessions
    apart (three runs of the continuity bench gave three briefings); they tie on what they say."""
    from click.testing import CliRunner

    from cortexmem.cli.app import cli

    runner = CliRunner()
    briefings = []
    for name in ("one", "two"):
        root = tmp_path / name / "repo"
        root.mkdir(parents=True)
        git(root, "init", "-q", "-b", "main")
        done = runner.invoke(cli, ["-C", str(root), "ingest", "--into", str(root), str(ENTIRE_CLI)])
        assert done.exit_code == 0, done.output
        shown = runner.invoke(cli, ["-C", str(root), "brief", "--json"])
        assert shown.exit_code == 0, shown.output
        briefings.append(json.loads(shown.output)["markdown"])
    assert briefings[0] == briefings[1]
    assert briefings[0].count("\n- ") >= 10
