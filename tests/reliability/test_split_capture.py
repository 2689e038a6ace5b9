"""A transcript captured in two passes (two Stop hooks) must yield what one pass yields.

In process (fast): the same real transcript captured whole, and captured as its first N lines
then the rest, into two fresh stores; the event content-hash sets must be equal.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cortexmem.hosts.claude_code.reader import READER
from cortexmem.services.capture import capture_transcript
from cortexmem.store.sqlite.store import SQLiteStore

from replay import KILL_SESSION, SOAK_KILL_SESSION, Session, transcripts_dir


def events_after(tmp: Path, session: Session, cuts: list[int]) -> set[tuple[str, str]]:
    tmp.mkdir(exist_ok=True)
    transcript = tmp / "t.jsonl"
    transcript.write_bytes(b"")
    with SQLiteStore.open(tmp / "x.db") as store:
        start = 0
        for end in [*cuts, len(session.lines)]:
            with transcript.open("ab") as fh:
                fh.write(b"".join(session.lines[start:end]))
            start = end
            capture_transcript(store, transcript, reader=READER, session_id=session.session_id)
        rows = store._conn.execute("SELECT kind, content FROM events").fetchall()
    return {(kind, content) for kind, content in rows}


def load(name: str) -> Session:
    path = transcripts_dir() / name
    if not path.is_file():
        pytest.skip("no shared transcripts here")
    return Session.load(path)


@pytest.mark.parametrize("cut", [10, 30])
def test_split_equals_whole(tmp_path: Path, cut: int):
    session = load(KILL_SESSION)
    whole = events_after(tmp_path / "whole", session, [])
    assert whole and events_after(tmp_path / "split", session, [cut]) == whole


def test_task_updates_after_a_stop_boundary(tmp_path: Path):
    session = load(SOAK_KILL_SESSION)  # TaskCreate at lines 21-36, TaskUpdate from line 46 on
    whole = events_after(tmp_path / "whole", session, [])
    split = events_after(tmp_path / "split", session, [30])
    assert split <= whole
    assert sorted(whole - split) == []
