"""The embedding façade, used as a caller would use it.

* The local model is the real one shipped in the package (MiniLM int8 ONNX, no network).
* Voyage and OpenAI-compatible providers are called over real HTTP: a stdlib server on
  127.0.0.1 speaks each API's request and response shape, records every request and can be
  scripted to answer 429, 5xx, 4xx or to be slow.
* Routing files are real YAML files in a temporary folder.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from cortexmem.ai import (
    ConfigError,
    ProviderError,
    ProviderRejected,
    ProviderResponseError,
    ProviderUnavailable,
    Route,
    Routing,
    effective_route,
    embed,
    embedding_text,
    routing_for,
)
from cortexmem.ai import remote as remote_module
from cortexmem.ai.remote import embed_remote, retry_after
from cortexmem.ai.routing import load_routing, parse_route
from cortexmem.model import content_hash

LOCAL_MODEL = "local/all-MiniLM-L6-v2-int8"
# Shaped like real keys, so a leak would be a leak; none of them is a real credential.
OPENAI_KEY = "sk-proj-Test0penAiKey1234567890abcdefGHIJ"
VOYAGE_KEY = "pa-TestVoyageKey0123456789abcdefghijklmnopqrstuvwxyzAB"
ANTHROPIC_KEY = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def assert_unit_rows(vectors: np.ndarray) -> None:
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


# --------------------------------------------------------------------------- local model


def test_local_paraphrases_are_closer_than_unrelated_sentences():
    found = embed(
        [
            "the cache is stored in Redis",
            "we keep cached data in Redis",
            "the deploy runs on Fridays",
        ]
    )
    cache, cached, deploy = found.vectors

    assert found.model == LOCAL_MODEL
    assert found.dim == 384
    assert found.vectors.shape == (3, 384)
    assert_unit_rows(found.vectors)
    assert cosine(cache, cached) > 0.6
    assert cosine(cache, deploy) < 0.3
    assert cosine(cache, cached) > cosine(cache, deploy) + 0.4


def varied_texts(count: int) -> list[str]:
    """Short and long, prose and code, ASCII and not, with and without padding needs."""
    rng = random.Random(7)
    words = (
        "cache sqlite index query parser hook session branch commit deploy config schema "
        "migration token budget embedding vector recall memory decision retry timeout lock "
        "worker thread queue Redis Postgres Friday review café naïve 東京 données"
    ).split()
    templates = [
        "{0} {1}",
        "We decided to move the {0} to {1} because the {2} was too slow.",
        "def {0}_{1}(x):\n    return x.{2}()  # {3}",
        "Gotcha: never call {0} inside a {1} hook; it blocks the {2} for {n} ms.",
        "{0}",
        "",
        " ".join(["{0} {1} {2} {3}"] * 40),  # over 256 word pieces: truncated
    ]
    texts = []
    for i in range(count):
        picked = [rng.choice(words) for _ in range(4)]
        texts.append(templates[i % len(templates)].format(*picked, n=rng.randint(1, 999)))
    return texts


def test_local_batch_equals_one_by_one_and_keeps_order():
    texts = varied_texts(120)

    batch = embed(texts).vectors
    alone = np.vstack([embed([text]).vectors for text in texts])

    assert batch.shape == (120, 384)
    assert_unit_rows(batch)
    # A text's vector depends on the text only: not on its neighbours, nor on its place.
    assert np.allclose(batch, alone, atol=1e-5), float(np.abs(batch - alone).max())
    reversed_batch = embed(texts[::-1]).vectors[::-1]
    assert np.allclose(batch, reversed_batch, atol=1e-5)


def test_local_empty_list_gives_an_empty_matrix():
    found = embed([])

    assert found.vectors.shape == (0, 384)
    assert found.vectors.dtype == np.float32
    assert found.model == LOCAL_MODEL


def test_local_very_long_text_is_truncated_not_refused():
    words = varied_texts(7)[2].split()  # a mix of identifiers and punctuation
    long_text = " ".join(words[i % len(words)] for i in range(10_000))

    found = embed([long_text])

    assert found.vectors.shape == (1, 384)
    assert_unit_rows(found.vectors)
    # Only the first 256 word pieces count: the first 1,000 words give the same vector.
    prefix = embed([" ".join(long_text.split()[:1_000])]).vectors
    assert np.allclose(found.vectors, prefix, atol=1e-5)


def test_local_huge_text_is_clipped_before_tokenizing():
    # A 3 MB tool output must not be tokenized whole (the tokenizer reads everything before it
    # truncates): runs of whitespace are squeezed and the text cut, with the same word pieces.
    words = " ".join(f"word{i} cache" for i in range(1_000))
    huge = "   \n\t  ".join([words] * 300)
    assert len(huge) > 3_000_000

    from cortexmem.ai import local

    clipped = local.clip(huge)
    assert len(clipped) <= local.MAX_CHARS  # what reaches the tokenizer is bounded
    assert np.allclose(embed([huge]).vectors, embed([words]).vectors, atol=1e-5)


def test_local_model_is_loaded_once_per_process():
    from cortexmem.ai import local

    embed(["warm"])
    first = local.model(1)
    embed(["again"], use="code")

    assert local.model(1) is first
    assert first.session.get_session_options().intra_op_num_threads == 1


def test_local_secrets_are_redacted_before_embedding():
    leaked = embed([f"the deploy key is {ANTHROPIC_KEY}"]).vectors
    redacted = embed(["the deploy key is [REDACTED:anthropic-key]"]).vectors

    assert np.allclose(leaked, redacted, atol=1e-6)


def test_embedding_text_prefixes_type_and_project():
    assert embedding_text("decision", "api", "use  Redis\nfor  the cache") == (
        "[decision] [project:api] use Redis for the cache"
    )
    assert embedding_text(None, "api", "where is the cache?") == "[project:api] where is the cache?"
    assert embedding_text(None, None, "cache") == "cache"


def test_embedding_text_labels_cannot_break_the_prefix():
    assert (
        embedding_text("gotcha", "my [odd]\nrepo", "  x  ") == "[gotcha] [project:my (odd) repo] x"
    )
    assert embedding_text("gotcha", None, "x") == "[gotcha] x"
    assert embedding_text("", "", "  ") == ""


def test_content_hash_is_sha256_hex_of_the_text():
    """One content hash for the whole program (``model.content_hash``): SHA-256 of the
    whitespace-normalised text, so re-wrapped text hashes the same."""
    text = embedding_text("decision", "api", "use Redis")

    assert content_hash(text) == hashlib.sha256(text.encode() + b"\x00").hexdigest()
    assert len(content_hash("")) == 64
    assert content_hash(text) != content_hash(embedding_text("gotcha", "api", "use Redis"))
    # re-wrapping the text does not change what is embedded, so not the hash either
    assert content_hash(embedding_text("decision", "api", "use\n  Redis")) == content_hash(text)


def test_unknown_use_or_input_type_is_a_programming_error():
    with pytest.raises(ValueError, match="unknown use"):
        embed(["x"], use="images")
    with pytest.raises(ValueError, match="input_type"):
        embed(["x"], input_type="passage")
    with pytest.raises(TypeError):
        embed("one string, not a list")


# --------------------------------------------------------------------------- HTTP providers


@dataclass
class Reply:
    """One scripted answer. ``body`` None on a 200: a proper embeddings answer."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class Received:
    path: str
    headers: dict[str, str]  # names lower-cased
    body: Any


