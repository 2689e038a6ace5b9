"""HTTP chat providers for ``complete()``: Anthropic's Messages API, any OpenAI-compatible chat
endpoint (OpenAI, vLLM, LM Studio, llama.cpp's server, Ollama's /v1), and Ollama's own API.

Each answer is streamed the way the provider streams it — Server-Sent Events for Anthropic
(``message_start`` … ``content_block_delta`` … ``message_delta``) and OpenAI (``data: {...}``
chunks, usage in the last one, ``data: [DONE]``), newline-delimited JSON for Ollama — so the
whole call keeps to the use's time limit even when a server trickles; a server that answers
with one plain JSON body instead is read as such. Retries, back-off and readable errors are
``remote.retried``: the one policy the embedding half uses too.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from cortexmem.ai.errors import ProviderResponseError
from cortexmem.ai.remote import Refused, api_key, json_body, retried
from cortexmem.ai.routing import Route

ANTHROPIC_VERSION = "2023-06-01"


@dataclass(frozen=True)
class Answer:
    """What a model said, and what it cost."""

    text: str
    model: str  # provider/model
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass
class _Reading:
    text: list[str]
    input_tokens: int = 0
    output_tokens: int = 0


class _TooSlow(Exception):
    pass


def chat(
    route: Route,
    prompt: str,
    *,
    system: str = "",
    schema: dict[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    transport: Any = None,
) -> Answer:
    """Ask ``route``'s model; the whole call (retries included) ends within ``route.timeout``."""
    import httpx

    key = api_key(route, os.environ if env is None else env)
    deadline = time.monotonic() + route.timeout
    url, headers, body = _request(route, prompt, system, schema, key)
    timeout = httpx.Timeout(route.timeout, connect=min(10.0, route.timeout))

    def attempt() -> _Reading:
        with (
            httpx.Client(timeout=timeout, transport=transport) as client,
            client.stream("POST", url, json=body, headers=headers) as response,
        ):
            if response.status_code != 200:
                raise Refused.of(response)
            return _read(route.provider, response, deadline)

    reading = retried(
        attempt, provider=route.provider, url=url, key=key, sleep=sleep, deadline=deadline
    )
    return Answer("".join(reading.text), route.name, reading.input_tokens, reading.output_tokens)


