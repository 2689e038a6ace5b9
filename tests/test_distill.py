"""Distillation by a model, and the guards that keep background model work from running away:
the budget, the circuit breaker, the one-worker lock, the queue off the hook path, and no
process left behind. Providers are real local servers (``model_servers``); stores are real
SQLite files; the hook runs as a real process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from tests.conftest import cortex
from tests.model_servers import (
    ProviderServer,
    Reply,
    children_of,
    descendants_alive,
    fake_claude,
)

from cortexmem.ai import NoModelConfigured, NotAllowed, ProviderRejected
from cortexmem.core.budget import Budget, Call, usage, verdict
from cortexmem.core.distill import Line, accept
from cortexmem.model import Episode, format_time
from cortexmem.services.context import Context
from cortexmem.services.distill import distill_session, drain
from cortexmem.services.memories import remember
from cortexmem.services.models import ask, worker_lock

SESSION = "s-cache"
LINES = {
    10: ("user", "The tests are flaky: the store is locked by the recall server. Retry?"),
    11: ("assistant", "We decided to set busy_timeout to 30 s instead of retrying in a loop, "
                      "because a loop hides the lock holder. A global mutex was rejected."),
    12: ("tool_error", "sqlite3.OperationalError: database is locked"),
    13: ("assistant", "Fixed: opening the store with timeout=30 makes the error go away."),
    14: ("user", "I always prefer small commits with one change each."),
}  # fmt: skip
ANSWER = {
    "memories": [
        {
            "kind": "decision",
            "content": "Set SQLite busy_timeout to 30 s rather than retrying in a loop.",
            "reason": "a loop hides the lock holder",
            "alternatives": ["a global mutex"],
            "global_confidence": 0.3,
            "citations": [{"line": 11, "quote": "set busy_timeout to 30 s instead of retrying"}],
            "links": [{"to": 1, "type": "Related"}],
        },
        {
            "kind": "gotcha",
            "content": "'database is locked' in tests comes from the recall server's connection.",
            "fix": "open the store with timeout=30",
            "citations": [
                {"line": 12, "quote": "database is locked"},
                {"line": 13, "quote": "opening the store with   TIMEOUT=30"},
            ],
            "links": [{"to": 0, "type": "causes"}],
        },
        {
            "kind": "preference",
            "content": "The user prefers small commits with one change each.",
            "global_confidence": 0.93,
            "citations": [{"line": 14, "quote": "prefer small commits … one change each"}],
        },
        {   # invented: line 11 never says this
            "kind": "decision",
            "content": "The store moves to PostgreSQL next sprint.",
            "citations": [{"line": 11, "quote": "we will move the store to PostgreSQL"}],
        },
        {   # invented: line 99 was never shown
            "kind": "fact",
            "content": "The recall server listens on port 8080.",
            "citations": [{"line": 99, "quote": "listens on port 8080"}],
        },
    ]
}  # fmt: skip


@pytest.fixture
def server():
    running = ProviderServer()
    yield running
    running.close()


def configure(cortex_home: Path, text: str) -> None:
    cortex_home.mkdir(parents=True, exist_ok=True)
    (cortex_home / "ai.yaml").write_text(text)


def use_server(cortex_home: Path, server: ProviderServer, budget: str = "") -> None:
    configure(
        cortex_home,
        f"models:\n  distill:\n    provider: ollama\n    model: qwen2.5\n"
        f"    base_url: {server.url}\n    timeout: 10\n" + budget,
    )


def said(ctx: Context, session: str = SESSION, lines: dict | None = None) -> None:
    ctx.writable("project").add_episodes(
        [Episode(text, role=role, session_id=session, transcript_path=f"/t/{session}.jsonl",
                 line=n) for n, (role, text) in (lines or LINES).items()]
    )  # fmt: skip


def distilled(ctx: Context, scope: str = "project"):
    store = ctx.store(scope)  # type: ignore[arg-type]
    return [] if store is None else [m for m in store.iter_memories() if m.source_type == "distill"]


# ----------------------------------------------------------------------------- distill


def test_distill_keeps_only_what_the_transcript_says(
    ctx: Context, server: ProviderServer, cortex_home: Path
):
    use_server(cortex_home, server)
    said(ctx)
    server.script(Reply(text=json.dumps(ANSWER), input_tokens=900, output_tokens=300))

    report = distill_session(ctx, SESSION)

    assert report.lines == 5 and report.proposed == 5
    assert report.added == 3
    assert len(report.dropped) == 3
    assert any("does not hold" in d for d in report.dropped)  # the embroidered quote
    assert any("line 99, which was not shown" in d for d in report.dropped)
    assert any("unknown type 'causes'" in d for d in report.dropped)  # a link, not the item
    project = {m.memory_type: m for m in distilled(ctx)}
    assert set(project) == {"decision", "gotcha"}
    decision = project["decision"].content
    assert "Because: a loop hides the lock holder." in decision
    assert "Rejected: a global mutex." in decision
    assert "Fix: open the store with timeout=30." in project["gotcha"].content
    assert "kind:decision" in project["decision"].tags and "distilled" in project["decision"].tags
    (preference,) = distilled(ctx, "global")  # > 0.8 confidence: global
    assert preference.memory_type == "pattern" and preference.category == "global"
    (edge,) = ctx.require("project").edges_touching([project["decision"].id])
    assert edge.relation_type == "relates_to"  # "Related" through the alias table
    state = ctx.require("project").distill_state(SESSION)
    assert state is not None and state.last_line == 14 and state.memories == 3
    assert (state.input_tokens, state.output_tokens) == (900, 300)
    (call,) = ctx.require("global").ai_calls_since("2000-01-01T00:00:00.000000Z")
    assert call.ok and call.tokens == 1200 and call.session_id == SESSION
    sent = server.requests[0]["body"]["messages"][-1]["content"]
    assert "[11] (assistant) We decided" in sent


def test_a_second_pass_sends_only_new_lines(ctx: Context, server: ProviderServer, cortex_home):
    use_server(cortex_home, server)
    said(ctx)
    distill_session(ctx, SESSION)

    assert distill_session(ctx, SESSION).lines == 0  # nothing new: no call
    said(ctx, lines={15: ("user", "Let us also document the timeout in the README.")})
    report = distill_session(ctx, SESSION)

    assert report.lines == 1
    assert len(server.requests) == 2
    assert "[15]" in server.requests[1]["body"]["messages"][-1]["content"]
    assert "[14]" not in server.requests[1]["body"]["messages"][-1]["content"]


def test_what_the_offline_extraction_knows_is_not_added_twice(
    ctx: Context, server: ProviderServer, cortex_home: Path
):
    use_server(cortex_home, server)
    said(ctx)
    remember(ctx, "Set SQLite busy_timeout to 30 s rather than retrying in a loop, always.",
             memory_type="decision", source_type="extraction")  # fmt: skip
    server.script(Reply(text=json.dumps(ANSWER)))

    report = distill_session(ctx, SESSION)

    assert report.duplicates == 1 and report.added == 2
    assert {m.memory_type for m in distilled(ctx)} == {"gotcha"}


def test_dry_run_stores_nothing(ctx: Context, server: ProviderServer, cortex_home: Path):
    use_server(cortex_home, server)
    said(ctx)
    server.script(Reply(text=json.dumps(ANSWER)))

    report = distill_session(ctx, SESSION, dry_run=True)

    assert len(report.kept) == 3 and report.added == 0
    assert distilled(ctx) == [] and distilled(ctx, "global") == []
    assert ctx.require("project").distill_state(SESSION) is None


def test_a_garbage_answer_is_an_error_and_stores_nothing(
    ctx: Context, server: ProviderServer, cortex_home: Path
):
    use_server(cortex_home, server)
    said(ctx)
    server.script(Reply(text='{"memories": [{"kind": "rumour", "content": "x"}]}'))

    with pytest.raises(Exception, match="does not match the schema"):
        distill_session(ctx, SESSION)

    assert distilled(ctx) == []
    (call,) = ctx.require("global").ai_calls_since("2000-01-01T00:00:00.000000Z")
    assert not call.ok and call.tokens == 150  # the tokens were spent all the same


def test_without_a_model_distill_takes_the_offline_path(ctx: Context):
    said(ctx)
    ctx.writable("project").enqueue_ai_job("distill", SESSION, None)

    with pytest.raises(NoModelConfigured):
        distill_session(ctx, SESSION)
    report = drain(ctx, deadline=float("inf"), settle=0)

    assert report.dropped_jobs == 1 and report.sessions == []
    assert ctx.require("project").ai_jobs() == []
    assert ctx.store("global") is None  # not even a ledger was made


def test_accept_is_pure_and_folds_case_spacing_and_quotes():
    lines = [Line(3, "user", "We  chose “Redis” for the cache.")]
    cited = [{"line": 3, "quote": 'we chose "redis" for'}]
    data = {
        "memories": [{"kind": "decision", "content": "Redis is the cache.", "citations": cited}]
    }

    checked = accept(data, lines)

    assert [c.lines for c in checked.kept] == [(3,)] and checked.dropped == []
    short = {"memories": [{"kind": "fact", "content": "Redis is the cache store.",
                           "citations": [{"line": 3, "quote": "we"}]}]}  # fmt: skip
    assert "quotes too little" in accept(short, lines).dropped[0]


# ----------------------------------------------------------------------------- guards


def test_the_budget_stops_calls_before_anything_is_sent(
    ctx: Context, server: ProviderServer, cortex_home: Path
):
    use_server(cortex_home, server, "budget:\n  calls_per_hour: 2\n")

    ask(ctx, "one", use="distill")
    ask(ctx, "two", use="distill")
    with pytest.raises(NotAllowed, match="2 of 2 calls this hour") as caught:
        ask(ctx, "three", use="distill")

    assert caught.value.reason == "budget"
    assert len(server.requests) == 2


def test_the_token_budget_counts_what_answers_cost(
    ctx: Context, server: ProviderServer, cortex_home: Path
):
    use_server(cortex_home, server, "budget:\n  tokens_per_day: 200\n")
    server.script(Reply(text="x", input_tokens=150, output_tokens=60))

    ask(ctx, "one", use="distill")
    with pytest.raises(NotAllowed, match="210 of 200 tokens in 24 hours"):
        ask(ctx, "two", use="distill")


def test_the_circuit_breaker_opens_after_failures_in_a_row_then_half_opens(
    ctx: Context, server: ProviderServer, cortex_home: Path
):
    use_server(cortex_home, server, "budget:\n  failures_before_pause: 3\n  pause_seconds: 60\n")
    server.script(*[Reply(status=400, error="bad model")] * 4)
    clock = [datetime(2026, 1, 1, 12, 0, tzinfo=UTC)]

    def now() -> datetime:
        return clock[0]

    for _ in range(3):
        with pytest.raises(ProviderRejected):
            ask(ctx, "q", use="distill", now=now)
    with pytest.raises(NotAllowed, match="paused after 3 failed calls") as caught:
        ask(ctx, "q", use="distill", now=now)
    assert caught.value.reason == "circuit" and len(server.requests) == 3

    clock[0] += timedelta(seconds=61)  # the pause is over: one trial call
    with pytest.raises(ProviderRejected):
        ask(ctx, "q", use="distill", now=now)
    clock[0] += timedelta(seconds=61)  # failed again: the pause doubled to 120 s
    with pytest.raises(NotAllowed, match="paused after 4"):
        ask(ctx, "q", use="distill", now=now)

    clock[0] += timedelta(seconds=60)
    assert ask(ctx, "q", use="distill", now=now).text  # a success closes it
    assert len(server.requests) == 5


def test_pure_budget_decisions():
    now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

    def call(minutes_ago: float, ok: bool = True, tokens: int = 10) -> Call:
        at = format_time(now - timedelta(minutes=minutes_ago))
        return Call(at, "distill", "ollama", "m", ok, tokens, 0)

    spent = usage([call(5), call(30, ok=False), call(90), call(60 * 30)], now)

    assert (spent.calls_hour, spent.calls_day, spent.tokens_day) == (2, 3, 30)
    assert spent.failures_in_a_row == 0  # the newest call succeeded
    assert verdict(spent, Budget(calls_per_hour=2), now).reason == "budget"
    assert verdict(spent, Budget(calls_per_hour=3), now).allowed


def test_one_worker_per_project(ctx: Context, server: ProviderServer, cortex_home: Path):
    use_server(cortex_home, server)
    said(ctx)
    ctx.writable("project").enqueue_ai_job("distill", SESSION, None)

    with worker_lock(ctx.paths.data_dir):
        report = drain(ctx, deadline=float("inf"), settle=0)
        with pytest.raises(NotAllowed) as caught, worker_lock(ctx.paths.data_dir):
            pass
        other = subprocess.run(
            [sys.executable, "-c", "import sys, pathlib; from cortexmem.services.models import "
             "worker_lock\ntry:\n  with worker_lock(pathlib.Path(sys.argv[1])): print('got it')\n"
             "except Exception as e: print(type(e).__name__)", str(ctx.paths.data_dir)],
            capture_output=True, text=True, check=True,
        )  # fmt: skip

    assert report.stopped == "busy" and server.requests == []
    assert caught.value.reason == "busy"
    assert other.stdout.strip() == "NotAllowed"
    assert len(ctx.require("project").ai_jobs()) == 1  # still queued for the next worker
    assert len(drain(ctx, deadline=float("inf"), settle=0).sessions) == 1  # lock released


def test_a_live_session_waits_until_it_settles(
    ctx: Context, server: ProviderServer, cortex_home: Path
):
    use_server(cortex_home, server)
    said(ctx)
    ctx.writable("project").enqueue_ai_job("distill", SESSION, None)

    assert drain(ctx, deadline=float("inf")).sessions == []  # queued just now
    later = drain(ctx, deadline=float("inf"), now=lambda: datetime.now(UTC) + timedelta(hours=1))

    assert [r.session_id for r in later.sessions] == [SESSION]
    assert ctx.require("project").ai_jobs() == []


def test_the_stop_hook_only_queues_and_never_loads_the_ai_facade(
    ctx: Context, repo: Path, tmp_path: Path, server: ProviderServer, cortex_home: Path
):
    use_server(cortex_home, server)
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "sessionId": SESSION, "message": {
        "role": "user", "content": "We decided to use Redis for the cache."}}) + "\n")  # fmt: skip
    ctx.writable("project")
    payload = json.dumps({"session_id": SESSION, "transcript_path": str(transcript),
                          "cwd": str(repo), "hook_event_name": "Stop"})  # fmt: skip
    probe = (
        "import sys; from cortexmem.hosts.claude_code.hook import main; main(['Stop']); "
        "sys.stderr.write('LOADED:' + ','.join(sorted(m for m in sys.modules "
        "if m.startswith(('cortexmem.ai', 'httpx', 'cortexmem.services.models')))))"
    )

    done = subprocess.run(
        [sys.executable, "-c", probe], input=payload, capture_output=True, text=True, cwd=repo,
        env={**os.environ, "CLAUDE_PROJECT_DIR": str(repo)}, check=True,
    )  # fmt: skip

    assert done.stderr.strip().endswith("LOADED:")
    (job,) = ctx.require("project").ai_jobs("distill")
    assert job.session_id == SESSION and job.transcript_path == str(transcript)
    assert server.requests == []  # the hook never waits for a model


# ----------------------------------------------------------------------------- the CLI


def test_cortex_distill_without_a_model_says_how_to_set_one(repo: Path, ctx: Context):
    ctx.writable("project")

    done = cortex("distill", cwd=repo)

    assert done.returncode == 1
    assert "no model is configured for distill" in done.stderr


def test_cortex_distill_by_hand_and_status_shows_the_budget(
    repo: Path, ctx: Context, server: ProviderServer, cortex_home: Path
):
    use_server(cortex_home, server, "budget:\n  calls_per_day: 50\n")
    said(ctx)
    server.script(Reply(text=json.dumps(ANSWER)), Reply(text=json.dumps(ANSWER)))

    dry = cortex("distill", "--session", SESSION, "--dry-run", cwd=repo)
    real = cortex("distill", "--session", SESSION, "--json", cwd=repo)
    status = cortex("status", "--json", cwd=repo)

    assert dry.returncode == 0, dry.stderr
    assert "would keep 3 of 5 proposed" in dry.stdout
    assert "dropped item 4 (fact): cites line 99" in dry.stdout
    (report,) = json.loads(real.stdout)
    assert report["added"] == 3 and report["model"] == "ollama/qwen2.5"
    ai = json.loads(status.stdout)["ai"]
    assert ai["models"]["distill"] == "ollama/qwen2.5" and ai["models"]["judge"] is None
    assert ai["budget"]["calls_per_day"] == 50
    assert ai["spent"]["calls_day"] == 2 and ai["spent"]["tokens_day"] == 300
    assert ai["allowed"] is True


# ----------------------------------------------------------------------------- processes


def test_two_hundred_sessions_leave_as_many_processes_as_they_began(
    ctx: Context, tmp_path: Path, cortex_home: Path, monkeypatch: pytest.MonkeyPatch
):
    """Each session is queued and drained through the stand-in ``claude``; one in ten of them
    leaves a child behind, two hang past their time limit with a child of their own (and are
    done by the next pass)."""
    fake_claude(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_CLAUDE_TEXT", '{"memories": []}')
    configure(cortex_home, "models:\n  distill:\n    provider: claude-code\n    timeout: 1.5\n"
              "budget:\n  calls_per_hour: 1000\n  calls_per_day: 1000\n"
              "  tokens_per_hour: 10000000\n  tokens_per_day: 10000000\n"
              "  failures_before_pause: 1000\n")  # fmt: skip
    me = os.getpid()
    before = children_of(me)
    everyone_before = {int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()}
    outcomes = {"ok": 0, "failed": 0}

    for i in range(200):
        mode = "hang" if i % 100 == 7 else "orphan" if i % 10 == 3 else "ok"
        monkeypatch.setenv("FAKE_CLAUDE_MODE", mode)
        session = f"s-{i:03d}"
        said(ctx, session, {1: ("user", f"Session {i}: we decided to keep the cache small.")})
        ctx.writable("project").enqueue_ai_job("distill", session, None)
        report = drain(ctx, deadline=float("inf"), settle=0)
        outcomes["ok"] += len(report.sessions)
        outcomes["failed"] += len(report.failed)

    assert outcomes == {"ok": 200, "failed": 2}
    assert children_of(me) == before
    assert descendants_alive(everyone_before) == set()
    calls = ctx.require("global").ai_calls_since("2000-01-01T00:00:00.000000Z")
    assert len(calls) == 202
    assert sum(c.tokens for c in calls) == 200 * 2042
    assert ctx.require("project").ai_jobs() == []


# ----------------------------------------------------------------------------- the worker


def test_the_recall_server_is_the_projects_model_worker(
    ctx: Context, repo: Path, server: ProviderServer, cortex_home: Path,
    monkeypatch: pytest.MonkeyPatch,
):  # fmt: skip
    from cortexmem.recall.server import RecallServer
    from cortexmem.services import distill

    use_server(cortex_home, server)
    said(ctx)
    ctx.writable("project").enqueue_ai_job("distill", SESSION, None)
    server.script(Reply(text=json.dumps(ANSWER)))
    worker = RecallServer(repo, idle=60)
    try:
        worker.model_work()  # queued a moment ago: the session has not settled
        assert worker.model_thread is None

        monkeypatch.setattr(distill, "SETTLE", 0.0)
        worker.last_model_look = 0.0
        worker.model_work()
        assert worker.model_thread is not None
        worker.join_model_worker()
    finally:
        worker.ctx.close()

    assert not worker.model_thread.is_alive()
    assert ctx.require("project").ai_jobs() == []
    assert len(distilled(ctx)) == 2
    assert "distill: 1 sessions, 3 memories added" in ctx.paths.log.read_text()


def test_without_a_model_the_worker_only_empties_the_queue(ctx: Context, repo: Path):
    from cortexmem.recall.server import RecallServer

    ctx.writable("project").enqueue_ai_job("distill", SESSION, None)
    worker = RecallServer(repo, idle=60)
    try:
        worker.model_work()
        assert worker.model_thread is not None
        worker.join_model_worker()
    finally:
        worker.ctx.close()

    assert ctx.require("project").ai_jobs() == []
    assert ctx.store("global") is None


def test_a_job_left_waiting_for_days_is_dropped(
    ctx: Context, server: ProviderServer, cortex_home: Path
):
    use_server(cortex_home, server)
    ctx.writable("project").enqueue_ai_job("distill", SESSION, None)

    report = drain(ctx, deadline=float("inf"), now=lambda: datetime.now(UTC) + timedelta(days=4))

    assert report.dropped_jobs == 1 and server.requests == []
    assert ctx.require("project").ai_jobs() == []
