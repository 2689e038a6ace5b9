"""`cortex demo`: capture and recall on a throw-away project and global store.

It ingests the sample Claude Code sessions in ``examples/sessions`` (the same path a real
session takes through the Stop hook), shows what was extracted, embeds it with the local model,
prints the briefing the next session would start with, and answers a few questions asked in
other words than the sessions used.
It runs the same services the CLI runs, against real SQLite files in a temporary folder, and
never touches the user's own stores (CORTEX_HOME is pointed into the temporary folder too).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

from cortexmem.core.text import shorten
from cortexmem.errors import CortexError
from cortexmem.hosts.claude_code.reader import READER
from cortexmem.services.context import Context
from cortexmem.services.ingest import ingest
from cortexmem.services.recall import recall
from cortexmem.services.status import status

# Asked in other words than the sessions used: recall by meaning, not only by shared words.
QUERIES = (
    "how do we avoid charging a customer twice when their request is retried?",
    "what must the webhook HMAC be computed over?",
    "how should I start python scripts in this repo?",
)


def example_sessions() -> Path:
    """The sample sessions: shipped inside the wheel, or the clone's ``examples/sessions``."""
    packaged = Path(__file__).resolve().parents[1] / "_examples" / "sessions"
    if packaged.is_dir():
        return packaged
    clone = Path(__file__).resolve().parents[3] / "examples" / "sessions"
    if clone.is_dir():
        return clone
    raise CortexError("the sample sessions are missing from this installation")


def run_demo(keep: bool = False) -> None:
    from rich.rule import Rule

    from cortexmem.cli.render import console, recall_table, status_report

    started = time.perf_counter()
    sessions = example_sessions()
    tmp = Path(tempfile.mkdtemp(prefix="cortex-demo-"))
    previous_home = os.environ.get("CORTEX_HOME")
    os.environ["CORTEX_HOME"] = str(tmp / "home")
    project = tmp / "payments-api"
    project.mkdir()
    try:
        console.print(Rule("1. capture: three Claude Code sessions from examples/"))
        result = ingest([sessions], reader=READER, into=project)
        for totals in result.projects.values():
            console.print(
                f"  {totals['sessions']} sessions, {totals['lines']} transcript lines → "
                f"{totals['events_added']} events → "
                f"{totals.get('memories_active', totals['memories_added'])} memories"
            )
        with Context.for_cwd(project) as ctx:
            store = ctx.require("project")
            by_type: dict[str, list[str]] = {}
            for memory in store.iter_memories():
                by_type.setdefault(memory.memory_type, []).append(memory.summary or memory.content)
            for memory_type in ("decision", "gotcha", "context", "progress"):
                items = by_type.get(memory_type, [])
                for text in items[:3]:
                    line = shorten(text, max(30, console.width - 20))
                    console.print(f"  [cyan]{memory_type:<9}[/] {line}")
            console.print(Rule("2. embed: the local model, offline"))
            from cortexmem.services.embedding import Embedder, sync_context

            embedder = Embedder.for_context(ctx)
            t0 = time.perf_counter()
            synced = sync_context(ctx, embedder)
            console.print(
                f"  {synced.embedded} memories embedded with {synced.model} in "
                f"{time.perf_counter() - t0:.2f} s"
            )
            console.print(Rule("3. briefing: what the next session starts with"))
            from cortexmem.services.brief import make_briefing

            briefing = make_briefing(ctx)
            console.print(briefing.markdown, markup=False, highlight=False, end="")
            console.print(f"  [dim]({briefing.size()})[/]")
            for number, query in enumerate(QUERIES, start=4):
                console.print(Rule(f"{number}. recall"))
                recall_table(recall(ctx, query, limit=3, embedder=embedder), query)
            console.print(Rule(f"{len(QUERIES) + 4}. status"))
            status_report(status(ctx))
        elapsed = time.perf_counter() - started
        console.print()
        console.print(f"Demo finished in {elapsed:.2f} s, offline, on a throw-away store.")
        if keep:
            console.print(f"Kept: {project} (CORTEX_HOME={tmp / 'home'})")
    finally:
        if previous_home is None:
            os.environ.pop("CORTEX_HOME", None)
        else:
            os.environ["CORTEX_HOME"] = previous_home
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)
