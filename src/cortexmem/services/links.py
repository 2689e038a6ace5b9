"""Auto-linking: each new memory is compared with its nearest older neighbours and the graph
gets ``relates_to`` edges (active or suggested) and merge candidates (``core.similarity``).

"New" is everything past the upkeep cursor (the seq of the last memory linked). Each memory is
compared once, with memories older than itself, so every pair is looked at exactly once, from
its newer end; edges go newer → older and are bidirectional (``relates_to`` is symmetric).

Cost is bounded per memory and per run:

* neighbours are the ``K_VECTOR`` nearest vectors plus the ``K_TEXT`` best full-text matches
  (BM25), never the whole store;
* an automatic run takes at most ``AUTO_LIMIT`` memories and stops at its deadline; the cursor
  records how far it got and the next run goes on from there;
* no embedding model is loaded here: vectors are those already in the store (the recall server
  or ``cortex reindex`` wrote them; ``cortex consolidate`` embeds first);
* in a hook (``stream_vectors``) the nearest neighbours are found by streaming the store's
  vectors in chunks of ``CHUNK`` rows, for a whole batch of new memories at once, so the hook
  never holds the whole matrix (at 100k memories that is 150 MB); the command line uses the
  cached matrix of ``services.vectors`` instead.

A memory whose vector has not been written yet is waited for (the run stops before it) while
embedding is alive — some vector of the model written in the last ``VECTOR_WAIT`` — so the
vector stage is not skipped just because the recall server had not caught up. A memory in a
store without vectors, or whose vector does not come, is linked by words alone (the Jaccard
stage). ``code`` memories are never auto-linked: a code body is linked to its description by
``source_of`` when it is indexed, and its words say little about what it is related to.

This module never creates ``supersedes`` edges (the store's ``apply_links`` refuses them).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, Protocol

from cortexmem.core.similarity import Verdict, decide, jaccard, word_set
from cortexmem.model import MEMORY_TYPES, Edge, Memory, parse_time, utc_now
from cortexmem.store.protocols import (
    CandidatePair,
    StoreInfo,
    UpkeepStore,
    VectorStore,
    pair,
)

K_VECTOR = 20
K_TEXT = 20
AUTO_LIMIT = 100
BATCH = 32
CHUNK = 2048
VECTOR_WAIT = timedelta(hours=24)
SKIP_TYPES: tuple[str, ...] = ("code",)
LINKED_TYPES = tuple(t for t in MEMORY_TYPES if t not in SKIP_TYPES)


class LinkingStore(UpkeepStore, VectorStore, StoreInfo, Protocol):
    """What linking needs of a store: upkeep, its vectors, and its name (the vector cache's
    key)."""


@dataclass(frozen=True)
class Proposal:
    """What one pair (``new_id`` newer, ``old_id`` older) should become."""

    new_id: str
    old_id: str
    jaccard: float
    cosine: float | None
    verdict: Verdict

    def edge(self) -> Edge | None:
        status = self.verdict.edge_status
        if status is None:
            return None
        strength = min(1.0, max(0.0, self.cosine if self.cosine is not None else self.jaccard))
        return Edge(
            self.new_id, self.old_id, "relates_to", strength=strength, bidirectional=True,
            status=status,
        )  # fmt: skip

    def candidate(self) -> CandidatePair | None:
        if self.verdict is not Verdict.MERGE:
            return None
        a, b = pair(self.new_id, self.old_id)
        return CandidatePair(a, b, self.jaccard, self.cosine)


@dataclass
class LinkPlan:
    proposals: list[Proposal] = field(default_factory=list)
    linked_seq: int = 0
    examined: int = 0
    waiting: int = 0
    vectors: bool = False

    def edges(self) -> list[Edge]:
        return [e for p in self.proposals if (e := p.edge()) is not None]

    def candidates(self) -> list[CandidatePair]:
        return [c for p in self.proposals if (c := p.candidate()) is not None]


@dataclass
class LinkReport:
    examined: int = 0
    related: int = 0
    suggested: int = 0
    candidates: int = 0
    waiting: int = 0
    vectors: bool = False
    checkpoint: Path | None = None

    @property
    def changed(self) -> bool:
        return bool(self.related or self.suggested or self.candidates)

    def to_dict(self) -> dict[str, Any]:
        return {
            "examined": self.examined,
            "related": self.related,
            "suggested": self.suggested,
            "candidates": self.candidates,
            "waiting": self.waiting,
            "vectors": self.vectors,
            "checkpoint": str(self.checkpoint) if self.checkpoint else None,
        }


# ----------------------------------------------------------------------------- vectors


class _MatrixVectors:
    """Neighbours from the cached in-memory matrix (``services.vectors.index_for``)."""

    def __init__(self, store: LinkingStore, model: str) -> None:
        from cortexmem.services.vectors import index_for

        self.index = index_for(store, model)
        self.position = {int(s): i for i, s in enumerate(self.index.seqs)}

    def get(self, seqs: list[int]) -> dict[int, Any]:
        return {s: self.index.matrix[self.position[s]] for s in seqs if s in self.position}

    def nearest(self, queries: dict[int, Any], k: int) -> dict[int, list[tuple[int, float]]]:
        # Archived neighbours are dropped by the caller; ask for extra to make up for them.
        return {
            seq: [(s, c) for s, c in self.index.search(vec, 2 * k + 1, LINKED_TYPES) if s < seq]
            for seq, vec in queries.items()
        }


class _StreamedVectors:
    """Neighbours found by streaming the store's vectors chunk by chunk (bounded memory)."""

    def __init__(self, store: VectorStore, model: str) -> None:
        import numpy as np

        self.np = np
        self.store = store
        self.model = model

    def _array(self, blob: bytes) -> Any:
        return self.np.frombuffer(blob, dtype="<f4")

    def get(self, seqs: list[int]) -> dict[int, Any]:
        found = self.store.vectors_of(self.model, seqs)
        return {s: self._array(b) for s, b in found.items()}

    def nearest(self, queries: dict[int, Any], k: int) -> dict[int, list[tuple[int, float]]]:
        np = self.np
        if not queries:
            return {}
        qseqs = np.array(sorted(queries), dtype=np.int64)
        q = np.stack([queries[int(s)] for s in qseqs]).astype(np.float32)
        best_seq = np.full((len(qseqs), k), -1, dtype=np.int64)
        best_sim = np.full((len(qseqs), k), -np.inf, dtype=np.float32)
        dim = q.shape[1]
        block = np.empty((CHUNK, dim), dtype=np.float32)
        seqs = np.empty(CHUNK, dtype=np.int64)

        def sink(i: int, seq: int, blob: bytes) -> None:
            seqs[i] = seq
            block[i] = np.frombuffer(blob, dtype="<f4") if len(blob) == 4 * dim else np.nan

        after, before = 0, int(qseqs.max())
        while True:
            n = self.store.vector_chunk(self.model, after, before, CHUNK, SKIP_TYPES, sink)
            if n == 0:
                break
            sims = q @ block[:n].T
            sims[(seqs[None, :n] >= qseqs[:, None]) | np.isnan(sims)] = -np.inf  # older only
            all_sim = np.hstack([best_sim, sims])
            all_seq = np.hstack([best_seq, np.broadcast_to(seqs[:n], sims.shape)])
            top = np.argpartition(-all_sim, k - 1, axis=1)[:, :k]
            best_sim = np.take_along_axis(all_sim, top, axis=1)
            best_seq = np.take_along_axis(all_seq, top, axis=1)
            after = int(seqs[n - 1])
            if n < CHUNK:
                break
        out: dict[int, list[tuple[int, float]]] = {}
        for i, seq in enumerate(qseqs):
            pairs = [
                (int(s), float(c))
                for s, c in zip(best_seq[i], best_sim[i], strict=True)
                if s >= 0 and np.isfinite(c)
            ]
            out[int(seq)] = sorted(pairs, key=lambda p: (-p[1], p[0]))
        return out


