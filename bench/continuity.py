"""Continuity: does a new session get what it needs from the sessions Cortex captured before?

For each project and each distinct cutoff of the question set, a fresh store: the project's
transcripts up to the cutoff are ingested (``cortex ingest``'s service, no model but the local
embedder), embedded, and then every question of that cutoff is put to three channels:

* ``briefing``  — the SessionStart briefing a new session starts with;
* ``recall``    — recall top 5 for the question (what ``cortex recall`` / MCP ``search`` serve);
* ``inject``    — the UserPromptSubmit injection with the question as the prompt.

A channel scores a question when one of its keys occurs (case-insensitively) in what the
channel hands the assistant. Two references on the same keys: ``oracle`` (a key occurs in the
ingested text at all) and ``bm25`` (naive BM25 top 5 over the raw user and assistant text
blocks, each block a document, the question's words OR-ed). ``false inject`` is the share of
OTHER projects' questions that get any injection from this project's store.

Serving a memory counts an access that feeds its rank: the store is restored from a copy taken
after ingestion before every question, so questions do not influence each other.

Run: .venv/bin/python bench/continuity.py [--questions FILE] [--json OUT] [--only PROJECT]
The question set defaults to ../shared/data/benchmarks/continuity-dev.json (see its README).
``bench/continuity-heldout.json`` holds 88 questions of the same kind on seven other projects
of ``../shared/data/transcripts/`` (vsla, slopometry, entireio-skills, moredip), written by
readers who saw only the transcripts: a change that gains on the dev set must not lose there.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
DEFAULT_QUESTIONS = DATA / "benchmarks" / "continuity-dev.json"
# A question's project is a folder under one of these (the dev set's names), or a path under
# the transcripts folder itself (a held-out set's: "Durban-Designer-vsla/-home-kenth56-vsla").
TRANSCRIPT_ROOTS = [
    DATA / "transcripts" / "claude-code-log-real_projects",
    DATA / "transcripts" / "entireio-cli",
    DATA / "transcripts",
]
CHANNELS = ("briefing", "recall", "inject")
REFERENCES = ("oracle", "bm25")
RECALL_K = 5
NOTE = re.compile(r"^\s*\((?:resumed|after)[^)]*\)\s*", re.IGNORECASE)


# ----------------------------------------------------------------------------- raw text


def block_texts(path: Path) -> list[str]:
    """The user and assistant text blocks of one transcript (the BM25 documents), read
    straight from the JSONL, independent of Cortex's own parser."""
    out: list[str] = []
    with path.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if not isinstance(record, dict) or record.get("type") not in ("user", "assistant"):
                continue
            message = record.get("message")
            content = message.get("content") if isinstance(message, dict) else None
            if isinstance(content, str):
                out.append(content)
            elif isinstance(content, list):
                out += [
                    b["text"]
                    for b in content
                    if isinstance(b, dict) and b.get("type") == "text" and isinstance(
                        b.get("text"), str)
                ]  # fmt: skip
    return [t for t in out if t.strip()]


WORD = re.compile(r"[a-z0-9_]+")


def words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def bm25_top(docs: list[str], query: str, k: int = RECALL_K) -> list[str]:
    """Okapi BM25 (k1 = 1.2, b = 0.75), the query's words OR-ed; the top ``k`` documents."""
    tokens = [words(d) for d in docs]
    if not tokens:
        return []
    avg = sum(len(t) for t in tokens) / len(tokens)
    df: Counter[str] = Counter()
    for t in tokens:
        df.update(set(t))
    n = len(tokens)
    terms = set(words(query))
    scores = []
    for i, t in enumerate(tokens):
        tf = Counter(t)
        score = 0.0
        for term in terms:
            if term not in tf:
                continue
            idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
            f = tf[term]
            score += idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * len(t) / avg))
        if score > 0:
            scores.append((score, i))
    scores.sort(key=lambda s: (-s[0], s[1]))
    return [docs[i] for _, i in scores[:k]]


def hit(text: str, keys: list[str]) -> bool:
    low = text.lower()
    return any(key.lower() in low for key in keys)


# ----------------------------------------------------------------------------- cutoffs


def project_folder(project: str) -> Path:
    for root in TRANSCRIPT_ROOTS:
        if (root / project).is_dir():
            return root / project
    raise SystemExit(f"no transcripts for project {project} under {TRANSCRIPT_ROOTS}")


