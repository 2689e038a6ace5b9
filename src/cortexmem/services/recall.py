"""Recall: hybrid search of the project and global stores, ranked together, served with links.

Two legs per store: FTS5 BM25 over the text and, when the store has vectors from the current
model, a brute-force k-NN over the cached vector matrix. Reciprocal rank fusion joins them
(``alpha`` 0 = lexical only, 1 = vector only) and the seed's rank formula and recency re-rank
order the result (``core.fusion``). Results of a prose description come with the code they
describe (``source_of`` edges), and everything served has its recall counter bumped.

The embedding model is loaded only when some store has vectors to search; a store without
any answers lexically, at lexical speed.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, ClassVar, Protocol

from cortexmem import settings
from cortexmem.core.episodes import EPISODE_TAG, as_memory, superseded
from cortexmem.core.filters import MemoryFilter
from cortexmem.core.fusion import DEFAULT_ALPHA, hybrid_rank
from cortexmem.core.ranking import CANDIDATE_POOL, Candidate, Ranked, rank
from cortexmem.core.text import clean_text
from cortexmem.errors import StoreReadOnly
from cortexmem.model import utc_now
from cortexmem.services.context import SCOPES, Context, Scope
from cortexmem.store.protocols import Store

VECTOR_POOL = CANDIDATE_POOL
# With a floor, a result found by meaning alone is kept within this of the best cosine.
MEANING_SPREAD = 0.15
# ... and, when words found results too, at least this close in meaning.
MEANING_BESIDE_WORDS = 0.55


class QueryEmbedder(Protocol):
    model: str

    def query(self, text: str) -> Any: ...


def default_alpha() -> float:
    """The vector leg's weight: ``$CORTEX_RECALL_ALPHA`` or the default (``DEFAULT_ALPHA``)."""
    return settings.recall_alpha(DEFAULT_ALPHA)