# ----------------------------------------------------------------------------- planning


def _text(memory: Memory) -> str:
    return f"{memory.content} {memory.summary}" if memory.summary else memory.content


def embedding_alive(store: VectorStore, model: str) -> bool:
    """Whether some vector of ``model`` was written within ``VECTOR_WAIT``."""
    last = store.last_embedded_at(model)
    if last is None:
        return False
    return parse_time(utc_now()) - parse_time(last) < VECTOR_WAIT


def _unlinked(store: UpkeepStore, after: int, page: int = 200) -> Iterator[tuple[int, Memory]]:
    """The memories past the cursor, a page at a time (a first run may have a whole history
    to go through, and stops long before the end)."""
    while True:
        rows = store.memories_after(after, page)
        yield from rows
        if len(rows) < page:
            return
        after = rows[-1][0]


def plan_links(
    store: LinkingStore,
    *,
    model: str | None,
    limit: int | None = AUTO_LIMIT,
    deadline: float | None = None,
    wait_for_vectors: bool = True,
    stream_vectors: bool = True,
) -> LinkPlan:
    """Decide, without writing anything, what the memories past the cursor link to."""
    state = store.upkeep_state()
    plan = LinkPlan(linked_seq=state.linked_seq)
    if not state.unlinked:
        return plan
    source: _MatrixVectors | _StreamedVectors | None = None
    if model is not None and store.embedding_state(model)[0] > 0:
        source = (_StreamedVectors if stream_vectors else _MatrixVectors)(store, model)
        plan.vectors = True
    wait = bool(source is not None and wait_for_vectors and embedding_alive(store, model or ""))

    def out_of_time() -> bool:
        return deadline is not None and time.monotonic() >= deadline

    # Memories are taken in seq order; the cursor only ever covers a gap-free prefix.
    batch: list[tuple[int, Memory, Any]] = []
    stopped = False
    pages = _unlinked(store, state.linked_seq)
    while not stopped and (limit is None or plan.examined < limit):
        batch.clear()
        for seq, memory in pages:
            if memory.status != "active" or memory.memory_type in SKIP_TYPES:
                batch.append((seq, memory, None))  # passed over, but in order
                continue
            vector = source.get([seq]).get(seq) if source is not None else None
            if vector is None and wait:
                stopped = True
                break
            batch.append((seq, memory, vector))
            examined = plan.examined + sum(1 for _, m, _ in batch if _linkable(m))
            if len(batch) >= BATCH or (limit is not None and examined >= limit):
                break
        else:
            stopped = True
        if not batch:
            break
        queries = {seq: vector for seq, _, vector in batch if vector is not None}
        near = source.nearest(queries, K_VECTOR) if source is not None and queries else {}
        for seq, memory, vector in batch:
            if out_of_time() or (limit is not None and plan.examined >= limit):
                stopped = True
                break
            if _linkable(memory):
                plan.proposals += _proposals(store, seq, memory, vector, near.get(seq, []), source)
                plan.examined += 1
            plan.linked_seq = seq
    plan.waiting = store.count_after(plan.linked_seq)
    return plan


