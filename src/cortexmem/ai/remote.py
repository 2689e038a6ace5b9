"""HTTP embedding providers: Voyage, and anything that speaks OpenAI's embeddings API
(OpenAI, Ollama's /v1, LM Studio, vLLM).

Each call is retried twice on 429, 5xx, a timeout or a refused connection, waiting with
exponential back-off or what ``Retry-After`` asks (capped); any other 4xx is permanent and
raised at once with the provider's own message. Keys come from the environment variable the
routing names, and never appear in an error. Vectors are L2-normalised on arrival so every
provider's scores mean the same (cosine = dot product).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from cortexmem.ai.errors import ConfigError, ProviderError
from cortexmem.ai.routing import Route

RETRIES = 2
BACKOFF = 0.5
MAX_WAIT = 20.0


def _key(route: Route, env: Mapping[str, str]) -> str | None:
    if not route.api_key_env:
        return None
    value = env.get(route.api_key_env, "").strip()
    if not value:
        raise ConfigError(
            f"{route.provider} needs an API key: set the environment variable {route.api_key_env}"
        )
    return value


def _body(route: Route, texts: list[str], input_type: str) -> dict[str, Any]:
    if route.provider == "voyage":
        body: dict[str, Any] = {"input": texts, "model": route.model, "input_type": input_type}
        if route.dimensions:
            body["output_dimension"] = route.dimensions
        return body
    body = {"model": route.model, "input": texts, "encoding_format": "float"}
    if route.dimensions:
        body["dimensions"] = route.dimensions
    return body


def _message(response: Any) -> str:
    try:
        data = response.json()
    except ValueError:
        return response.text[:300].strip() or response.reason_phrase
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])[:300]
        for field in ("detail", "message", "error"):
            if data.get(field):
                return str(data[field])[:300]
    return str(data)[:300]


def _wait(response: Any, attempt: int) -> float:
    header = response.headers.get("retry-after") if response is not None else None
    if header:
        try:
            return min(MAX_WAIT, max(0.0, float(header)))
        except ValueError:
            pass
    return min(MAX_WAIT, BACKOFF * 2**attempt)


def _vectors(data: Any, count: int, provider: str) -> np.ndarray:
    try:
        items = sorted(data["data"], key=lambda item: item["index"])
        rows = [item["embedding"] for item in items]
        matrix = np.asarray(rows, dtype=np.float32)
    except (KeyError, TypeError, ValueError) as exc:
        raise ProviderError(f"{provider} answered in an unexpected shape ({exc})") from None
    if matrix.ndim != 2 or matrix.shape[0] != count:
        raise ProviderError(f"{provider} returned {matrix.shape[0]} vectors for {count} texts")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.clip(norms, 1e-12, None)


def embed_remote(
    route: Route,
    texts: list[str],
    *,
    input_type: str = "document",
    env: Mapping[str, str] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    transport: Any = None,
) -> np.ndarray:
    """Embed ``texts`` with ``route``'s provider: ``(len(texts), dim)`` float32, unit length."""
    import httpx

    if not texts:
        return np.zeros((0, route.dimensions or 0), dtype=np.float32)
    key = _key(route, os.environ if env is None else env)
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    url = f"{(route.base_url or '').rstrip('/')}/embeddings"
    body = _body(route, texts, input_type)
    last: str = ""
    with httpx.Client(timeout=route.timeout, transport=transport) as client:
        for attempt in range(RETRIES + 1):
            response = None
            try:
                response = client.post(url, json=body, headers=headers)
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                last = f"no answer from {url} ({type(exc).__name__})"
            else:
                if response.status_code == 200:
                    try:
                        return _vectors(response.json(), len(texts), route.provider)
                    except ValueError:
                        raise ProviderError(
                            f"{route.provider} sent a body that is not JSON"
                        ) from None
                message = _message(response)
                if key:
                    message = message.replace(key, "[key]")
                last = f"{route.provider} answered {response.status_code}: {message}"
                if response.status_code != 429 and response.status_code < 500:
                    raise ProviderError(last, response.status_code)
            if attempt < RETRIES:
                sleep(_wait(response, attempt))
    raise ProviderError(
        f"{last} (gave up after {RETRIES + 1} attempts)",
        response.status_code if response is not None else None,
        retryable=True,
    )
