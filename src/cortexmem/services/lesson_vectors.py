"""Lessons by meaning: their vectors written as soon as an embedder is at hand (the recall
server embeds new lessons within seconds of their making), and the cached matrix searched for
an action's nearest lessons. numpy is imported here, so only the recall server and the CLI
pay for it."""

from __future__ import annotations

from typing import Protocol

from cortexmem.ai import embed, embedding_text
from cortexmem.services.embedding import Embedder
from cortexmem.services.vectors import VectorIndex, vector_bytes
from cortexmem.store.protocols import LessonStore, StoreInfo

BATCH = 64


class IndexedLessons(LessonStore, StoreInfo, Protocol):
    """A store whose lesson vectors are cached by its location."""


class _LessonVectors:
    """A store's lesson vectors seen as the rows of their own index."""

    def __init__(self, store: LessonStore) -> None:
        self.store = store

    def embedding_state(self, model: str) -> tuple[int, int]:
        return self.store.lesson_embedding_state(model)

    def load_embeddings(
        self, model: str, after_version: int = 0
    ) -> list[tuple[int, int, str, bytes]]:
        return self.store.load_lesson_embeddings(model, after_version)


_CACHE: dict[tuple[str, str], VectorIndex] = {}


def embed_lessons(store: LessonStore, embedder: Embedder, limit: int = BATCH) -> int:
    """Embed up to ``limit`` lessons that have no vector from the embedder's model."""
    backlog = store.lesson_embedding_backlog(embedder.model, limit)
    if not backlog:
        return 0
    texts = [embedding_text(None, embedder.project, lesson.text) for _, lesson in backlog]
    vectors = embed(texts, use="memory", routing=embedder.routing).vectors
    items = [(seq, vector_bytes(v)) for (seq, _), v in zip(backlog, vectors, strict=True)]
    return store.put_lesson_embeddings(embedder.model, len(vectors[0]), items)


def nearest(store: IndexedLessons, embedder: Embedder, text: str, k: int) -> dict[str, float]:
    """Lesson id → cosine similarity of the ``k`` lessons nearest in meaning to ``text``."""
    key = (store.location + "#lessons", embedder.model)
    index = _CACHE.get(key)
    if index is None:
        index = _CACHE[key] = VectorIndex(embedder.model)
    index.refresh(_LessonVectors(store))
    if len(index) == 0:
        return {}
    hits = index.search(embedder.query(text), k)
    found = store.lessons_by_seq(seq for seq, _ in hits)
    return {found[seq].id: similarity for seq, similarity in hits if seq in found}
