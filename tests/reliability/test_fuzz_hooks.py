"""Fuzzing the hooks and the transcript reader with what Claude Code (or a broken file) could
send: whatever comes in, a hook exits 0, prints nothing or one JSON object, and a later good
Stop still captures; a bad transcript line never costs the good lines around it."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cortexmem.hosts.claude_code import hook
from cortexmem.hosts.claude_code.reader import READER
from cortexmem.recall import client as recall_client
from cortexmem.services import capture
from cortexmem.services.context import Context

HOOK = [sys.executable, "-c", "from cortexmem.hosts.claude_code.hook import run; run()"]
EVENTS = sorted(hook.EVENTS)
SESSION = "sess-fuzz-0001"
TRANSCRIPTS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "transcripts"
REAL = TRANSCRIPTS / "slopometry" / "transcript.jsonl"


def fuzz(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )


# ----------------------------------------------------------------- values

surrogate = st.integers(0xD800, 0xDFFF).map(chr)
nasty_text = st.one_of(
    st.text(max_size=40),  # control characters included
    st.lists(st.one_of(st.text(max_size=5), surrogate), max_size=8).map("".join),
    st.sampled_from(["toolu_\ud83d", "\x00", "\n\r\x1b[31m", "é" * 300, "a" * 10_000, ""]),
)
numbers = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([2**64, 2**63, -(2**63) - 1, 10**40, -1]),
    st.floats(allow_nan=True, allow_infinity=True),
)
scalar = st.one_of(st.none(), st.booleans(), numbers, nasty_text)
nested = st.recursive(
    scalar,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
FIELDS = (
    "session_id", "transcript_path", "cwd", "hook_event_name", "tool_name", "tool_use_id",
    "tool_input", "tool_response", "duration_ms", "prompt", "source", "trigger",
    "compact_summary", "agent_transcript_path", "stop_hook_active", "permission_mode",
)  # fmt: skip
TOOLS = st.sampled_from(["Bash", "Edit", "Read", "Task", "TodoWrite", "mcp__x__y"])


@st.composite
def payloads(draw: st.DrawFn, repo: Path) -> tuple[str, bytes]:
    event = draw(st.sampled_from(EVENTS))
    good = {
        "session_id": draw(st.sampled_from([SESSION, "sess-other"])),
        "cwd": str(repo),
        "hook_event_name": event,
        "tool_name": draw(TOOLS),
        "tool_use_id": draw(st.sampled_from(["toolu_1", "toolu_2", "toolu_\ud83d"])),
        "tool_input": {"command": draw(nasty_text)},
        "duration_ms": draw(numbers),
    }
    payload: dict[str, object] = {}
    for name in FIELDS:
        choice = draw(st.sampled_from(["good", "missing", "wrong"]))
        if choice == "good" and name in good:
            payload[name] = good[name]
        elif choice == "wrong":
            payload[name] = draw(nested)
    # A field that names a folder or file is never one that exists (but the project's own):
    # a hook must not be pointed at "/" or "." to write a store there.
    for name in ("cwd", "transcript_path", "agent_transcript_path"):
        value = payload.get(name)
        if isinstance(value, str) and value != str(repo) and _exists(value):
            payload[name] = str(repo / "nowhere")
    depth = draw(st.sampled_from([0, 0, 50, 990, 3_000, 100_000]))
    if depth:
        payload["extra"] = "DEEP"
    data = json.dumps(payload).encode("utf-8", "surrogatepass")
    # Nesting deeper than Python's json can build or read, written as text.
    data = data.replace(b'"DEEP"', b"[" * depth + b"{}" + b"]" * depth)
    mangle = draw(st.sampled_from(["none", "none", "bytes", "cut", "not-json", "array"]))
    if mangle == "bytes":  # invalid UTF-8 somewhere
        at = draw(st.integers(0, len(data)))
        data = (
            data[:at]
            + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00"]))
            + data[at:]
        )
    elif mangle == "cut":
        data = data[: draw(st.integers(0, len(data)))]
    elif mangle == "not-json":
        data = draw(st.binary(max_size=64))
    elif mangle == "array":
        data = b"[" + data + b"]"
    return event, data


def _exists(path: str) -> bool:
    try:
        return os.path.lexists(path) or os.path.isdir(path)
    except (ValueError, UnicodeError, OSError):
        return False


def run_in_process(event: str, data: bytes, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    assert hook.main([event]) == 0
    return out.getvalue()


def run_process(event: str, data: bytes, repo: Path) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(repo)}
    return subprocess.run(
        [*HOOK, event], input=data, cwd=repo, capture_output=True, env=env, timeout=60
    )


def assert_answer(text: str) -> None:
    if text.strip():
        answer = json.loads(text)
        assert isinstance(answer, dict)


def good_stop_captures(repo: Path, tmp_path: Path, monkeypatch, marker: str, **run) -> None:
    transcript = tmp_path / f"{SESSION}.jsonl"
    line = json.dumps({
        "type": "assistant", "sessionId": SESSION, "uuid": f"u-{marker}", "cwd": str(repo),
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": "assistant", "content": [{"type": "text",
                    "text": f"We decided to keep marker {marker} because it proves capture."}]},
    })  # fmt: skip
    with transcript.open("a", encoding="utf-8") as fh:
        fh.write(line + "\n")
    payload = {"session_id": SESSION, "transcript_path": str(transcript), "cwd": str(repo)}
    data = json.dumps(payload).encode()
    if run.get("process"):
        result = run_process("Stop", data, repo)
        assert result.returncode == 0
    else:
        run_in_process("Stop", data, monkeypatch)

    def contents() -> list[str]:
        with Context.for_cwd(repo) as ctx:
            return [e.content for e in ctx.writable("project").iter_events()]

    # A recall server a fuzzed SessionStart or prompt started takes the turn's end and
    # captures it a moment later: wait for it (bounded), as the next session would.
    end = time.monotonic() + 30
    while not any(f"marker {marker}" in c for c in contents()) and time.monotonic() < end:
        time.sleep(0.1)
    assert any(f"marker {marker}" in c for c in contents()), contents()[-5:]


@pytest.fixture
def quiet(repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """In-process hooks act for ``repo`` and start no recall server."""
    monkeypatch.chdir(repo)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(repo))
    monkeypatch.setattr(recall_client, "start", lambda root, module=None: False)
    return repo


COUNT = {"in_process": 0, "process": 0, "lines": 0}


def test_fuzzed_payloads_in_process(quiet: Path, tmp_path: Path, monkeypatch):
    repo = quiet

    @fuzz(300)
    @given(case=payloads(repo))
    def one(case: tuple[str, bytes]) -> None:
        COUNT["in_process"] += 1
        event, data = case
        assert_answer(run_in_process(event, data, monkeypatch))

    one()
    good_stop_captures(repo, tmp_path, monkeypatch, "after-in-process-fuzz")


def test_fuzzed_payloads_through_the_real_hook_process(repo: Path, tmp_path: Path, monkeypatch):
    @fuzz(12)
    @given(case=payloads(repo))
    def one(case: tuple[str, bytes]) -> None:
        COUNT["process"] += 1
        event, data = case
        result = run_process(event, data, repo)
        assert result.returncode == 0
        assert b"Traceback" not in result.stdout
        assert_answer(result.stdout.decode("utf-8"))

    one()
    good_stop_captures(repo, tmp_path, monkeypatch, "after-process-fuzz", process=True)


def test_a_poisoned_tool_hook_then_a_good_stop(quiet: Path, tmp_path: Path, monkeypatch):
    """The reproduction of fault 1, in process: each value that once blocked the session."""
    repo = quiet
    for n, (field, value) in enumerate(
        [
            ("duration_ms", 2**64),
            ("tool_use_id", "toolu_\ud83d"),
            ("tool_name", "Bash\ud800"),
            ("duration_ms", 10**40),
            ("tool_use_id", "x" * 100_000),
        ]
    ):
        payload = {"session_id": SESSION, "cwd": str(repo), "tool_name": "Bash",
                   "tool_use_id": f"toolu_{n}", field: value}  # fmt: skip
        data = json.dumps(payload).encode("utf-8", "surrogatepass")
        assert run_in_process("PostToolUse", data, monkeypatch) == ""
        good_stop_captures(repo, tmp_path, monkeypatch, f"poison-{n}")


# ----------------------------------------------------------------- transcript lines


def real_lines() -> list[str]:
    if not REAL.is_file():
        pytest.skip(f"{REAL} is not here")
    return REAL.read_text(encoding="utf-8").splitlines()[:120]


def flip(value: object, draw: st.DrawFn) -> object:
    """``value`` with one field somewhere replaced by a value of another type."""
    if isinstance(value, dict) and value:
        key = draw(st.sampled_from(sorted(value)))
        return {**value, key: flip(value[key], draw)}
    if isinstance(value, list) and value:
        at = draw(st.integers(0, len(value) - 1))
        return [*value[:at], flip(value[at], draw), *value[at + 1 :]]
    return draw(st.one_of(nested, st.sampled_from([2**64, -1, "toolu_\ud83d", [], {}])))


def inject(value: object, draw: st.DrawFn) -> object:
    """Every string gets a lone surrogate and every integer becomes huge."""
    if isinstance(value, dict):
        return {k: inject(v, draw) for k, v in value.items()}
    if isinstance(value, list):
        return [inject(v, draw) for v in value]
    if isinstance(value, str):
        return value + "\udc80 " + chr(draw(st.integers(0xD800, 0xDFFF)))
    if isinstance(value, int) and not isinstance(value, bool):
        return 2**64 + value
    return value


@st.composite
def mutated(draw: st.DrawFn) -> tuple[int, str]:
    lines = real_lines()
    at = draw(st.integers(0, len(lines) - 1))
    how = draw(st.sampled_from(["truncate", "flip", "inject", "garbage"]))
    line = lines[at]
    if how == "truncate":
        bad = line[: draw(st.integers(0, max(0, len(line) - 1)))]
    elif how == "garbage":
        bad = draw(st.text(max_size=80))
    else:
        obj = json.loads(line)
        obj = flip(obj, draw) if how == "flip" else inject(obj, draw)
        bad = json.dumps(obj)  # lone surrogates written as their escapes, as a file holds them
    return at, bad.replace("\n", " ")


def decision(i: int, session: str) -> str:
    return json.dumps({
        "type": "assistant", "sessionId": session, "uuid": f"good-{i}",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": "assistant", "content": [{"type": "text",
                    "text": f"We decided to keep good line {i} because it frames the bad one."}]},
    })  # fmt: skip


def test_mutated_transcript_lines_never_cost_the_good_lines_around_them(tmp_path: Path):
    lines = real_lines()

    @fuzz(150)
    @given(case=mutated(), pieces=st.integers(1, 3))
    def one(case: tuple[int, str], pieces: int) -> None:
        COUNT["lines"] += 1
        at, bad = case
        folder = tmp_path / f"case-{COUNT['lines']}"
        (folder / "project").mkdir(parents=True)
        body = [*lines[:at], decision(1, "s"), bad, decision(2, "s"), *lines[at + 1 :]]
        transcript = folder / "t.jsonl"
        with Context.for_cwd(folder / "project") as ctx:
            store = ctx.writable("project")
            step = max(1, len(body) // pieces)
            for end in [*range(step, len(body), step), len(body)]:
                transcript.write_text("".join(x + "\n" for x in body[:end]), encoding="utf-8")
                capture.capture_transcript(store, transcript, reader=READER, session_id="s")
            contents = [e.content for e in store.iter_events()]
            again = capture.capture_transcript(store, transcript, reader=READER, session_id="s")
        assert any("good line 1" in c for c in contents)
        assert any("good line 2" in c for c in contents)
        assert again.lines == 0  # the cursor is past every line, the bad one too

    one()


def test_fuzz_figures_are_reported(capsys):
    """Prints how many examples ran (the report reads them)."""
    with capsys.disabled():
        print(f"\nfuzz examples run: {COUNT}")
