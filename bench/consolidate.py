"""The automatic consolidation run a Stop hook makes every 10 captures: time and peak memory.

The store: ``--size`` memories from ``corpus.Corpus`` (Zipf words, every type) already linked,
then ``--new`` memories captured since the last run, all with 384-d unit vectors of the
configured model (random: the cost of the vector stage does not depend on the values). Each
scenario runs in a fresh process, as a hook does, on a fresh copy of the store:

* due      ``maybe_consolidate`` at the 10th capture: stream the vectors, link the new memories
           (bounded by ``AUTO_LIMIT`` and ``AUTO_SECONDS``), checkpoint, write;
* not due  ``maybe_consolidate`` at any other capture (one small write).

Reported: the median wall time of ``--runs`` runs and the peak RSS of the process.

Run:  .venv/bin/python bench/consolidate.py [--size 100000] [--new 30] [--runs 3]
Stores are built once under $CORTEX_BENCH_DATA (default: <tmp>/cortex-bench).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from cortexmem.services.context import Context
from cortexmem.services.embedding import configured_model
from cortexmem.services.vectors import vector_bytes

from corpus import Corpus

DATA = Path(os.environ.get("CORTEX_BENCH_DATA", Path(tempfile.gettempdir()) / "cortex-bench"))

RUN = """
import json, sys, time
from pathlib import Path
from cortexmem.services.consolidate import maybe_consolidate
from cortexmem.services.context import Context
with Context.for_cwd(Path(sys.argv[1])) as ctx:
    t = time.monotonic()
    report = maybe_consolidate(ctx, memories_added=1, deadline=time.monotonic() + 8.0)
    elapsed = time.monotonic() - t
# VmHWM, not ru_maxrss: Linux carries ru_maxrss over execve from the (large) parent.
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0]
rss = int(hwm.split()[1]) / 1024
links = report.links.to_dict() if report and report.links else None
print(json.dumps({"ms": elapsed * 1000, "rss_mb": rss, "links": links}))
"""


def build(size: int, new: int) -> Path:
    root = DATA / f"consolidate-{size}-{new}"
    if (root / ".cortex" / "cortex.db").is_file():
        return root
    root.mkdir(parents=True, exist_ok=True)
    corpus = Corpus(seed=size + 7)
    rng = np.random.default_rng(size)
    with Context.for_cwd(root) as ctx:
        store = ctx.writable("project")
        model = configured_model(ctx)
        for start in range(0, size, 5_000):
            store.add_memories(corpus.memories(min(5_000, size - start)))
        store.set_linked_seq(size)
        store.add_memories(corpus.memories(new))
        while rows := store.embedding_backlog(model, 5_000):
            vectors = rng.standard_normal((len(rows), 384)).astype(np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            pairs = zip(rows, vectors, strict=True)
            items = [(s, m.content_hash, vector_bytes(v)) for (s, m), v in pairs]
            store.put_embeddings(model, 384, items)
    return root


def run(root: Path, due: bool) -> dict:
    work = root.with_name(root.name + "-run")
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(root, work)
    with Context.for_cwd(work) as ctx:
        store = ctx.require("project")
        # Due: the 10th capture since the last run. Not due: the 1st, the store already
        # above 80 active memories at the last run.
        store.write(
            lambda conn: conn.execute(
                "UPDATE upkeep_state SET extractions = ?, active_at_last_run = "
                "(SELECT count(*) FROM memories WHERE status = 'active')",
                (9 if due else 0,),
            )
        )
    out = subprocess.run(
        [sys.executable, "-c", RUN, str(work)], capture_output=True, text=True, check=True
    )
    shutil.rmtree(work, ignore_errors=True)
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--new", type=int, default=30)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    root = build(args.size, args.new)
    print(f"{args.size:,} memories linked, {args.new} new, {args.runs} runs")
    for name, due in (("due", True), ("not due", False)):
        results = [run(root, due) for _ in range(args.runs)]
        ms = statistics.median(r["ms"] for r in results)
        rss = max(r["rss_mb"] for r in results)
        links = results[0]["links"] or {}
        shown = {k: v for k, v in links.items() if k != "checkpoint"}
        print(f"  {name:8} {ms:8.0f} ms  peak RSS {rss:5.0f} MB  {shown or 'did not run'}")


if __name__ == "__main__":
    main()
