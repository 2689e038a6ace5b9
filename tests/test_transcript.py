"""The Claude Code transcript reader, on the real transcripts in ../shared/data and on files
written here to reproduce what a live session leaves on disk (a half-written last line, CRLF, a
BOM, bad bytes, a pasted image bigger than any sane line, a 100 MB session)."""

from __future__ import annotations

import itertools
import json
import time
import tracemalloc
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from cortexmem.core.extraction.prose import is_host_text
from cortexmem.core.session import BLOCK_KINDS, ROLES, Entry
from cortexmem.hosts.claude_code import transcript
from cortexmem.hosts.claude_code.transcript import (
    DIALECT,
    HEAVY_RESULT_KEYS,
    MAX_RESULT_CHARS,
    ParseStats,
    RawLine,
    iter_entries,
    parse_file,
    parse_line,
    parse_record,
    read_lines,
    session_info,
    subagent_transcripts,
)

from conftest import SHARED_DATA

TRANSCRIPTS = SHARED_DATA / "transcripts"
REAL_PROJECTS = TRANSCRIPTS / "claude-code-log-real_projects"
SLOPOMETRY = TRANSCRIPTS / "slopometry" / "transcript.jsonl"
WORKTREES_SESSION_ID = "ef958aa1-0e93-49f0-bb71-150f63befcd1"
WORKTREES_SESSION = REAL_PROJECTS / "-experiments-worktrees" / f"{WORKTREES_SESSION_ID}.jsonl"
SOUND_RECORDER = REAL_PROJECTS / "-Users-dain-workspace-JSSoundRecorder"
SOUND_RECORDER_SESSION = SOUND_RECORDER / "7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl"

needs_data = pytest.mark.skipif(
    not TRANSCRIPTS.is_dir(),
    reason=f"real transcripts not found at {TRANSCRIPTS} (the shared data folder is absent)",
)


def real_line(path: Path, number: int) -> dict[str, Any]:
    """Line ``number`` (1-based) of a real transcript, decoded."""
    return json.loads(path.read_bytes().split(b"\n")[number - 1])


_UUIDS = itertools.count(1)


def record(kind: str, content: Any, **extra: Any) -> dict[str, Any]:
    """A user / assistant record shaped like Claude Code writes them."""
    role = "assistant" if kind == "assistant" else "user"
    return {
        "type": kind,
        "sessionId": "s-1",
        "uuid": f"u-{next(_UUIDS)}",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": "/home/dev/project",
        "gitBranch": "main",
        "message": {"role": role, "content": content},
        **extra,
    }


