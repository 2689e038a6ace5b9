"""Keeping vectors in step with memories, and embedding recall queries.

The embedding synchroniser reads the backlog (memories with no vector from the current model
for their current content: new, edited, or embedded by another model) in batches of 50, embeds
each batch and commits it. Unchanged memories are never embedded twice (their content hash
matches); switching model in ``ai.yaml`` puts everything in the backlog, and old vectors are
replaced batch by batch while recall keeps working. Nothing here runs inside a capture hook:
the recall server drains the backlog between requests, and ``cortex reindex`` on demand.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from cortexmem.ai import Routing, effective_route, embed, embedding_text, routing_for
from cortexmem.model import Episode, Memory
from cortexmem.services.context import Context
from cortexmem.store.protocols import EpisodeStore, LessonStore, VectorStore

BATCH = 50


def memory_text(memory: Memory, project: str | None) -> str:
    """What is embedded for a memory: ``[type] [project:name]`` then content and summary."""
    # Content first: the model reads at most 256 word pieces, and the memory's own words must
    # not be cut off by a long summary.
    body = f"{memory.content} {memory.summary}" if memory.summary else memory.content
    return embedding_text(memory.memory_type, project, body)


def configured_model(ctx: Context) -> str:
    """The name of the model memories of this project are embedded with (no model loaded)."""
    return effective_route("memory", routing_for(ctx.paths.data_dir)).name


class Embedder:
    """The embedding façade bound to one project's routing."""

    def __init__(self, routing: Routing, project: str | None) -> None:
        self.routing = routing
        self.project = project
        self.route = effective_route("memory", routing)
        self.model = self.route.name
        code = effective_route("code", routing)
        # Code bodies go to the local model only; when memories use another model the code
        # would land in a different vector space, so it is found through its prose instead.
        self.skip_types: tuple[str, ...] = () if code.name == self.model else ("code",)

    @classmethod
    def for_context(cls, ctx: Context) -> Embedder:
        return cls(routing_for(ctx.paths.data_dir), ctx.paths.name)

    def query(self, text: str) -> Any:
        found = embed(
            [embedding_text(None, self.project, text)],
            use="memory",
            routing=self.routing,
            input_type="query",
        )
        return found.vectors[0]

    def episodes(self, episodes: Sequence[Episode], project: str | None) -> Any:
        """Episodes are embedded like a query's text: no type label, the project's name."""
        texts = [embedding_text(None, project, e.text) for e in episodes]
        return embed(texts, use="code", routing=self.routing).vectors

    @property
    def embeds_episodes(self) -> bool:
        """Episodes hold code as it was pasted: embedded only where code may go (local)."""
        return not self.skip_types

    def memories(self, memories: Sequence[Memory], project: str | None) -> Any:
        texts = [memory_text(m, project) for m in memories]
        use = "code" if memories and all(m.memory_type == "code" for m in memories) else "memory"
        return embed(texts, use=use, routing=self.routing).vectors


class SyncedStore(VectorStore, EpisodeStore, LessonStore, Protocol):
    """What the sync reads and writes: memories', episodes' and lessons' vectors."""


@dataclass
class SyncReport:
    """What a sync embedded: ``embedded`` in all, of which ``memories``, ``episodes`` (what was
    said in sessions) and ``lessons``; ``remaining`` still waits (a deadline stopped it)."""

    model: str
    embedded: int = 0
    remaining: int = 0
    memories: int = 0
    episodes: int = 0
    lessons: int = 0

    @property
    def finished(self) -> bool:
        return self.remaining == 0


