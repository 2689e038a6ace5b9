"""Whole-process timings against the bare interpreter, as medians (hyperfine).

Run:  .venv/bin/python bench/startup.py [--runs 30]
Needs hyperfine (apt-get install hyperfine). Builds a 10k-memory project store first.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from cortexmem.services.context import Context

from corpus import Corpus


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--size", type=int, default=10_000)
    args = parser.parse_args()
    if shutil.which("hyperfine") is None:
        sys.exit("hyperfine is not installed (apt-get install hyperfine)")

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
    out = work / "hyperfine.json"
    subprocess.run(
        ["hyperfine", "-N", "--warmup", "3", "--runs", str(args.runs), "--export-json", str(out),
         *[arg for name, cmd in commands.items() for arg in ("-n", name, cmd)]],
        check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    results = {r["command"]: r for r in json.loads(out.read_text())["results"]}
    base = results["python -c pass"]["median"]
    print(f"{'command':<24}{'median ms':>10}{'ratio':>8}", end="   ")
    print(f"({args.size} memories, {args.runs} runs)")
    for name in commands:
        median = results[name]["median"]
        print(f"{name:<24}{median * 1000:>10.1f}{median / base:>8.2f}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
