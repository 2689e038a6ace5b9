"""Retrieval quality on LoCoMo: recall@5, recall@10 and MRR per category, for lexical only,
vector only and hybrid recall, through Cortex's own store and recall service.

Method (../shared/data/README.md): one conversation at a time, every dialog turn is stored as
one memory; each question of categories 1-4 that has evidence is asked; a hit is an evidence
turn among the top k. A memory stands for exactly one turn, but its index text may carry
context: here the summary holds the session date and the neighbouring turns (``--context``),
which both legs see (FTS5 indexes the summary; the embedding text is summary + content).

Run:  .venv/bin/python bench/locomo.py [--data PATH] [--alpha 0.5] [--context 1]
The last line printed is ``hybrid recall@10 overall: 0.XXX``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from cortexmem.core.fusion import DEFAULT_ALPHA
from cortexmem.model import Memory
from cortexmem.services.context import Context
from cortexmem.services.embedding import Embedder, sync
from cortexmem.services.recall import recall

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "benchmarks" / "locomo-dev.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")


def evidence_ids(raw: list) -> set[str]:
    """``["D8:6; D9:17", "D:11:26"]`` → ``{"D8:6", "D9:17", "D11:26"}``."""
    found = set()
    for item in raw:
        for session, turn in _EVIDENCE.findall(str(item)):
            found.add(f"D{int(session)}:{int(turn)}")
    return found


def turns(conversation: dict) -> list[tuple[str, str, str]]:
    """``(dia_id, date, text)`` of every turn in order; image captions kept as words."""
    out = []
    numbers = sorted(int(k.split("_")[1]) for k in conversation if re.fullmatch(r"session_\d+", k))
    for n in numbers:
        date = conversation.get(f"session_{n}_date_time", "")
        for turn in conversation[f"session_{n}"]:
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [shares an image: {turn['blip_caption']}]"
            dia = "D{}:{}".format(*_EVIDENCE.findall(turn["dia_id"])[0]) if _EVIDENCE.findall(
                turn["dia_id"]) else turn["dia_id"]  # fmt: skip
            out.append((dia, date, text))
    return out


def memories_for(items: list[tuple[str, str, str]], context: int) -> tuple[list[Memory], dict]:
    memories, dia_of = [], {}
    for i, (dia, date, text) in enumerate(items):
        around = [items[j][2] for j in range(max(0, i - context), min(len(items), i + context + 1))
                  if j != i]  # fmt: skip
        summary = f"{date}. " + " ".join(around) if context else date
        memory = Memory(text, "context", summary=summary, source_type="import")
        memories.append(memory)
        dia_of[memory.id] = dia
    return memories, dia_of


class CachedQueries:
    """The real embedder, each query embedded once for the three modes."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model = inner.model
        self.cache: dict[str, object] = {}

    def query(self, text: str):
        if text not in self.cache:
            self.cache[text] = self.inner.query(text)
        return self.cache[text]


@dataclass
class Score:
    ranks: dict[int, list[int | None]] = field(default_factory=lambda: defaultdict(list))

    def add(self, category: int, rank: int | None) -> None:
        self.ranks[category].append(rank)

    @staticmethod
    def metrics(ranks: list[int | None]) -> tuple[float, float, float]:
        n = len(ranks) or 1
        r5 = sum(1 for r in ranks if r is not None and r <= 5) / n
        r10 = sum(1 for r in ranks if r is not None and r <= 10) / n
        mrr = sum(1 / r for r in ranks if r is not None) / n
        return r5, r10, mrr

    def overall(self) -> list[int | None]:
        return [r for c in sorted(self.ranks) for r in self.ranks[c]]


def first_hit(results, dia_of: dict, wanted: set[str]) -> int | None:
    for position, r in enumerate(results, start=1):
        if dia_of.get(r.memory.id) in wanted:
            return position
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--alpha", type=float, default=DEFAULT_ALPHA, help="hybrid blend")
    parser.add_argument("--context", type=int, default=2, help="neighbouring turns per side")
    parser.add_argument("--limit", type=int, default=0, help="only the first N conversations")
    args = parser.parse_args()
    data = json.loads(args.data.read_text(encoding="utf-8"))
    if args.limit:
        data = data[: args.limit]
    work = Path(tempfile.mkdtemp(prefix="cortex-locomo-"))
    os.environ["CORTEX_HOME"] = str(work / "home")
    modes = {"lexical": 0.0, "vector": 1.0, "hybrid": args.alpha}
    scores = {mode: Score() for mode in modes}
    latencies: list[float] = []
    started = time.monotonic()
    for number, sample in enumerate(data, start=1):
        folder = work / f"conv-{number}"
        folder.mkdir()
        with Context.for_cwd(folder) as ctx:
            store = ctx.writable("project")
            memories, dia_of = memories_for(turns(sample["conversation"]), args.context)
            store.add_memories(memories)
            embedder = Embedder.for_context(ctx)
            sync(store, embedder, project=ctx.paths.name)
            queries = CachedQueries(embedder)
            questions = [q for q in sample["qa"] if q.get("category") in CATEGORIES]
            for qa in questions:
                wanted = evidence_ids(qa.get("evidence") or [])
                if not wanted:
                    continue
                for mode, alpha in modes.items():
                    t0 = time.perf_counter()
                    results = recall(
                        ctx, str(qa["question"]), limit=10, alpha=alpha, embedder=queries,
                        all_branches=True, count_access=False, with_links=False,
                    )  # fmt: skip
                    if mode == "hybrid":
                        latencies.append(time.perf_counter() - t0)
                    scores[mode].add(qa["category"], first_hit(results, dia_of, wanted))
        print(f"conversation {number}/{len(data)}: {len(memories)} turns", file=sys.stderr)
    took = time.monotonic() - started
    print(f"\nLoCoMo retrieval ({args.data.name}, {len(data)} conversations, context "
          f"±{args.context} turns, hybrid alpha {args.alpha}, {took:.0f} s)")  # fmt: skip
    print(f"{'category':<14}{'n':>5}  " + "  ".join(
        f"{m + ' r@5':>12}{'r@10':>7}{'MRR':>7}" for m in modes))  # fmt: skip
    for category, name in CATEGORIES.items():
        ranks = {m: scores[m].ranks.get(category, []) for m in modes}
        cells = "  ".join(
            "{:>12.3f}{:>7.3f}{:>7.3f}".format(*Score.metrics(ranks[m])) for m in modes
        )
        print(f"{f'{category} {name}':<14}{len(ranks['hybrid']):>5}  {cells}")
    overall = {m: scores[m].overall() for m in modes}
    cells = "  ".join("{:>12.3f}{:>7.3f}{:>7.3f}".format(*Score.metrics(overall[m])) for m in modes)
    print(f"{'overall':<14}{len(overall['hybrid']):>5}  {cells}")
    print(f"hybrid recall in-process: median {statistics.median(latencies) * 1000:.1f} ms "
          f"per question (store of one conversation)")  # fmt: skip
    print(f"hybrid recall@10 overall: {Score.metrics(overall['hybrid'])[1]:.3f}")


if __name__ == "__main__":
    main()
