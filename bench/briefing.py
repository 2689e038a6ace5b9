"""SessionStart as Claude Code runs it (a whole process, payload on stdin) at 10,000 memories:
the briefing served from its cache, and built cold (cache invalidated before every run), both
against ``python -c pass``; plus the in-process build time.

Run:  .venv/bin/python bench/briefing.py [--runs 20]     (needs hyperfine)
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
from cortexmem.services.brief import make_briefing
from cortexmem.services.context import Context

from corpus import Corpus
from procs import hyperfine, installed_conditions, table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    installed_conditions()
    work = Path(tempfile.mkdtemp(prefix="cortex-bench-brief-"))
    os.environ["CORTEX_HOME"] = str(work / "home")
    # No recall server in this bench: SessionStart would start one; keep it from lingering.
    os.environ["CORTEX_SERVER_IDLE"] = "5"
    os.environ["XDG_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="cx-", dir="/tmp")
    project = work / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(project)], check=True)
    with Context.for_cwd(project) as ctx:
        ctx.writable("project").add_memories(Corpus(seed=3).memories(10_000))
        timings = []
        for _ in range(7):
            t0 = time.perf_counter()
            result = make_briefing(ctx)
            timings.append(time.perf_counter() - t0)
        cache_dir = ctx.paths.data_dir / "cache"
    print(f"in-process build at 10,000 memories: median {statistics.median(timings) * 1000:.1f} ms"
          f" ({result.tokens} of {result.budget} tokens, lines {result.lines})")  # fmt: skip
    payload = work / "start.json"
    event = {"session_id": "bench", "cwd": str(project), "source": "startup"}
    payload.write_text(json.dumps({**event, "hook_event_name": "SessionStart"}))
    hook = shlex.quote(str(Path(sys.executable).parent / "cortex-hook"))
    start = f"cd {project} && {hook} SessionStart < {payload}"
    subprocess.run(start, shell=True, check=True, capture_output=True)  # fill the cache
    cold = f"rm -rf {shlex.quote(str(cache_dir))} && {start}"
    results = hyperfine(
        {
            "python -c pass": f"{shlex.quote(sys.executable)} -c pass < /dev/null",
            "SessionStart (cached)": start,
            "SessionStart (cold)": cold,
        },
        args.runs,
        shell=True,
    )
    table(results, "python -c pass", f"10,000 memories, {args.runs} runs, medians")


if __name__ == "__main__":
    main()
