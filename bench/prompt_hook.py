"""The UserPromptSubmit hook as Claude Code runs it (a whole process, payload on stdin), with
the project's recall server running, at 10,000 memories, against ``python -c pass``.

The hook itself imports no model: it asks the recall server (which holds the model and the
vector matrix) over a Unix socket and relays the answer. Two prompts: one related to the store
(context is injected) and one unrelated (nothing is).

Run:  .venv/bin/python bench/prompt_hook.py [--runs 30]     (needs hyperfine)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from cortexmem.model import Memory
from cortexmem.project.paths import resolve
from cortexmem.recall import client as recall_client
from cortexmem.services.context import Context
from cortexmem.services.embedding import Embedder, sync

from bench_hybrid import build
from procs import hyperfine, installed_conditions, table

RELATED = "why do replayed payment requests need an idempotency key?"
UNRELATED = "write a haiku about autumn leaves"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    installed_conditions()
    work = Path(tempfile.mkdtemp(prefix="cortex-bench-prompt-"))
    os.environ["CORTEX_HOME"] = str(work / "home")
    os.environ["XDG_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="cx-", dir="/tmp")
    root = build(10_000)
    with Context.for_cwd(root) as ctx:
        store = ctx.writable("project")
        store.add_memory(Memory(
            "Payments use idempotency keys: a replayed request with the same key returns the "
            "stored response instead of charging twice", "decision"))  # fmt: skip
        sync(store, Embedder.for_context(ctx), project=ctx.paths.name)
    key = resolve(root).project_hash
    server = subprocess.Popen(
        [sys.executable, "-m", "cortexmem.recall.server", "--root", str(root), "--idle", "600"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while recall_client.ask(key, {"op": "ping"}, 1.0) is None:
            if time.monotonic() > deadline:
                sys.exit("the recall server did not start")
            time.sleep(0.2)
        for prompt in (RELATED, UNRELATED):  # warm: model loaded, matrix cached
            recall_client.ask(key, {"op": "anticipate", "prompt": prompt}, 10.0)
        hook = shutil.which("cortex-hook", path=str(Path(sys.executable).parent))
        payloads = {}
        for name, prompt in (("related", RELATED), ("unrelated", UNRELATED)):
            path = work / f"{name}.json"
            path.write_text(json.dumps({
                "session_id": "bench", "hook_event_name": "UserPromptSubmit",
                "cwd": str(root), "prompt": prompt, "transcript_path": str(work / "t.jsonl"),
            }))  # fmt: skip
            payloads[name] = path
            out = subprocess.run([hook, "UserPromptSubmit"], input=path.read_bytes(),
                                 capture_output=True, check=True).stdout  # fmt: skip
            print(f"{name} prompt -> {'context injected' if out else 'nothing injected'}")
        results = hyperfine(
            {
                "python -c pass": f"{sys.executable} -c pass",
                "UserPromptSubmit (related)": f"{hook} UserPromptSubmit < {payloads['related']}",
                "UserPromptSubmit (unrelated)":
                    f"{hook} UserPromptSubmit < {payloads['unrelated']}",
            },
            args.runs,
            shell=True,
        )  # fmt: skip
        table(results, "python -c pass", f"10,000 memories, {args.runs} runs, medians")
    finally:
        recall_client.ask(key, {"op": "stop"}, 2.0)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()


if __name__ == "__main__":
    main()
