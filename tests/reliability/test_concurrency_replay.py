"""Issue 12, concurrency: real sessions replayed into one project at once lose nothing and
duplicate nothing.

Three real transcripts grow turn by turn, each turn followed by a real ``cortex-hook Stop``
process and each tool result by a real ``PostToolUse``/``PostToolUseFailure`` process, all
three sessions at once (one thread each). The store must hold exactly what the same sessions
replayed one after the other leave, and what ``cortex ingest`` of the final transcripts
leaves; ``PRAGMA integrity_check`` ok; no process left. The soak version (8 sessions, latency
percentiles) is ``bench/reliability/soak.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from replay import Lab, Session, Snapshot, pick_sessions, replay_all, snapshot, transcripts_dir

SESSIONS = 3

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not transcripts_dir().is_dir(), reason="no shared transcripts here"),
]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    sessions = [Session.load(p) for p in pick_sessions(SESSIONS, max_lines=120)]
    assert len(sessions) == SESSIONS
    labs = {
        mode: Lab(tmp_path_factory.mktemp(mode)) for mode in ("concurrent", "sequential", "ingest")
    }
    replay_all(labs["concurrent"], sessions, concurrent=True)
    replay_all(labs["sequential"], sessions, concurrent=False)
    ingest = labs["ingest"]
    ingest.ingest([replay_whole(ingest, s) for s in sessions])
    out: dict[str, object] = {m: snapshot(lab.db) for m, lab in labs.items()}
    out["labs"] = labs
    out["sessions"] = sessions
    yield out
    for lab in labs.values():
        lab.cleanup()


def replay_whole(lab: Lab, session: Session) -> Path:
    target = lab.transcript(session)
    target.write_bytes(b"".join(session.lines))
    return target


def test_concurrent_equals_sequential(runs):
    concurrent: Snapshot = runs["concurrent"]
    sequential: Snapshot = runs["sequential"]
    assert concurrent.integrity == sequential.integrity == "ok"
    assert concurrent.events, "the replay captured nothing"
    assert concurrent.event_set == sequential.event_set
    assert concurrent.memory_set == sequential.memory_set
    assert concurrent.observations == sequential.observations
    assert concurrent.duplicated == sequential.duplicated == 0
    assert concurrent.summary() == sequential.summary()


def test_every_tool_call_observed_once(runs):
    sessions: list[Session] = runs["sessions"]
    for mode in ("concurrent", "sequential"):
        observed: Snapshot = runs[mode]
        assert len(observed.observations) == sum(s.tool_calls for s in sessions), mode
        assert set(observed.observations.values()) == {1}, mode


def test_replay_equals_ingest(runs):
    concurrent: Snapshot = runs["concurrent"]
    ingest: Snapshot = runs["ingest"]
    assert ingest.integrity == "ok" and ingest.duplicated == 0
    assert concurrent.extra_over(ingest) == 0, "split capture found events ingest did not"
    # The extractor's pending state is saved with the cursor, so a failure and its fix split
    # by a Stop are still paired: split capture equals the whole file, strictly.
    assert concurrent.event_set == ingest.event_set, concurrent.differing_kinds(ingest)
    assert concurrent.memory_set == ingest.memory_set


def test_no_process_left_and_every_hook_exited_zero(runs):
    for mode, lab in runs["labs"].items():
        assert lab.stray_processes() == [], mode
        assert {c.returncode for c in lab.calls} <= {0}, mode
