"""`cortex demo`: a scripted tour on a throw-away project and global store.

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
from cortexmem.services.context import Context
from cortexmem.services.memories import remember
from cortexmem.services.recall import recall
from cortexmem.services.status import status

SAMPLE_MEMORIES: tuple[tuple[str, str, int, tuple[str, ...]], ...] = (
    (
        "decision",
        "Use SQLite in WAL mode for the local store; PostgreSQL only for shared team memory. "
        "Rejected: a JSON file per session (no concurrent writers, no full-text search).",
        9,
        ("storage",),
    ),
    (
        "gotcha",
        "The stdlib sqlite3 on this Python cannot load extensions, so sqlite-vec is out; "
        "keep vectors as float32 blobs and search them with numpy.",
        8,
        ("sqlite", "vectors"),
    ),
    (
        "pattern",
        "Hooks import nothing heavy at module level and always exit 0; errors go to "
        ".cortex/cortex.log instead of the session.",
        7,
        ("hooks",),
    ),
    (
        "architecture",
        "Functional core, imperative shell: ranking, decay and briefing are pure functions in "
        "cortexmem/core; storage and I/O live in cortexmem/store and services.",
        7,
        (),
    ),
    (
        "progress",
        "Recall ranks FTS5 BM25 relevance blended with priority, centrality and access; next: "
        "vector search and reciprocal rank fusion.",
        5,
        ("recall",),
    ),
)

QUERIES = ("why not a JSON file for storage?", "src/cortexmem/core hooks.log")


def run_demo(keep: bool = False) -> None:
    from rich.rule import Rule

    from cortexmem.render import console, recall_table, status_report

    started = time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix="cortex-demo-"))
    previous_home = os.environ.get("CORTEX_HOME")
    os.environ["CORTEX_HOME"] = str(tmp / "home")
    project = tmp / "project"
    project.mkdir()
    try:
        with Context.for_cwd(project) as ctx:
            console.print(Rule("1. remember"))
            for memory_type, text, priority, tags in SAMPLE_MEMORIES:
                memory, _ = remember(
                    ctx, text, memory_type=memory_type, priority=priority, tags=tags
                )
                line = shorten(memory.summary or text, max(30, console.width - 40))
                console.print(f"  [cyan]{memory.id}[/]  {memory_type:<13} {line}")
            memory, _ = remember(
                ctx,
                "Prefer small modules with names that say what they hold.",
                memory_type="pattern",
                scope="global",
            )
            console.print(f"  [cyan]{memory.id}[/]  {'pattern':<13} {memory.content} (global)")
            for number, query in enumerate(QUERIES, start=2):
                console.print(Rule(f"{number}. recall"))
                recall_table(recall(ctx, query, limit=3), query)
            console.print(Rule("4. status"))
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