def sync(
    store: SyncedStore,
    embedder: Embedder,
    *,
    project: str | None,
    batch: int = BATCH,
    deadline: float | None = None,
    on_batch: Callable[[int], None] | None = None,
) -> SyncReport:
    """Embed ``store``'s backlog in batches (each committed) until done or ``deadline``."""
    from cortexmem.services.vectors import vector_bytes

    report = SyncReport(embedder.model)
    # The project's name is part of every embedded text: a renamed project re-embeds.
    store.relabel_embeddings(embedder.model, project or "")
    while deadline is None or time.monotonic() < deadline:
        items = store.embedding_backlog(embedder.model, batch, embedder.skip_types)
        if not items:
            break
        # One batch is one use: code and prose are embedded apart (code stays local).
        for group in (
            [(s, m) for s, m in items if m.memory_type == "code"],
            [(s, m) for s, m in items if m.memory_type != "code"],
        ):
            if not group:
                continue
            vectors = embedder.memories([m for _, m in group], project)
            rows = [
                (seq, memory.content_hash, vector_bytes(vector))
                for (seq, memory), vector in zip(group, vectors, strict=True)
            ]
            store.put_embeddings(embedder.model, int(vectors.shape[1]), rows)
        report.embedded += len(items)
        report.memories += len(items)
        if on_batch is not None:
            on_batch(len(items))
    while embedder.embeds_episodes and (deadline is None or time.monotonic() < deadline):
        said = store.episode_embedding_backlog(embedder.model, batch)
        if not said:
            break
        vectors = embedder.episodes([e for _, e in said], project)
        store.put_episode_embeddings(
            embedder.model,
            int(vectors.shape[1]),
            [(seq, vector_bytes(v)) for (seq, _), v in zip(said, vectors, strict=True)],
        )
        report.embedded += len(said)
        report.episodes += len(said)
        if on_batch is not None:
            on_batch(len(said))
    from cortexmem.services.lesson_vectors import embed_lessons

    while deadline is None or time.monotonic() < deadline:
        learned = embed_lessons(store, embedder, batch)  # a lesson is found by meaning too
        if not learned:
            break
        report.embedded += learned
        report.lessons += learned
        if on_batch is not None:
            on_batch(learned)
    report.remaining = store.embedding_backlog_size(embedder.model, embedder.skip_types)
    if embedder.embeds_episodes:
        report.remaining += store.episode_embedding_backlog_size(embedder.model)
    return report


def sync_context(
    ctx: Context,
    embedder: Embedder,
    *,
    deadline: float | None = None,
    on_batch: Callable[[int], None] | None = None,
) -> SyncReport:
    """Sync every existing store of ``ctx`` (the global one without a project prefix)."""
    total = SyncReport(embedder.model)
    for scope, store in ctx.existing():
        # The global store holds every project's knowledge: only the user's own routing (never
        # a project's ai.yaml) decides where it is embedded.
        chosen = embedder if scope == "project" else Embedder(routing_for(None), None)
        part = sync(
            store,
            chosen,
            project=ctx.paths.name if scope == "project" else None,
            deadline=deadline,
            on_batch=on_batch,
        )
        total.embedded += part.embedded
        total.remaining += part.remaining
        total.memories += part.memories
        total.episodes += part.episodes
        total.lessons += part.lessons
    return total


def embed_now(ctx: Context, memory: Memory, scope: str = "project") -> bool:
    """Embed one memory at once (``cortex remember``, MCP ``remember``) so recall finds it by
    meaning straight away, when the configured model is the local one (it loads in a fraction
    of a second; a remote one waits for the recall server or ``cortex reindex``). Fail-soft:
    the memory is stored whatever happens here; a failure is logged. True when embedded."""
    from cortexmem.project.log import log_line

    try:
        routing = routing_for(ctx.paths.data_dir if scope == "project" else None)
        route = effective_route("memory", routing)
        if route.remote or (
            memory.memory_type == "code" and effective_route("code", routing).remote
        ):
            return False
        from cortexmem.services.vectors import vector_bytes

        store = ctx.writable(scope)  # type: ignore[arg-type]
        seq = store.seq_of([memory.id]).get(memory.id)
        if seq is None:
            return False
        embedder = Embedder(routing, ctx.paths.name if scope == "project" else None)
        vectors = embedder.memories([memory], embedder.project)
        store.relabel_embeddings(embedder.model, embedder.project or "")
        row = (seq, memory.content_hash, vector_bytes(vectors[0]))
        return store.put_embeddings(embedder.model, int(vectors.shape[1]), [row]) > 0
    except Exception as exc:  # fail-soft: the memory is stored already
        with contextlib.suppress(OSError):
            log_line(ctx.paths.log, f"remember: embedding {memory.id} failed: {exc!r}")
        return False