def fake_vector(text: str, dim: int) -> list[float]:
    """Deterministic per text, deliberately not unit length."""
    rng = random.Random(text)
    return [rng.uniform(-3.0, 3.0) for _ in range(dim)]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: EmbeddingServer

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        headers = {name.lower(): value for name, value in self.headers.items()}
        srv = self.server
        with srv.lock:
            srv.requests.append(Received(self.path, headers, body))
            reply = srv.replies.popleft() if srv.replies else Reply()
        if reply.delay:
            time.sleep(reply.delay)
        if self.path != "/v1/embeddings":
            reply = Reply(404, {"error": {"message": f"no route {self.path}"}})
        payload = reply.body
        if payload is None:
            payload = srv.answer(body) if reply.status == 200 else {"error": {"message": "boom"}}
        data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
        self.send_response(reply.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass


class EmbeddingServer(ThreadingHTTPServer):
    """A real HTTP server on 127.0.0.1 answering ``POST /v1/embeddings`` like OpenAI (``api =
    "openai"``) or Voyage (``api = "voyage"``). ``script(...)`` queues answers; when the queue
    is empty it answers 200 with one vector per input (``shuffle``: data out of index order)."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Lock()
        self.api = "openai"
        self.dim = 8
        self.shuffle = False
        self.replies: deque[Reply] = deque()
        self.requests: list[Received] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def script(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        texts = body["input"]
        dim = body.get("dimensions") or body.get("output_dimension") or self.dim
        items = [
            {"object": "embedding", "index": i, "embedding": fake_vector(text, dim)}
            for i, text in enumerate(texts)
        ]
        if self.shuffle:
            random.Random(3).shuffle(items)
            assert [item["index"] for item in items] != list(range(len(items)))
        tokens = sum(len(text.split()) for text in texts)
        usage = {"total_tokens": tokens}
        if self.api == "openai":
            usage = {"prompt_tokens": tokens, **usage}
        return {"object": "list", "data": items, "model": body["model"], "usage": usage}

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up (timeout test) closes the socket under a slow reply


@pytest.fixture
def server() -> Iterator[EmbeddingServer]:
    httpd = EmbeddingServer()
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def sleeps() -> list[float]:
    """Waits the client asked for between attempts (recorded, not slept)."""
    return []


def openai_route(server: EmbeddingServer, **settings: Any) -> Route:
    settings = {"model": "text-embedding-3-small", "api_key_env": "OPENAI_API_KEY", **settings}
    return parse_route("memory", {"provider": "openai", "base_url": server.base_url, **settings})


def voyage_route(server: EmbeddingServer, **settings: Any) -> Route:
    server.api = "voyage"
    return parse_route("memory", {"provider": "voyage", "base_url": server.base_url, **settings})


def memory_routing(route: Route) -> Routing:
    return Routing({"memory": route, "code": Route()})


def expected(texts: list[str], dim: int) -> np.ndarray:
    rows = np.array([fake_vector(t, dim) for t in texts], dtype=np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_openai_request_shape_key_and_normalised_vectors(server, sleeps):
    texts = ["the cache is stored in Redis", "the deploy runs on Fridays"]

    found = embed(
        texts,
        routing=memory_routing(openai_route(server)),
        env={"OPENAI_API_KEY": OPENAI_KEY},
        sleep=sleeps.append,
    )

    (request,) = server.requests
    assert request.path == "/v1/embeddings"
    assert request.headers["authorization"] == f"Bearer {OPENAI_KEY}"
    assert request.headers["content-type"] == "application/json"
    assert request.body == {
        "model": "text-embedding-3-small",
        "input": texts,
        "encoding_format": "float",
    }
    assert found.model == "openai/text-embedding-3-small"
    assert found.dim == 8
    assert found.vectors.shape == (2, 8)
    assert_unit_rows(found.vectors)
    np.testing.assert_allclose(found.vectors, expected(texts, 8), atol=1e-6)
    assert sleeps == []


def test_openai_dimensions_are_sent_and_key_read_from_environment(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)

    found = embed(["one"], routing=memory_routing(openai_route(server, dimensions=256)))

    assert server.requests[0].body["dimensions"] == 256
    assert server.requests[0].headers["authorization"] == f"Bearer {OPENAI_KEY}"
    assert found.vectors.shape == (1, 256)


def test_voyage_sends_input_type_document_then_query(server, monkeypatch):
    monkeypatch.setenv("VOYAGE_API_KEY", VOYAGE_KEY)  # Voyage's default variable
    routing = memory_routing(voyage_route(server))

    stored = embed(["we keep cached data in Redis"], routing=routing)
    asked = embed(["where is the cache?"], routing=routing, input_type="query")

    document, query = server.requests
    assert document.body == {
        "input": ["we keep cached data in Redis"],
        "model": "voyage-3.5",
        "input_type": "document",
    }
    assert query.body["input_type"] == "query"
    assert document.headers["authorization"] == f"Bearer {VOYAGE_KEY}"
    assert stored.model == asked.model == "voyage/voyage-3.5"
    assert_unit_rows(stored.vectors)


def test_voyage_output_dimension(server):
    route = voyage_route(server, dimensions=512, api_key_env="MY_VOYAGE")

    vectors = embed_remote(route, ["a", "b"], env={"MY_VOYAGE": VOYAGE_KEY})

    assert server.requests[0].body["output_dimension"] == 512
    assert "dimensions" not in server.requests[0].body
    assert vectors.shape == (2, 512)


def test_ollama_style_endpoint_gets_no_authorization_header(server):
    route = parse_route(
        "memory", {"provider": "openai", "model": "nomic-embed-text", "base_url": server.base_url}
    )
    assert route.api_key_env is None

    found = embed(["hello"], routing=memory_routing(route), env={})

    assert "authorization" not in server.requests[0].headers
    assert found.model == "openai/nomic-embed-text"


def test_results_are_put_back_in_input_order(server):
    server.shuffle = True
    texts = [f"memory number {i}" for i in range(12)]

    vectors = embed_remote(openai_route(server), texts, env={"OPENAI_API_KEY": OPENAI_KEY})

    np.testing.assert_allclose(vectors, expected(texts, 8), atol=1e-6)


def test_429_waits_what_retry_after_asks_then_succeeds(server, sleeps):
    server.script(Reply(429, {"error": {"message": "rate limited"}}, {"Retry-After": "3"}))

    vectors = embed_remote(
        openai_route(server), ["x"], env={"OPENAI_API_KEY": OPENAI_KEY}, sleep=sleeps.append
    )

    assert len(server.requests) == 2
    assert sleeps == [3.0]
    assert vectors.shape == (1, 8)


@pytest.mark.parametrize("status", [500, 503])
def test_5xx_three_times_gives_up_with_a_retryable_error(server, sleeps, status):
    server.script(*[Reply(status, {"error": {"message": "overloaded"}})] * 3)

    with pytest.raises(ProviderUnavailable) as raised:
        embed_remote(
            openai_route(server), ["x"], env={"OPENAI_API_KEY": OPENAI_KEY}, sleep=sleeps.append
        )

    assert len(server.requests) == 3
    assert raised.value.retryable is True
    assert raised.value.status == status
    assert raised.value.attempts == 3
    assert raised.value.provider == "openai"
    assert "overloaded" in str(raised.value)
    assert "3 attempts" in str(raised.value)
    assert sleeps == [0.5, 1.0]  # exponential back-off, no wait after the last attempt


def test_400_is_permanent_and_says_why(server, sleeps):
    server.script(Reply(400, {"error": {"message": "input too long", "type": "invalid"}}))

    with pytest.raises(ProviderRejected) as raised:
        embed_remote(
            openai_route(server), ["x"], env={"OPENAI_API_KEY": OPENAI_KEY}, sleep=sleeps.append
        )

    assert len(server.requests) == 1
    assert raised.value.status == 400
    assert raised.value.retryable is False
    assert "input too long" in str(raised.value)
    assert sleeps == []


def test_a_key_echoed_by_the_server_never_reaches_the_error(server):
    server.script(Reply(401, {"error": {"message": f"Incorrect API key provided: {OPENAI_KEY}"}}))

    with pytest.raises(ProviderError) as raised:
        embed_remote(openai_route(server), ["x"], env={"OPENAI_API_KEY": OPENAI_KEY})

    assert OPENAI_KEY not in str(raised.value)
    assert "Incorrect API key provided" in str(raised.value)


def test_a_key_echoed_at_the_end_of_a_long_message_does_not_leak_in_part(server):
    # The message is cut to a readable length: the cut must not leave half a key behind.
    padding = "x" * 280
    server.script(Reply(403, {"error": {"message": f"{padding} key {OPENAI_KEY} refused"}}))

    with pytest.raises(ProviderError) as raised:
        embed_remote(openai_route(server), ["x"], env={"OPENAI_API_KEY": OPENAI_KEY})

    assert OPENAI_KEY[:12] not in str(raised.value)


def test_a_key_echoed_in_a_plain_text_error_is_hidden(server, sleeps):
    server.script(*[Reply(502, f"<html>bad gateway for {OPENAI_KEY}</html>")] * 3)

    with pytest.raises(ProviderError) as raised:
        embed_remote(
            openai_route(server), ["x"], env={"OPENAI_API_KEY": OPENAI_KEY}, sleep=sleeps.append
        )

    assert OPENAI_KEY not in str(raised.value)
    assert "bad gateway" in str(raised.value)


class CountingTransport(httpx.HTTPTransport):
    """httpx's own transport, counting the requests it really sends."""

    def __init__(self) -> None:
        super().__init__()
        self.sent = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent += 1
        return super().handle_request(request)


def test_nothing_listening_gives_up_after_three_attempts(sleeps):
    with socket.socket() as probe:  # a port that was free a moment ago and is closed now
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    route = Route("openai", "m", base_url=f"http://127.0.0.1:{port}/v1", api_key_env=None)
    transport = CountingTransport()

    with pytest.raises(ProviderError) as raised:
        embed_remote(route, ["x"], env={}, sleep=sleeps.append, transport=transport)

    assert transport.sent == 3
    assert raised.value.status is None
    assert raised.value.retryable is True
    assert "no answer" in str(raised.value)
    assert len(sleeps) == 2


def test_a_slow_answer_times_out_and_is_retried(server, sleeps):
    server.script(Reply(delay=1.0))
    route = openai_route(server, timeout=0.2)

    vectors = embed_remote(route, ["x"], env={"OPENAI_API_KEY": OPENAI_KEY}, sleep=sleeps.append)

    assert len(server.requests) == 2
    assert sleeps == [0.5]
    assert vectors.shape == (1, 8)


def test_a_missing_key_is_a_config_error_naming_the_variable(server):
    with pytest.raises(ConfigError) as raised:
        embed(["x"], routing=memory_routing(openai_route(server)), env={"PATH": "/usr/bin"})

    assert "OPENAI_API_KEY" in str(raised.value)
    assert server.requests == []


def test_secrets_are_redacted_before_they_are_sent(server):
    found = embed(
        [f"the ci uses {ANTHROPIC_KEY} to call claude", "nothing secret here"],
        routing=memory_routing(openai_route(server)),
        env={"OPENAI_API_KEY": OPENAI_KEY},
    )

    sent = server.requests[0].body["input"]
    assert sent == ["the ci uses [REDACTED:anthropic-key] to call claude", "nothing secret here"]
    assert ANTHROPIC_KEY not in json.dumps(server.requests[0].body)
    assert found.vectors.shape == (2, 8)


def test_voyage_error_detail_is_reported_and_is_permanent(server, sleeps):
    server.api = "voyage"
    server.script(Reply(400, {"detail": "Value 'voyage-9' is not a supported model."}))
    route = voyage_route(server, model="voyage-9")

    with pytest.raises(ProviderRejected) as raised:
        embed_remote(route, ["x"], env={"VOYAGE_API_KEY": VOYAGE_KEY}, sleep=sleeps.append)

    assert "voyage answered 400" in str(raised.value)
    assert "not a supported model" in str(raised.value)
    assert raised.value.attempts == 1
    assert len(server.requests) == 1
    assert sleeps == []


def test_a_key_echoed_by_a_failing_call_through_embed_stays_hidden(server, sleeps, monkeypatch):
    monkeypatch.setenv("VOYAGE_API_KEY", VOYAGE_KEY)
    server.script(Reply(401, {"detail": f"Provided API key is invalid: {VOYAGE_KEY}"}))

    with pytest.raises(ProviderRejected) as raised:
        embed(["x"], routing=memory_routing(voyage_route(server)), sleep=sleeps.append)

    assert raised.value.status == 401
    assert VOYAGE_KEY not in str(raised.value)
    assert VOYAGE_KEY[:10] not in str(raised.value)
    assert "API key is invalid" in str(raised.value)


@pytest.mark.parametrize(
    ("headers", "waited"),
    [
        ({"retry-after-ms": "1500"}, 1.5),
        ({"Retry-After": "3600"}, remote_module.MAX_WAIT),  # capped
        ({"Retry-After": "soon"}, 0.5),  # unreadable: back-off
        ({}, 0.5),
    ],
)
def test_429_wait_comes_from_the_headers_capped(server, sleeps, headers, waited):
    server.script(Reply(429, {"error": {"message": "slow down"}}, headers))

    embed_remote(
        openai_route(server), ["x"], env={"OPENAI_API_KEY": OPENAI_KEY}, sleep=sleeps.append
    )

    assert sleeps == [waited]
    assert len(server.requests) == 2


def test_retry_after_as_an_http_date():
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}, now=1445412480.0) == 10.0
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, now=1445412490.0) == 0.0
    assert retry_after({"retry-after": "not a date"}) is None
    assert retry_after({}) is None


