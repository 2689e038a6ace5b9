"""Incremental, exactly-once capture of transcripts into a real store."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from cortexmem.core.extraction.memories import to_memories
from cortexmem.hosts.claude_code.reader import READER
from cortexmem.model import Memory
from cortexmem.services import capture
from cortexmem.services.context import Context
from cortexmem.services.ingest import find_sessions, ingest
from cortexmem.services.memories import forget, remember
from cortexmem.store.sqlite.store import SQLiteStore

from conftest import SHARED_DATA

TRANSCRIPTS = SHARED_DATA / "transcripts"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "sessions"


def line(i: int, text: str, role: str = "assistant") -> str:
    return json.dumps(
        {
            "type": role,
            "uuid": f"u-{i}",
            "sessionId": "sess-1",
            "timestamp": f"2026-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}.000Z",
            "gitBranch": "main",
            "message": {"role": role, "content": [{"type": "text", "text": text}]},
        }
    )


def decisions(n: int, start: int = 0) -> list[str]:
    return [
        line(i, f"We decided to use backend number {i} because it scales better.")
        for i in range(start, start + n)
    ]


def write(path: Path, lines: list[str], tail: str = "") -> None:
    path.write_text("".join(x + "\n" for x in lines) + tail, encoding="utf-8")


def state(store) -> tuple[list[str], list[str]]:
    events = sorted(e.content for e in store.iter_events() if e.kind not in ("prompt", "reply"))
    memories = sorted(
        m.content for m in store.iter_memories() if "layer:digest" not in m.tags
    )  # the session's digest (its summary) is checked on its own
    return events, memories


@pytest.fixture
def store(ctx: Context):
    return ctx.writable("project")


def test_second_pass_reads_nothing_and_appends_are_read_once(store, tmp_path: Path):
    t = tmp_path / "s.jsonl"
    write(t, decisions(5))
    first = capture.capture_transcript(store, t, reader=READER, session_id="sess-1")
    assert first.lines == 5 and first.events_added >= 5 and first.memories_added >= 5
    again = capture.capture_transcript(store, t, reader=READER, session_id="sess-1")
    assert (again.lines, again.events_added, again.memories_added) == (0, 0, 0)
    write(t, decisions(8))
    more = capture.capture_transcript(store, t, reader=READER, session_id="sess-1")
    assert more.lines == 3 and more.events_added >= 3


def test_a_half_written_last_line_waits_for_its_end(store, tmp_path: Path):
    t = tmp_path / "s.jsonl"
    full = decisions(3)
    write(t, full[:2], tail=full[2][:25])
    report = capture.capture_transcript(store, t, reader=READER, session_id="sess-1")
    assert report.lines == 2 and report.partial_tail
    write(t, full)
    report = capture.capture_transcript(store, t, reader=READER, session_id="sess-1")
    assert report.lines == 1 and report.events_added >= 1
    events = state(store)[0]
    assert len(events) == len(set(events))  # nothing twice


def test_a_rewritten_or_truncated_transcript_is_read_again_without_duplicates(
    store, tmp_path: Path
):
    t = tmp_path / "s.jsonl"
    write(t, decisions(6))
    capture.capture_transcript(store, t, reader=READER, session_id="sess-1")
    before = state(store)
    write(t, decisions(2))  # truncated: shorter than the cursor
    report = capture.capture_transcript(store, t, reader=READER, session_id="sess-1")
    assert report.restarted and report.events_added == 0
    write(t, [line(0, "We decided to keep one table per tenant instead of a shared one.")])
    report = capture.capture_transcript(store, t, reader=READER, session_id="sess-1")
    assert report.restarted and report.events_added >= 1  # a different first line: rewritten
    assert set(before[0]) <= set(state(store)[0])


def test_a_crash_mid_way_loses_nothing_and_duplicates_nothing(ctx: Context, tmp_path: Path):
    t = tmp_path / "s.jsonl"
    write(t, decisions(30))
    reference = tmp_path / "reference.db"
    with SQLiteStore.open(reference) as ref:
        capture.capture_transcript(ref, t, reader=READER, session_id="sess-1", batch_lines=7)
        expected = state(ref)

    store = ctx.writable("project")
    calls = 0

    def crash_on_third_batch(events):
        nonlocal calls
        calls += 1
        if calls == 3:
            raise RuntimeError("power cut")
        return to_memories(events)

    with pytest.raises(RuntimeError, match="power cut"):
        capture.capture_transcript(
            store, t, reader=READER, session_id="sess-1", batch_lines=7,
            memories_for=crash_on_third_batch,
        )  # fmt: skip
    cursor = store.get_cursor(str(t.resolve()))
    assert cursor is not None and cursor.line == 14  # two whole batches committed, no more
    capture.capture_transcript(store, t, reader=READER, session_id="sess-1", batch_lines=7)
    assert state(store) == expected


def test_a_deadline_leaves_the_rest_for_later(ctx: Context, tmp_path: Path):
    t = tmp_path / "s.jsonl"
    write(t, decisions(50))
    report = capture.capture_session(
        ctx, t, reader=READER, session_id="sess-1", deadline=time.monotonic(), live=False
    )
    assert not report.finished
    capture.enqueue(ctx, t, "sess-1")
    drained = capture.drain_queue(ctx, reader=READER)
    assert drained.finished and not list(capture.queue_dir(ctx).glob("*.json"))
    store = ctx.require("project")
    assert sum(1 for e in store.iter_events() if e.kind == "decision") >= 50


def test_provenance_points_at_the_line(store, tmp_path: Path):
    t = tmp_path / "s.jsonl"
    write(t, [line(0, "hello"), *decisions(1, start=1)])
    capture.capture_transcript(store, t, reader=READER, session_id="sess-1", commit="abc123")
    event = next(e for e in store.iter_events() if e.kind == "decision")
    assert event.provenance.line == 2
    assert event.provenance.transcript_path == str(t.resolve())
    assert (event.provenance.branch, event.provenance.commit) == ("main", "abc123")
    assert event.provenance.session_id == "sess-1"


def test_secrets_in_a_transcript_are_redacted_before_storing(store, tmp_path: Path):
    key = "sk-ant-api03-" + "A1b2C3d4E5f6G7h8I9j0" * 4
    t = tmp_path / "s.jsonl"
    write(t, [line(0, f"We decided to use the key {key} for the staging deploy.")])
    capture.capture_transcript(store, t, reader=READER, session_id="sess-1")
    blob = json.dumps([e.to_dict() for e in store.iter_events()])
    blob += json.dumps([m.to_dict() for m in store.iter_memories()])
    assert key not in blob and "decided" in blob


# ----------------------------------------------------------------- backfill


@pytest.mark.skipif(not EXAMPLES.exists(), reason="examples/ is not here")
def test_ingest_routes_by_cwd_and_is_idempotent(tmp_path: Path, repo: Path):
    first = ingest([EXAMPLES], reader=READER, into=repo)
    assert first.sessions >= 3 and not first.skipped
    totals = next(iter(first.projects.values()))
    assert totals["memories_added"] > 0
    # The report says what the store now serves: the sessions' digests (summaries, how-tos)
    # besides the memories drawn from single events.
    with Context.for_cwd(repo) as ctx:
        active = ctx.require("project").counts().by_status["active"]
    assert totals["memories_active_before"] == 0
    assert totals["memories_active"] == active > totals["memories_added"]
    second = ingest([EXAMPLES], reader=READER, into=repo)
    assert all(t["events_added"] == 0 for t in second.projects.values())
    again = next(iter(second.projects.values()))
    assert again["memories_active_before"] == again["memories_active"] == active
    # their cwd (/home/dev/payments-api) does not exist here
    unrouted = ingest([EXAMPLES], reader=READER)
    assert unrouted.sessions == 0 and all("is gone" in s.reason for s in unrouted.skipped)


def test_ingest_counts_a_project_reached_from_two_of_its_folders(tmp_path: Path, repo: Path):
    """Sessions recorded in the repository and in a subfolder share one store: what it served
    before is what it held before the first of them, not after."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    (repo / "sub").mkdir()
    for name, cwd, start in (("a.jsonl", repo, 0), ("b.jsonl", repo / "sub", 10)):
        said = [json.loads(x) | {"cwd": str(cwd), "sessionId": name} for x in decisions(3, start)]
        write(folder / name, [json.dumps(x) for x in said])
    result = ingest([folder], reader=READER)
    (totals,) = result.projects.values()
    with Context.for_cwd(repo) as ctx:
        active = ctx.require("project").counts().by_status["active"]
    assert totals["sessions"] == 2 and totals["memories_active_before"] == 0
    assert totals["memories_active"] == active >= 6


