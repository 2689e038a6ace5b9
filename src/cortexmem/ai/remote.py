"""HTTP embedding providers: Voyage, and anything that speaks OpenAI's embeddings API
(OpenAI, Ollama's /v1, LM Studio, vLLM).

* Voyage: ``POST {base_url}/embeddings`` ``{"input": [...], "model": ..., "input_type":
  "document" | "query"}`` (+ ``output_dimension``); OpenAI-compatible: ``POST
  {base_url}/embeddings`` ``{"model": ..., "input": [...], "encoding_format": "float"}``
  (+ ``dimensions``). Both answer ``{"object": "list", "data": [{"object": "embedding",
  "index": i, "embedding": [...]}], "model": ..., "usage": {...}}``; rows are put back in
  input order by ``index``.
* ``Authorization: Bearer <key>`` when the route names a key variable (Ollama and LM Studio
  need none). The key is read from the environment only and never appears in an error.
* Each request is retried twice on 429, 5xx, a timeout or a refused connection, waiting with
  exponential back-off (0.5 s, 1 s) or what ``Retry-After`` / ``retry-after-ms`` asks, capped
  at 20 s; any other 4xx is permanent and raised at once with the provider's own message.
* Vectors are L2-normalised on arrival, so every provider's scores mean the same (cosine =
  dot product).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

import numpy as np

from cortexmem.ai.errors import (
    ConfigError,
    ProviderRejected,
    ProviderResponseError,
    ProviderUnavailable,
)
from cortexmem.ai.routing import Route

_T = TypeVar("_T")
RETRIES = 2
BACKOFF = 0.5
MAX_WAIT = 20.0
MAX_INPUTS = 128  # texts per request (Voyage takes up to 1,000, OpenAI 2,048)
MESSAGE_CHARS = 300


def api_key(route: Route, env: Mapping[str, str]) -> str | None:
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
    """The provider's own words: OpenAI ``{"error": {"message"}}``, Voyage ``{"detail"}``,
    Ollama ``{"error": "..."}``, else the body as text."""
    try:
        data = response.json()
    except ValueError:
        return response.text.strip() or response.reason_phrase
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
        for field in ("detail", "message", "error"):
            if data.get(field):
                return str(data[field])
    return str(data)


def _safe(message: str, key: str | None) -> str:
    """``message`` fit to show: the key hidden (before the cut, so no half key survives), any
    other secret redacted, one line, at most ``MESSAGE_CHARS``."""
    from cortexmem.core.redact import redact

    if key:
        message = message.replace(key, "[key]")
    message = redact(" ".join(message.split()))
    return message if len(message) <= MESSAGE_CHARS else message[: MESSAGE_CHARS - 1] + "…"


def retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds the server asks to wait: ``retry-after-ms``, or ``Retry-After`` as seconds or
    an HTTP date. None when absent or unreadable."""
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _wait(headers: Mapping[str, str], attempt: int) -> float:
    asked = retry_after(headers) if headers else None
    return min(MAX_WAIT, BACKOFF * 2**attempt if asked is None else asked)