def test_429_three_times_is_unavailable(server, sleeps):
    server.script(*[Reply(429, {"error": {"message": "rate limited"}}, {"Retry-After": "1"})] * 3)

    with pytest.raises(ProviderUnavailable) as raised:
        embed_remote(
            openai_route(server), ["x"], env={"OPENAI_API_KEY": OPENAI_KEY}, sleep=sleeps.append
        )

    assert raised.value.status == 429
    assert sleeps == [1.0, 1.0]
    assert len(server.requests) == 3


def test_a_500_then_a_200_succeeds(server, sleeps):
    server.script(Reply(500, {"error": {"message": "hiccup"}}))

    vectors = embed_remote(
        openai_route(server), ["a", "b"], env={"OPENAI_API_KEY": OPENAI_KEY}, sleep=sleeps.append
    )

    assert len(server.requests) == 2
    assert sleeps == [0.5]
    np.testing.assert_allclose(vectors, expected(["a", "b"], 8), atol=1e-6)


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ("this is not json", "not JSON"),
        ({"object": "list", "data": [], "model": "m"}, "0 vectors for 2 texts"),
        ({"object": "list", "model": "m"}, "unexpected shape"),
        (
            {"data": [{"index": 0, "embedding": [1.0, 0.0]}, {"index": 0, "embedding": [0, 1]}]},
            "2 vectors for 2 texts",
        ),
    ],
)
def test_a_200_that_is_not_embeddings_is_an_error(server, sleeps, body, says):
    server.script(Reply(200, body))

    with pytest.raises(ProviderResponseError, match=says):
        embed_remote(
            openai_route(server),
            ["a", "b"],
            env={"OPENAI_API_KEY": OPENAI_KEY},
            sleep=sleeps.append,
        )
    assert len(server.requests) == 1