def test_ingest_that_cannot_count_the_store_still_reports_what_it_read(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
):
    import sqlite3

    def busy(self):
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(SQLiteStore, "counts", busy)
    folder = tmp_path / "sessions"
    folder.mkdir()
    write(folder / "a.jsonl", decisions(3))
    result = ingest([folder], reader=READER, into=repo)
    (totals,) = result.projects.values()
    assert not result.skipped and totals["memories_added"] == 3
    assert "memories_active" not in totals


REAL_SESSIONS = [
    "Durban-Designer-vsla/-home-kenth56-Downloads/9dd861b1-71f8-41ee-bb93-7d3724bcb337.jsonl",
    "entireio-skills/-Users-alisha-Projects-agent-plugins/"
    "0953ba2a-3a92-48a0-884e-ce8f7ebbe8ba.jsonl",
    "slopometry/transcript.jsonl",
]


@pytest.mark.parametrize("name", REAL_SESSIONS)
def test_the_digest_a_capture_stores_is_the_digest_of_all_the_sessions_events(store, name: str):
    """The digest reads the session's events back from the store (``DIGEST_KINDS``): what it
    stores must be what the same code makes of every event the transcript holds (a kind the
    digest reads but the store is not asked for is silently missing)."""
    from cortexmem.core.extraction.digest import session_digest
    from cortexmem.core.extraction.extractor import ExtractionContext, extract

    path = TRANSCRIPTS / name
    if not path.exists():
        pytest.skip(f"{path} is not here")
    capture.capture_transcript(store, path, reader=READER, session_id=None)
    stored = sorted(m.content for m in store.iter_memories() if "layer:digest" in m.tags)
    entries = [entry for entry, _ in READER.iter_entries(path) if entry is not None]
    events = extract(entries, ExtractionContext(dialect=READER.dialect))
    assert stored == sorted(m.content for m in session_digest(events, str(path)))


