"""The session-start briefing: budget, order, redistribution, anchoring, cache, delivery."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from cortexmem.core.briefing import (
    LINE_BUDGETS,
    MAX_BUDGET,
    OVERFLOW_SHARE,
    BriefingInput,
    Item,
    Plan,
    PlanStep,
    build,
    is_high_value,
)
from cortexmem.core.tokens import count_tokens, estimate_tokens
from cortexmem.hosts.claude_code import rules
from cortexmem.model import Memory, SourceContext
from cortexmem.services import briefing_cache
from cortexmem.services.brief import anchor, make_briefing, mentioned_paths
from cortexmem.services.context import Context
from cortexmem.services.projections import write_projections

from conftest import git

NOW = datetime(2026, 3, 20, 12, 0, tzinfo=UTC)
HOOK = [sys.executable, "-c", "from cortexmem.hosts.claude_code.hook import run; run()"]


def mem(text: str, kind: str = "decision", *, priority: int = 5, confidence: float = 0.9,
        branch: str | None = "main", day: int = 1, pinned: bool = False) -> Memory:  # fmt: skip
    return Memory(
        text, kind, priority=priority, confidence=confidence, pinned=pinned,
        id=f"m-{kind[:4]}-{abs(hash((text, kind))) % 10**8:08d}",
        source_context=SourceContext(branch=branch, commit="3f2c1a9e" if branch else None),
        created_at=f"2026-03-{day:02d}T10:00:00.000000Z",
    )  # fmt: skip


def snapshot_input() -> BriefingInput:
    items = [
        Item(mem("Use a unique index on (merchant_id, key) instead of a Redis lock", priority=8),
             0.9),
        Item(mem("Retries run on APScheduler rather than Celery", confidence=0.7,
                 branch="feature/retry"), 0.7, "other branch"),
        Item(mem("The webhook signature covers the raw body bytes", "gotcha", priority=7), 0.8),
        Item(mem("Done: wire the Idempotency-Key header", "progress", day=19), 0.6),
        Item(mem("All log redaction goes through RedactingFilter", "pattern", confidence=0.4),
             0.5, "⚠ app/logging.py no longer exists"),
    ]  # fmt: skip
    plan = Plan("3 steps from session 424b1fee", (
        PlanStep("Create the idempotency table", "completed"),
        PlanStep("Wire the header into POST /payments", "in_progress"),
        PlanStep("Purge old keys nightly", "pending"),
    ), "main")  # fmt: skip
    return BriefingInput("payments-api", "main", NOW, items, plan)


def test_snapshot_of_a_briefing():
    result = build(snapshot_input(), estimate_tokens)
    assert result.markdown == (
        "# Cortex briefing — payments-api (branch main)\n"
        "Memory from earlier sessions. ● sure ◐ likely ○ unsure; verify before relying on it. "
        "`cortex recall <question>` for more.\n"
        "## Decisions\n"
        "- ● Use a unique index on (merchant_id, key) instead of a Redis lock — decision · 0.90 "
        "· main@3f2c1a9 · 19d ago\n"
        "- ◐ Retries run on APScheduler rather than Celery (other branch) — decision · 0.70 · "
        "feature/retry@3f2c1a9 · 19d ago\n"
        "## Active plan: 3 steps from session 424b1fee — 1/3 done\n"
        "- [>] Wire the header into POST /payments\n"
        "- [ ] Purge old keys nightly\n"
        "- [x] Create the idempotency table\n"
        "## Gotchas\n"
        "- ● The webhook signature covers the raw body bytes — gotcha · 0.90 · main@3f2c1a9 · "
        "19d ago\n"
        "## Recent progress\n"
        "- ● Done: wire the Idempotency-Key header — progress · 0.90 · main@3f2c1a9 · 1d ago\n"
        "## Also known\n"
        "- ○ All log redaction goes through RedactingFilter (⚠ app/logging.py no longer exists) "
        "— pattern · 0.40 · main@3f2c1a9 · 19d ago\n"
    )
    assert result.tokens <= result.budget
    assert result.lines == {"decisions": 2, "plan": 3, "gotchas": 1, "progress": 1, "rest": 1}


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
                 for i in range(12)]  # fmt: skip
    result = build(BriefingInput("p", "main", NOW, decisions), estimate_tokens)
    assert result.overflow, "some decisions came in as overflow"
    assert result.budget < result.tokens <= result.budget * (1 + OVERFLOW_SHARE)


memories = st.builds(
    mem,
    st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=300).filter(str.strip),
    st.sampled_from(["decision", "gotcha", "progress", "pattern", "context", "architecture"]),
    priority=st.integers(1, 10),
    confidence=st.floats(0, 1),
    branch=st.sampled_from([None, "main", "feature/x"]),
    day=st.integers(1, 28),
    pinned=st.booleans(),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(memories, st.floats(0, 2)), max_size=40), st.booleans())
def test_the_budget_holds_except_for_the_overflow_rule(pairs, with_plan):
    items = [Item(m, score) for m, score in pairs]
    plan = Plan("p", (PlanStep("step one", "pending"),)) if with_plan else None
    result = build(BriefingInput("proj", "main", NOW, items, plan), estimate_tokens)
    assert result.budget <= MAX_BUDGET
    by_id = {m.id: m for m, _ in pairs}
    if not result.overflow:
        assert result.tokens <= result.budget or len(result.ids) == 0
    else:
        assert all(is_high_value(by_id[i]) for i in result.overflow)
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
    assert anchor(other, tmp_path, "main") == (True, "other branch")


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