def test_many_texts_are_sent_in_several_requests_and_kept_in_order(server):
    server.shuffle = True
    texts = [f"memory {i}" for i in range(300)]

    found = embed(
        texts, routing=memory_routing(openai_route(server)), env={"OPENAI_API_KEY": OPENAI_KEY}
    )

    assert [len(r.body["input"]) for r in server.requests] == [128, 128, 44]
    np.testing.assert_allclose(found.vectors, expected(texts, 8), atol=1e-6)


def test_connection_refused_through_embed_is_unavailable(sleeps):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    route = parse_route(
        "memory", {"provider": "openai", "model": "m", "base_url": f"http://127.0.0.1:{port}/v1"}
    )

    with pytest.raises(ProviderUnavailable) as raised:
        embed(["x"], routing=memory_routing(route), sleep=sleeps.append)

    assert raised.value.status is None
    assert raised.value.attempts == 3
    assert sleeps == [0.5, 1.0]


def test_empty_list_makes_no_request(server):
    found = embed([], routing=memory_routing(openai_route(server)), env={})

    assert found.vectors.shape == (0, 0)
    assert server.requests == []


# --------------------------------------------------------------------------- routing files


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_project_file_overrides_global_use_by_use(tmp_path):
    global_file = write(
        tmp_path / "home" / "ai.yaml",
        "embeddings:\n"
        "  memory:\n"
        "    provider: voyage\n"
        "    model: voyage-3.5-lite\n"
        "  code:\n"
        "    provider: local\n"
        "    threads: 2\n",
    )
    project_file = write(
        tmp_path / "project" / ".cortex" / "ai.yaml",
        "embeddings:\n"
        "  memory:\n"
        "    provider: openai\n"
        "    base_url: http://localhost:11434/v1/\n"
        "    model: nomic-embed-text\n",
    )

    routing = load_routing([global_file, project_file])

    assert routing.problems == ()
    assert routing.route("memory") == Route(
        "openai", "nomic-embed-text", base_url="http://localhost:11434/v1"
    )
    assert routing.route("code").threads == 2  # the project file said nothing about code
    assert load_routing([global_file]).route("memory") == Route(
        "voyage",
        "voyage-3.5-lite",
        base_url="https://api.voyageai.com/v1",
        api_key_env="VOYAGE_API_KEY",
    )