def _request(
    route: Route, prompt: str, system: str, schema: dict[str, Any] | None, key: str | None
) -> tuple[str, dict[str, str], dict[str, Any]]:
    base = (route.base_url or "").rstrip("/")
    headers = {"Content-Type": "application/json"}
    if route.provider == "anthropic":
        if key:
            headers["x-api-key"] = key
        headers["anthropic-version"] = ANTHROPIC_VERSION
        body: dict[str, Any] = {
            "model": route.model,
            "max_tokens": route.max_tokens,
            "messages": [{"role": "user", "content": prompt}],
            "stream": True,
        }
        if system:
            body["system"] = system
        return f"{base}/v1/messages", headers, body
    if key:
        headers["Authorization"] = f"Bearer {key}"
    messages = ([{"role": "system", "content": system}] if system else []) + [
        {"role": "user", "content": prompt}
    ]
    if route.provider == "ollama":
        body = {
            "model": route.model,
            "messages": messages,
            "stream": True,
            "options": {"num_predict": route.max_tokens},
        }
        if schema is not None:
            body["format"] = schema
        return f"{base}/api/chat", headers, body
    body = {
        "model": route.model,
        "messages": messages,
        "max_tokens": route.max_tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if schema is not None:
        body["response_format"] = {"type": "json_object"}
    return f"{base}/chat/completions", headers, body


def _read(provider: str, response: Any, deadline: float) -> _Reading:
    kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
    reading = _Reading([])
    if kind == "text/event-stream":
        for event, data in _events(_lines(response, deadline)):
            _take(provider, event, data, reading)
    elif provider == "ollama" and kind in ("application/x-ndjson", "application/jsonl"):
        for line in _lines(response, deadline):
            if line.strip():
                _take(provider, "", _json(line, provider), reading)
    else:  # one JSON body (stream not honoured)
        response.read()
        _take_whole(provider, json_body(response, provider), reading)
    return reading


def _lines(response: Any, deadline: float) -> Iterator[str]:
    import httpx

    for line in response.iter_lines():
        if time.monotonic() > deadline:
            raise httpx.ReadTimeout("the answer took longer than the use's time limit")
        yield line


def _events(lines: Iterator[str]) -> Iterator[tuple[str, Any]]:
    """Server-Sent Events: (event name, JSON data) for each ``data:`` line."""
    event = ""
    for line in lines:
        if line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data = line[5:].strip()
            if data == "[DONE]":
                return
            yield event, _json(data, "stream")
        elif not line.strip():
            event = ""


def _json(text: str, provider: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        raise ProviderResponseError(
            f"{provider} streamed a line that is not JSON: {text[:80]!r}", 200, provider=provider
        ) from None


def _fail_in_stream(provider: str, error: Any) -> None:
    """An error sent inside a 200 stream (Anthropic's ``overloaded_error``, OpenAI's and
    Ollama's ``error``): retried like the status it stands for."""
    if isinstance(error, dict):
        kind = str(error.get("type") or "")
        message = str(error.get("message") or kind or error)
    else:
        kind, message = "", str(error)
    status = 529 if "overloaded" in kind else 429 if "rate_limit" in kind else 500
    if kind in ("invalid_request_error", "authentication_error", "permission_error"):
        status = 400
    raise Refused(status, message, {})


def _take(provider: str, event: str, data: Any, reading: _Reading) -> None:
    if not isinstance(data, dict):
        raise ProviderResponseError(f"{provider} streamed {type(data).__name__}", 200)
    if "error" in data and data.get("type") != "message_start":
        _fail_in_stream(provider, data["error"])
    if provider == "anthropic":
        kind = data.get("type") or event
        if kind == "message_start":
            usage = (data.get("message") or {}).get("usage") or {}
            reading.input_tokens = int(usage.get("input_tokens") or 0)
            reading.output_tokens = int(usage.get("output_tokens") or 0)
        elif kind == "content_block_delta":
            delta = data.get("delta") or {}
            if delta.get("type") == "text_delta":
                reading.text.append(str(delta.get("text", "")))
        elif kind == "message_delta":
            usage = data.get("usage") or {}
            reading.output_tokens = int(usage.get("output_tokens") or reading.output_tokens)
        return
    if provider == "ollama":
        reading.text.append(str((data.get("message") or {}).get("content") or ""))
        if data.get("done"):
            reading.input_tokens = int(data.get("prompt_eval_count") or 0)
            reading.output_tokens = int(data.get("eval_count") or 0)
        return
    for choice in data.get("choices") or ():
        content = (choice.get("delta") or {}).get("content")
        if content:
            reading.text.append(str(content))
    usage = data.get("usage")
    if isinstance(usage, dict):
        reading.input_tokens = int(usage.get("prompt_tokens") or 0)
        reading.output_tokens = int(usage.get("completion_tokens") or 0)


def _take_whole(provider: str, data: Any, reading: _Reading) -> None:
    """A non-streamed answer of each API."""
    try:
        if isinstance(data, dict) and "error" in data:
            _fail_in_stream(provider, data["error"])
        if provider == "anthropic":
            blocks = data["content"]
            reading.text = [b["text"] for b in blocks if b.get("type") == "text"]
            usage = data.get("usage") or {}
            reading.input_tokens = int(usage.get("input_tokens") or 0)
            reading.output_tokens = int(usage.get("output_tokens") or 0)
        elif provider == "ollama":
            reading.text = [str(data["message"]["content"])]
            reading.input_tokens = int(data.get("prompt_eval_count") or 0)
            reading.output_tokens = int(data.get("eval_count") or 0)
        else:
            reading.text = [str(data["choices"][0]["message"]["content"] or "")]
            usage = data.get("usage") or {}
            reading.input_tokens = int(usage.get("prompt_tokens") or 0)
            reading.output_tokens = int(usage.get("completion_tokens") or 0)
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise ProviderResponseError(
            f"{provider} answered in an unexpected shape ({type(exc).__name__}: {exc})",
            200,
            provider=provider,
        ) from None
