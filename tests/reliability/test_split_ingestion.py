"""A transcript captured in pieces (a Stop after every few lines) gives exactly what it gives
captured whole: the extractor's pending state (calls awaiting results, failures awaiting their
fix, tasks awaiting updates) survives the pass boundary with the cursor."""

from __future__ import annotations

import tempfile
from collections import Counter
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cortexmem.hosts.claude_code.reader import READER
from cortexmem.services import capture
from cortexmem.services.context import Context

TRANSCRIPTS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "transcripts"
# Different kinds: a long session with failures and fixes, a CLI project's session, a small
# app's session, a scripted reliability run, a synthetic fixture, a subagent's transcript.
PICKED = (
    "slopometry/transcript.jsonl",
    "entireio-cli/-Users-gtrrz-victor-wks-test-cli-cli/df93cd9c-8436-49e5-af80-61126ae55a83.jsonl",
    "claude-code-log-real_projects/-Users-dain-workspace-JSSoundRecorder/"
    "7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl",
    "claude-reliability/python-to-rust-port.jsonl",
    "synthetic-fixtures/agent-sessions-claude/small.jsonl",
    "claude-code-log-real_projects/-src-experiments-claude_p/"
    "29ccd257-68b1-427f-ae5f-6524b7cb6f20/subagents/agent-a2271d1.jsonl",
)
SLOPOMETRY = TRANSCRIPTS / "slopometry" / "transcript.jsonl"

pytestmark = pytest.mark.skipif(
    not TRANSCRIPTS.is_dir(), reason=f"the shared transcripts ({TRANSCRIPTS}) are not here"
)


def available() -> list[Path]:
    return [TRANSCRIPTS / name for name in PICKED if (TRANSCRIPTS / name).is_file()]


Captured = tuple[Counter[str], frozenset[str], frozenset[str], frozenset[tuple[str, str]]]


def captured_in_pieces(source: Path, cuts: list[int]) -> Captured:
    """Write ``source`` line by line into a transcript, capturing after each cut and at the
    end; (event kinds, event content hashes, memory content hashes, episodes by role and
    text) of the store."""
    lines = source.read_bytes().splitlines(keepends=True)
    session_id = READER.session_info(source).session_id
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder) / "project"
        project.mkdir()
        transcript = Path(folder) / source.name
        transcript.touch()
        with Context.for_cwd(project) as ctx:
            store = ctx.writable("project")
            done = 0
            for cut in [*sorted(set(cuts)), len(lines)]:
                with transcript.open("ab") as fh:
                    fh.write(b"".join(lines[done:cut]))
                done = max(done, cut)
                capture.capture_transcript(store, transcript, reader=READER, session_id=session_id)
            events = list(store.iter_events())
            memories = list(store.iter_memories())
            episodes = list(store.iter_episodes())
    return (
        Counter(e.kind for e in events),
        frozenset(e.content_hash for e in events),
        frozenset(m.content_hash for m in memories),
        frozenset((e.role, e.text) for e in episodes),
    )


@cache
def whole(source: Path) -> Captured:
    return captured_in_pieces(source, [])


def line_count(source: Path) -> int:
    return len(source.read_bytes().splitlines())


def test_slopometry_split_after_line_667_keeps_every_resolution():
    if not SLOPOMETRY.is_file():
        pytest.skip(f"{SLOPOMETRY} is not here")
    kinds, events, memories, episodes = captured_in_pieces(SLOPOMETRY, [667])
    whole_kinds, whole_events, whole_memories, whole_episodes = whole(SLOPOMETRY)
    assert whole_kinds["error_resolved"] == 3
    assert kinds["error_resolved"] == 3
    assert events == whole_events
    assert memories == whole_memories
    assert episodes == whole_episodes


@st.composite
def pieces(draw: st.DrawFn) -> tuple[Path, list[int]]:
    files = available()
    if not files:
        pytest.skip("none of the picked transcripts is here")
    source = draw(st.sampled_from(files))
    n = line_count(source)
    k = draw(st.integers(min_value=1, max_value=6))
    cuts = draw(st.lists(st.integers(min_value=1, max_value=max(1, n - 1)), min_size=k, max_size=k))
    return source, cuts


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(case=pieces())
def test_any_transcript_in_k_pieces_equals_it_whole(case: tuple[Path, list[int]]):
    source, cuts = case
    _, events, memories, episodes = captured_in_pieces(source, cuts)
    _, whole_events, whole_memories, whole_episodes = whole(source)
    assert events == whole_events, f"{source.name} cut at {sorted(set(cuts))}"
    assert memories == whole_memories, f"{source.name} cut at {sorted(set(cuts))}"
    assert episodes == whole_episodes, f"{source.name} cut at {sorted(set(cuts))}"


def test_every_line_a_piece_equals_it_whole():
    """The extreme split: a Stop after every single line."""
    for source in available()[:3]:
        n = line_count(source)
        if n > 800:
            continue
        _, events, memories, episodes = captured_in_pieces(source, list(range(1, n)))
        _, whole_events, whole_memories, whole_episodes = whole(source)
        assert (events, memories) == (whole_events, whole_memories), source.name
        assert episodes == whole_episodes, source.name
