"""The learning loop on the real multi-session projects of ``../shared/data/transcripts/``.

Each project is ingested into a throw-away folder (its observations derived from the
transcripts' tool calls), then the loop runs once as of half a day after its last tool call
(its 7-day window), with the suggestions it queues. Printed: observations, sessions, patterns,
instincts, rules, and every suggestion (destination, title, text), for a person to label as
worth applying or not (``docs/learning-bench.md`` keeps the labels).

Run:  .venv/bin/python bench/learning_real.py [--data ../shared/data/transcripts] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from datetime import timedelta
from pathlib import Path

from cortexmem.core.learning import rule_line
from cortexmem.hosts.claude_code.reader import READER
from cortexmem.model import parse_time
from cortexmem.project.paths import resolve
from cortexmem.services.context import Context
from cortexmem.services.ingest import ingest
from cortexmem.services.learn import learn

PROJECTS = [
    "entireio-cli",
    "entireio-skills",
    "Durban-Designer-vsla",
    "slopometry",
    "claude-code-log-real_projects/-Users-dain-workspace-claude-code-log-sample",
    "claude-code-log-real_projects/-Users-dain-workspace-JSSoundRecorder",
    "claude-code-log-real_projects/-experiments-worktrees",
    "claude-code-log-real_projects/-src-experiments-claude_p",
]


def run(source: Path, work: Path) -> dict[str, object]:
    project = work / source.name.strip("-")
    project.mkdir(parents=True)
    ingest([source], reader=READER, into=project)
    with Context(resolve(project)) as ctx:
        store = ctx.require("project")
        last = max((o.at for o in store.iter_observations()), default=None)
        if last is None:
            return {"project": source.name, "observations": 0}
        report = learn(ctx, now=parse_time(last) + timedelta(hours=12),
                       edit_tools=READER.dialect.edit_tools)  # fmt: skip
        p = report.plan
        return {
            "project": str(source.relative_to(source.parents[1])),
            "observations": p.observations,
            "sessions": p.sessions,
            "patterns": len(p.scored),
            "instincts": len(p.active),
            "instinct_rules": [
                f"{round(100 * i.confidence)}% {i.observations}x/{i.sessions}s {i.rule}"
                for i in p.active
            ],
            "best": [
                f"{round(100 * s.confidence)}% {s.pattern.count}x/{len(s.pattern.sessions)}s "
                f"{s.pattern.label}"
                for s in p.scored
                if s.pattern.family == "workflow"
            ][:3],
            "rules": [rule_line(i) for i in p.promoted],
            "suggestions": [
                {"destination": s.destination, "title": s.title, "text": s.text}
                for s in store.suggestions()
            ],
        }


def main() -> None:
    parser = argparse.ArgumentParser()
    default = Path(__file__).resolve().parents[2] / "shared" / "data" / "transcripts"
    parser.add_argument("--data", type=Path, default=default)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="cortex-learning-real-"))
    os.environ["CORTEX_HOME"] = str(work / "home")
    results = [run(args.data / name, work) for name in PROJECTS if (args.data / name).is_dir()]
    if args.json:
        print(json.dumps(results, indent=2, ensure_ascii=False))
        return
    for r in results:
        print(f"== {r['project']}: {r['observations']} observations, {r.get('sessions', 0)} "
              f"sessions, {r.get('patterns', 0)} patterns, {r.get('instincts', 0)} instincts, "
              f"{len(r.get('rules', []))} rules")  # type: ignore[arg-type]  # fmt: skip
        for line in r.get("rules", []):  # type: ignore[attr-defined]
            print("  rule " + line)
        for line in r.get("instinct_rules", []):  # type: ignore[attr-defined]
            print("  instinct " + line)
        for line in r.get("best", []):  # type: ignore[attr-defined]
            print("  best workflow " + line)
        for s in r.get("suggestions", []):  # type: ignore[attr-defined]
            first = s["text"].splitlines()[0] if s["text"] else ""
            print(f"  suggestion [{s['destination']}] {s['title']}: {first[:150]}")


if __name__ == "__main__":
    main()