def recall(
    ctx: Context,
    query: str,
    *,
    types: tuple[str, ...] = (),
    scopes: tuple[Scope, ...] = SCOPES,
    branch: str | None = None,
    all_branches: bool = False,
    limit: int = 10,
    statuses: tuple[str, ...] = ("active",),
    count_access: bool = True,
    alpha: float | None = None,
    embedder: QueryEmbedder | None = None,
    with_links: bool = True,
    similarities: dict[tuple[str, str], float] | None = None,
    word_scores: dict[tuple[str, str], float] | None = None,
    baselines: dict[tuple[str, str], float] | None = None,
    episodes: bool = True,
    floor: float | None = None,
) -> list[Ranked]:
    """The best ``limit`` memories for ``query``.

    ``branch`` defaults to the current git branch (progress and context from other branches are
    hidden); ``all_branches`` lifts that. Each leg of each store yields a fixed-size candidate
    pool, so the order never depends on ``limit`` (which is capped at the pool size).
    ``embedder`` defaults to the project's configured model, loaded only if needed.
    ``similarities``, when given, receives the cosine similarity of every vector candidate by
    ``(scope, id)`` (anticipatory retrieval judges relevance by it); ``word_scores``, likewise, the
    BM25 relevance (higher is better) of every candidate the query's words found; ``baselines``,
    the cosine similarity to no text at all of each result found by meaning (how close it comes
    to any query: a short, generic line is near everything). ``statuses`` with
    "archived" serves archived memories too, and restores those the lifecycle archived.
    ``episodes`` (what was said in sessions) are searched beside the memories unless turned off
    or ``types`` names memory types only (``"episode"`` in ``types`` asks for them); they are
    not filtered by branch or status (they are the record), and their results carry ``episode``.
    ``floor`` (a cosine similarity, e.g. ``RELEVANCE_FLOOR``): when the query's meaning is
    known (vectors exist) and nothing comes that close, nothing is relevant: the answer is
    empty; a result found by meaning alone below the floor is dropped.
    """
    query = clean_text(query)  # argv / JSON text may hold lone surrogates or NULs
    if not all_branches and branch is None:
        branch, _ = ctx.paths.branch_and_commit()
    flt = MemoryFilter(types=types, branch=None if all_branches else branch, statuses=statuses)
    limit = min(limit, CANDIDATE_POOL)
    alpha = default_alpha() if alpha is None else min(1.0, max(0.0, float(alpha)))
    stores = ctx.existing(scopes)
    episodes = episodes and (not types or EPISODE_TAG in types)
    # The vector leg's heavy part (embedding the query, the matrix product) runs in a worker
    # thread while this one runs FTS5: both release the GIL, so the legs overlap.
    pending = (
        VectorSearch.start(
            ctx,
            stores,
            query,
            flt,
            embedder,
            episodes=episodes,
            judge=floor is not None or baselines is not None,
        )
        if alpha > 0.0
        else None
    )
    lexical: list[Candidate] = []
    ep_lexical: list[Candidate] = []
    if alpha < 1.0:
        for scope, store in stores:
            lexical += store.search_text(query, flt, CANDIDATE_POOL, scope)
            if episodes:
                ep_lexical += [
                    Candidate(as_memory(ep), scope, relevance, episode=ep)
                    for _, ep, relevance in store.search_episodes(query, CANDIDATE_POOL)
                ]
    vector = pending.candidates() if pending is not None else []
    ep_vector = pending.episode_candidates() if pending is not None else []
    if "archived" not in statuses:  # an older version of a document is history, asked for so
        stale = _replaced(stores, ep_lexical + ep_vector)
        ep_lexical = [c for c in ep_lexical if (c.scope, c.memory.id) not in stale]
        ep_vector = [c for c in ep_vector if (c.scope, c.memory.id) not in stale]
    if similarities is not None:
        similarities.update({(c.scope, c.memory.id): c.relevance for c in vector + ep_vector})
    if word_scores is not None:
        word_scores.update({(c.scope, c.memory.id): c.relevance for c in lexical + ep_lexical})
    by_meaning = {(c.scope, c.memory.id): c.relevance for c in vector + ep_vector}
    if alpha > 0.0 and not vector and not ep_vector and alpha < 1.0:
        alpha = 0.0  # nothing embedded yet: the lexical ranking, unchanged
    if alpha == 0.0 and not ep_lexical:
        results = rank(lexical, limit)  # lexical only: BM25 relevance blended with importance
    else:
        results = hybrid_rank(
            lexical, vector, alpha=alpha, limit=limit, now=datetime.now(UTC),
            episode_lexical=ep_lexical, episode_vector=ep_vector,
        )  # fmt: skip
    if floor is not None and by_meaning:
        worded = {(c.scope, c.memory.id) for c in lexical + ep_lexical}
        # Kept: what comes close in meaning, and what words found that has no vector yet or
        # is not far off in meaning; weak matches by meaning or by a stray word are dropped.
        # By meaning alone, a result also stays near the best one (short texts that share
        # only the project's label come out alike).
        bar = max(floor, max(by_meaning.values()) - MEANING_SPREAD)
        if any(key in worded for key in by_meaning):
            bar = max(bar, MEANING_BESIDE_WORDS)  # words found it: meaning alone must be clear
        elif not any(c.isalnum() for c in query):
            # "?!.", "😀", "{}": no word, so no meaning to match; the nearest texts are the
            # short lines close to every query (at 0.6-0.8 with the local model)
            bar = float("inf")
        results = [
            r
            for r in results
            if (
                by_meaning.get((r.scope, r.memory.id), -1.0) >= bar
                and ((r.scope, r.memory.id) in worded or not _generic(r, by_meaning, pending))
            )
            or (
                (r.scope, r.memory.id) in worded
                and by_meaning.get((r.scope, r.memory.id), floor) >= floor / 2
            )
        ]
    if baselines is not None and pending is not None:
        for r in results:
            near = pending.generic((r.scope, r.memory.id))
            if near is not None:
                baselines[(r.scope, r.memory.id)] = near
    if with_links and results:
        results = _with_links(ctx, results)
    if count_access and results:
        when = utc_now()
        for scope, store in stores:
            served = [r.memory.id for r in results if r.scope == scope and r.episode is None]
            with contextlib.suppress(StoreReadOnly):  # best effort: a read-only store answers
                store.record_access(served, when)
        if "archived" in statuses:
            results = _restore_archived(ctx, results)
    return results