def test_missing_files_mean_the_defaults(tmp_path):
    routing = load_routing([tmp_path / "nope.yaml", tmp_path / "missing" / "ai.yaml"])

    assert routing.problems == ()
    assert routing.route("memory") == Route()
    assert routing.route("memory").name == LOCAL_MODEL


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("embeddings:\n  memory: [unclosed\n", "not valid YAML"),
        ("embeddings:\n  memory:\n    provider: cohere\n", "provider must be one of"),
        (
            "embeddings:\n  memory:\n    provider: openai\n    api_key: sk-live-123456\n",
            "api_key_env",
        ),
        ("embeddings:\n  images:\n    provider: local\n", "unknown use"),
        ("embeddings:\n  memory:\n    provider: openai\n    dimensions: -3\n", "positive"),
        ("- just\n- a list\n", "expected a mapping"),
    ],
)
def test_a_broken_file_is_ignored_and_reported(tmp_path, content, says):
    good = write(tmp_path / "global.yaml", "embeddings:\n  code:\n    threads: 3\n")
    broken = write(tmp_path / "project.yaml", content)

    routing = load_routing([good, broken])

    assert routing.route("memory") == Route()
    assert routing.route("code").threads == 3  # the good file still applies
    (problem,) = routing.problems
    assert str(broken) in problem
    assert says in problem
    assert "defaults apply" in problem
    assert "sk-live-123456" not in problem


