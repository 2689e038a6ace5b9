"""The hook entry point as Claude Code runs it: a process, a JSON payload on stdin, exit 0."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cortexmem.hosts.claude_code import hook
from cortexmem.hosts.claude_code import spool as observe
from cortexmem.services.context import Context

from conftest import SHARED_DATA

HOOK = [sys.executable, "-c", "from cortexmem.hosts.claude_code.hook import run; run()"]
EXAMPLES = SHARED_DATA / "hook-payloads" / "official-docs-examples" / "hook-inputs.json"
REAL_RECORDS = SHARED_DATA / "hook-payloads" / "hook-records-from-real-transcripts.jsonl"
TRANSCRIPTS = SHARED_DATA / "transcripts"


def run_hook(event: str, payload: object, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return subprocess.run(
        [*HOOK, event],
        input=data,
        cwd=cwd,
        capture_output=True,
        env={**os.environ, "CLAUDE_PROJECT_DIR": str(cwd), **env},
        timeout=60,
    )


def assert_contract(result: subprocess.CompletedProcess, event: str) -> None:
    assert result.returncode == 0
    out = result.stdout.decode()
    assert "Traceback" not in out
    if out.strip():
        answer = json.loads(out)
        assert isinstance(answer, dict)
        specific = answer.get("hookSpecificOutput")
        if specific is not None:
            assert specific["hookEventName"] == event
            assert len(specific.get("additionalContext", "")) < 10_000


def log_lines(root: Path) -> list[str]:
    log = root / ".cortex" / "cortex.log"
    return log.read_text().splitlines() if log.exists() else []


# ----------------------------------------------------------------- the documented payloads


def documented_payloads() -> list[dict]:
    if not EXAMPLES.exists():
        return []
    return [x["json"] for x in json.loads(EXAMPLES.read_text()) if isinstance(x.get("json"), dict)]


@pytest.mark.skipif(not EXAMPLES.exists(), reason=f"{EXAMPLES} is not here")
def test_every_documented_payload_exits_0_with_a_valid_answer(repo: Path, tmp_path: Path):
    for payload in documented_payloads():
        event = payload["hook_event_name"]
        # The docs' paths do not exist here; point the session at this test's repository.
        payload = {**payload, "cwd": str(repo)}
        result = run_hook(event, payload, repo)
        assert_contract(result, event)
    logged = "\n".join(log_lines(repo))
    assert "unknown hook event 'Elicitation'" in logged  # not ours: logged, never an error
    assert "Traceback" not in logged


@pytest.mark.parametrize(
    "data",
    [b"", b"not json", b"[1, 2]", b'{"session_id": 5}', b"\xff\xfe", b'{"cwd": "/nowhere"}'],
)
def test_bad_input_exits_0_and_is_logged(repo: Path, data: bytes):
    result = run_hook("Stop", data, repo)
    assert_contract(result, "Stop")
    assert result.stdout == b""


def test_unknown_event_and_missing_transcript_are_logged(repo: Path):
    assert_contract(run_hook("NoSuchEvent", {"cwd": str(repo)}, repo), "NoSuchEvent")
    missing = {"cwd": str(repo), "session_id": "s1", "transcript_path": str(repo / "gone.jsonl")}
    assert_contract(run_hook("Stop", missing, repo), "Stop")
    lines = log_lines(repo)
    assert any("unknown hook event 'NoSuchEvent'" in line for line in lines)
    assert any("transcript not found" in line for line in lines)


def test_a_locked_store_does_not_break_the_session(repo: Path, tmp_path: Path):
    """Another process holds the write lock for longer than the hook may wait."""
    with Context.for_cwd(repo) as ctx:
        ctx.writable("project")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys, time\n"
            "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
            "c.execute('BEGIN EXCLUSIVE'); print('locked', flush=True); time.sleep(60)",
            str(repo / ".cortex" / "cortex.db"),
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout.readline().strip() == b"locked"
        transcript = tmp_path / "t.jsonl"
        transcript.write_text(json.dumps({"type": "user", "message": {"content": "hi"}}) + "\n")
        payload = {"cwd": str(repo), "session_id": "s1", "transcript_path": str(transcript)}
        result = run_hook("Stop", payload, repo, CORTEX_DB_TIMEOUT="0.5")
        assert_contract(result, "Stop")
    finally:
        holder.kill()
        holder.wait()
    assert any("locked" in line for line in log_lines(repo))


# ----------------------------------------------------------------- fuzzing


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
HOOK_FIELDS = [
    "session_id", "transcript_path", "hook_event_name", "tool_name", "tool_input",
    "tool_response", "tool_use_id", "duration_ms", "prompt", "source", "reason", "trigger",
    "compact_summary", "agent_transcript_path", "last_assistant_message", "stop_hook_active",
]  # fmt: skip


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    event=st.sampled_from([*sorted(hook.EVENTS), "Bogus", ""]),
    fields=st.dictionaries(st.sampled_from(HOOK_FIELDS), json_values, max_size=8),
)
def test_fuzzed_payloads_never_escape(repo: Path, monkeypatch, capsys, event: str, fields: dict):
    monkeypatch.chdir(repo)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(repo))
    # Keep a random "cwd" or transcript path from pointing anywhere real outside the test.
    payload = {**fields, "cwd": str(repo)}
    for key in ("transcript_path", "agent_transcript_path"):
        if key in payload and isinstance(payload[key], str):
            payload[key] = str(repo / "fuzz" / payload[key].replace("/", "_")[:50])
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps(payload).encode())))
    assert hook.main([event]) == 0
    out = capsys.readouterr().out
    if out:
        assert isinstance(json.loads(out), dict)


# ----------------------------------------------------------------- observations


def test_tool_hooks_spool_observations_that_stop_moves_into_the_store(repo: Path):
    session = "sess-obs-1"
    calls = [
        ("Read", "toolu_a", {"file_path": str(repo / "README.md")}, "PostToolUse"),
        (
            "Bash",
            "toolu_b",
            {"command": "FOO=1 uv run pytest -q --token=abc"},
            "PostToolUseFailure",
        ),
        ("Edit", "toolu_c", {"file_path": str(repo / "README.md")}, "PostToolUse"),
    ]
    for tool, call_id, tool_input, outcome in calls:
        base = {"session_id": session, "cwd": str(repo), "tool_name": tool,
                "tool_use_id": call_id, "tool_input": tool_input}  # fmt: skip
        assert_contract(run_hook("PreToolUse", {**base, "hook_event_name": "PreToolUse"}, repo), "")
        assert_contract(run_hook(outcome, {**base, "hook_event_name": outcome}, repo), "")
    spool = Path(observe.spool_path(session))
    assert "abc" not in spool.read_text()  # arguments never reach the spool

    payload = {"session_id": session, "cwd": str(repo)}
    assert_contract(run_hook("Stop", payload, repo), "Stop")
    assert_contract(run_hook("Stop", payload, repo), "Stop")  # drained exactly once
    with Context.for_cwd(repo) as ctx:
        seen = list(ctx.require("project").iter_observations(session))
    assert [(o.tool, o.ok, o.prev_tool, o.prev2_tool) for o in seen] == [
        ("Read", True, None, None),
        ("Bash", False, "Read", None),
        ("Edit", True, "Bash", "Read"),
    ]
    assert seen[1].detail == "pytest"
    assert all(o.duration_ms is not None and o.duration_ms >= 0 for o in seen)


@pytest.mark.parametrize(
    ("command", "program"),
    [
        ("pytest -q", "pytest"),
        ("FOO=1 BAR=2 uv run pytest", "pytest"),
        ("python -m pytest tests/", "pytest"),
        ("sudo -E apt-get install x", "apt-get"),
        ("/usr/bin/git commit -m 'x'", "git"),
        ("npx vitest run", "vitest"),
        ("   ", None),
        ("$(curl evil)", None),
        (None, None),
    ],
)
def test_only_the_program_name_of_a_command_is_observed(command, program):
    assert observe.command_program(command) == program


# ----------------------------------------------------------------- output contract


def test_output_always_names_its_event_and_is_capped():
    text = hook.render_output(
        "SessionStart", {"hookSpecificOutput": {"additionalContext": "x" * 20_000}}
    )
    answer = json.loads(text)
    assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert len(answer["hookSpecificOutput"]["additionalContext"]) < 10_000
    assert hook.render_output("Stop", None) == ""


def test_the_tool_hooks_import_almost_nothing():
    code = (
        "import sys; from cortexmem.hosts.claude_code import hook, spool as observe; "
        "print(sorted(m for m in ('sqlite3', 'pathlib', 'dataclasses', 'click', 'rich', "
        "'typing', 'cortexmem.model', 'cortexmem.store') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "[]", result.stderr


# ----------------------------------------------------------------- capture through hooks


def copy_session(tmp_path: Path) -> Path:
    source = TRANSCRIPTS / "claude-reliability" / "coverage-test-fix.jsonl"
    if not source.exists():
        pytest.skip(f"{source} is not here")
    target = tmp_path / "sessions" / "coverage.jsonl"
    target.parent.mkdir()
    shutil.copyfile(source, target)
    return target


def test_stop_captures_a_real_session_once(repo: Path, tmp_path: Path):
    transcript = copy_session(tmp_path)
    payload = {"session_id": "real-1", "cwd": str(repo), "transcript_path": str(transcript)}
    assert_contract(run_hook("Stop", payload, repo), "Stop")
    with Context.for_cwd(repo) as ctx:
        store = ctx.require("project")
        first = (store.counts().events, store.counts().memories)
    assert first[0] > 0 and first[1] > 0
    assert_contract(run_hook("Stop", payload, repo), "Stop")
    assert_contract(run_hook("SessionEnd", {**payload, "reason": "other"}, repo), "SessionEnd")
    with Context.for_cwd(repo) as ctx:
        store = ctx.require("project")
        assert (store.counts().events, store.counts().memories) == first
    assert any(line.split("] ", 1)[-1].startswith("Stop:") for line in log_lines(repo))


def test_post_compact_keeps_the_summary(repo: Path):
    payload = {"session_id": "s-c", "cwd": str(repo), "trigger": "auto",
               "compact_summary": "We moved the retry logic into webhooks/retry.py."}  # fmt: skip
    assert_contract(run_hook("PostCompact", payload, repo), "PostCompact")
    with Context.for_cwd(repo) as ctx:
        kinds = [e.kind for e in ctx.require("project").iter_events()]
    assert kinds == ["compact_summary"]