def jsonl(*records: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


# ------------------------------------------------------------------- the real transcripts


@needs_data
def test_every_real_transcript_parses_and_covers_the_formats():
    files = sorted(TRANSCRIPTS.rglob("*.jsonl"))
    assert len(files) >= 100
    stats = ParseStats()
    entries: list[Entry] = []
    physical_lines = 0
    for path in files:
        from_iter = [e for e, _ in iter_entries(path, stats=stats) if e is not None]
        assert parse_file(path) == from_iter
        assert all(e.transcript_path == str(path) for e in from_iter)
        entries += from_iter
        physical_lines += len(path.read_bytes().splitlines())

    # Every line is accounted for exactly once, and none was left as a half-written tail.
    assert stats.lines == physical_lines
    assert not stats.partial_tail
    assert stats.oversized == 0
    accounted = stats.entries + stats.blank + stats.malformed + sum(stats.skipped_types.values())
    assert accounted == stats.lines
    assert stats.entries == len(entries)
    # The only non-object lines are the deliberate ones in edge_cases.jsonl ("massive error", 42,
    # [1]).
    assert stats.malformed == 3

    # The shared README counts 4,510 lines for *all* real files, but the claude-code-viewer
    # group is kept aside for evaluation: what is here is 3,007 lines and 2,777 entries.
    assert len(entries) > 2700
    assert {"file-history-snapshot", "queue-operation", "attachment", "progress"} <= set(
        stats.skipped_types
    )
    assert stats.skipped_types["attachment"] > 40

    blocks = Counter(b.kind for e in entries for b in e.blocks)
    assert blocks["tool_use"] > 800
    assert blocks["tool_result"] > 800
    assert blocks["thinking"] > 250
    assert blocks["image"] >= 1
    assert set(blocks) <= set(BLOCK_KINDS)
    assert any(b.is_error for e in entries for b in e.blocks if b.kind == "tool_result")
    real = [e for e in entries if "synthetic-fixtures" not in str(e.transcript_path)]
    real_uses = [b for e in real for b in e.blocks if b.kind == "tool_use"]
    assert len(real_uses) > 750
    assert all(b.tool_name and (b.tool_use_id or "").startswith("toolu_") for b in real_uses)

    roles = Counter(e.role for e in entries)
    assert set(roles) == set(ROLES)
    assert roles["summary"] > 30
    assert sum(e.is_sidechain for e in entries) > 300

    slopometry = [e for e in entries if e.transcript_path == str(SLOPOMETRY)]
    assert [e.line for e in slopometry if e.is_compact_summary] == [399]
    assert [e.line for e in slopometry if e.subtype == "compact_boundary"] == [398]
    (boundary,) = (e for e in slopometry if e.subtype == "compact_boundary")
    assert boundary.role == "system"


@needs_data
def test_subagent_transcripts_in_the_nested_layout():
    subagents = subagent_transcripts(WORKTREES_SESSION)
    folder = WORKTREES_SESSION.parent / WORKTREES_SESSION_ID / "subagents"
    assert subagents == sorted(folder.glob("agent-*.jsonl"))
    assert len(subagents) == 6  # the .meta.json beside each one is not a transcript
    for path in subagents:
        entries = parse_file(path)
        assert entries
        assert all(e.is_sidechain for e in entries)
        assert {e.session_id for e in entries} == {WORKTREES_SESSION_ID}
        assert {e.agent_id for e in entries} == {path.stem.removeprefix("agent-")}


@needs_data
def test_subagent_transcripts_beside_the_session_are_claimed_by_session_id():
    # The folder holds eight agent-*.jsonl; four carry this session's id, the other four belong
    # to sessions whose files are not in the folder.
    found = subagent_transcripts(SOUND_RECORDER_SESSION)
    assert [p.name for p in found] == [
        "agent-3430b97e.jsonl",
        "agent-388fb764.jsonl",
        "agent-88061e52.jsonl",
        "agent-8d27fe83.jsonl",
    ]
    for path in found:
        assert session_info(path).session_id == SOUND_RECORDER_SESSION.stem
        assert all(e.is_sidechain for e in parse_file(path))
    others = sorted(set(SOUND_RECORDER.glob("agent-*.jsonl")) - set(found))
    assert len(others) == 4
    assert all(session_info(p).session_id != SOUND_RECORDER_SESSION.stem for p in others)
    # An agent transcript has no subagents of its own.
    assert subagent_transcripts(found[0]) == []


@needs_data
def test_session_info_reads_what_the_file_says_not_its_name():
    # slopometry's file is called transcript.jsonl and opens with three summary records and a
    # file-history-snapshot, none of which carry a session id, folder or branch.
    info = session_info(SLOPOMETRY)
    assert info.session_id == "0f112eb4-a676-476d-8986-d6c78693cd5b"
    assert info.cwd == "/Users/tensortemplar/code/slopometry"
    assert info.branch == "opinionated-metrics"
    assert info.version == "2.0.65"
    assert info.first_timestamp == "2025-12-12T13:35:17.468Z"

    # A 2.1 session whose first line is a bare permission-mode record.
    info = session_info(WORKTREES_SESSION)
    assert (info.session_id, info.cwd, info.branch, info.version) == (
        WORKTREES_SESSION_ID,
        "-experiments/worktrees",
        "master",
        "2.1.114",
    )


def test_session_info_falls_back_to_the_file_name(tmp_path: Path):
    path = tmp_path / "abc-123.jsonl"
    path.write_bytes(jsonl({"type": "summary", "summary": "old session", "leafUuid": "x"}))
    info = session_info(path)
    assert info.session_id == "abc-123"
    assert info.cwd is info.branch is info.version is None


@needs_data
def test_reading_resumes_from_any_line_end():
    raws = list(read_lines(SLOPOMETRY))
    data = SLOPOMETRY.read_bytes()
    assert [r.number for r in raws] == list(range(1, 708))
    assert raws[-1].end == len(data)
    for raw in raws:
        assert data[raw.start : raw.end] == raw.data + b"\n"

    for k in (0, 1, 353, 705, 706):
        last = raws[k]
        assert list(read_lines(SLOPOMETRY, last.end, last.number)) == raws[k + 1 :]
    resumed = [(e.line, e.uuid) for e, _ in iter_entries(SLOPOMETRY, raws[396].end, 397) if e]
    everything = [(e.line, e.uuid) for e in parse_file(SLOPOMETRY)]
    assert resumed == [x for x in everything if x[0] > 397]
    assert resumed[0][0] == 398  # the compact boundary right after line 397


# ------------------------------------------------------------------- a live file


def test_a_half_written_last_line_waits_for_its_newline(tmp_path: Path):
    path = tmp_path / "live.jsonl"
    first = record("user", "Add a --dry-run flag")
    second = record("assistant", [{"type": "text", "text": "Adding it to cli.py."}])
    third = json.dumps(record("assistant", [{"type": "text", "text": "Done."}])).encode()
    path.write_bytes(jsonl(first, second) + third[: len(third) // 2])

    stats = ParseStats()
    raws = list(read_lines(path, stats=stats))
    assert [r.number for r in raws] == [1, 2]
    assert stats.partial_tail

    with path.open("ab") as fh:  # Claude Code finishes the line
        fh.write(third[len(third) // 2 :] + b"\n")
    stats = ParseStats()
    rest = list(read_lines(path, raws[-1].end, raws[-1].number, stats))
    assert rest == [RawLine(3, raws[-1].end, path.stat().st_size, third)]
    assert not stats.partial_tail


def test_a_file_ending_in_a_whole_object_without_newline_is_read(tmp_path: Path):
    path = tmp_path / "ended.jsonl"
    first, second = record("user", "hi"), record("assistant", [{"type": "text", "text": "hello"}])
    path.write_bytes(jsonl(first) + json.dumps(second).encode())

    stats = ParseStats()
    pairs = list(iter_entries(path, stats=stats))
    assert [(e.line, e.text) for e, _ in pairs if e] == [(1, "hi"), (2, "hello")]
    assert not stats.partial_tail
    last = pairs[-1][1]
    assert last.end == path.stat().st_size

    # The session goes on: the missing newline arrives with the next record.
    with path.open("ab") as fh:
        fh.write(b"\n" + jsonl(record("user", "thanks")))
    stats = ParseStats()
    more = list(iter_entries(path, last.end, last.number, stats))
    assert [(e.line, e.text) for e, _ in more if e] == [(3, "thanks")]
    assert [r.number for _, r in more] == [3]
    assert stats.blank == 0  # the late newline is not a line of its own


def test_odd_bytes_and_odd_lines_are_counted_not_raised(tmp_path: Path):
    path = tmp_path / "odd.jsonl"
    bad_utf8 = json.dumps(record("user", "caf\u00e9 X")).encode().replace(b"\\u00e9 X", b"\xff\xfe")
    path.write_bytes(
        b"\xef\xbb\xbf"  # a BOM on the first line
        + json.dumps(record("user", "first")).encode()
        + b"\r\n"
        + json.dumps(record("assistant", [{"type": "text", "text": "crlf"}])).encode()
        + b"\r\n"
        + bad_utf8
        + b"\n"
        + b"\n   \n\r\n"  # three blank lines
        + b"Traceback (most recent call last):\n"
        + b'[{"type": "user"}]\n'
        + b'{"type": "brand-new-kind", "payload": 1}\n'
        + b'{"no_type": true}\n'
        + b'{"type": ["user"]}\n'
        + b"[" * 100_000
        + b"\n"
        + json.dumps(record("user", "last")).encode()
        + b"\n"
        + b"[" * 100_000  # an unfinished tail, and not an object however it ends
    )
    stats = ParseStats()
    entries = [e for e, _ in iter_entries(path, stats=stats) if e is not None]
    assert [(e.line, e.role) for e in entries] == [
        (1, "user"),
        (2, "assistant"),
        (3, "user"),
        (13, "user"),
    ]
    assert entries[0].text == "first"
    assert entries[1].text == "crlf"
    assert entries[2].text.startswith("caf") and "\ufffd" in entries[2].text
    assert entries[3].text == "last"
    assert stats.blank == 3
    assert stats.malformed == 3  # the traceback, the array, the nesting too deep for json
    assert stats.skipped_types == {"brand-new-kind": 1, "untyped": 2}
    assert stats.lines == 13
    assert stats.partial_tail


def test_oversized_lines_are_drained_and_the_rest_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(transcript, "MAX_LINE_BYTES", 1000)
    monkeypatch.setattr(transcript, "CHUNK_BYTES", 64)  # lines straddle many chunks

    def sized(n: int, text: str) -> bytes:
        """A user record of exactly ``n`` bytes (a 1.0-era string message)."""
        line = b'{"type":"user","message":"%s "}' % text.encode()
        return line[:-2] + b"p" * (n - len(line)) + b'"}'

    lines = [
        sized(200, "small one"),
        sized(5000, "pasted image"),  # oversized
        sized(1000, "exactly the limit"),  # kept
        sized(1001, "one byte over"),  # oversized
        sized(63, "tiny"),
        sized(64 * 3, "three chunks"),
    ]
    assert [len(x) for x in lines] == [200, 5000, 1000, 1001, 63, 192]
    path = tmp_path / "big-lines.jsonl"
    path.write_bytes(b"".join(x + b"\n" for x in lines))

    stats = ParseStats()
    pairs = list(iter_entries(path, stats=stats))
    spans, at = [], 0
    for x in lines:
        spans.append((at, at + len(x) + 1))
        at += len(x) + 1
    assert [(r.number, r.start, r.end) for _, r in pairs] == [
        (n, s, e) for n, (s, e) in enumerate(spans, 1)
    ]
    assert [r.data for _, r in pairs] == [lines[0], None, lines[2], None, lines[4], lines[5]]
    assert [e.line if e else None for e, _ in pairs] == [1, None, 3, None, 5, 6]
    assert pairs[2][0] is not None and pairs[2][0].text.startswith("exactly the limit")
    assert stats.oversized == 2
    assert stats.entries == 4
    assert not stats.partial_tail

    # An oversized line still being written is a partial tail, never held in memory.
    with path.open("ab") as fh:
        fh.write(b'{"type": "user", "message": "' + b"z" * 3000)
    stats = ParseStats()
    tail = list(read_lines(path, pairs[-1][1].end, 6, stats))
    assert tail == [] and stats.partial_tail


@pytest.mark.slow
def test_a_100_mb_transcript_is_read_in_bounded_memory(tmp_path: Path):
    output = "".join(f"{n:06d} | src/module_{n % 97}.py: ok\n" for n in range(140))[:4096]
    turns = 11_500
    path = tmp_path / "huge.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        batch: list[str] = []
        for i in range(turns):
            tool_id = f"toolu_01{i:024d}"
            ask = record(
                "assistant",
                [
                    {"type": "text", "text": f"Step {i}: running the test suite again."},
                    {
                        "type": "tool_use",
                        "id": tool_id,
                        "name": "Bash",
                        "input": {"command": f"pytest -q tests/test_{i % 50}.py"},
                    },
                ],
            )
            answer = record(
                "user",
                [{"type": "tool_result", "tool_use_id": tool_id, "content": output}],
                toolUseResult={"stdout": output, "stderr": "", "interrupted": False},
            )
            batch += (json.dumps(ask), "\n", json.dumps(answer), "\n")
            if len(batch) >= 2000:
                fh.write("".join(batch))
                batch.clear()
        fh.write("".join(batch))
    assert path.stat().st_size > 100 * 1024 * 1024

    stats = ParseStats()
    count = tool_results = last_line = 0
    started = time.perf_counter()
    tracemalloc.start()
    try:
        for entry, _ in iter_entries(path, stats=stats):
            assert entry is not None
            count += 1
            last_line = entry.line
            tool_results += sum(b.kind == "tool_result" for b in entry.blocks)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    elapsed = time.perf_counter() - started

    assert count == stats.entries == stats.lines == last_line == 2 * turns
    assert tool_results == turns
    assert peak < 50 * 1024 * 1024, f"peak {peak / 2**20:.1f} MiB"
    print(f"100 MB read in {elapsed:.1f}s, peak traced memory {peak / 2**20:.2f} MiB")


# ------------------------------------------------------------------- slash commands


@pytest.mark.parametrize(
    ("name", "args", "text"),
    [
        # a custom command or skill run with a request: the person's words, as typed
        ("/entire:search", "what's the purpose of\n plugins/entire/skills/explain/skill.md",
         "/entire:search what's the purpose of plugins/entire/skills/explain/skill.md"),
        # settings or nothing: the host's own text, skipped as before
        ("/model", "sonnet", None),
        ("test-command", "--verbose --output /tmp/test.log", None),
        ("/clear", "", None),
    ],
)  # fmt: skip
def test_a_slash_command_run_with_a_request_is_the_request(name, args, text):
    markup = (
        f"<command-message>{name.lstrip('/')}</command-message>\n"
        f"<command-name>{name}</command-name>\n<command-args>{args}</command-args>"
    )
    entry = parse_record(record("user", [{"type": "text", "text": markup}]), line=3)
    assert entry is not None
    assert entry.text == (text or markup)
    assert is_host_text(entry.text, DIALECT) == (text is None)


def queued(prompt: Any, mode: str = "prompt", origin: str | None = "human", **extra: Any):
    """A prompt sent while the assistant worked, as Claude Code 2.1 records it: an attachment
    (no ``user`` record follows it; the model got it mid-turn)."""
    attachment: dict[str, Any] = {"type": "queued_command", "prompt": prompt, "commandMode": mode}
    if origin is not None:
        attachment["origin"] = {"kind": origin}
    return {
        "type": "attachment", "attachment": {**attachment, **extra}, "sessionId": "s-1",
        "uuid": "a-1", "timestamp": "2026-01-01T00:00:05.000Z", "cwd": "/home/dev/project",
        "gitBranch": "main", "isSidechain": False,
    }  # fmt: skip


def test_what_the_person_sent_while_the_assistant_worked_is_their_prompt():
    entry = parse_record(queued("don't use npm here, use pnpm"), line=9)
    assert entry is not None
    assert (entry.role, entry.text, entry.line) == ("user", "don't use npm here, use pnpm", 9)
    assert (entry.session_id, entry.branch, entry.cwd) == ("s-1", "main", "/home/dev/project")
    with_image = queued([{"type": "image", "source": {}}, {"type": "text", "text": "like this"}])
    entry = parse_record(with_image, line=9)
    assert entry is not None
    assert [b.kind for b in entry.blocks] == ["image", "text"] and entry.text == "like this"
    assert parse_record(queued("use pnpm", origin=None), line=9) is not None  # before origins


@pytest.mark.parametrize(
    "record_",
    [
        queued("<task-notification>done</task-notification>", mode="task-notification",
               origin="task-notification"),
        queued("<agent-message>hi</agent-message>", origin="peer"),
        queued("use pnpm", isMeta=True),
        queued(""),
        {"type": "attachment", "attachment": {"type": "hook_success", "content": "ok"}},
    ],
)  # fmt: skip
def test_what_a_task_another_agent_or_the_host_queued_is_not_the_persons(record_):
    assert parse_record(record_, line=9) is None
    stats = ParseStats()
    raw = RawLine(9, 0, 1, json.dumps(record_).encode())
    assert parse_line(raw, stats=stats) is None
    assert stats.skipped_types == {"attachment": 1} and stats.malformed == 0


def test_command_markup_quoted_in_a_prompt_is_left_as_the_person_wrote_it():
    prompt = (
        "Why does the parser turn <command-name>/foo</command-name><command-args>please "
        "explain this thing</command-args> into a request? Fix the bug in transcript.py"
    )
    entry = parse_record(record("user", [{"type": "text", "text": prompt}]), line=3)
    assert entry is not None and entry.text == prompt


# ------------------------------------------------------------------- tool results


def test_a_tool_result_list_flattens_to_its_text():
    entry = parse_record(
        record(
            "user",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01abc",
                    "content": [
                        {"type": "text", "text": "Screenshot taken:"},
                        {"type": "image", "source": {"type": "base64", "data": "iVBORw0KGgo="}},
                        {"type": "text", "text": "1280x720"},
                    ],
                }
            ],
        ),
        line=7,
    )
    assert entry is not None and entry.line == 7
    (block,) = entry.blocks
    assert block.kind == "tool_result"
    assert block.text == "Screenshot taken:\n1280x720"
    assert block.tool_use_id == "toolu_01abc"
    assert not block.is_error
    assert block.result is None  # no toolUseResult on the record


@pytest.mark.parametrize("as_list", [False, True])
def test_a_long_tool_result_is_cut_with_a_note(as_list: bool):
    long = "x" * (MAX_RESULT_CHARS + 123)
    content: Any = [{"type": "text", "text": long}] if as_list else long
    entry = parse_record(
        record("user", [{"type": "tool_result", "tool_use_id": "t", "content": content}]), 1
    )
    assert entry is not None
    (block,) = entry.blocks
    assert block.text.startswith("x" * MAX_RESULT_CHARS)
    assert block.text.endswith("\n… [123 more characters]")
    assert len(block.text) < MAX_RESULT_CHARS + 50


@needs_data
def test_tool_use_result_keeps_the_small_fields_of_a_real_edit():
    raw = real_line(TRANSCRIPTS / "claude-code-log-test-excerpts" / "edit_tool.jsonl", 2)
    assert {"originalFile", "structuredPatch"} <= set(raw["toolUseResult"])
    entry = parse_record(raw, 2)
    assert entry is not None
    (block,) = entry.blocks
    assert block.kind == "tool_result"
    assert block.tool_use_id == "toolu_01PhNkTBr17qvahqhCdkUkvM"
    assert block.text.startswith("The file e:\\Workspace")
    assert block.result is not None
    assert set(block.result) == {"filePath", "userModified", "replaceAll"}
    assert block.result["filePath"].endswith("renderer_timings.py")
    assert not set(block.result) & HEAVY_RESULT_KEYS


@needs_data
def test_a_string_tool_use_result_is_not_kept():
    path = REAL_PROJECTS / "-Users-dain-workspace-claude-code-log-sample"
    raw = real_line(path / "937c6e6b-27e7-4edd-86f1-ad28f9731841.jsonl", 16)
    assert raw["toolUseResult"].startswith("Error: Found 2 matches")
    entry = parse_record(raw, 16)
    assert entry is not None
    (block,) = entry.blocks
    assert block.is_error
    assert block.result is None
    assert block.text.startswith("Found 2 matches of the string to replace")


# ------------------------------------------------------------------- never raises

JSON_LIKE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=15,
)
BLOCKS = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "thinking", "tool_use", "tool_result", "image"])},
    optional={
        key: JSON_LIKE
        for key in ("text", "thinking", "name", "id", "input", "tool_use_id", "is_error")
    }
    | {"content": st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": JSON_LIKE}))}
    | {"source": JSON_LIKE},
)
MESSAGES = st.fixed_dictionaries(
    {},
    optional={
        "role": st.sampled_from(["user", "assistant", "system"]) | JSON_LIKE,
        "content": st.lists(BLOCKS | JSON_LIKE, max_size=5) | JSON_LIKE,
    },
)
RECORDS = st.fixed_dictionaries(
    {"type": st.sampled_from(["user", "assistant", "system", "summary"]) | JSON_LIKE},
    optional={
        "message": MESSAGES | JSON_LIKE,
        "toolUseResult": st.dictionaries(
            st.sampled_from(sorted(HEAVY_RESULT_KEYS)) | st.text(max_size=8), JSON_LIKE
        )
        | JSON_LIKE,
        "summary": JSON_LIKE,
        "content": JSON_LIKE,
        "subtype": JSON_LIKE,
        "sessionId": JSON_LIKE,
        "isSidechain": JSON_LIKE,
        "isCompactSummary": JSON_LIKE,
    },
)


