"""The sample sessions in examples/ extract to the memories examples/README.md lists."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cortexmem.hosts.claude_code.reader import READER
from cortexmem.services.context import Context
from cortexmem.services.ingest import ingest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "sessions"

pytestmark = pytest.mark.skipif(not EXAMPLES.exists(), reason="examples/ is not here")


@pytest.fixture(scope="module")
def memories(
    tmp_path_factory,
) -> list:
    project = tmp_path_factory.mktemp("payments-api")
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    ingest([EXAMPLES], reader=READER, into=project)
    with Context.for_cwd(project) as ctx:
        return list(ctx.require("project").iter_memories())


def find(memories, start: str):
    hits = [m for m in memories if m.content.startswith(start)]
    assert hits, f"no memory starts with {start!r}"
    return hits[0]


@pytest.mark.parametrize(
    ("start", "memory_type", "source_type", "branch"),
    [
        ("“Always use `uv run`", "pattern", "extraction", "main"),
        ("I decided to enforce idempotency with a unique index", "decision", "extraction", "main"),
        ("Idempotency keys live 24 hours", "decision", "self_report", "main"),
        ("The fix was to compare the request hash", "gotcha", "extraction", "main"),
        ("`uv run pytest tests/test_idempotency.py -q` failed", "gotcha", "extraction", "main"),
        ("Session 2026-03-02: goal: Add idempotency keys", "context", "extraction",
         "main"),
        ("How to run the tests: `uv run pytest -q`", "pattern", "extraction", "main"),
        ("Gotcha: sender.py swallows ConnectionError", "gotcha", "extraction",
         "feature/retry-webhooks"),
        ("Watch out: the webhook signature must be computed over the raw request body", "gotcha",
         "extraction", "feature/retry-webhooks"),
        ("I'm going with APScheduler rather than Celery", "decision", "extraction",
         "feature/retry-webhooks"),
        ("`caplog` captured records before formatting", "gotcha", "extraction", "main"),
        ("Never log card numbers", "pattern", "extraction", "main"),
        ("The fix was to return an empty string", "gotcha", "extraction", "main"),
        ("`uv run mypy app` failed", "gotcha", "extraction", "main"),
        ("All log redaction goes through app.logging.RedactingFilter", "pattern", "self_report",
         "main"),
        ("The staging database is reset every Sunday", "context", "self_report", "main"),
    ],
)  # fmt: skip
def test_listed_memories_are_extracted(memories, start, memory_type, source_type, branch):
    memory = find(memories, start)
    assert (memory.memory_type, memory.source_type, memory.branch) == (
        memory_type,
        source_type,
        branch,
    )


def test_what_stays_an_event(memories):
    contents = " ".join(m.content for m in memories)
    # refused by the person: not a failure, only what their preference was said refusing
    assert [m.memory_type for m in memories if "python -m pytest -q" in m.content] == ["pattern"]
    assert "fresh test merchants" not in contents  # a 0.55 marker: below the bar
    assert not [m for m in memories if m.content.startswith(("Done: ", "Committed "))]  # folded
    # the approved plan was carried out and committed in its session: history, not the plan
    assert not [m for m in memories if m.content.startswith("Plan: # Retry failed outgoing")]
    summaries = [m for m in memories if "event:session_summary" in m.tags]
    assert len(summaries) == 3  # one per session
    assert "3f2c1a9" in summaries[0].content  # its commits
    assert len(memories) == 19