def test_ingest_reads_the_oldest_session_first(tmp_path: Path, repo: Path):
    """Whatever the files are called: a document a later session reads again withdraws the
    decisions an earlier one found in it, not the other way round."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    write(folder / "a-later.jsonl", read_document(3, REWRITTEN, "later"))
    write(folder / "b-earlier.jsonl", read_document(1, LISTED, "earlier"))
    assert [p.name for p in find_sessions([folder], READER)] == ["b-earlier.jsonl", "a-later.jsonl"]
    ingest([folder], reader=READER, into=repo)
    with Context.for_cwd(repo) as ctx:
        store = ctx.require("project")
        statuses = {
            m.content: m.status for m in store.iter_memories() if m.memory_type == "decision"
        }
    assert statuses == {"Keep SQLite in WAL mode": "active", "One worker at a time": "archived"}


@pytest.mark.skipif(not TRANSCRIPTS.exists(), reason=f"{TRANSCRIPTS} is not here")
def test_ingest_of_every_real_transcript(tmp_path: Path, repo: Path):
    result = ingest([TRANSCRIPTS], reader=READER, into=repo)
    assert result.sessions > 100 and not result.skipped
    with Context.for_cwd(repo) as ctx:
        counts = ctx.require("project").counts()
    assert counts.events > 500 and counts.memories > 50


def tool_call(i: int, call_id: str) -> str:
    return json.dumps(
        {
            "type": "assistant", "uuid": f"u-{i}", "sessionId": "sess-1", "gitBranch": "main",
            "timestamp": f"2026-01-01T00:00:{i:02d}.000Z",
            "message": {"role": "assistant", "content": [
                {"type": "tool_use", "id": call_id, "name": "Bash",
                 "input": {"command": "uv run pytest -q"}}]},
        }
    )  # fmt: skip


def tool_result(i: int, call_id: str, text: str, error: bool) -> str:
    return json.dumps(
        {
            "type": "user", "uuid": f"u-{i}", "sessionId": "sess-1", "gitBranch": "main",
            "timestamp": f"2026-01-01T00:00:{i:02d}.000Z",
            "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": call_id, "content": text,
                 "is_error": error}]},
        }
    )  # fmt: skip


def test_a_result_written_after_a_pass_still_meets_its_call(store, tmp_path: Path):
    """A Stop (or a SubagentStop while a Task runs) can read a call whose result is not written
    yet: the open call is saved with the cursor, so the next pass pairs them."""
    t = tmp_path / "s.jsonl"
    lines = [line(0, "hello"), tool_call(1, "toolu_a")]
    write(t, lines)
    capture.capture_transcript(store, t, reader=READER, session_id="sess-1")
    cursor = store.get_cursor(str(t.resolve()))
    assert cursor.line == 2 and "toolu_a" in cursor.state  # past the call, which is kept
    write(t, [*lines, tool_result(2, "toolu_a", "1 failed, 2 passed", True), *decisions(1, 3)])
    capture.capture_transcript(store, t, reader=READER, session_id="sess-1")
    kinds = sorted(e.kind for e in store.iter_events())
    assert kinds.count("test_run") == 1 and "error" in kinds and "decision" in kinds
    again = capture.capture_transcript(store, t, reader=READER, session_id="sess-1")
    assert (again.lines, again.events_added) == (0, 0)


def test_knowledge_said_again_after_fading_comes_back_instead_of_twice(
    ctx: Context, tmp_path: Path
):
    from datetime import timedelta

    from cortexmem.model import parse_time
    from cortexmem.services.lifecycle import run_lifecycle

    store = ctx.writable("project")
    first = tmp_path / "one.jsonl"
    write(first, [line(0, "We decided to use backend number 7 because it scales better.")])
    capture.capture_transcript(store, first, reader=READER, session_id="sess-1")
    (memory,) = store.iter_memories()
    # decisions never fade; make it a convention the lifecycle can archive
    store._conn.execute("UPDATE memories SET memory_type = 'progress'")  # no public API for this
    store._conn.commit()
    later = parse_time(memory.created_at) + timedelta(days=60)
    for days in (0, 15):
        run_lifecycle(ctx, later + timedelta(days=days))
    (faded,) = store.iter_memories()
    assert faded.status == "archived"
    again = tmp_path / "two.jsonl"  # another session states it again
    write(again, [line(0, "We decided to use backend number 7 because it scales better.")])
    result = capture.capture_transcript(store, again, reader=READER, session_id="sess-2")
    assert (result.memories_added, len(list(store.iter_memories()))) == (0, 1)
    (back,) = store.iter_memories()
    assert back.status == "active" and back.confidence >= memory.confidence


def read_in_pieces(store, path: Path, lines: list[str], *cuts: int) -> None:
    """Capture a transcript as it grows: its first ``cut`` lines, then more, then all."""
    for upto in (*cuts, len(lines)):
        write(path, lines[:upto])
        capture.capture_transcript(store, path, reader=READER, session_id="sess-1")


def same_events_in_two_pieces(store, tmp_path: Path, lines: list[str]) -> None:
    """Read in two pieces split anywhere, into fresh stores, ``lines`` leave the events
    ``store`` holds, and its memories in the same states (the session's digest aside)."""
    whole = sorted(e.content_hash for e in store.iter_events())
    kept = memory_states(store)
    for cut in range(1, len(lines)):
        folder = tmp_path / f"cut{cut}"
        folder.mkdir()
        with Context.for_cwd(folder) as other:
            again = other.writable("project")
            read_in_pieces(again, folder / "sess.jsonl", lines, cut)
            assert sorted(e.content_hash for e in again.iter_events()) == whole, cut
            assert memory_states(again) == kept, cut


def memory_states(store) -> list[tuple[str, str]]:
    return sorted(
        (m.content, m.status) for m in store.iter_memories() if "layer:digest" not in m.tags
    )


def bash(i: int, call_id: str, command: str) -> str:
    """A Bash call as Claude Code records it."""
    record = json.loads(tool_call(i, call_id))
    record["message"]["content"][0]["input"] = {"command": command}
    return json.dumps(record)


def edit(i: int, call_id: str, path: str) -> str:
    """An Edit call as Claude Code records it."""
    record = json.loads(tool_call(i, call_id))
    record["message"]["content"][0].update(
        name="Edit", input={"file_path": path, "old_string": "a", "new_string": "b"}
    )
    return json.dumps(record)


def test_a_failure_moved_on_from_keeps_no_cause_whether_read_at_once_or_in_pieces(
    ctx: Context, tmp_path: Path
):
    """Whether a failure still waits for its diagnosis is carried from one pass to the next:
    split anywhere, the ruff failure the session moved on from is resolved without the later
    diagnosis of another bug."""
    lines = [
        bash(0, "c1", "uv run ruff check ."),
        tool_result(1, "c1", "F401 `re` imported but unused\nFound 1 error.", True),
        edit(2, "c0", "/home/dev/app/src/app/coverage.py"),
        tool_result(2, "c0", "The file has been updated.", False),
        bash(2, "c2", "uv run pytest -x"),
        tool_result(3, "c2", "173 passed in 3.2s", False),
        line(4, "The issue is that the import resolver doesn't know about the src/ prefix."),
        edit(5, "c3", "/home/dev/app/src/app/coverage.py"),
        tool_result(6, "c3", "The file has been updated.", False),
        bash(7, "c4", "uv run ruff check ."),
        tool_result(8, "c4", "All checks passed!", False),
    ]
    store = ctx.writable("project")
    read_in_pieces(store, tmp_path / "sess.jsonl", lines)
    (resolved,) = [e for e in store.iter_events() if e.kind == "error_resolved"]
    assert "import resolver" not in resolved.content and "coverage.py" in resolved.content
    same_events_in_two_pieces(store, tmp_path, lines)


def test_a_lead_gives_way_to_a_later_diagnosis_whether_read_at_once_or_in_pieces(
    ctx: Context, tmp_path: Path
):
    """Whether a failure's cause is only a lead is carried from one pass to the next."""
    lines = [
        bash(0, "c1", "go test ./strategy/..."),
        tool_result(1, "c1", 'Session "2025-12-12-test" not found\nFAIL', True),
        line(2, "The issue is that `ListSessions` calls `ListCheckpoints()`. Let me check it:"),
        line(3, "The issue is that the root metadata.json is now a `CheckpointSummary`."),
        edit(4, "c2", "/home/dev/app/strategy/common.go"),
        tool_result(5, "c2", "The file has been updated.", False),
        bash(6, "c3", "go test ./strategy/..."),
        tool_result(7, "c3", "ok  entire.io/cli/strategy 1.2s", False),
    ]
    store = ctx.writable("project")
    read_in_pieces(store, tmp_path / "sess.jsonl", lines)
    (resolved,) = [e for e in store.iter_events() if e.kind == "error_resolved"]
    assert "CheckpointSummary" in resolved.content and "ListSessions" not in resolved.content
    same_events_in_two_pieces(store, tmp_path, lines)


def test_what_the_person_says_after_a_refusal_is_their_preference_read_at_once_or_in_pieces(
    ctx: Context, tmp_path: Path
):
    """What the person just stopped is carried from one pass to the next."""
    refused = "The user doesn't want to proceed with this tool use. The tool use was rejected."
    lines = [
        bash(0, "c1", "git stash"),
        tool_result(1, "c1", refused, True),
        line(2, "[Request interrupted by user for tool use]", role="user"),
        line(3, "do not stash anything, read the files you need", role="user"),
    ]
    store = ctx.writable("project")
    read_in_pieces(store, tmp_path / "sess.jsonl", lines)
    (said,) = [e for e in store.iter_events() if e.kind == "preference"]
    assert said.content == (
        "“do not stash anything, read the files you need”, the person said refusing `git stash`"
    )
    same_events_in_two_pieces(store, tmp_path, lines)


def queued_prompt(i: int, text: str) -> str:
    """What the person typed while the assistant worked, as Claude Code 2.1 records it when the
    model takes it mid-turn: an attachment, and no ``user`` record."""
    return json.dumps(
        {
            "type": "attachment", "uuid": f"u-{i}", "sessionId": "sess-1", "gitBranch": "main",
            "timestamp": f"2026-01-01T00:00:{i:02d}.000Z",
            "attachment": {"type": "queued_command", "prompt": text, "commandMode": "prompt",
                           "origin": {"kind": "human"}},
        }
    )  # fmt: skip


def test_what_the_person_said_while_the_assistant_worked_is_kept_read_at_once_or_in_pieces(
    ctx: Context, tmp_path: Path
):
    lines = [
        line(0, "add a changelog entry for the parser fix", role="user"),
        bash(1, "c1", "npm install"),
        queued_prompt(2, "Never use npm in this repo, always use pnpm."),
        tool_result(3, "c1", "added 3 packages", False),
        line(4, "Understood: I'll use pnpm from now on."),
    ]
    store = ctx.writable("project")
    read_in_pieces(store, tmp_path / "sess.jsonl", lines)
    (said,) = [e for e in store.iter_events() if e.kind == "preference"]
    assert said.content == "Never use npm in this repo, always use pnpm."
    assert said.provenance.line == 3
    assert any(
        ep.role == "user" and ep.text == said.content for ep in store.search_episodes("pnpm", 5)
        for ep in [ep[1]]
    )  # fmt: skip
    same_events_in_two_pieces(store, tmp_path, lines)


def test_a_session_that_ends_on_a_refusal_it_met_before_says_so(ctx: Context, tmp_path: Path):
    """The store keeps an event once; the same refusal later in the session is another one, so
    the digest it reads back still ends on it."""
    refused = (
        "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if "
        "it was a file edit, the new_string was NOT written to the file)."
    )
    lines = [
        line(0, "install the app from the Downloads folder", role="user"),
        line(1, "I can see the installer package in your Downloads folder, ready to install."),
        bash(2, "c1", "sudo apt install ./app.deb"),
        tool_result(3, "c1", refused, True),
        bash(4, "c2", "ls ~/Downloads"),
        tool_result(5, "c2", "app.deb", False),
        bash(6, "c3", "sudo apt install ./app.deb"),
        tool_result(7, "c3", refused, True),
    ]
    store = ctx.writable("project")
    read_in_pieces(store, tmp_path / "sess.jsonl", lines, 4)
    (summary,) = [m.content for m in store.iter_memories() if "event:session_summary" in m.tags]
    assert summary.endswith("Then the person refused `sudo apt install ./app.deb`.")
    same_events_in_two_pieces(store, tmp_path, lines)


def test_the_digest_converges_whether_read_at_once_or_in_pieces(ctx: Context, tmp_path: Path):
    """The session summary is rebuilt as the session grows (the older version deleted: it is
    derived from the events); reading in pieces leaves the same memories as reading at once."""
    lines = [line(0, "Please add retries to the sender", role="user")]
    lines += [line(i, f"We decided to use backend number {i} because it scales.") for i in (1, 2)]
    t = tmp_path / "sess.jsonl"
    store = ctx.writable("project")
    read_in_pieces(store, t, lines, 2)
    active = sorted(m.content for m in store.iter_memories() if m.status == "active")
    versions = [m for m in store.iter_memories() if "event:session_summary" in m.tags]
    assert len(versions) == 1 and versions[0].status == "active"
    summaries = [c for c in active if c.startswith("Session ")]
    assert len(summaries) == 1 and "backend number 2" in summaries[0]

    other = Context.for_cwd(tmp_path / "once")
    (tmp_path / "once").mkdir()
    with other:
        once = other.writable("project")
        capture.capture_transcript(once, t, reader=READER, session_id="sess-1")
        assert sorted(m.content for m in once.iter_memories() if m.status == "active") == active


def test_a_request_made_again_is_the_last_request_whether_read_at_once_or_in_pieces(
    ctx: Context, tmp_path: Path
):
    """A person who rewinds and asks the same thing again (a real session of
    ``-experiments-ideas`` did) made that request last; the store must not keep only its first
    time, and reading the transcript again or in pieces must not add it twice."""
    balanced = "Fair enough. Can you write a balanced opinion on this approach?"
    lines = [
        line(0, "List 5 strengths of this convention, please.", role="user"),
        line(1, "Here are five strengths of the convention, each with an example from the docs."),
        line(2, balanced, role="user"),
        line(3, "A balanced opinion: the convention is a starting point, not a system at all."),
        line(4, "I don't like it much. List 5 weak points, risks or caveats.", role="user"),
        line(5, "Here are five weak points of the convention: it blurs where plans should live."),
        line(6, balanced, role="user"),
        line(7, "A balanced opinion: it adds ceremony, and the split is blurry for small work."),
    ]
    t = tmp_path / "sess.jsonl"
    store = ctx.writable("project")
    read_in_pieces(store, t, lines, 5)
    capture.capture_transcript(store, t, reader=READER, session_id="sess-1")  # nothing new
    prompts = [e for e in store.iter_events() if e.kind == "prompt"]
    assert [e.content for e in prompts].count(balanced) == 2 and len(prompts) == 4
    (summary,) = [m.content for m in store.iter_memories() if "event:session_summary" in m.tags]
    assert f"Last request: {balanced}" in summary
    assert "the split is blurry" in summary  # the outcome answers that last request

    same_events_in_two_pieces(store, tmp_path, lines)


def test_a_failure_that_recurs_is_counted_each_time_whether_read_at_once_or_in_pieces(
    ctx: Context, tmp_path: Path
):
    """The same call failing with the same words three times is three failures (a retry loop,
    an error that keeps coming back), not one event read three times; reading the transcript
    again or in pieces adds none twice."""
    lines = [line(0, "run the tests", role="user")]
    for i in range(3):
        lines += [tool_call(1 + 2 * i, f"toolu_{i}"),
                  tool_result(2 + 2 * i, f"toolu_{i}", "ERROR: file or directory not found: "
                              "test/test_cache.py", True)]  # fmt: skip
    t = tmp_path / "sess.jsonl"
    store = ctx.writable("project")
    read_in_pieces(store, t, lines, 4)
    capture.capture_transcript(store, t, reader=READER, session_id="sess-1")  # nothing new
    errors = [e for e in store.iter_events() if e.kind == "error"]
    assert len(errors) == 3 and len({e.content for e in errors}) == 1
    same_events_in_two_pieces(store, tmp_path, lines)


def test_decisions_written_into_a_document_are_read_once_whether_read_at_once_or_in_pieces(
    ctx: Context, tmp_path: Path
):
    """The decisions a write lists are taken when the write is asked for and kept only once
    its result says it succeeded; a pass that ends between the two carries them over."""
    status = "## Decisions\n- Keep SQLite in WAL mode\n- One worker at a time\n"
    call = json.loads(tool_call(1, "toolu_w"))
    call["message"]["content"][0].update(
        name="Write", input={"file_path": "/repo/STATUS.md", "content": status}
    )
    lines = [line(0, "write down what we decided", role="user"), json.dumps(call),
             tool_result(2, "toolu_w", "File created successfully", False)]  # fmt: skip
    t = tmp_path / "sess.jsonl"
    store = ctx.writable("project")
    write(t, lines)
    capture.capture_transcript(store, t, reader=READER, session_id="sess-1")
    decided = sorted(m.content for m in store.iter_memories() if m.memory_type == "decision")
    assert decided == ["Keep SQLite in WAL mode", "One worker at a time"]
    same_events_in_two_pieces(store, tmp_path, lines)


def read_document(i: int, text: str, session: str = "sess-1") -> list[str]:
    """Claude Code reading /repo/STATUS.md whole (its lines numbered), in a session in /repo."""
    call = json.loads(tool_call(i, f"toolu_r{i}"))
    call["message"]["content"][0].update(name="Read", input={"file_path": "/repo/STATUS.md"})
    shown = "".join(f"{n:>6}\u2192{x}\n" for n, x in enumerate(text.splitlines(), 1))
    result = json.loads(tool_result(i + 1, f"toolu_r{i}", shown, False))
    for record in (call, result):
        record.update(cwd="/repo", sessionId=session)
        record["timestamp"] = record["timestamp"].replace("2026-01-01", f"2026-01-{i:02d}")
    return [json.dumps(call), json.dumps(result)]


LISTED = "# Status\n\n## Decisions\n- Keep SQLite in WAL mode\n- One worker at a time\n"
REWRITTEN = "# Status\n\n## Decisions\n- Keep SQLite in WAL mode\n\nWorkers: a pool now.\n"


def test_a_decision_its_document_no_longer_says_is_archived_until_it_says_it_again(
    ctx: Context, tmp_path: Path
):
    """Across sessions: a later session reading the rewritten status note archives the
    decision it dropped (recall and the briefing no longer serve it as standing); a third
    reading it listed again brings it back."""
    store = ctx.writable("project")

    def session(name: str, lines: list[str]) -> dict[str, str]:
        write(tmp_path / f"{name}.jsonl", lines)
        capture.capture_transcript(store, tmp_path / f"{name}.jsonl", reader=READER)
        return {m.content: m.status for m in store.iter_memories() if m.memory_type == "decision"}

    first = session("s1", read_document(1, LISTED, "s1"))
    assert first == {"Keep SQLite in WAL mode": "active", "One worker at a time": "active"}
    second = session("s2", read_document(3, REWRITTEN, "s2"))
    assert second == {"Keep SQLite in WAL mode": "active", "One worker at a time": "archived"}
    archived = next(m for m in store.iter_memories() if m.status == "archived")
    assert "doc:/repo/status.md" in archived.tags
    third = session("s3", read_document(5, LISTED, "s3"))
    assert third == first


def decisions_after(store, tmp_path: Path, *sessions: tuple[str, list[str]]) -> dict[str, str]:
    """Capture each ``(name, lines)`` in turn, a transcript growing where a name comes back
    (a live session's next pass); the decisions' statuses after."""
    grown: dict[str, list[str]] = {}
    for name, lines in sessions:
        grown[name] = grown.get(name, []) + lines
        write(tmp_path / f"{name}.jsonl", grown[name])
        capture.capture_transcript(store, tmp_path / f"{name}.jsonl", reader=READER)
    return {m.content: m.status for m in store.iter_memories() if m.memory_type == "decision"}


WORKERS = "One worker at a time"
DRAFT = "# Status\n\n## Decisions\n- Keep SQLite in WAL mode\n"
GROWN = DRAFT + "- Batch writes per second\n"


WORDS = ("decision", "withdrawn")


@pytest.mark.parametrize(
    ("order", "status"),
    [
        # listed on days 1 and 5, dropped on day 3, captured last (a subagent is captured after
        # its parent; sessions overlap): it stands
        ([("a", 1, LISTED), ("a", 5, LISTED), ("b", 3, REWRITTEN)], "active"),
        # a session listing it again after another dropped it brings it back
        ([("a", 1, LISTED), ("b", 3, REWRITTEN), ("a", 5, LISTED)], "active"),
        # a listing older than the drop, captured after it, does not
        ([("a", 1, LISTED), ("b", 3, REWRITTEN), ("c", 2, LISTED)], "archived"),
        ([("a", 1, LISTED), ("c", 2, LISTED), ("b", 3, REWRITTEN)], "archived"),
    ],
    ids=["drop-captured-last", "listed-again-by-the-first-session",
         "older-listing-captured-last", "in-order"],
)  # fmt: skip
def test_what_a_document_says_last_decides_whatever_order_sessions_are_captured_in(
    ctx: Context, tmp_path: Path, order: list[tuple[str, int, str]], status: str
):
    sessions = [(name, read_document(day, text, name)) for name, day, text in order]
    assert decisions_after(ctx.writable("project"), tmp_path, *sessions)[WORKERS] == status


def test_a_decision_stands_while_one_document_lists_it_and_falls_when_none_does(
    ctx: Context, tmp_path: Path
):
    store = ctx.writable("project")

    def read_other(day: int, text: str, session: str) -> list[str]:
        return [
            x.replace("STATUS.md", "docs/DECISIONS.md") for x in read_document(day, text, session)
        ]

    kept = decisions_after(
        store, tmp_path, ("a", read_document(1, LISTED, "a")), ("b", read_other(2, LISTED, "b")),
        ("c", read_document(3, REWRITTEN, "c")),
    )  # fmt: skip
    assert kept[WORKERS] == "active"  # docs/DECISIONS.md still lists it
    gone = decisions_after(store, tmp_path, ("d", read_other(5, REWRITTEN, "d")))
    assert gone[WORKERS] == "archived"


def test_a_subagent_dropping_what_its_parent_dropped_before_still_counts(
    ctx: Context, tmp_path: Path
):
    """Parent and subagent share the session id: the subagent's drop is the same event as the
    parent's earlier one, but a later word on the decision all the same."""
    store = ctx.writable("project")
    statuses = decisions_after(
        store, tmp_path,
        ("a", read_document(1, LISTED, "a") + read_document(3, REWRITTEN, "a")),
        ("b", read_document(5, LISTED, "b")), ("a-agent", read_document(7, REWRITTEN, "a")),
    )  # fmt: skip
    assert statuses[WORKERS] == "archived"


def test_a_decision_a_person_forgot_is_not_brought_back_by_reading_its_document_again(
    ctx: Context, tmp_path: Path
):
    store = ctx.writable("project")
    decisions_after(store, tmp_path, ("a", read_document(1, LISTED, "a")))
    forgotten = next(m for m in store.iter_memories() if m.content == WORKERS)
    store.set_status(forgotten.id, "archived")
    decisions_after(store, tmp_path, ("a", read_document(3, LISTED, "a")))
    kept = [m.status for m in store.iter_memories() if m.content == WORKERS]
    assert kept == ["archived"]


def test_a_pass_saved_before_another_session_spoke_does_not_hide_what_it_said(
    ctx: Context, tmp_path: Path
):
    """Session a's first pass saves its state; b then lists a new decision at day 3; a's
    next pass reads the day-1 version again at day 5, which does not say it: withdrawn. An
    older whole version (day 1, read first by a) never drops what day 3 listed later."""
    statuses = decisions_after(
        ctx.writable("project"), tmp_path,
        ("a", read_document(1, DRAFT, "a")), ("b", read_document(3, GROWN, "b")),
        ("a", read_document(5, DRAFT, "a")),
    )  # fmt: skip
    assert statuses["Batch writes per second"] == "archived"


def test_a_person_remembering_what_a_document_listed_makes_it_theirs(ctx: Context, tmp_path: Path):
    store = ctx.writable("project")
    decisions_after(store, tmp_path, ("a", read_document(1, LISTED, "a")))
    mine, created = remember(ctx, WORKERS, memory_type="decision", pinned=True)
    assert not created and mine.pinned and mine.source_type == "manual"
    statuses = decisions_after(store, tmp_path, ("b", read_document(3, REWRITTEN, "b")))
    assert statuses[WORKERS] == "active"


def test_an_imported_store_weighs_a_later_version_against_what_was_listed_before(
    ctx: Context, tmp_path: Path
):
    decisions_after(ctx.writable("project"), tmp_path, ("a", read_document(1, LISTED, "a")))
    memories, edges, events = ctx.writable("project").snapshot()
    with Context.for_cwd(tmp_path / "elsewhere") as other:
        moved = other.writable("project")
        moved.import_records(memories, edges, events)
        statuses = decisions_after(moved, tmp_path, ("b", read_document(3, REWRITTEN, "b")))
    assert statuses[WORKERS] == "archived"


def withdrawn_by_day_3(ctx: Context, tmp_path: Path):
    """A store where session a listed the decisions on day 1 and b dropped one on day 3."""
    store = ctx.writable("project")
    decisions_after(
        store,
        tmp_path,
        ("a", read_document(1, LISTED, "a")),
        ("b", read_document(3, REWRITTEN, "b")),
    )
    return store


def test_a_person_forgetting_a_withdrawn_decision_keeps_it_archived(ctx: Context, tmp_path: Path):
    store = withdrawn_by_day_3(ctx, tmp_path)
    gone = next(m for m in store.iter_memories() if m.content == WORKERS)
    forget(ctx, gone.id)
    decisions_after(store, tmp_path, ("c", read_document(5, LISTED, "c")))
    kept = store.get_memory(gone.id)
    assert kept is not None and kept.status == "archived"


def test_a_decision_listed_again_is_not_served_twice(ctx: Context, tmp_path: Path):
    """Withdrawn, then remembered by a person (a memory of theirs), then listed again: the
    person's memory serves it; the withdrawn one stays archived."""
    store = withdrawn_by_day_3(ctx, tmp_path)
    remember(ctx, WORKERS, memory_type="decision")
    decisions_after(store, tmp_path, ("c", read_document(5, LISTED, "c")))
    served = [m.source_type for m in store.iter_memories() if m.content == WORKERS
              and m.status == "active"]  # fmt: skip
    assert served == ["manual"]


def test_what_a_person_stored_is_never_withdrawn_by_a_document(ctx: Context, tmp_path: Path):
    store = ctx.writable("project")
    store.add_memory(Memory(content=WORKERS, memory_type="decision", pinned=True))
    statuses = decisions_after(
        store,
        tmp_path,
        ("a", read_document(1, LISTED, "a")),
        ("b", read_document(3, REWRITTEN, "b")),
    )
    assert statuses[WORKERS] == "active"


def test_withdrawals_are_the_same_whether_read_at_once_or_in_pieces(ctx: Context, tmp_path: Path):
    """Dropped, listed again, dropped again in one session: archived. Reading the note ten
    times does not make ten events of each decision (the same words in a session are one)."""
    lines = [*read_document(1, LISTED), *read_document(3, REWRITTEN), *read_document(5, LISTED)]
    lines += read_document(7, REWRITTEN)
    store = ctx.writable("project")
    write(tmp_path / "sess.jsonl", lines)
    capture.capture_transcript(store, tmp_path / "sess.jsonl", reader=READER, session_id="sess-1")
    said = sorted((e.kind, e.content) for e in store.iter_events() if e.kind in WORDS)
    assert said == [("decision", "Keep SQLite in WAL mode"), ("decision", WORKERS),
                    ("withdrawn", WORKERS)]  # fmt: skip
    statuses = {m.content: m.status for m in store.iter_memories() if m.memory_type == "decision"}
    assert statuses["One worker at a time"] == "archived"
    same_events_in_two_pieces(store, tmp_path, lines)


def test_subagent_events_take_the_parent_sessions_branch(ctx: Context, tmp_path: Path):
    folder = tmp_path / "proj"
    sub = folder / "sess-1" / "subagents"
    sub.mkdir(parents=True)
    write(folder / "sess-1.jsonl", [line(0, "We decided to keep the parent on main.")])
    agent = json.loads(line(5, "We decided to use a worktree branch name."))
    agent.update(gitBranch="worktree-agent-x", isSidechain=True)
    write(sub / "agent-x.jsonl", [json.dumps(agent)])
    capture.capture_session(
        ctx, folder / "sess-1.jsonl", reader=READER, session_id="sess-1", live=False
    )
    branches = {e.provenance.branch for e in ctx.require("project").iter_events()}
    assert branches == {"main"}


def test_a_subagent_names_files_from_its_sessions_project_folder(ctx: Context, tmp_path: Path):
    """A subagent started after the parent's shell moved to test/ records that folder; the
    file it writes there is still test/t.py, as the parent would name it."""
    folder = tmp_path / "proj"
    sub = folder / "sess-1" / "subagents"
    sub.mkdir(parents=True)
    parent = json.loads(line(0, "We decided to keep the parent on main."))
    parent["cwd"] = "/home/dev/app"
    write(folder / "sess-1.jsonl", [json.dumps(parent)])
    use = {"type": "tool_use", "id": "toolu_w", "name": "Write",
           "input": {"file_path": "/home/dev/app/test/t.py", "content": "x = 1"}}  # fmt: skip
    done = {"type": "tool_result", "tool_use_id": "toolu_w", "content": "File created"}
    records = []
    for i, (role, block) in enumerate((("assistant", use), ("user", done)), start=1):
        record = json.loads(line(i, ""))
        record.update(type=role, isSidechain=True, cwd="/home/dev/app/test",
                      message={"role": role, "content": [block]})  # fmt: skip
        records.append(json.dumps(record))
    write(sub / "agent-x.jsonl", records)
    capture.capture_session(
        ctx, folder / "sess-1.jsonl", reader=READER, session_id="sess-1", live=False
    )
    files = [e.content for e in ctx.require("project").iter_events() if e.kind == "file_modified"]
    assert files and all("test/t.py" in f for f in files)