def test_literal_key_message_says_to_use_api_key_env(tmp_path):
    path = write(tmp_path / "ai.yaml", "embeddings:\n  memory:\n    api_key: abc123secret\n")

    (problem,) = load_routing([path]).problems

    assert "environment variable" in problem
    assert "api_key_env" in problem
    assert "abc123secret" not in problem


@pytest.mark.parametrize(
    "content",
    [
        "api_key: abc123secret\nembeddings: {}\n",
        "embeddings:\n  memory:\n    provider: openai\n    token: abc123secret\n",
        "embeddings:\n  memory:\n    provider: openai\n    API_KEY: abc123secret\n",
        "providers:\n  openai:\n    - key: abc123secret\n",
    ],
)
def test_a_literal_key_anywhere_in_the_file_is_refused(tmp_path, content):
    path = write(tmp_path / "ai.yaml", content)

    routing = load_routing([path])

    (problem,) = routing.problems
    assert "refused" in problem
    assert "environment variable" in problem
    assert "abc123secret" not in problem
    assert routing.route("memory") == Route()


def test_a_key_pasted_into_api_key_env_is_refused_without_repeating_it(tmp_path):
    path = write(
        tmp_path / "ai.yaml",
        f"embeddings:\n  memory:\n    provider: openai\n    api_key_env: {OPENAI_KEY}\n",
    )

    (problem,) = load_routing([path]).problems

    assert "NAME of an environment variable" in problem
    assert OPENAI_KEY not in problem
    assert OPENAI_KEY[:10] not in problem