def _replaced(stores: list[tuple[Scope, Store]], found: list[Candidate]) -> set[tuple[str, str]]:
    """The ``(scope, id)`` of the passages in ``found`` of a document a later whole read of it
    replaced (``core.episodes.superseded``): one look-up a store, for both legs."""
    stale: set[tuple[str, str]] = set()
    for scope, store in stores:
        mine = {c.episode.id: c.episode for c in found if c.scope == scope
                and c.episode is not None and c.episode.document}  # fmt: skip
        if mine:
            newest = store.newest_versions(e.document for e in mine.values() if e.document)
            stale |= {(scope, i) for i in superseded(mine.values(), newest)}
    return stale


def _generic(
    result: Ranked, by_meaning: dict[tuple[str, str], float], pending: VectorSearch | None
) -> bool:
    """A passage or memory no closer in meaning to the query than to no text at all: a short
    line ("ok, fine, let's do vite", "are they still being written?") is near every query,
    so its similarity says nothing of this one."""
    key = (result.scope, result.memory.id)
    near = pending.generic(key) if pending is not None else None
    return near is not None and by_meaning.get(key, -1.0) <= near


def _restore_archived(ctx: Context, results: list[Ranked]) -> list[Ranked]:
    """A memory the lifecycle archived that recall serves is back in use: restore it
    (``services.lifecycle``). One a person archived (``cortex forget``) stays archived."""
    served = [(r.scope, r.memory.id) for r in results if r.memory.status == "archived"]
    if not served:
        return results
    from cortexmem.services.lifecycle import restore_served

    restored = restore_served(ctx, served)
    return [
        replace(r, memory=r.memory.with_changes(status="active"))
        if (r.scope, r.memory.id) in restored
        else r
        for r in results
    ]


