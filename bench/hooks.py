"""Every hook as Claude Code runs it (a whole process, payload on stdin) against `python -c pass`,
and extraction time for the largest real transcript and for a 5,000-line one.

Run:  .venv/bin/python bench/hooks.py [--runs 30] [--data ../shared/data]
Needs hyperfine. The project has 10,000 memories and 10,000 lessons (PreToolUse is timed on a
mutating call, which looks lessons up through the recall server, and on a read-only one, which
layer 1 skips); the Stop-family hooks are timed in the steady
state (the transcript already captured, so each run reads only what is new: nothing), which
is what every Stop after the first one costs.

      .venv/bin/python bench/hooks.py --concurrent 8
Stop on real turns with N sessions at once: N real transcripts (spread over the sizes of the
shared ones) grow turn by turn into one project, each turn ending in a real ``cortex-hook Stop``
process and each tool result in a real tool hook (``tests/reliability/replay.py``). Twice: with
no recall server (every Stop does its upkeep itself), then as Claude Code runs it, SessionStart
first, so the project's recall server is up and takes the upkeep off Stop's path. Reports Stop
p50 / p95 / max per mode (DESIGN budget: p95 <= 300 ms with 8 sessions).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import numpy as np

from cortexmem.hosts.claude_code.reader import READER
from cortexmem.project.paths import resolve
from cortexmem.recall import client as recall_client
from cortexmem.services.capture import capture_transcript
from cortexmem.services.context import Context
from cortexmem.services.embedding import Embedder
from cortexmem.store.sqlite.store import SQLiteStore

from bench_hybrid import random_vectors
from corpus import Corpus
from procs import hyperfine, installed_conditions, table

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument(
        "--concurrent",
        type=int,
        default=0,
        metavar="N",
        help="time Stop on real turns with N sessions at once instead",
    )
    args = parser.parse_args()  # fmt: skip
    installed_conditions()
    if args.concurrent:
        concurrent_stops(args.concurrent)
        return

    transcripts = sorted(
        (args.data / "transcripts").rglob("*.jsonl"), key=lambda p: p.stat().st_size
    )
    largest = transcripts[-1]
    work = Path(tempfile.mkdtemp(prefix="cortex-bench-hooks-"))
    os.environ["CORTEX_HOME"] = str(work / "home")
    project = work / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(project)], check=True)
    with Context.for_cwd(project) as ctx:
        store = ctx.writable("project")
        store.add_memories(Corpus(seed=1).memories(10_000))
        capture_transcript(store, largest, reader=READER, session_id="bench")
        random_vectors(store, Embedder.for_context(ctx).model, np.random.default_rng(1))
        add_lessons(store, 10_000, Embedder.for_context(ctx).model)
    # SessionStart and UserPromptSubmit talk to the project's recall server: run one, as a
    # session would have (random vectors above keep it from embedding during the runs).
    os.environ["XDG_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="cx-", dir="/tmp")
    key = resolve(project).project_hash
    server = subprocess.Popen(
        [sys.executable, "-m", "cortexmem.recall.server", "--root", str(project), "--idle", "900"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    while recall_client.ask(key, {"op": "ping"}, 1.0) is None:
        time.sleep(0.2)
    recall_client.ask(key, {"op": "anticipate", "prompt": "warm up the model"}, 30.0)

    base: dict[str, object] = {
        "session_id": "bench",
        "cwd": str(project),
        "transcript_path": str(largest),
    }
    tool: dict[str, object] = {**base, "tool_name": "Bash", "tool_use_id": "toolu_bench",
            "tool_input": {"command": "uv run pytest -q"}}  # fmt: skip
    read_only = {**tool, "tool_input": {"command": "git status && git log --oneline | head"}}
    payloads: dict[str, dict[str, object]] = {
        "PreToolUse": tool,
        "PreToolUse (read-only)": read_only,
        "PostToolUse": {**tool, "tool_response": {"stdout": "12 passed", "stderr": ""}},
        "PostToolUseFailure": {**tool, "error": "Exit code 1"},
        "SessionStart": {**base, "source": "startup"},
        "UserPromptSubmit": {**base, "prompt": "why do webhook retries double-charge?"},
        # a request to fix a check: the lessons it calls up are looked up too
        "UserPromptSubmit (fix request)": {**base, "prompt": "the tests are failing, fix them"},
        "Stop": {**base, "stop_hook_active": False},
        "SubagentStop": {**base, "agent_id": "a1"},
        "PreCompact": {**base, "trigger": "auto", "custom_instructions": ""},
        "PostCompact": {**base, "trigger": "auto", "compact_summary": "Retries moved to a job."},
        "SessionEnd": {**base, "reason": "other"},
    }
    hook = shlex.quote(str(Path(sys.executable).parent / "cortex-hook"))
    commands = {"python -c pass": f"{shlex.quote(sys.executable)} -c pass < /dev/null"}
    for name, payload in payloads.items():
        event = name.split()[0]
        file = work / f"{event}{len(name)}.json"
        file.write_text(json.dumps({**payload, "hook_event_name": event}))
        commands[f"cortex-hook {name}"] = f"cd {project} && {hook} {event} < {file}"
    try:
        results = hyperfine(commands, args.runs, shell=True)
    finally:
        recall_client.ask(key, {"op": "stop"}, 2.0)
        server.wait(timeout=10)
    table(results, "python -c pass", f"10,000 memories and lessons, {args.runs} runs, medians")

    print()
    for path, label in ((largest, "largest real"), (five_thousand(args.data, work), "5,000-line")):
        lines = sum(1 for _ in path.open("rb"))
        timings = []
        for i in range(7):
            with SQLiteStore.open(work / f"x{label[:3]}{i}.db") as fresh:
                t0 = time.perf_counter()
                report = capture_transcript(fresh, path, reader=READER, session_id="bench")
                timings.append(time.perf_counter() - t0)
        print(
            f"extract {label} transcript ({path.name}, {path.stat().st_size / 1e6:.1f} MB, "
            f"{lines} lines): median {statistics.median(timings) * 1000:.0f} ms over 7 runs, "
            f"{report.events_added} events, {report.memories_added} memories"
        )


def add_lessons(store: SQLiteStore, n: int, model: str) -> None:
    """``n`` lessons of the shapes the builder makes, over many programs and files (PreToolUse
    on a mutating call looks them up; DESIGN budget: < 60 ms whole process at 10,000), with
    random vectors (so the server searches them by meaning and embeds nothing meanwhile)."""
    from cortexmem.model import Lesson, Trigger

    programs = ["pytest", "npm install", "cargo", "go test", "make", "git stash", "mypy", "ruff"]
    rng = np.random.default_rng(7)
    for i in range(n):
        program = programs[i % len(programs)]
        module = f"module{int(rng.integers(0, 2_000))}"
        store.add_lesson(
            Lesson(
                text=f"When `{program} {module}` fails with “error {i % 97}”, look at "
                f"src/{module}/core.py: last time the {module} fixture was stale",
                key=f"bench-{i}",
                trigger=Trigger(program=program, file_kinds=(".py",), language="python"),
                importance=int(rng.integers(1, 10)),
            )
        )
    while backlog := store.lesson_embedding_backlog(model, 5_000):
        vectors = rng.standard_normal((len(backlog), 384)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        store.put_lesson_embeddings(
            model, 384, [(seq, v.tobytes()) for (seq, _), v in zip(backlog, vectors, strict=True)]
        )


def concurrent_stops(n: int) -> None:
    sys.path.insert(0, str(ROOT / "tests" / "reliability"))
    sys.path.insert(0, str(ROOT / "tests"))  # replay uses conftest's git identities
    from replay import Lab, Session, percentile, pick_sessions, replay_all

    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # hooks run from compiled bytecode
    sessions = [Session.load(p) for p in pick_sessions(n, max_lines=800, spread=True)]
    print(f"Stop on real turns, {n} sessions at once: {sum(len(s.lines) for s in sessions)} "
          f"lines, {sum(len(s.turns) for s in sessions)} Stops, "
          f"{sum(s.tool_calls for s in sessions)} tool hooks, {os.cpu_count()} CPUs")  # fmt: skip
    work = Path(tempfile.mkdtemp(prefix="cortex-bench-stop-"))
    print(f"{'mode':<44}{'p50 ms':>8}{'p95 ms':>8}{'max ms':>8}{'tool p50':>10}{'wall s':>8}")
    for label, with_server in (("no recall server: upkeep in every Stop", False),
                               ("SessionStart first: upkeep to the server", True)):  # fmt: skip
        lab = Lab(work / ("server" if with_server else "inline"))
        try:
            # The store exists before the first session, as after `cortex init`: SessionStart
            # then starts the project's recall server.
            subprocess.run([sys.executable, "-m", "cortexmem", "init"], cwd=lab.project,
                           env=lab.env, capture_output=True, check=True)  # fmt: skip
            wall = replay_all(lab, sessions, concurrent=True, session_start=with_server)
            stops = lab.latencies("Stop")
            tools = lab.latencies("PostToolUse") + lab.latencies("PostToolUseFailure")
            print(f"{label:<44}{percentile(stops, 50) * 1000:>8.0f}"
                  f"{percentile(stops, 95) * 1000:>8.0f}{max(stops) * 1000:>8.0f}"
                  f"{percentile(tools, 50) * 1000:>10.0f}{wall:>8.1f}")  # fmt: skip
        finally:
            lab.cleanup()


def five_thousand(data: Path, work: Path) -> Path:
    """5,000 real lines: the real sessions concatenated (one session id, so one cursor)."""
    out = work / "five-thousand.jsonl"
    lines: list[bytes] = []
    for path in sorted((data / "transcripts").rglob("*.jsonl")):
        lines += [x for x in path.read_bytes().splitlines() if x.strip()]
    while len(lines) < 5_000:
        lines += lines
    out.write_bytes(b"\n".join(lines[:5_000]) + b"\n")
    return out


if __name__ == "__main__":
    main()
