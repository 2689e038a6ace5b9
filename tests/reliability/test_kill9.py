"""Issue 12, crash: kill -9 of ``cortex ingest`` and of every capture hook process at random
moments never corrupts the store, and one clean run afterwards leaves exactly what a clean
store holds.

For each kind (``ingest``, ``Stop``, ``SubagentStop``, ``PreCompact``, ``SessionEnd``,
``PostToolUse``) a real transcript grows piece by piece; after each piece a process of that
kind is spawned and SIGKILLed a random 0..1.3×(its clean run time) later, half the kills aimed
at the end of the run where it writes. After every kill ``PRAGMA integrity_check`` is ok. After
the loop one clean run (a Stop for PostToolUse, which only spools) must leave the event and
memory content hashes of a clean ``cortex ingest``, no duplicates, every completed PostToolUse
observed once, and no process running. Leftover ``.tmp`` files are reported, not failed on
(being fixed separately). The soak version (50+ kills per kind) is ``bench/reliability/soak.py``.
"""

from __future__ import annotations

import random
import warnings

import pytest

from replay import (
    KILL_KINDS,
    KILL_SESSION,
    Session,
    Snapshot,
    kill_scenario,
    reference_snapshot,
    transcripts_dir,
)

ITERATIONS = 10

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (transcripts_dir() / KILL_SESSION).is_file(), reason="no shared transcripts here"
    ),
]


@pytest.fixture(scope="module")
def session() -> Session:
    return Session.load(transcripts_dir() / KILL_SESSION)


@pytest.fixture(scope="module")
def reference(session: Session, tmp_path_factory: pytest.TempPathFactory) -> Snapshot:
    snap = reference_snapshot(tmp_path_factory.mktemp("reference"), session)
    assert snap.integrity == "ok" and snap.events and snap.memories
    return snap


@pytest.mark.parametrize("kind", KILL_KINDS)
def test_kill9_then_one_clean_run(kind: str, session: Session, reference: Snapshot, tmp_path):
    report = kill_scenario(
        tmp_path, kind, session, reference, iterations=ITERATIONS, rng=random.Random(12)
    )
    assert report.iterations == ITERATIONS
    assert report.killed > 0, f"no kill landed while the process ran: {report.figures()}"
    assert report.failures == [], report.failures
    assert report.integrity_ok == ITERATIONS and report.final_integrity == "ok"
    assert report.duplicated == 0
    assert (report.lost, report.extra) == (0, 0), report.figures()
    assert report.processes_left == 0
    if report.tmp_leftovers:  # a known fault, fixed elsewhere: reported, not failed on
        warnings.warn(f"{kind}: leftover temp files {report.tmp_leftovers}", stacklevel=1)
