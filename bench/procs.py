"""Shared helpers for whole-process benchmarks (hyperfine)."""

from __future__ import annotations

import compileall
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import cortexmem


def installed_conditions() -> None:
    """Time what a user runs: an installed package has its bytecode compiled, so compile ours
    and let the child processes use it (this machine sets PYTHONDONTWRITEBYTECODE)."""
    if shutil.which("hyperfine") is None:
        sys.exit("hyperfine is not installed (apt-get install hyperfine)")
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    compileall.compile_dir(Path(cortexmem.__file__).parent, quiet=1)


def hyperfine(commands: dict[str, str], runs: int, *, shell: bool = False) -> dict[str, float]:
    """Median seconds per named command. ``shell`` is needed for stdin redirection; hyperfine
    then subtracts the shell's own start-up."""
    out = Path(tempfile.mkdtemp(prefix="cortex-hf-")) / "hyperfine.json"
    mode = [] if shell else ["-N"]
    subprocess.run(
        ["hyperfine", *mode, "--warmup", "3", "--runs", str(runs), "--export-json", str(out),
         *[arg for name, cmd in commands.items() for arg in ("-n", name, cmd)]],
        check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    results = {r["command"]: r["median"] for r in json.loads(out.read_text())["results"]}
    shutil.rmtree(out.parent, ignore_errors=True)
    return results


def table(results: dict[str, float], base: str, title: str) -> None:
    print(f"{'command':<34}{'median ms':>10}{'ratio':>8}   ({title})")
    for name, median in results.items():
        print(f"{name:<34}{median * 1000:>10.1f}{median / results[base]:>8.2f}")