def _vectors(data: Any, count: int, provider: str) -> np.ndarray:
    try:
        items = sorted(data["data"], key=lambda item: item["index"])
        indexes = [item["index"] for item in items]
        rows = [item["embedding"] for item in items]
        matrix = np.asarray(rows, dtype=np.float32)
    except (KeyError, TypeError, ValueError) as exc:
        raise ProviderResponseError(
            f"{provider} answered in an unexpected shape ({type(exc).__name__}: {exc})",
            200,
            provider=provider,
        ) from None
    if matrix.ndim != 2 or indexes != list(range(count)) or not np.isfinite(matrix).all():
        raise ProviderResponseError(
            f"{provider} returned {len(rows)} vectors for {count} texts "
            f"(indexes {indexes[:5]}{'...' if len(indexes) > 5 else ''})",
            200,
            provider=provider,
        )
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
    """Embed ``texts`` with ``route``'s provider: ``(len(texts), dim)`` float32, unit length.

    ``env`` (default ``os.environ``) is where the key is read; ``sleep`` waits between
    attempts (tests record it); ``transport`` an httpx transport (tests count requests).
    """
    import httpx

    if not texts:
        return np.zeros((0, route.dimensions or 0), dtype=np.float32)
    key = api_key(route, os.environ if env is None else env)
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    url = f"{(route.base_url or '').rstrip('/')}/embeddings"
    parts = []
    with httpx.Client(timeout=route.timeout, transport=transport) as client:
        for start in range(0, len(texts), MAX_INPUTS):
            chunk = texts[start : start + MAX_INPUTS]
            body = _body(route, chunk, input_type)
            parts.append(_post(client, route, url, body, headers, key, len(chunk), sleep))
    if len({part.shape[1] for part in parts}) > 1:
        raise ProviderResponseError(
            f"{route.provider} returned vectors of different sizes", 200, provider=route.provider
        )
    return parts[0] if len(parts) == 1 else np.vstack(parts)


def _post(
    client: Any,
    route: Route,
    url: str,
    body: dict[str, Any],
    headers: dict[str, str],
    key: str | None,
    count: int,
    sleep: Callable[[float], None],
) -> np.ndarray:
    provider = route.provider

    def attempt() -> np.ndarray:
        response = client.post(url, json=body, headers=headers)
        if response.status_code != 200:
            raise Refused.of(response)
        return _vectors(json_body(response, provider), count, provider)

    return retried(attempt, provider=provider, url=url, key=key, sleep=sleep)


# ----------------------------------------------------------------- one retry policy for all


class Refused(Exception):
    """An HTTP answer other than 200, raised inside an attempt for ``retried`` to judge."""

    def __init__(self, status: int, message: str, headers: Mapping[str, str]) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers

    @classmethod
    def of(cls, response: Any) -> Refused:
        if not response.is_closed:  # a streamed answer: read the error body first
            response.read()
        return cls(response.status_code, _message(response), response.headers)


def json_body(response: Any, provider: str) -> Any:
    """A 200's body as JSON, or the error that says it is not."""
    try:
        return response.json()
    except ValueError:
        raise ProviderResponseError(
            f"{provider} sent a body that is not JSON", 200, provider=provider
        ) from None


def retried(
    attempt: Callable[[], _T],
    *,
    provider: str,
    url: str,
    key: str | None,
    sleep: Callable[[float], None] = time.sleep,
    deadline: float | None = None,
) -> _T:
    """``attempt()`` under the one retry policy: up to ``RETRIES`` more tries on 429, 5xx, a
    timeout or no connection, with back-off (or what the server asks), never past ``deadline``
    (``time.monotonic()``); any other 4xx (``Refused``) is permanent. An attempt signals a
    non-200 by raising ``Refused``; anything else it raises goes straight through."""
    import httpx

    last = ""
    status: int | None = None
    attempts = 0
    for n in range(RETRIES + 1):
        attempts = n + 1
        asked: Mapping[str, str] = {}
        try:
            return attempt()
        except httpx.TransportError as exc:  # refused, reset, DNS, every timeout
            status = None
            last = f"no answer from {url} ({type(exc).__name__})"
        except Refused as exc:
            status, asked = exc.status, exc.headers
            last = f"{provider} answered {status}: {_safe(exc.message, key)}"
            if status != 429 and status < 500:
                raise ProviderRejected(last, status, provider=provider, attempts=attempts) from None
        if n < RETRIES:
            wait = _wait(asked, n)
            if deadline is not None and time.monotonic() + wait >= deadline:
                break
            sleep(wait)
    raise ProviderUnavailable(
        f"{last} (gave up after {attempts} attempts)",
        status,
        retryable=True,
        provider=provider,
        attempts=attempts,
    )