class VectorSearch:
    """One query's vector leg across stores: started early, collected after the lexical leg."""

    _pool: Any = None
    # the empty query's vector, by model and project (a long-lived server embeds it once)
    _nothing: ClassVar[dict[tuple[str, str], Any]] = {}

    def __init__(
        self,
        stores: list[tuple[Scope, Store, Any]],
        flt: MemoryFilter,
        future: Any,
        episode_stores: list[tuple[Scope, Store, Any]] | None = None,
        embedder: QueryEmbedder | None = None,
    ) -> None:
        self.stores = stores  # [(scope, store, index)]
        self.flt = flt
        self.future = future
        self.episode_stores = episode_stores or []
        self.embedder = embedder  # set when results are judged against a floor
        # where each candidate's vector is, by (scope, id): (its store for a memory, whose
        # row is looked up when asked, the index, an episode's row)
        self.rows: dict[tuple[str, str], tuple[Any, Any, int | None]] = {}

    def _nothing_vector(self) -> Any:
        """The empty query's vector (unit length), embedded once a model and project."""
        import numpy as np

        assert self.embedder is not None
        key = (self.embedder.model, str(getattr(self.embedder, "project", "")))
        if key not in self._nothing:
            vector = np.asarray(self.embedder.query(""), dtype=np.float32)
            self._nothing[key] = vector / max(float(np.linalg.norm(vector)), 1e-12)
        return self._nothing[key]

    @classmethod
    def start(
        cls,
        ctx: Context,
        stores: list[tuple[Scope, Store]],
        query: str,
        flt: MemoryFilter,
        embedder: QueryEmbedder | None,
        *,
        episodes: bool = True,
        judge: bool = False,
    ) -> VectorSearch | None:
        """The vector leg, started in a worker thread (None: nothing is embedded). ``judge``:
        results will be judged against a relevance floor, which needs what the query and
        each candidate has in common with no text at all (``generic``)."""
        if embedder is None:
            from cortexmem.services.embedding import configured_model

            model = configured_model(ctx)
        else:
            model = embedder.model
        searchable = [(s, st) for s, st in stores if st.embedding_state(model)[0] > 0]
        said = (
            [(s, st) for s, st in stores if st.episode_embedding_state(model)[0] > 0]
            if episodes
            else []
        )
        if not searchable and not said:
            return None
        from concurrent.futures import ThreadPoolExecutor

        from cortexmem.services.vectors import episode_index_for, index_for

        if embedder is None:
            from cortexmem.services.embedding import Embedder

            embedder = Embedder.for_context(ctx)
        # Indexes are refreshed here: the store's connection belongs to this thread.
        indexed = [(scope, store, index_for(store, model)) for scope, store in searchable]
        ep_indexed = [(scope, store, episode_index_for(store, model)) for scope, store in said]
        if cls._pool is None:
            cls._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cortex-vectors")
        chosen = embedder

        def search() -> tuple[Any, list[list[tuple[int, float]]], list[list[tuple[int, float]]]]:
            vector = chosen.query(query)
            return (
                vector,
                [index.search(vector, VECTOR_POOL, flt.types) for *_, index in indexed],
                [index.search(vector, VECTOR_POOL) for *_, index in ep_indexed],
            )

        return cls(indexed, flt, cls._pool.submit(search), ep_indexed, chosen if judge else None)

    def episode_candidates(self) -> list[Candidate]:
        _, _, all_hits = self.future.result()
        found: list[Candidate] = []
        for (scope, store, index), hits in zip(self.episode_stores, all_hits, strict=True):
            by_seq = store.episodes_by_seq(seq for seq, _ in hits)
            found += [
                Candidate(as_memory(by_seq[seq]), scope, similarity, episode=by_seq[seq])
                for seq, similarity in hits
                if seq in by_seq
            ]
            self.rows.update(
                {(scope, by_seq[s].id): (None, index, s) for s, _ in hits if s in by_seq}
            )
        return found

    def candidates(self) -> list[Candidate]:
        vector, all_hits, _ = self.future.result()
        found: list[Candidate] = []
        for (scope, store, index), hits in zip(self.stores, all_hits, strict=True):
            picked = store.candidates_by_seq(hits, self.flt, scope)
            k = len(hits)
            # The filter (branch, status) dropped some: look further down the list.
            while len(picked) < VECTOR_POOL and 0 < k < len(index):  # 0: no vector has the type
                k = min(len(index), k * 4)
                picked = store.candidates_by_seq(index.search(vector, k, self.flt.types),
                                                 self.flt, scope)  # fmt: skip
            picked = picked[:VECTOR_POOL]
            found += picked
            self.rows.update({(scope, c.memory.id): (store, index, None) for c in picked})
        return found

    def generic(self, key: tuple[str, str]) -> float | None:
        """The cosine similarity of the candidate ``key`` to no text at all (``None``: not a
        candidate of this leg, or results are not judged). Only what a floor judges asks,
        so the empty query is embedded only then."""
        where = self.rows.get(key)
        if where is None or self.embedder is None:
            return None
        store, index, seq = where
        if seq is None:  # a memory: its row in the store
            seq = store.seq_of([key[1]]).get(key[1])
            if seq is None:
                return None
        (near,) = index.similarity_of(self._nothing_vector(), [seq])
        return None if math.isnan(near) else near


def _with_links(ctx: Context, results: list[Ranked]) -> list[Ranked]:
    """Attach the code each prose description is the ``source_of``."""
    out = []
    for r in results:
        if r.memory.memory_type != "code_description":
            out.append(r)
            continue
        store = ctx.require(r.scope)  # type: ignore[arg-type]
        targets = [
            e.target_id
            for e in store.edges_touching([r.memory.id])
            if e.source_id == r.memory.id
            and e.relation_type == "source_of"
            and e.status == "active"
        ]
        linked = store.get_memories(targets)
        code = tuple(m for m in (linked.get(t) for t in targets) if m and m.status == "active")
        out.append(replace(r, linked=code))
    # Code served under its description is not listed again on its own.
    shown = {m.id for r in out for m in r.linked}
    return [r for r in out if r.memory.id not in shown]
