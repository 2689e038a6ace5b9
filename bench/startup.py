"""Whole-process timings against the bare interpreter, as medians (hyperfine).

Run:  .venv/bin/python bench/startup.py [--runs 30]
Needs hyperfine (apt-get install hyperfine). Builds a 10k-memory project store first.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from cortexmem.services.context import Context

from corpus import Corpus
from procs import hyperfine, installed_conditions, table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--size", type=int, default=10_000)
    args = parser.parse_args()
    installed_conditions()

    work = Path(tempfile.mkdtemp(prefix="cortex-bench-"))
    os.environ["CORTEX_HOME"] = str(work / "home")
    project = work / "project"
    project.mkdir()
    with Context.for_cwd(project) as ctx:
        ctx.writable("project").add_memories(Corpus(seed=1).memories(args.size))

    cortex = str(Path(sys.executable).parent / "cortex")
    py = shlex.quote(sys.executable)
    commands = {
        "python -c pass": f"{py} -c pass",
        "cortex status --json": f"{cortex} -C {project} status --json",
        "cortex status": f"{cortex} -C {project} status",
        "cortex recall --json": f"{cortex} -C {project} recall --json cache retry for sqlite",
        "cortex recall": f"{cortex} -C {project} recall cache retry for sqlite",
    }
    results = hyperfine(commands, args.runs)
    table(results, "python -c pass", f"{args.size} memories, {args.runs} runs")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