def stage(project: str, cutoff: dict[str, Any], into: Path) -> list[Path]:
    """Copy the transcripts a cutoff allows into ``into`` (same relative layout, so subagent
    files stay beside their session), truncating where it says; the copied session files."""
    source = project_folder(project)
    if cutoff.get("files") == "all":
        chosen = sorted(p.relative_to(source) for p in source.rglob("*.jsonl"))
    else:
        chosen = [Path(f) for f in cutoff["files"]]
    truncate = {Path(k): int(v) for k, v in (cutoff.get("truncate") or {}).items()}
    copied = []
    for rel in chosen:
        target = into / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if rel in truncate:
            with (source / rel).open(encoding="utf-8") as handle:
                lines = [line for _, line in zip(range(truncate[rel]), handle, strict=False)]
            target.write_text("".join(lines), encoding="utf-8")
        else:
            shutil.copyfile(source / rel, target)
        copied.append(target)
    return copied


# ----------------------------------------------------------------------------- channels


@dataclass
class Outcome:
    question: dict[str, Any]
    scores: dict[str, bool] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)


def query_of(question: dict[str, Any]) -> str:
    return NOTE.sub("", question["question"]).strip()


class Harness:
    """One project at one cutoff: a fresh project folder and store, ingested and embedded."""

    def __init__(self, work: Path, project: str, cutoff: dict[str, Any]) -> None:
        from cortexmem.hosts.claude_code.reader import READER
        from cortexmem.services.context import Context
        from cortexmem.services.embedding import Embedder, sync_context
        from cortexmem.services.ingest import ingest

        self.work = work
        self.transcripts = work / "transcripts"
        self.project = work / "project"
        self.project.mkdir(parents=True)
        files = stage(project, cutoff, self.transcripts)
        self.docs = [t for f in files for t in block_texts(f)]
        self.raw = "\n".join(f.read_text(encoding="utf-8", errors="replace") for f in files)
        t0 = time.monotonic()
        self.ingest = ingest([self.transcripts], reader=READER, into=self.project)
        self.ingest_s = time.monotonic() - t0
        with Context.for_cwd(self.project) as ctx:
            self.embedder = Embedder.for_context(ctx)
            sync_context(ctx, self.embedder)
            self.counts = ctx.require("project").counts()
        self.db = Context.for_cwd(self.project).paths.db
        self.pristine = work / "pristine.db"
        shutil.copyfile(self.db, self.pristine)

    def _fresh(self):
        from cortexmem.services.context import Context

        for suffix in ("-wal", "-shm"):
            Path(str(self.db) + suffix).unlink(missing_ok=True)
        shutil.copyfile(self.pristine, self.db)
        return Context.for_cwd(self.project)

    def briefing(self) -> str:
        from cortexmem.services.brief import make_briefing

        with self._fresh() as ctx:
            return make_briefing(ctx).markdown

    def recall(self, query: str) -> str:
        from cortexmem.services.recall import recall

        with self._fresh() as ctx:
            hits = recall(
                ctx, query, limit=RECALL_K, all_branches=True, embedder=self.embedder,
                count_access=False,
            )  # fmt: skip
            return "\n".join(f"{h.memory.content}\n{h.memory.summary or ''}" for h in hits)

    def inject(self, query: str) -> str:
        from cortexmem.services.anticipate import anticipate

        with self._fresh() as ctx:
            return anticipate(ctx, query, branch=None, embedder=self.embedder).text