def _linkable(memory: Memory) -> bool:
    return memory.status == "active" and memory.memory_type not in SKIP_TYPES


def _proposals(
    store: UpkeepStore,
    seq: int,
    memory: Memory,
    vector: Any,
    near: list[tuple[int, float]],
    source: _MatrixVectors | _StreamedVectors | None,
) -> list[Proposal]:
    text = _text(memory)
    neighbours = dict(store.text_neighbours(text, seq, K_TEXT, SKIP_TYPES))
    cosines = dict(near)
    if near:
        found = store.memories_by_seq(cosines)
        close = [s for s, _ in near if s in found and found[s].status == "active"][:K_VECTOR]
        neighbours.update((s, found[s]) for s in close)
    if not neighbours:
        return []
    if vector is not None and source is not None:
        missing = [s for s in neighbours if s not in cosines]
        for other_seq, other_vector in source.get(missing).items():
            if len(other_vector) == len(vector):
                cosines[other_seq] = float(vector @ other_vector)
    settled = store.settled_with(memory.id)
    words = word_set(text)
    out = []
    for other_seq in sorted(neighbours):
        other = neighbours[other_seq]
        if other.id == memory.id or other.id in settled:
            continue
        score = jaccard(words, word_set(_text(other)))
        cosine = cosines.get(other_seq) if vector is not None else None
        if cosine is not None:
            cosine = max(-1.0, min(1.0, cosine))
        verdict = decide(score, cosine)
        if verdict is not Verdict.NONE:
            out.append(Proposal(memory.id, other.id, score, cosine, verdict))
    return out


def link_new(
    store: LinkingStore,
    *,
    model: str | None,
    limit: int | None = AUTO_LIMIT,
    deadline: float | None = None,
    wait_for_vectors: bool = True,
    stream_vectors: bool = True,
    checkpoint: Callable[[], Path] | None = None,
) -> LinkReport:
    """Plan, take the checkpoint when the plan changes anything, then apply it in one
    transaction (edges, merge candidates and the advanced cursor together)."""
    plan = plan_links(
        store,
        model=model,
        limit=limit,
        deadline=deadline,
        wait_for_vectors=wait_for_vectors,
        stream_vectors=stream_vectors,
    )
    report = LinkReport(examined=plan.examined, waiting=plan.waiting, vectors=plan.vectors)
    edges, candidates = plan.edges(), plan.candidates()
    if edges or candidates:
        if checkpoint is not None:
            report.checkpoint = checkpoint()
        store.apply_links(edges, candidates, plan.linked_seq)
        report.related = sum(1 for e in edges if e.status == "active")
        report.suggested = sum(1 for e in edges if e.status == "suggested")
        report.candidates = len(candidates)
    elif plan.linked_seq > store.upkeep_state().linked_seq:
        store.set_linked_seq(plan.linked_seq)
    return report
