"""In-process lexical recall latency at 1k, 10k and 100k memories (pytest-benchmark).

Run:  .venv/bin/python -m pytest bench/bench_recall.py --benchmark-only \
          --benchmark-columns=median,iqr,ops --benchmark-sort=name
Stores are built once per size under $CORTEX_BENCH_DATA (default: <tmp>/cortex-bench), outside
any git repository so each size gets its own project store; delete the folder to rebuild.
"""

from __future__ import annotations

import itertools
import os
import tempfile
from pathlib import Path

import pytest

from cortexmem.services.context import Context
from cortexmem.services.recall import recall

from corpus import Corpus

DATA = Path(os.environ.get("CORTEX_BENCH_DATA", Path(tempfile.gettempdir()) / "cortex-bench"))
SIZES = [1_000, 10_000, 100_000]


def build(size: int) -> Path:
    root = DATA / f"recall-{size}"
    db = root / ".cortex" / "cortex.db"
    if db.is_file():
        return root
    root.mkdir(parents=True, exist_ok=True)
    with Context.for_cwd(root) as ctx:
        Corpus(seed=size).fill(ctx.writable("project"), size)
    return root


@pytest.fixture(scope="module", params=SIZES, ids=lambda n: f"{n // 1000}k")
def store_root(request, tmp_path_factory):
    os.environ["CORTEX_HOME"] = str(tmp_path_factory.mktemp("home"))
    return build(request.param)


def test_recall(benchmark, store_root: Path):
    queries = itertools.cycle(Corpus(seed=99).queries(200))
    with Context.for_cwd(store_root) as ctx:
        # count_access=False keeps the store identical between rounds; the write is measured
        # separately below.
        benchmark(lambda: recall(ctx, next(queries), limit=10, count_access=False))


def test_recall_with_access_update(benchmark, store_root: Path):
    queries = itertools.cycle(Corpus(seed=98).queries(200))
    with Context.for_cwd(store_root) as ctx:
        benchmark(lambda: recall(ctx, next(queries), limit=10))