@given(RECORDS | JSON_LIKE)
@example({"type": ["user"]})  # unhashable: `in frozenset` used to raise TypeError
@example({"type": {"user": 1}})
@settings(max_examples=400, deadline=None)
def test_parse_record_never_raises(obj: Any):
    entry = parse_record(obj, 1)
    if entry is None:  # only what is not a conversation record
        assert not isinstance(obj, dict) or obj.get("type") not in ROLES
        return
    assert isinstance(entry, Entry)
    assert entry.role in ROLES
    assert all(b.kind in BLOCK_KINDS for b in entry.blocks)
    for block in entry.blocks:
        assert block.result is None or not set(block.result) & HEAVY_RESULT_KEYS
    # The same record as a line of a file reads the same way.
    stats = ParseStats()
    line = parse_line(RawLine(1, 0, 0, json.dumps(obj).encode()), stats=stats)
    assert isinstance(line, Entry) and stats.entries == 1


@given(st.binary(max_size=300) | RECORDS.map(lambda r: json.dumps(r).encode()))
@example(b"[" * 100_000)  # deeper than json can decode: used to raise RecursionError
@example(b'{"type": []}')
@example(b"\xef\xbb\xbf{}")
@settings(max_examples=400, deadline=None)
def test_parse_line_never_raises(data: bytes):
    stats = ParseStats()
    entry = parse_line(RawLine(1, 0, len(data), data), stats=stats)
    assert entry is None or isinstance(entry, Entry)
    assert stats.lines == 1
    outcomes = stats.entries + stats.blank + stats.malformed + sum(stats.skipped_types.values())
    assert outcomes == 1  # every line is counted as exactly one thing
    assert (entry is not None) == (stats.entries == 1)
