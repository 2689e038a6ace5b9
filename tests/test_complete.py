"""``complete()``, the façade's second half, used as a caller would use it.

Every provider is called over real HTTP (``model_servers.ProviderServer`` speaks Anthropic's,
OpenAI's and Ollama's real request and stream shapes) or through a stand-in ``claude``
executable that prints Claude Code's real JSON result; routing files are real YAML files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.model_servers import (
    ProviderServer,
    Reply,
    children_of,
    descendants_alive,
    fake_claude,
)

from cortexmem.ai import (
    ConfigError,
    NoModelConfigured,
    NotAllowed,
    ProviderRejected,
    ProviderResponseError,
    ProviderUnavailable,
    complete,
    load_routing,
)
from cortexmem.core.json_schema import errors, parse_answer
from cortexmem.core.privacy import for_model, strip_code, strip_personal

ANTHROPIC_KEY = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
OPENAI_KEY = "sk-proj-Test0penAiKey1234567890abcdefGHIJ"
ENV = {"ANTHROPIC_API_KEY": ANTHROPIC_KEY, "OPENAI_API_KEY": OPENAI_KEY}
SCHEMA = {
    "type": "object",
    "required": ["answer"],
    "properties": {"answer": {"type": "string"}, "score": {"type": "number", "maximum": 1}},
}


@pytest.fixture
def server() -> Iterator[ProviderServer]:
    running = ProviderServer()
    yield running
    running.close()


def routing(tmp_path: Path, text: str):
    path = tmp_path / "ai.yaml"
    path.write_text(text)
    return load_routing([path])


def route_to(tmp_path: Path, provider: str, url: str, **extra: object):
    settings = {"provider": provider, "base_url": url, "timeout": 5, **extra}
    if provider == "openai":
        settings["api_key_env"] = "OPENAI_API_KEY"
    lines = "\n".join(f"    {k}: {json.dumps(v)}" for k, v in settings.items())
    return routing(tmp_path, f"models:\n  distill:\n{lines}\n")


def no_wait(seconds: float) -> None:
    pass


# ----------------------------------------------------------------------------- defaults


def test_no_model_configured_is_the_default_and_says_what_to_set(tmp_path: Path):
    with pytest.raises(NoModelConfigured, match=r"models\.distill"):
        complete("anything", use="distill", path=tmp_path / "missing.yaml")


def test_a_broken_file_falls_back_to_no_model(tmp_path: Path):
    broken = routing(tmp_path, "models:\n  distill:\n    provider: [unclosed\n")

    assert broken.problems
    assert not broken.route("distill").configured
    with pytest.raises(NoModelConfigured):
        complete("anything", routing=broken)


def test_unknown_use_is_refused(tmp_path: Path):
    with pytest.raises(ValueError, match="unknown use"):
        complete("x", use="memory", path=tmp_path / "none.yaml")


def test_default_route_applies_to_every_use_not_named(tmp_path: Path):
    found = routing(
        tmp_path,
        "models:\n  default:\n    provider: claude-code\n  judge:\n    provider: ollama\n"
        "    model: qwen2.5\n",
    )

    assert found.route("distill").name == "claude-code"
    assert found.route("classify").provider == "claude-code"
    assert found.route("judge").name == "ollama/qwen2.5"
    assert found.route("judge").timeout == 30.0  # each use has its own time limit
    assert found.route("distill").timeout == 120.0


def test_a_project_file_cannot_redirect_where_work_is_sent(tmp_path: Path):
    user = tmp_path / "user.yaml"
    user.write_text("budget:\n  calls_per_hour: 10\n")
    project = tmp_path / "project.yaml"
    project.write_text(
        "models:\n  distill:\n    provider: openai\n    base_url: https://evil.example\n"
    )

    found = load_routing([user, project], untrusted=[project])

    assert not found.route("distill").configured
    assert any("cannot set" in p for p in found.problems)


def test_a_project_file_may_change_a_model_but_never_turn_one_on(tmp_path: Path):
    user = tmp_path / "user.yaml"
    project = tmp_path / "project.yaml"
    project.write_text("models:\n  distill:\n    provider: claude-code\n    model: haiku\n")

    user.write_text("budget:\n  calls_per_hour: 10\n")
    refused = load_routing([user, project], untrusted=[project])
    user.write_text("models:\n  distill:\n    provider: claude-code\n")
    allowed = load_routing([user, project], untrusted=[project])

    assert not refused.route("distill").configured
    assert any("cannot turn on a model" in p for p in refused.problems)
    assert allowed.route("distill").name == "claude-code/haiku"


def test_a_project_file_may_lower_the_budget_never_raise_it(tmp_path: Path):
    user = tmp_path / "user.yaml"
    user.write_text("budget:\n  calls_per_hour: 10\n  tokens_per_day: 5000\n")
    project = tmp_path / "project.yaml"
    project.write_text("budget:\n  calls_per_hour: 1000\n  tokens_per_day: 100\n")

    found = load_routing([user, project], untrusted=[project])

    assert found.budget.calls_per_hour == 10
    assert found.budget.tokens_per_day == 100


def test_a_literal_key_in_models_is_refused_whole(tmp_path: Path):
    found = routing(
        tmp_path, f"models:\n  distill:\n    provider: anthropic\n    api_key: {ANTHROPIC_KEY}\n"
    )

    assert not found.route("distill").configured
    assert ANTHROPIC_KEY not in " ".join(found.problems)


# ----------------------------------------------------------------------------- providers


@pytest.mark.parametrize("provider", ["anthropic", "openai", "ollama"])
def test_each_provider_streams_an_answer_and_counts_its_tokens(
    provider: str, server: ProviderServer, tmp_path: Path
):
    server.script(Reply(text="Use SQLite WAL mode.", input_tokens=321, output_tokens=12))

    done = complete(
        "How should the store be opened?", system="Be brief.",
        routing=route_to(tmp_path, provider, server.url), env=ENV,
    )  # fmt: skip

    assert done.text == "Use SQLite WAL mode."
    assert (done.input_tokens, done.output_tokens) == (321, 12)
    assert done.data is None
    (request,) = server.requests
    body = request["body"]
    assert body["stream"] is True
    if provider == "anthropic":
        assert request["path"] == "/v1/messages"
        assert request["headers"]["x-api-key"] == ANTHROPIC_KEY
        assert request["headers"]["anthropic-version"] == "2023-06-01"
        assert body["system"] == "Be brief."
        assert body["messages"] == [{"role": "user", "content": "How should the store be opened?"}]
        assert body["max_tokens"] == 4096
    elif provider == "openai":
        assert request["path"] == "/chat/completions"
        assert request["headers"]["authorization"] == f"Bearer {OPENAI_KEY}"
        assert body["messages"][0] == {"role": "system", "content": "Be brief."}
        assert body["stream_options"] == {"include_usage": True}
    else:
        assert request["path"] == "/api/chat"
        assert "authorization" not in request["headers"]
        assert body["messages"][-1]["content"] == "How should the store be opened?"


@pytest.mark.parametrize("provider", ["anthropic", "openai", "ollama"])
def test_a_server_that_does_not_stream_is_read_too(
    provider: str, server: ProviderServer, tmp_path: Path
):
    server.script(Reply(text='{"answer": "yes"}', stream=False, input_tokens=9, output_tokens=3))

    done = complete("q", schema=SCHEMA, routing=route_to(tmp_path, provider, server.url), env=ENV)

    assert done.data == {"answer": "yes"}
    assert done.tokens == 12


def test_json_answers_are_validated_against_the_schema(server: ProviderServer, tmp_path: Path):
    server.script(Reply(text='```json\n{"answer": "fine", "score": 0.5}\n```'))
    route = route_to(tmp_path, "ollama", server.url)

    done = complete("q", schema=SCHEMA, routing=route)

    assert done.data == {"answer": "fine", "score": 0.5}
    assert server.requests[0]["body"]["format"] == SCHEMA  # Ollama's structured output


@pytest.mark.parametrize(
    "text", ["I think the answer is yes.", '{"score": 0.5}', '{"answer": 3}', '{"answer": "x", '
             '"score": 7}'],
)  # fmt: skip
def test_a_malformed_answer_is_an_error_never_nothing(
    text: str, server: ProviderServer, tmp_path: Path
):
    server.script(Reply(text=text, input_tokens=50, output_tokens=5))

    with pytest.raises(ProviderResponseError, match="does not match the schema") as caught:
        complete("q", schema=SCHEMA, routing=route_to(tmp_path, "anthropic", server.url), env=ENV)

    assert (caught.value.input_tokens, caught.value.output_tokens) == (50, 5)


def test_429_with_retry_after_is_waited_for_then_retried(server: ProviderServer, tmp_path: Path):
    server.script(Reply(status=429, error="rate limited", headers={"retry-after": "7"}),
                  Reply(status=529, error="Overloaded"), Reply(text="done"))  # fmt: skip
    waits: list[float] = []

    done = complete(
        "q", routing=route_to(tmp_path, "anthropic", server.url, timeout=60), env=ENV,
        sleep=waits.append,
    )  # fmt: skip

    assert done.text == "done"
    assert len(server.requests) == 3
    assert waits == [7.0, 1.0]


def test_5xx_gives_up_after_two_retries_in_one_line(server: ProviderServer, tmp_path: Path):
    server.script(*[Reply(status=500, error="boom\nwith a second line")] * 3)

    with pytest.raises(ProviderUnavailable) as caught:
        complete("q", routing=route_to(tmp_path, "openai", server.url), env=ENV, sleep=no_wait)

    assert len(server.requests) == 3
    message = str(caught.value)
    assert "\n" not in message
    assert "openai answered 500: boom with a second line" in message
    assert "gave up after 3 attempts" in message


def test_4xx_is_permanent_and_the_key_never_shows(server: ProviderServer, tmp_path: Path):
    server.script(Reply(status=401, error=f"invalid x-api-key {ANTHROPIC_KEY}"))

    with pytest.raises(ProviderRejected) as caught:
        complete("q", routing=route_to(tmp_path, "anthropic", server.url), env=ENV, sleep=no_wait)

    assert len(server.requests) == 1
    assert caught.value.status == 401
    assert ANTHROPIC_KEY not in str(caught.value)


def test_a_missing_key_variable_is_named(server: ProviderServer, tmp_path: Path):
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        complete("q", routing=route_to(tmp_path, "anthropic", server.url), env={})
    assert server.requests == []


def test_a_slow_answer_past_the_time_limit_is_cut_off(server: ProviderServer, tmp_path: Path):
    server.script(*[Reply(text="a long and slow answer", delay=0.6)] * 3)

    with pytest.raises(ProviderUnavailable, match="no answer"):
        complete("q", routing=route_to(tmp_path, "ollama", server.url, timeout=1), sleep=no_wait)


def test_secrets_personal_data_and_code_never_leave(server: ProviderServer, tmp_path: Path):
    mission = (
        "Mail jane.doe@example.com, call +33 6 12 34 56 78, see /home/jane/work/app.py, "
        f"token {OPENAI_KEY}.\n```python\ndef secret_algorithm():\n    return 42\n```\nEnd."
    )

    complete(mission, routing=route_to(tmp_path, "ollama", server.url))
    sent = json.dumps(server.requests[-1]["body"])

    for leaked in ("jane.doe@example.com", "12 34 56 78", "/home/jane", OPENAI_KEY,
                   "secret_algorithm"):  # fmt: skip
        assert leaked not in sent
    assert "[python code: 2 lines not sent]" in sent


def test_code_is_sent_when_the_users_routing_says_so(server: ProviderServer, tmp_path: Path):
    complete("```\ndef f(): pass\n```", routing=route_to(tmp_path, "ollama", server.url,
                                                          send_code=True))  # fmt: skip

    assert "def f(): pass" in json.dumps(server.requests[-1]["body"])


# ----------------------------------------------------------------------------- claude -p


@pytest.fixture
def claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "bin"
    fake_claude(folder)
    record = tmp_path / "claude-calls.jsonl"
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_CLAUDE_RECORD", str(record))
    return record


def claude_routing(tmp_path: Path, extra: str = ""):
    return routing(tmp_path, f"models:\n  distill:\n    provider: claude-code\n{extra}")


def test_claude_code_answers_without_a_key_and_counts_tokens(
    claude: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("FAKE_CLAUDE_TEXT", '{"answer": "from claude"}')

    done = complete("Is WAL on?", schema=SCHEMA, system="Be brief.",
                    routing=claude_routing(tmp_path, "    model: haiku\n"))  # fmt: skip

    assert done.data == {"answer": "from claude"}
    assert done.model == "claude-code/haiku"
    assert (done.input_tokens, done.output_tokens) == (2000, 42)
    (call,) = [json.loads(line) for line in claude.read_text().splitlines()]
    assert call["argv"][:5] == ["-p", "--output-format", "json", "--max-turns", "1"]
    assert call["argv"][5:7] == ["--model", "haiku"]
    assert "--append-system-prompt" in call["argv"]
    assert call["prompt"] == "Is WAL on?"
    assert call["inside"] == "1"  # the recursion guard travels with it
    assert Path(call["cwd"]).name.startswith("cortex-claude-")  # not the user's project


def test_claude_code_errors_are_one_readable_line(
    claude: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("FAKE_CLAUDE_MODE", "error")
    with pytest.raises(ProviderRejected, match="Please run /login"):
        complete("q", routing=claude_routing(tmp_path))
    monkeypatch.setenv("FAKE_CLAUDE_MODE", "crash")
    with pytest.raises(ProviderUnavailable, match="claude -p failed: Error: something broke"):
        complete("q", routing=claude_routing(tmp_path))


def test_claude_code_past_its_time_limit_is_killed_with_its_children(
    claude: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("FAKE_CLAUDE_MODE", "hang")
    before = children_of(os.getpid())

    with pytest.raises(ProviderUnavailable, match="took longer than 1 s"):
        complete("q", routing=claude_routing(tmp_path, "    timeout: 1\n"))

    assert descendants_alive(before) == set()


def test_no_claude_on_path_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ConfigError, match="`claude` command on PATH"):
        complete("q", routing=claude_routing(tmp_path))


# ----------------------------------------------------------------------------- recursion


def test_inside_a_session_cortex_started_no_model_is_called(
    server: ProviderServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("CORTEX_INSIDE", "1")

    with pytest.raises(NotAllowed) as caught:
        complete("q", routing=route_to(tmp_path, "ollama", server.url))

    assert caught.value.reason == "recursion"
    assert server.requests == []


def test_the_hook_does_nothing_inside_a_session_cortex_started(tmp_path: Path, repo: Path):
    transcript = tmp_path / "t.jsonl"
    said = {"role": "user", "content": "We decided to use Redis for the cache."}
    transcript.write_text(json.dumps({"type": "user", "message": said}) + "\n")
    payload = json.dumps({"session_id": "s-inside", "transcript_path": str(transcript),
                          "cwd": str(repo), "hook_event_name": "Stop"})  # fmt: skip
    env = {**os.environ, "CORTEX_INSIDE": "1", "CLAUDE_PROJECT_DIR": str(repo)}
    (repo / ".cortex").mkdir()

    for event in ("Stop", "PostToolUse", "SessionStart"):
        done = subprocess.run(
            [sys.executable, "-m", "cortexmem.hosts.claude_code.hook", event],
            input=payload, capture_output=True, text=True, env=env, cwd=repo, check=False,
        )  # fmt: skip
        assert (done.returncode, done.stdout) == (0, "")

    assert sorted(p.name for p in (repo / ".cortex").iterdir()) == []  # nothing captured


# ----------------------------------------------------------------------------- pure parts


def test_personal_data_is_stripped_and_ordinary_text_kept():
    text = (
        "jane.doe@corp.com, git@github.com:org/repo.git, (555) 123-4567, 555-123-4567, "
        "+44 20 7946 0958, /Users/Bob/x, C:\\Users\\ann\\y, 192.168.100.200, 2026-01-31, v1.2.3"
    )

    assert strip_personal(text) == (
        "[email], git@github.com:org/repo.git, [phone], [phone], [phone], /Users/[user]/x, "
        "C:\\Users\\[user]\\y, 192.168.100.200, 2026-01-31, v1.2.3"
    )


def test_code_blocks_are_replaced_by_a_note():
    assert (
        strip_code("a\n```sql\nSELECT 1;\nSELECT 2;\n```\nb")
        == "a\n[sql code: 2 lines not sent]\nb"
    )
    assert for_model("x ~~~\nnot a fence") == "x ~~~\nnot a fence"


def test_the_schema_check_names_what_is_wrong():
    assert errors({"answer": "ok"}, SCHEMA) == []
    assert errors({"answer": 1, "score": 2}, SCHEMA) == [
        "$.answer: expected string, got int",
        "$.score: 2 is above 1",
    ]
    assert errors([], SCHEMA) == ["$: expected object, got list"]
    assert parse_answer('Sure! {"answer": "x"} Hope it helps.') == {"answer": "x"}
    with pytest.raises(ValueError):
        parse_answer("no json here")