@pytest.mark.parametrize(
    ("setting", "says"),
    [
        ("base_url: localhost:11434/v1", "http:// or https://"),
        ("timeout: 0", "timeout must be a positive"),
        ("timeout: fast", "timeout must be a positive"),
        ("headers: {x: 1}", "unknown setting"),
    ],
)
def test_bad_settings_are_reported(tmp_path, setting, says):
    path = write(
        tmp_path / "ai.yaml", f"embeddings:\n  memory:\n    provider: openai\n    {setting}\n"
    )

    (problem,) = load_routing([path]).problems

    assert says in problem


def test_a_broken_file_is_logged_once_however_often_it_is_read(tmp_path, caplog):
    path = write(tmp_path / "ai.yaml", "embeddings:\n  memory: [unclosed\n")

    with caplog.at_level(logging.WARNING, logger="cortexmem.ai"):
        for _ in range(5):
            assert load_routing([path]).route("memory") == Route()

    warnings = [r for r in caplog.records if r.name == "cortexmem.ai"]
    assert len(warnings) == 1
    assert "not valid YAML at line" in warnings[0].getMessage()
    assert "defaults apply" in warnings[0].getMessage()


def test_a_missing_file_is_not_a_problem(tmp_path, caplog):
    with caplog.at_level(logging.DEBUG, logger="cortexmem.ai"):
        routing = load_routing([tmp_path / "ai.yaml"])

    assert routing.problems == ()
    assert caplog.records == []


