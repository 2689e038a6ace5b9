"""Deterministic, realistic-looking memories and queries for the benchmarks.

Words follow a Zipf distribution over a vocabulary of coding terms plus, when the shared LoCoMo
file is present, the words of its real dialog turns, so posting lists have the skew of real text.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from pathlib import Path

from cortexmem.model import MEMORY_TYPES, Memory

LOCOMO = Path(__file__).resolve().parents[2] / "shared/data/benchmarks/locomo-dev.json"

CODING_WORDS = """
cache sqlite index query parser transcript hook session branch commit merge rebase deploy
config json yaml schema migration backup restore token budget briefing ranking decay
embedding vector search fusion recall memory decision gotcha pattern progress context
architecture module function class method test fixture benchmark latency throughput lock
retry backoff timeout error exception traceback logging metric trace span queue worker
thread process async await future promise stream buffer encoder decoder tokenizer model
""".split()


def vocabulary() -> list[str]:
    """Words by descending frequency: LoCoMo's real conversational English when present, with
    the coding terms spread over ranks 100-3000 (common in a codebase, not in every memory)."""
    if LOCOMO.is_file():
        text = json.dumps(json.loads(LOCOMO.read_text(encoding="utf-8")))
        counts = Counter(w.lower() for w in re.findall(r"[A-Za-z]{2,}", text))
        words = [w for w, n in counts.most_common() if n > 1 and w not in CODING_WORDS]
    else:
        words = [f"w{i}" for i in range(8000)]
    rng = random.Random(0)
    for word in CODING_WORDS:
        words.insert(rng.randint(100, min(3000, len(words))), word)
    return words


class Corpus:
    def __init__(self, seed: int = 7) -> None:
        self.rng = random.Random(seed)
        self.words = vocabulary()
        weights = [1 / (rank + 1) ** 1.07 for rank in range(len(self.words))]
        self.cum = []
        total = 0.0
        for w in weights:
            total += w
            self.cum.append(total)

    def sentence(self, low: int, high: int) -> str:
        n = self.rng.randint(low, high)
        return " ".join(self.rng.choices(self.words, cum_weights=self.cum, k=n))

    def memories(self, count: int) -> list[Memory]:
        out = []
        for i in range(count):
            out.append(
                Memory(
                    content=f"{self.sentence(12, 40)} ({i})",
                    memory_type=self.rng.choice(MEMORY_TYPES),
                    priority=self.rng.randint(1, 10),
                    access_count=self.rng.choice([0, 0, 0, 1, 2, 5, 20]),
                    tags=tuple(self.rng.sample(CODING_WORDS, 2)),
                )
            )
        return out

    def fill(self, store, count: int, chunk: int = 5_000) -> None:
        """Add ``count`` memories to ``store`` in transactions of ``chunk``."""
        for start in range(0, count, chunk):
            store.add_memories(self.memories(min(chunk, count - start)))

    def queries(self, count: int) -> list[str]:
        return [self.sentence(3, 7) for _ in range(count)]