def run(
    questions: list[dict[str, Any]], *, verbose: bool, show_briefing: bool = False
) -> dict[str, Any]:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for q in questions:
        groups[(q["project"], json.dumps(q["cutoff"], sort_keys=True))].append(q)
    outcomes: list[Outcome] = []
    false_inject: dict[str, list[bool]] = defaultdict(list)
    stores: dict[str, dict[str, Any]] = {}
    home = Path(tempfile.mkdtemp(prefix="cortex-continuity-home-"))
    os.environ["CORTEX_HOME"] = str(home)  # the global store stays out of the measure
    try:
        for n, ((project, cutoff_key), group) in enumerate(sorted(groups.items()), start=1):
            work = Path(tempfile.mkdtemp(prefix="cortex-continuity-"))
            try:
                harness = Harness(work, project, json.loads(cutoff_key))
                briefing = harness.briefing()
                if show_briefing:
                    print(f"===== {project} {cutoff_key[:60]}\n{briefing}", file=sys.stderr)
                info = stores.setdefault(project, {"memories": 0, "ingest_s": 0.0, "cutoffs": 0})
                info["memories"] = max(info["memories"], harness.counts.memories)
                info["ingest_s"] += harness.ingest_s
                info["cutoffs"] += 1
                if verbose:
                    print(f"[{n}/{len(groups)}] {project}: {len(group)} questions, "
                          f"{harness.counts.memories} memories, ingested in "
                          f"{harness.ingest_s:.1f} s", file=sys.stderr)  # fmt: skip
                for q in group:
                    query = query_of(q)
                    out = Outcome(q)
                    out.texts = {
                        "briefing": briefing,
                        "recall": harness.recall(query),
                        "inject": harness.inject(query),
                        "bm25": "\n".join(bm25_top(harness.docs, query)),
                        "oracle": harness.raw,
                    }
                    out.scores = {name: hit(text, q["keys"]) for name, text in out.texts.items()}
                    outcomes.append(out)
                if cutoff_key == json.dumps({"files": "all"}, sort_keys=True):
                    others = [q for q in questions if q["project"] != project]
                    for q in others:
                        false_inject[project].append(bool(harness.inject(query_of(q))))
            finally:
                shutil.rmtree(work, ignore_errors=True)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return summarise(outcomes, false_inject, stores)


def _share(values: list[bool]) -> float:
    return round(sum(values) / len(values), 3) if values else 0.0


def summarise(
    outcomes: list[Outcome], false_inject: dict[str, list[bool]], stores: dict[str, Any]
) -> dict[str, Any]:
    names = (*CHANNELS, *REFERENCES)

    def table(key: str) -> dict[str, dict[str, float]]:
        rows: dict[str, list[Outcome]] = defaultdict(list)
        for o in outcomes:
            rows[o.question[key]].append(o)
        return {
            row: {"n": len(group), **{c: _share([o.scores[c] for o in group]) for c in names}}
            for row, group in sorted(rows.items())
        }

    everything = [f for flags in false_inject.values() for f in flags]
    return {
        "questions": len(outcomes),
        "overall": {c: _share([o.scores[c] for o in outcomes]) for c in names},
        "after_session_k": {
            c: _share([o.scores[c] for o in outcomes if o.question["cutoff"]["files"] != "all"])
            for c in names
        },
        "false_inject": _share(everything),
        "false_inject_by_project": {p: _share(f) for p, f in sorted(false_inject.items())},
        "by_kind": table("kind"),
        "by_project": table("project"),
        "stores": stores,
        "missed": {c: [o.question["id"] for o in outcomes if not o.scores[c]] for c in CHANNELS},
    }


def print_report(report: dict[str, Any]) -> None:
    names = (*CHANNELS, *REFERENCES)
    print(f"{report['questions']} questions; false injections on other projects' prompts: "
          f"{report['false_inject']:.3f}")  # fmt: skip
    print()
    print("| | n | " + " | ".join(names) + " |")
    print("|---|---|" + "---|" * len(names))
    print(f"| overall | {report['questions']} | "
          + " | ".join(f"{report['overall'][c]:.2f}" for c in names) + " |")  # fmt: skip
    print("| after session k | | "
          + " | ".join(f"{report['after_session_k'][c]:.2f}" for c in names) + " |")  # fmt: skip
    for section in ("by_kind", "by_project"):
        for row, values in report[section].items():
            print(f"| {row} | {values['n']} | "
                  + " | ".join(f"{values[c]:.2f}" for c in names) + " |")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS)
    parser.add_argument("--json", type=Path, help="also write the full report here")
    parser.add_argument("--only", help="only this project")
    parser.add_argument("-q", "--quiet", action="store_true")
    parser.add_argument("--show-briefing", action="store_true",
                        help="print each store's briefing to stderr")  # fmt: skip
    args = parser.parse_args()
    if not args.questions.is_file():
        raise SystemExit(f"no question set at {args.questions} (is ../shared beside the clone?)")
    questions = json.loads(args.questions.read_text(encoding="utf-8"))
    if args.only:
        questions = [q for q in questions if q["project"] == args.only]
    t0 = time.monotonic()
    report = run(questions, verbose=not args.quiet, show_briefing=args.show_briefing)
    report["seconds"] = round(time.monotonic() - t0, 1)
    print_report(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
