"""In-process hybrid recall latency at 1k, 10k and 100k memories (pytest-benchmark).

Each round is one whole recall: the query embedded by the real local model, BM25 over FTS5,
brute-force k-NN over the cached float32 matrix, fusion and ranking. The stored vectors are
random unit vectors under the local model's name: search cost does not depend on their values,
and embedding 100k memories for real would take minutes to build.

Run:  .venv/bin/python -m pytest bench/bench_hybrid.py --benchmark-only \\
          --benchmark-columns=median,iqr,ops --benchmark-sort=name
Stores are built once per size under $CORTEX_BENCH_DATA (default: <tmp>/cortex-bench).
"""

from __future__ import annotations

import itertools
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest

from cortexmem.services.context import Context
from cortexmem.services.embedding import Embedder
from cortexmem.services.recall import recall

from corpus import Corpus

DATA = Path(os.environ.get("CORTEX_BENCH_DATA", Path(tempfile.gettempdir()) / "cortex-bench"))
SIZES = [1_000, 10_000, 100_000]


def build(size: int) -> Path:
    """A store of ``size`` memories, every one with a vector."""
    root = DATA / f"hybrid-{size}"
    db = root / ".cortex" / "cortex.db"
    if db.is_file():
        return root
    root.mkdir(parents=True, exist_ok=True)
    with Context.for_cwd(root) as ctx:
        store = ctx.writable("project")
        Corpus(seed=size).fill(store, size)
        random_vectors(store, Embedder.for_context(ctx).model, np.random.default_rng(size))
    return root


def random_vectors(store, model: str, rng: np.random.Generator) -> None:
    """Give every memory without one a random unit vector under ``model``'s name."""
    while backlog := store.embedding_backlog(model, 5_000):
        vectors = rng.standard_normal((len(backlog), 384)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        store.put_embeddings(
            model, 384, [(seq, m.content_hash, v.tobytes()) for (seq, m), v in
                         zip(backlog, vectors, strict=True)]
        )  # fmt: skip


@pytest.fixture(scope="module", params=SIZES, ids=lambda n: f"{n // 1000}k")
def store_root(request, tmp_path_factory):
    os.environ["CORTEX_HOME"] = str(tmp_path_factory.mktemp("home"))
    return build(request.param)


def test_hybrid_recall(benchmark, store_root: Path):
    queries = itertools.cycle(Corpus(seed=97).queries(200))
    with Context.for_cwd(store_root) as ctx:
        embedder = Embedder.for_context(ctx)
        recall(ctx, "warm up", embedder=embedder, count_access=False)  # load model and matrix
        benchmark(lambda: recall(ctx, next(queries), limit=10, embedder=embedder,
                                 count_access=False))  # fmt: skip


def test_vector_leg_only(benchmark, store_root: Path):
    queries = itertools.cycle(Corpus(seed=96).queries(200))
    with Context.for_cwd(store_root) as ctx:
        embedder = Embedder.for_context(ctx)
        recall(ctx, "warm up", embedder=embedder, count_access=False)
        benchmark(lambda: recall(ctx, next(queries), limit=10, embedder=embedder, alpha=1.0,
                                 count_access=False))  # fmt: skip
