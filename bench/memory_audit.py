"""Memory audit: a seeded random sample of stored memories across the dev projects, as a
table skeleton to label by hand (useful knowledge / progress-log noise / redundant / wrong).

Each project folder under the continuity transcripts is ingested (all sessions) into a fresh
temp project, exactly as ``cortex ingest`` does; then ``--n`` memories are drawn with
``random.Random(--seed)`` from all active memories of all projects, and printed as a markdown
table with empty label and reason columns.

Run: .venv/bin/python bench/memory_audit.py [--n 40] [--seed 13] [--held-out]
(``--held-out``: the projects of ``bench/continuity-heldout.json`` instead of the dev ones.)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "transcripts"
PROJECTS = [
    *sorted((DATA / "claude-code-log-real_projects").glob("-*")),
    *sorted((DATA / "entireio-cli").glob("-*")),
]
HELD_OUT = [
    *sorted((DATA / "Durban-Designer-vsla").glob("-*")),
    DATA / "slopometry",
    *sorted((DATA / "entireio-skills").glob("-*")),
    *sorted((DATA / "moredip-session-share").glob("-*")),
]


def collect(work: Path, projects: list[Path]) -> list[tuple[str, str, str, str, str]]:
    from cortexmem.hosts.claude_code.reader import READER
    from cortexmem.services.context import Context
    from cortexmem.services.ingest import ingest

    rows = []
    for folder in projects:
        project = work / folder.name
        project.mkdir(parents=True)
        ingest([folder], reader=READER, into=project)
        db = Context.for_cwd(project).paths.db
        if not db.is_file():
            continue
        with sqlite3.connect(db) as conn:
            for mid, mtype, tags, content in conn.execute(
                "SELECT id, memory_type, tags, content FROM memories WHERE status = 'active' "
                "ORDER BY created_at, content_hash"
            ):
                rows.append((mid, folder.name, mtype, tags, content))
    return rows


def cell(text: str, width: int = 110) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= width else text[: width - 1] + "…"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--full", type=Path, help="also write each sampled memory whole here "
                        "(to read while labelling)")  # fmt: skip
    parser.add_argument("--held-out", action="store_true",
                        help="the held-out continuity projects, not the dev ones")  # fmt: skip
    args = parser.parse_args()
    projects = HELD_OUT if args.held_out else PROJECTS
    work = Path(tempfile.mkdtemp(prefix="cortex-audit-"))
    os.environ["CORTEX_HOME"] = str(work / "home")
    try:
        rows = collect(work, projects)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    sample = random.Random(args.seed).sample(rows, min(args.n, len(rows)))
    print(f"{len(rows)} active memories in {len(projects)} projects; sample of {len(sample)} "
          f"(seed {args.seed})\n")  # fmt: skip
    print("| # | id | project | type | tags | content (excerpt) | label | reason |")
    print("|---|---|---|---|---|---|---|---|")
    for n, (mid, project, mtype, tags, content) in enumerate(sample, start=1):
        short = project.removeprefix("-Users-dain-workspace-").removeprefix("-Users-gtrrz-")
        kinds = ",".join(t.split(":", 1)[1] for t in json.loads(tags) if t.startswith("event:"))
        print(f"| {n} | …{mid[-8:]} | {short} | {mtype} | {kinds} | {cell(content)} |  |  |")
    if args.full:
        args.full.write_text(
            "".join(
                f"## {n} …{mid[-8:]} {project} {mtype}\n\n{content}\n\n"
                for n, (mid, project, mtype, _, content) in enumerate(sample, start=1)
            ),
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()
