"""Several processes writing one store at once lose nothing and never see 'database is locked'."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cortexmem.services.context import Context

WORKER = """
import sys
from pathlib import Path
from cortexmem.services.context import Context
from cortexmem.services.memories import remember

root, worker, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
for i in range(count):
    # a fresh connection per call, like one hook process per tool call
    with Context.for_cwd(root) as ctx:
        remember(ctx, f"worker {worker} note {i}: cache keys include the tenant id")
"""


def run_workers(
    argv_for, workers: int, env: dict[str, str] | None = None
) -> list[subprocess.CompletedProcess[str]]:
    procs = [
        subprocess.Popen(
            argv_for(w), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        for w in range(workers)
    ]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        results.append(subprocess.CompletedProcess(p.args, p.returncode, out, err))
    return results


@pytest.mark.slow
def test_four_processes_times_500_remember_calls(repo: Path):
    results = run_workers(
        lambda w: [sys.executable, "-c", WORKER, str(repo), str(w), "500"], workers=4
    )
    for r in results:
        assert r.returncode == 0, r.stderr
        assert "locked" not in r.stderr
    with Context.for_cwd(repo) as ctx:
        counts = ctx.require("project").counts()
        assert counts.memories == 2000
        assert ctx.require("project")._conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


@pytest.mark.slow
def test_concurrent_cli_processes(repo: Path):
    """The same, through the real `cortex` executable: 4 shells x 12 commands."""
    script = "; ".join(
        f'cortex -C {repo} remember "cli worker $W note {i}" >/dev/null' for i in range(12)
    )
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    results = run_workers(lambda w: ["bash", "-c", f"W={w}; set -e; {script}"], 4, env)
    for r in results:
        assert r.returncode == 0, r.stderr
    with Context.for_cwd(repo) as ctx:
        assert ctx.require("project").counts().memories == 48
