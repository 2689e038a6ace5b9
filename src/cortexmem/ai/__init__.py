"""The AI façade: ``embed(texts, use=...)`` and ``complete(mission, use=...)``, both routed by
``ai.yaml``.

Completion (``complete``):

* Uses ``distill``, ``judge`` and ``classify`` (``routing.COMPLETE_USES``), each with its own
  time limit for a whole call. Providers: ``anthropic`` (Messages API), ``openai`` (any
  OpenAI-compatible chat endpoint), ``ollama`` (its native /api/chat) and ``claude-code``
  (the user's own ``claude -p``, no key). The default is ``none``: ``complete`` raises
  ``NoModelConfigured`` and every caller takes its offline path.
* What is sent is redacted, stripped of personal data and, unless the route says
  ``send_code: true``, of code blocks (``core.privacy.for_model``).
* With a ``schema``, the answer must be JSON that matches it; anything else raises
  ``ProviderResponseError`` (never silently "nothing").
* Inside a session Cortex itself started (``CORTEX_INSIDE``), no model is called.
* Budgets, the circuit breaker, the one-worker lock and the ledger are the caller's
  (``services.models``): this package does not know the store.

Embedding (``embed``):

* Providers: ``local`` (default; all-MiniLM-L6-v2 int8 ONNX shipped in the package, offline,
  384 dimensions, named ``local/all-MiniLM-L6-v2-int8``), ``voyage`` and ``openai`` (any
  OpenAI-compatible endpoint: OpenAI, Ollama's /v1, LM Studio, vLLM). See ``routing`` for the
  file and ``remote`` for the HTTP side (retries, errors).
* Uses: ``memory`` (memories and recall queries) and ``code`` (code bodies). **Code bodies are
  never sent to a remote provider**: a ``code`` route naming one is embedded with the local
  model instead (said once in the log). Only ``local`` counts as local — an OpenAI-compatible
  server on localhost is still a network service, and the rule stays simple to audit.
* Secrets are redacted (``cortexmem.core.redact.redact``) from every text before it is embedded
  or sent.
* Embedding text carries ``[type] [project:name]`` before the words (``embedding_text``), for
  memories and queries alike (a query has no type), so the two line up in vector space.
* Vectors are ``(n, dim)`` float32, L2-normalised, and carry their model name and dimension.

Importing this package costs nothing: numpy, onnxruntime, tokenizers, httpx and yaml are
imported only by the functions that need them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cortexmem.ai.errors import (
    AIError,
    ConfigError,
    EmbeddingError,
    NoModelConfigured,
    NotAllowed,
    ProviderError,
    ProviderRejected,
    ProviderResponseError,
    ProviderUnavailable,
)
from cortexmem.ai.routing import COMPLETE_USES, FILE_NAME, USES, Route, Routing, load_routing
from cortexmem.ai.text import embedding_text

log = logging.getLogger("cortexmem.ai")

INPUT_TYPES = ("document", "query")

__all__ = [
    "COMPLETE_USES",
    "AIError",
    "Completion",
    "ConfigError",
    "EmbeddingError",
    "Embeddings",
    "NoModelConfigured",
    "NotAllowed",
    "ProviderError",
    "ProviderRejected",
    "ProviderResponseError",
    "ProviderUnavailable",
    "Route",
    "Routing",
    "complete",
    "effective_route",
    "embed",
    "embedding_text",
    "load_routing",
    "routing_for",
]


@dataclass(frozen=True, eq=False)
class Embeddings:
    """``vectors``: ``numpy.ndarray`` of shape ``(n, dim)``, float32, unit-length rows, in the
    order of the texts; ``model``: ``provider/model`` (``local/all-MiniLM-L6-v2-int8``);
    ``dim``: the vector size (0 for an empty remote call, whose size is not known)."""

    vectors: Any
    model: str
    dim: int

    def __len__(self) -> int:
        return len(self.vectors)


def routing_for(data_dir: Path | None = None) -> Routing:
    """The routing of a project: ``$CORTEX_HOME/ai.yaml``, then ``<data_dir>/ai.yaml`` (the
    project's ``.cortex/``) overriding it use by use; the project's file may choose providers
    and models but not endpoints or key variables. ``None``: the global file only."""
    from cortexmem.project.paths import cortex_home

    paths = [cortex_home() / FILE_NAME]
    if data_dir is None:
        return load_routing(paths)
    project = data_dir / FILE_NAME
    return load_routing([*paths, project], untrusted=[project])


_SAID: set[tuple[str, str]] = set()
_SAID_LOCK = threading.Lock()


def effective_route(use: str, routing: Routing) -> Route:
    """The route ``use`` really takes: code stays local whatever the file says."""
    if use not in USES:
        raise ValueError(f"unknown use {use!r} (uses: {', '.join(USES)})")
    route = routing.route(use)
    if use == "code" and route.remote:
        with _SAID_LOCK:
            first = (use, route.name) not in _SAID
            _SAID.add((use, route.name))
        if first:
            log.info(
                "ai.yaml routes code to %s: code bodies are never sent to a remote provider, "
                "embedding them with the local model",
                route.name,
            )
        return Route(threads=route.threads)
    return route


def embed(
    texts: Sequence[str],
    *,
    use: str = "memory",
    input_type: str = "document",
    routing: Routing | None = None,
    path: Path | Sequence[Path] | None = None,
    env: Mapping[str, str] | None = None,
    sleep: Callable[[float], None] | None = None,
    transport: Any = None,
) -> Embeddings:
    """Embed ``texts`` (redacted first) with the provider routed for ``use``.

    ``input_type``: ``"document"`` for what is stored, ``"query"`` for a recall query (Voyage
    uses it; the others ignore it). The routing is ``routing`` when given, else read from
    ``path`` (one file or several, later ones overriding earlier ones use by use), else from
    ``$CORTEX_HOME/ai.yaml`` (``routing_for(data_dir)`` adds the project's file).
    ``env`` (default ``os.environ``) is where API keys are read; ``sleep`` and ``transport``
    replace the wait between retries and the httpx transport (tests).

    Raises ``ConfigError`` (a key variable is not set), ``ProviderError`` subclasses (the
    provider refused, or failed after retries) and ``ValueError`` (unknown use or input type).
    """
    if input_type not in INPUT_TYPES:
        raise ValueError(f"input_type must be one of {', '.join(INPUT_TYPES)}")
    if isinstance(texts, str):
        raise TypeError("embed() takes a list of texts, not one string")
    route = effective_route(use, _routing(routing, path))

    from cortexmem.core.redact import redact
    from cortexmem.core.text import clean_text

    clean = [redact(clean_text(t)) for t in texts]
    if route.provider == "local":
        from cortexmem.ai import local

        vectors = local.model(route.threads).embed(clean)
        return Embeddings(vectors, route.name, local.DIM)
    from cortexmem.ai.remote import embed_remote

    options: dict[str, Any] = {"input_type": input_type, "env": env, "transport": transport}
    if sleep is not None:
        options["sleep"] = sleep
    vectors = embed_remote(route, clean, **options)
    return Embeddings(vectors, route.name, int(vectors.shape[1]))


# ------------------------------------------------------------------------------- complete


@dataclass(frozen=True)
class Completion:
    """A model's answer: ``text`` as it came, ``data`` the JSON value when a schema was given
    (validated), ``model`` ``provider/model``, and the tokens it cost."""

    text: str
    data: Any
    model: str
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


JSON_INSTRUCTION = (
    "Answer with one JSON object and nothing else (no prose, no code fence). "
    "It must match this JSON Schema:\n"
)


def _routing(routing: Routing | None, path: Path | Sequence[Path] | None) -> Routing:
    if routing is not None:
        return routing
    if path is None:
        return routing_for(None)
    return load_routing([path] if isinstance(path, str | Path) else list(path))


def complete(
    mission: str,
    *,
    use: str = "distill",
    schema: dict[str, Any] | None = None,
    system: str = "",
    routing: Routing | None = None,
    path: Path | Sequence[Path] | None = None,
    env: Mapping[str, str] | None = None,
    sleep: Callable[[float], None] | None = None,
    transport: Any = None,
) -> Completion:
    """Ask the model routed for ``use`` to carry out ``mission`` (text, or with ``schema`` a
    JSON object that matches it).

    Raises ``NoModelConfigured`` (the caller's cue to take its offline path), ``NotAllowed``
    (inside a session Cortex started), ``ConfigError`` (a key variable is not set, no
    ``claude`` on PATH), and ``ProviderError`` subclasses: ``ProviderRejected`` (a 4xx),
    ``ProviderUnavailable`` (429/5xx/timeouts after the retries, the time limit),
    ``ProviderResponseError`` (malformed answer; its ``input_tokens`` and ``output_tokens``
    say what it cost). ``routing``/``path``/``env``/``sleep``/``transport`` as for ``embed``.
    """
    import json

    from cortexmem import settings
    from cortexmem.core.privacy import for_model

    if use not in COMPLETE_USES:
        raise ValueError(f"unknown use {use!r} (uses: {', '.join(COMPLETE_USES)})")
    if settings.inside_cortex():
        raise NotAllowed("no model is called inside a session Cortex itself started", "recursion")
    route = _routing(routing, path).route(use)
    if not route.configured:
        raise NoModelConfigured(
            f"no model is configured for {use} (set models.{use} or models.default in ai.yaml)"
        )
    prompt = for_model(mission, send_code=route.send_code)
    if schema is not None:
        system = (system + "\n\n" if system else "") + JSON_INSTRUCTION + json.dumps(schema)
    if route.provider == "claude-code":
        from cortexmem.ai.claude_code import run_claude

        answer = run_claude(route, prompt, system=system, env=env)
    else:
        from cortexmem.ai.chat import chat

        options: dict[str, Any] = {"system": system, "schema": schema, "env": env}
        if sleep is not None:
            options["sleep"] = sleep
        answer = chat(route, prompt, transport=transport, **options)
    data = None
    if schema is not None:
        data = _checked(answer.text, schema, route.provider, answer)
    return Completion(answer.text, data, answer.model, answer.input_tokens, answer.output_tokens)


def _checked(text: str, schema: dict[str, Any], provider: str, answer: Any) -> Any:
    from cortexmem.core.json_schema import errors, parse_answer

    try:
        data = parse_answer(text)
        problems = errors(data, schema)
    except ValueError:
        problems = ["the answer is not JSON"]
    if problems:
        exc = ProviderResponseError(
            f"{provider}'s answer does not match the schema asked for: {'; '.join(problems)}",
            200,
            provider=provider,
        )
        exc.input_tokens = answer.input_tokens
        exc.output_tokens = answer.output_tokens
        raise exc
    return data