def test_embed_reads_the_file_it_is_given_or_cortex_home(tmp_path, cortex_home, server):
    project_file = write(
        tmp_path / "project" / ".cortex" / "ai.yaml",
        f"embeddings:\n  memory:\n    provider: openai\n    base_url: {server.base_url}\n"
        "    model: nomic-embed-text\n",
    )

    assert embed(["x"], path=project_file, env={}).model == "openai/nomic-embed-text"
    assert embed(["x"]).model == LOCAL_MODEL  # no file in CORTEX_HOME yet
    write(cortex_home / "ai.yaml", project_file.read_text())
    assert embed(["y"], env={}).model == "openai/nomic-embed-text"
    assert [r.body["input"] for r in server.requests] == [["x"], ["y"]]


def test_routing_for_reads_cortex_home_then_the_project(tmp_path, cortex_home):
    write(cortex_home / "ai.yaml", "embeddings:\n  memory:\n    provider: voyage\n")
    data_dir = tmp_path / "project" / ".cortex"
    write(data_dir / "ai.yaml", "embeddings:\n  code:\n    threads: 2\n")

    routing = routing_for(data_dir)

    assert routing.route("memory").provider == "voyage"
    assert routing.route("code").threads == 2
    assert routing_for(None).route("code").threads == 1


def test_a_project_file_cannot_choose_where_memories_and_keys_go(tmp_path, cortex_home):
    """A cloned repository's .cortex/ai.yaml could point the user's key at its own server."""
    data_dir = tmp_path / "project" / ".cortex"
    write(
        data_dir / "ai.yaml",
        "embeddings:\n  memory:\n    provider: openai\n"
        "    base_url: https://collector.example\n    api_key_env: OPENAI_API_KEY\n",
    )
    routing = routing_for(data_dir)
    assert routing.route("memory").provider == "local"
    assert "cannot set base_url or api_key_env" in " ".join(routing.problems)
    # the same settings in the user's own file are honoured
    write(cortex_home / "ai.yaml", (data_dir / "ai.yaml").read_text())
    assert routing_for(None).route("memory").base_url == "https://collector.example"


def test_code_is_embedded_locally_even_when_routed_to_a_provider(tmp_path, server):
    path = write(
        tmp_path / "ai.yaml",
        "embeddings:\n"
        "  code:\n"
        "    provider: openai\n"
        f"    base_url: {server.base_url}\n"
        "    api_key_env: OPENAI_API_KEY\n",
    )
    routing = load_routing([path])
    assert routing.route("code").remote

    found = embed(
        ["def load(path):\n    return json.loads(path.read_text())"],
        use="code",
        routing=routing,
        env={"OPENAI_API_KEY": OPENAI_KEY},
    )

    assert server.requests == []
    assert found.model == LOCAL_MODEL
    assert found.vectors.shape == (1, 384)
    assert effective_route("code", routing) == Route()


def test_code_fallback_is_said_once_in_the_log(server, caplog, monkeypatch):
    monkeypatch.setattr("cortexmem.ai._SAID", set())  # as in a fresh process
    route = parse_route(
        "code", {"provider": "voyage", "base_url": server.base_url, "model": "voyage-code-3"}
    )
    routing = Routing({"memory": Route(), "code": route})

    with caplog.at_level(logging.INFO, logger="cortexmem.ai"):
        for _ in range(3):
            assert embed(["def f(): pass"], use="code", routing=routing).model == LOCAL_MODEL

    said = [r.getMessage() for r in caplog.records if r.name == "cortexmem.ai"]
    assert len(said) == 1
    assert "never sent to a remote provider" in said[0]
    assert server.requests == []


# --------------------------------------------------------------------------- import cost

HEAVY = ("numpy", "onnxruntime", "tokenizers", "httpx", "yaml")


@pytest.mark.parametrize(
    "statement",
    [
        "import cortexmem.ai, cortexmem.ai.routing, cortexmem.ai.errors",
        "from cortexmem.cli.app import cli",
    ],
)
def test_importing_costs_no_heavy_module(statement):
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted(m for m in {HEAVY!r} "
    code += "if m in sys.modules)))"

    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )

    assert json.loads(result.stdout) == []
    # and the check itself can see a heavy import when there is one
    loaded = subprocess.run(
        [sys.executable, "-c", code.replace(statement, f"{statement}\nimport yaml")],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert json.loads(loaded.stdout) == ["yaml"]
