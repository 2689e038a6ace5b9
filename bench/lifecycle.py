"""A lifecycle pass over 100k memories: how long decay, archive and prune take, and the dry run.

The store: 100k memories from ``corpus.Corpus`` (every type, priorities, access counts), created
over the 180 days before T, 1% pinned, confidences 0.4-1.0, and 20k edges whose targets follow
a Zipf law (a few hubs). Scenarios, each on a fresh copy of the same file:

* first pass   never run before: every decaying memory is decayed from its creation, many are
               archived at once (what the first Stop after an upgrade does);
* daily pass   the pass of the next day (the steady state: everything decays by one day);
* prune pass   30 days after the first: what it archived is pruned (a backup is taken first);
* not due      ``maybe_run`` when the last pass is under 24 h old (every other Stop hook).

Each is the median of ``--runs`` runs (default 5) in process, the store already open.

Run:  .venv/bin/python bench/lifecycle.py [--size 100000] [--runs 5]
Stores are built once under $CORTEX_BENCH_DATA (default: <tmp>/cortex-bench).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cortexmem.model import format_time, new_id
from cortexmem.services.context import Context
from cortexmem.services.lifecycle import maybe_run, run_lifecycle

from corpus import Corpus

DATA = Path(os.environ.get("CORTEX_BENCH_DATA", Path(tempfile.gettempdir()) / "cortex-bench"))
T = datetime(2026, 1, 1, tzinfo=UTC)


def build(size: int) -> Path:
    """The store before any pass (cached)."""
    root = DATA / f"lifecycle-{size}"
    db = root / ".cortex" / "cortex.db"
    if db.is_file():
        return root
    root.mkdir(parents=True, exist_ok=True)
    corpus = Corpus(seed=size + 1)
    rng = random.Random(size)
    ids: list[str] = []
    with Context.for_cwd(root) as ctx:
        store = ctx.writable("project")
        for start in range(0, size, 5_000):
            batch = []
            for m in corpus.memories(min(5_000, size - start)):
                created = T - timedelta(days=rng.uniform(0, 180))
                batch.append(
                    m.with_changes(
                        created_at=format_time(created),
                        updated_at=format_time(created),
                        confidence=round(rng.uniform(0.4, 1.0), 3),
                        pinned=rng.random() < 0.01,
                    )
                )
            store.add_memories(batch)
            ids += [m.id for m in batch]
        targets = rng.choices(ids, weights=[1 / (rank + 1) for rank in range(len(ids))],
                              k=size // 5)  # fmt: skip
        sources = rng.choices(ids, k=len(targets))
        edges = {(s, t) for s, t in zip(sources, targets, strict=True) if s != t}
        when = format_time(T)
        store.write(
            lambda conn: conn.executemany(
                "INSERT OR IGNORE INTO edges (id, source_id, target_id, relation_type, strength, "
                "bidirectional, status, created_at) VALUES (?, ?, ?, 'relates_to', 1, 0, "
                "'active', ?)",
                [(new_id("e"), s, t, when) for s, t in edges],
            )
        )
    return root


def stage(template: Path, name: str, passes: list[datetime]) -> Path:
    """A copy of ``template`` with passes already run at ``passes`` (cached)."""
    root = DATA / f"{template.name}-{name}"
    if (root / ".cortex" / "cortex.db").is_file():
        return root
    shutil.rmtree(root, ignore_errors=True)
    (root / ".cortex").mkdir(parents=True)
    shutil.copyfile(template / ".cortex" / "cortex.db", root / ".cortex" / "cortex.db")
    with Context.for_cwd(root) as ctx:
        for when in passes:
            run_lifecycle(ctx, when)
    return root


def timed(source: Path, runs: int, action) -> tuple[float, dict]:
    """Median ms of ``action(ctx)`` over ``runs`` fresh copies of ``source``; its last report."""
    times = []
    report = None
    for _ in range(runs):
        work = Path(tempfile.mkdtemp(prefix="cx-life-", dir=DATA))
        try:
            (work / ".cortex").mkdir()
            shutil.copyfile(source / ".cortex" / "cortex.db", work / ".cortex" / "cortex.db")
            with Context.for_cwd(work) as ctx:
                ctx.existing()  # open (and migrate) outside the timing
                started = time.perf_counter()
                report = action(ctx)
                times.append(1000 * (time.perf_counter() - started))
        finally:
            shutil.rmtree(work, ignore_errors=True)
    counts = report.counts() if report is not None else {}
    return statistics.median(times), counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    os.environ.setdefault("CORTEX_HOME", str(DATA / "home"))
    DATA.mkdir(parents=True, exist_ok=True)

    started = time.perf_counter()
    fresh = build(args.size)
    after_first = stage(fresh, "after-first", [T])
    print(f"store: {args.size:,} memories (built/staged in {time.perf_counter() - started:.1f} s)")

    scenarios = [
        ("first pass", fresh, lambda ctx: run_lifecycle(ctx, T)),
        ("first pass, dry run", fresh, lambda ctx: run_lifecycle(ctx, T, dry_run=True)),
        ("daily pass", after_first, lambda ctx: run_lifecycle(ctx, T + timedelta(days=1))),
        ("daily pass, dry run", after_first,
         lambda ctx: run_lifecycle(ctx, T + timedelta(days=1), dry_run=True)),
        ("prune pass (+ backup)", after_first,
         lambda ctx: run_lifecycle(ctx, T + timedelta(days=30))),
        ("prune pass, dry run", after_first,
         lambda ctx: run_lifecycle(ctx, T + timedelta(days=30), dry_run=True)),
        ("maybe_run, not due", after_first,
         lambda ctx: maybe_run(ctx, T + timedelta(hours=12)) or _NoReport()),
    ]  # fmt: skip
    header = f"{'scenario':<24} {'median ms':>10} {'decayed':>9} {'archived':>9} {'pruned':>8}"
    print(header)
    print("-" * len(header))
    for name, source, action in scenarios:
        ms, counts = timed(source, args.runs, action)
        print(
            f"{name:<24} {ms:>10.1f} {counts.get('decayed', 0):>9,} "
            f"{counts.get('archived', 0):>9,} {counts.get('pruned', 0):>8,}"
        )


class _NoReport:
    def counts(self) -> dict:
        return {}


if __name__ == "__main__":
    main()
