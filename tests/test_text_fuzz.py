"""Issue 12 fault 6: no text breaks anything. Lone surrogates (from ``surrogateescape`` argv or
``\\ud83d`` in JSON), NUL and other control characters, invalid UTF-8 and huge strings go
through redaction, cleaning, FTS query building, recall in process and the CLI without raising;
the MCP server answers a ``tools/call`` holding ``"\\ud83d"`` instead of leaving it unanswered.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cortexmem.cli.app import cli
from cortexmem.core.fts_query import to_fts_query
from cortexmem.core.redact import redact, redact_tag
from cortexmem.core.text import clean_text, clip_redacted
from cortexmem.services.context import Context
from cortexmem.services.memories import remember
from cortexmem.services.recall import recall

SURROGATES = st.integers(0xD800, 0xDFFF).map(chr)
NASTY = st.sampled_from(["\x00", "\x1b", "\r", "\ufffd", "\udcff", "\ud83d", "\ude00", "…", "'"])
TEXT = st.lists(st.one_of(st.text(max_size=20), SURROGATES, NASTY), max_size=40).map("".join)
BYTES_AS_ARGV = st.binary(max_size=60).map(lambda b: b.decode("utf-8", "surrogateescape"))
ANY_TEXT = st.one_of(TEXT, BYTES_AS_ARGV)


@given(ANY_TEXT)
def test_clean_text_is_always_encodable_and_idempotent(text):
    out = clean_text(text)
    out.encode("utf-8")
    assert clean_text(out) == out
    assert "\x00" not in out


@given(ANY_TEXT)
def test_redaction_never_raises(text):
    redact(text)
    redact_tag(text)
    clip_redacted(text, 50)


def test_redaction_of_huge_text_is_quick():
    import time

    text = ("password=hunter2Hunter2 AKIA" + "x" * 5000 + " \ud83d\x00 ") * 40
    started = time.perf_counter()
    redact(text)
    assert time.perf_counter() - started < 5


@given(ANY_TEXT)
def test_fts_query_never_raises_and_is_encodable(text):
    query = to_fts_query(text)
    if query is not None:
        query.encode("utf-8")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz") / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    os.environ.setdefault("CORTEX_HOME", str(root.parent / "home"))
    with Context.for_cwd(root) as ctx:
        for text in ("we use postgres for storage", "redis caches sessions", "pytest -q runs"):
            remember(ctx, text, memory_type="decision")
    return root


def test_the_local_model_embeds_any_text():
    from cortexmem.ai import embed

    texts = ["postgres \udcff", "\ud83d", "\x00\x1b", "ok \ud83d\ude00", ""]
    vectors = embed(texts, input_type="query")
    assert vectors.vectors.shape[0] == len(texts)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ANY_TEXT)
def test_recall_in_process_never_raises(store, text):
    with Context.for_cwd(store) as ctx:
        recall(ctx, "postgres " + text, alpha=0.0, count_access=False)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ANY_TEXT)
def test_cli_recall_never_tracebacks(store, text):
    result = CliRunner().invoke(cli, ["-C", str(store), "recall", "postgres " + text])
    assert result.exit_code in (0, 1), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception


def test_cli_recall_with_invalid_utf8_argv_in_a_real_process(store):
    argv = [
        sys.executable,
        "-m",
        "cortexmem",
        "recall",
        b"postgres \xff".decode("utf-8", "surrogateescape"),
    ]
    result = subprocess.run(argv, cwd=store, capture_output=True, timeout=120)
    assert result.returncode in (0, 1)
    assert b"Traceback" not in result.stderr


def test_mcp_answers_a_call_with_a_lone_surrogate(store: Path):
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(store)}
    proc = subprocess.Popen([sys.executable, "-m", "cortexmem", "mcp-server"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env, cwd=store)  # fmt: skip
    assert proc.stdin and proc.stdout

    def send(message: dict) -> None:
        proc.stdin.write(json.dumps(message).encode() + b"\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]

    def receive() -> dict:
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        assert ready, "no answer: the client would hang"
        return json.loads(proc.stdout.readline())  # type: ignore[union-attr]

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}})  # fmt: skip
        receive()
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        calls = [
            ("search", {"query": "postgres \ud83d"}),
            (
                "remember",
                {"text": "we chose \ud83d postgres\u0000 for storage", "memory_type": "decision"},
            ),
            ("search", {"query": "\udcff\x00"}),
        ]
        for i, (name, args) in enumerate(calls, 10):
            send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                  "params": {"name": name, "arguments": args}})  # fmt: skip
            answer = receive()
            assert answer["id"] == i and "result" in answer, answer
            assert not answer["result"].get("isError"), answer
    finally:
        proc.stdin.close()
        proc.wait(30)
