"""The AI façade, embedding half: ``embed(texts, use=...)`` routed by ``ai.yaml``.

* Providers: ``local`` (default; MiniLM int8 ONNX shipped in the package, offline), ``voyage``
  and ``openai`` (any OpenAI-compatible endpoint). See ``routing`` for the file.
* Uses: ``memory`` (memories and recall queries) and ``code`` (code bodies). Code is never
  sent to a remote provider: a ``code`` route naming one is embedded locally instead.
* Secrets are redacted from every text before it is embedded or sent.
* Embedding text carries ``[type] [project:name]`` before the words (``embedding_text``), for
  memories and queries alike, so the two line up in vector space.

Importing this package costs nothing: numpy, onnxruntime, tokenizers, httpx and yaml are
imported only by the functions that need them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cortexmem.ai.errors import ConfigError, EmbeddingError, ProviderError
from cortexmem.ai.routing import FILE_NAME, Route, Routing, load_routing

log = logging.getLogger("cortexmem.ai")

__all__ = [
    "ConfigError",
    "EmbeddingError",
    "Embeddings",
    "ProviderError",
    "Route",
    "Routing",
    "effective_route",
    "embed",
    "embedding_text",
    "routing_for",
]


@dataclass(frozen=True)
class Embeddings:
    """``vectors``: ``(n, dim)`` float32, unit length; ``model``: ``provider/model``."""

    vectors: Any
    model: str
    dim: int


def routing_for(data_dir: Path | None = None) -> Routing:
    """The routing of a project: ``$CORTEX_HOME/ai.yaml`` then ``<data_dir>/ai.yaml``."""
    from cortexmem.paths import cortex_home

    paths = [cortex_home() / FILE_NAME]
    if data_dir is not None:
        paths.append(data_dir / FILE_NAME)
    return load_routing(paths)


def effective_route(use: str, routing: Routing) -> Route:
    """The route ``use`` really takes: code stays local whatever the file says."""
    route = routing.route(use)
    if use == "code" and route.remote:
        log.info("code is embedded locally, never sent to %s", route.provider)
        return Route()
    return route


def embedding_text(memory_type: str | None, project: str | None, text: str) -> str:
    """``"[decision] [project:api] text"``; a query has no type: ``"[project:api] text"``."""
    prefix = []
    if memory_type:
        prefix.append(f"[{memory_type}]")
    if project:
        prefix.append(f"[project:{project}]")
    return " ".join([*prefix, " ".join(text.split())])


def embed(
    texts: Sequence[str],
    *,
    use: str = "memory",
    routing: Routing | None = None,
    input_type: str = "document",
    **remote: Any,
) -> Embeddings:
    """Embed ``texts`` (redacted first) with the provider routed for ``use``."""
    from cortexmem.core.redact import redact

    route = effective_route(use, routing or Routing())
    clean = [redact(t) for t in texts]
    if route.provider == "local":
        from cortexmem.ai import local

        vectors = local.model(route.threads).embed(clean)
        return Embeddings(vectors, route.name, local.DIM)
    from cortexmem.ai.remote import embed_remote

    vectors = embed_remote(route, clean, input_type=input_type, **remote)
    return Embeddings(vectors, route.name, int(vectors.shape[1]) if len(clean) else 0)
