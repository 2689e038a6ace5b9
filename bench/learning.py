"""The learning loop's budgets (issue 16):

* not due     the check at Stop when nothing is due (``services.learn.is_due``): < 5 ms in
              process;
* analysis    a full run over 7 days of observations, 10,000 tool calls over 30 sessions
              (``services.learn.learn``, files written): < 1 s;
* review      ``cortex review --json`` listing 1,000 pending suggestions, whole process:
              < 300 ms.

The observations: 30 sessions over 7 days, each a random walk over ten tools with habits (a
few chains much more likely than others), 5% failures, shell commands with forms. Each figure
is the median of ``--runs`` runs.

Run:  .venv/bin/python bench/learning.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cortexmem.core.extraction.memories import to_memories
from cortexmem.core.suggestions import Draft, to_suggestion
from cortexmem.model import Observation, format_time, utc_now
from cortexmem.services.context import Context
from cortexmem.services.learn import is_due, learn

NOW = datetime.now(UTC)
TOOLS = ["Read", "Edit", "Bash", "Grep", "Glob", "Write", "Task", "TodoWrite", "WebFetch", "LS"]
HABITS = {"Grep": "Read", "Read": "Edit", "Edit": "Bash", "Bash": "Read"}
FORMS = ["uv run pytest", "pytest", "git status", "git diff", "ruff check", "mypy", "ls"]


def observations(total: int, sessions: int, seed: int = 7) -> list[Observation]:
    rng = random.Random(seed)
    out: list[Observation] = []
    per = total // sessions
    for s in range(sessions):
        start = NOW - timedelta(days=7) + timedelta(hours=s * 7 * 24 / sessions)
        done: list[str] = []
        tool = "Read"
        for n in range(per):
            habit = rng.random() < 0.6 and tool in HABITS
            tool = HABITS[tool] if habit else rng.choice(TOOLS)
            command = rng.choice(FORMS) if tool == "Bash" else None
            out.append(
                Observation(
                    session_id=f"bench-{s}",
                    tool=tool,
                    ok=rng.random() > 0.05,
                    at=format_time(start + timedelta(seconds=5 * n)),
                    prev_tool=done[-1] if done else None,
                    prev2_tool=done[-2] if len(done) > 1 else None,
                    tool_use_id=f"b{s}-{n}",
                    command=command,
                )
            )
            done.append(tool)
    return out


def median_ms(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(1000 * (time.perf_counter() - t0))
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="cortex-bench-learning-"))
    os.environ.setdefault("CORTEX_HOME", str(root / "home"))
    with Context.for_cwd(root) as ctx:
        store = ctx.writable("project")
        store.record_capture([], to_memories, None, observations(10_000, 30))
        analysis = median_ms(lambda: learn(ctx, suggest=False), args.runs)
        not_due = median_ms(lambda: is_due(ctx), max(args.runs, 50))
        report = learn(ctx, suggest=False)
        drafts = [
            Draft("claude_md", "CLAUDE.md", f"Rule {n}", f"- Rule number {n}.", "bench", "bench",
                  (f"session {n}",), n % 17)
            for n in range(1_000)
        ]  # fmt: skip
        store.add_suggestions(to_suggestion(d, "", utc_now()) for d in drafts)
    whole = []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "cortexmem", "-C", str(root), "review", "--json"],
            check=True,
            capture_output=True,
        )
        whole.append(1000 * (time.perf_counter() - t0))
    p = report.plan
    print(f"observations: {p.observations} over {p.sessions} sessions; patterns {len(p.scored)}, "
          f"instincts {len(p.active)}, rules {len(p.promoted)}")  # fmt: skip
    print(f"not due (in process):              {not_due:8.2f} ms   (budget 5 ms)")
    print(f"analysis, 10k calls / 30 sessions: {analysis:8.1f} ms   (budget 1000 ms)")
    print(f"review lists 1,000 (whole process): {statistics.median(whole):7.1f} ms   "
          "(budget 300 ms)")  # fmt: skip


if __name__ == "__main__":
    main()
