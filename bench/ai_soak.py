"""Soak: many sessions against a model that fails, is slow, rate-limits or answers garbage.

Each scenario gets a fresh project and ``$CORTEX_HOME``; every session adds a few transcript
lines, is queued the way the Stop hook queues it and drained the way the recall server's
worker drains it (``services.distill.drain``, with its lock, budget and circuit breaker).
A simulated clock moves ``--minutes`` between sessions, so a run replays hours of work in
seconds; back-off waits are counted, not slept. The providers are the test suite's local
servers (Anthropic, OpenAI and Ollama wire formats) and its stand-in ``claude``.

Reported per scenario: model calls the ledger holds, HTTP requests the provider received
(``claude`` runs for Claude Code), tokens counted, memories added, why sessions were left
queued (budget / circuit), the back-off asked for, and processes left behind.

    .venv/bin/python bench/ai_soak.py [--sessions 100] [--minutes 10]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.model_servers import (  # noqa: E402
    ProviderServer,
    Reply,
    children_of,
    descendants_alive,
    fake_claude,
)

GOOD = {
    "memories": [
        {
            "kind": "decision",
            "content": "Keep the cache small: at most 100 entries.",
            "reason": "memory is tight on CI",
            "citations": [{"line": 2, "quote": "keep the cache small"}],
        },
        {  # invented: dropped every time
            "kind": "fact",
            "content": "The cache lives in Redis.",
            "citations": [{"line": 2, "quote": "the cache lives in Redis"}],
        },
    ]
}

# name: (provider, scripted reply or claude mode, simulated minutes between sessions or None)
ANSWER = json.dumps(GOOD)
SCENARIOS: dict[str, tuple[str, Reply | str, float | None]] = {
    "good (ollama)": ("ollama", Reply(text=ANSWER, input_tokens=800, output_tokens=90), None),
    "good, a session a minute": ("ollama", Reply(text=ANSWER, input_tokens=800), 1.0),
    "fails 500 (anthropic)": ("anthropic", Reply(status=500, error="internal error"), None),
    "429 + retry-after (openai)": (
        "openai", Reply(status=429, error="rate limited", headers={"retry-after": "20"}), None,
    ),
    "slow past timeout (ollama)": ("ollama", Reply(text=json.dumps(GOOD), delay=0.6), None),
    "garbage (anthropic)": ("anthropic", Reply(text="Sure! Here are some memories: ..."), None),
    "claude -p hangs": ("claude-code", "hang", None),
    "claude -p good": ("claude-code", "ok", None),
}  # fmt: skip


def run(name: str, sessions: int, minutes: float) -> dict[str, object]:
    provider, script, own_minutes = SCENARIOS[name]
    minutes = own_minutes or minutes
    work = Path(tempfile.mkdtemp(prefix="cortex-soak-"))
    os.environ["CORTEX_HOME"] = str(work / "home")
    project = work / "project"
    (project / ".cortex").mkdir(parents=True)
    home = work / "home"
    home.mkdir()
    server = None
    record = work / "claude-calls.jsonl"
    if provider == "claude-code":
        fake_claude(work / "bin")
        os.environ["PATH"] = f"{work / 'bin'}{os.pathsep}{os.environ['PATH']}"
        os.environ["FAKE_CLAUDE_MODE"] = str(script)
        os.environ["FAKE_CLAUDE_RECORD"] = str(record)
        os.environ["FAKE_CLAUDE_TEXT"] = json.dumps(GOOD)
        route = "    provider: claude-code\n    timeout: 1\n"
    else:
        server = ProviderServer()
        assert isinstance(script, Reply)
        server.default = script
        route = f"    provider: {provider}\n    base_url: {server.url}\n    timeout: 1\n"
        if provider == "openai":
            route += "    api_key_env: SOAK_KEY\n"
    os.environ.setdefault("ANTHROPIC_API_KEY", "sk-ant-soak-not-a-real-key-0000000000")
    os.environ.setdefault("SOAK_KEY", "sk-soak-not-a-real-key")
    (home / "ai.yaml").write_text(f"models:\n  distill:\n{route}")

    from cortexmem.model import Episode
    from cortexmem.services.context import Context
    from cortexmem.services.distill import drain

    clock = [datetime.now(UTC)]  # jobs are stamped with the real time: start there
    waits: list[float] = []
    stopped: Counter[str] = Counter()
    added = failed = 0
    me = os.getpid()
    before = children_of(me)
    everyone = {int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()}
    started = time.monotonic()
    with Context.for_cwd(project) as ctx:
        for i in range(sessions):
            session = f"soak-{i:04d}"
            ctx.writable("project").add_episodes([
                Episode(f"Session {i}: the tests time out on CI.", role="user",
                        session_id=session, line=1),
                Episode("We decided to keep the cache small because memory is tight on CI.",
                        role="assistant", session_id=session, line=2),
            ])  # fmt: skip
            ctx.writable("project").enqueue_ai_job("distill", session, None)
            report = drain(
                ctx, deadline=time.monotonic() + 60, settle=0, sleep=waits.append,
                now=lambda: clock[0],
            )  # fmt: skip
            added += sum(r.added for r in report.sessions)
            failed += len(report.failed)
            if report.stopped:
                stopped[report.stopped] += 1
            clock[0] += timedelta(minutes=minutes)
        calls = ctx.require("global").ai_calls_since("2000-01-01T00:00:00.000000Z")
        queued = len(ctx.require("project").ai_jobs())
    elapsed = time.monotonic() - started
    requests = (
        len(server.requests)
        if server
        else len(record.read_text().splitlines())
        if record.exists()
        else 0
    )
    if server:
        server.close()
    return {
        "scenario": name,
        "sessions": sessions,
        "minutes": minutes,
        "calls": len(calls),
        "requests": requests,
        "tokens": sum(c.tokens for c in calls),
        "memories": added,
        "failed": failed,
        "budget": stopped["budget"],
        "circuit": stopped["circuit"],
        "queued": queued,
        "backoff_s": round(sum(waits), 1),
        "procs_left": len(children_of(me) - before) + len(descendants_alive(everyone)),
        "seconds": round(elapsed, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument(
        "--minutes", type=float, default=10.0, help="simulated time between sessions"
    )
    parser.add_argument("--only", default=None, help="run the scenarios whose name holds this")
    args = parser.parse_args()
    rows = [run(name, args.sessions, args.minutes) for name in SCENARIOS
            if args.only is None or args.only in name]  # fmt: skip
    columns = list(rows[0])
    print(f"{args.sessions} sessions per scenario, default budget (30 calls an hour, 200 a day)\n")
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(str(row[c]) for c in columns) + " |")


if __name__ == "__main__":
    main()
