"""Speed of the local embedding model (MiniLM int8 ONNX, one intra-op thread), as medians.

* load: a fresh process per run (``--loads``, default 5) times importing numpy + onnxruntime +
  tokenizers, creating the ONNX session and tokenizer, and the first vector; plus the whole
  process from start to its first vector through ``cortexmem.ai.embed``.
* one short sentence: ``embed([sentence])`` through the façade (redaction included), after a
  warm-up, each call timed on its own.
* throughput: ~1,000 realistic sentences (LoCoMo dialog turns when the shared file is there,
  else the benchmark corpus) embedded in batches of 50, ``--repeats`` times.

Run:  .venv/bin/python bench/embed.py [--loads 5] [--repeats 5] [--sentences 1000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from cortexmem.ai import embed
from cortexmem.ai import local as local_model

from corpus import LOCOMO, Corpus

BATCH = 50

LOAD = """
import json, time
start = time.perf_counter()
import numpy, onnxruntime, tokenizers
imported = time.perf_counter()
from cortexmem.ai.local import LocalModel
model = LocalModel(1)
loaded = time.perf_counter()
model.embed(["the cache is stored in Redis"])
first = time.perf_counter()
print(json.dumps({"imports": imported - start, "session": loaded - imported,
                  "first": first - loaded}))
"""

FIRST_VECTOR = "from cortexmem.ai import embed; embed(['the cache is stored in Redis'])"


def sentences(count: int) -> tuple[list[str], str]:
    """Realistic sentences: real dialog turns from LoCoMo, else the benchmark corpus."""
    if LOCOMO.is_file():
        samples = json.loads(LOCOMO.read_text(encoding="utf-8"))
        turns = [
            turn["text"]
            for sample in samples
            for key, session in sample["conversation"].items()
            if key.startswith("session_") and isinstance(session, list)
            for turn in session
            if turn.get("text")
        ]
        if len(turns) >= count:
            return turns[:count], "LoCoMo dialog turns"
    return [m.content for m in Corpus(seed=1).memories(count)], "benchmark corpus memories"


def load_times(runs: int) -> dict[str, float]:
    found: dict[str, list[float]] = {"imports": [], "session": [], "first": [], "process": []}
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", LOAD], capture_output=True, text=True, check=True
        ).stdout
        for name, seconds in json.loads(out).items():
            found[name].append(seconds)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", FIRST_VECTOR], check=True)
        found["process"].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in found.items()}


def single_ms(texts: list[str], calls: int = 300) -> float:
    short = [t for t in texts if len(t.split()) <= 12] or texts
    for text in short[:20]:  # warm-up
        embed([text])
    timings = []
    for i in range(calls):
        text = short[i % len(short)]
        start = time.perf_counter()
        embed([text])
        timings.append(time.perf_counter() - start)
    return statistics.median(timings) * 1000


def per_second(texts: list[str], repeats: int, run) -> float:
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        for i in range(0, len(texts), BATCH):
            run(texts[i : i + BATCH])
        rates.append(len(texts) / (time.perf_counter() - start))
    return statistics.median(rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--loads", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sentences", type=int, default=1000)
    args = parser.parse_args()

    texts, source = sentences(args.sentences)
    words = statistics.mean(len(t.split()) for t in texts)
    loads = load_times(args.loads)
    embed(texts[:BATCH])  # warm-up in this process
    single = single_ms(texts)
    rate = per_second(texts, args.repeats, embed)
    # For reference: 50 texts in one ONNX run (faster or not, each text's vector would then
    # depend on the texts run with it: the int8 model quantises activations per tensor).
    model = local_model.model(1)
    together = per_second(texts, args.repeats, model._batch)

    rows = [
        ("import numpy + onnxruntime + tokenizers", f"{loads['imports'] * 1000:.0f} ms"),
        ("ONNX session + tokenizer load", f"{loads['session'] * 1000:.0f} ms"),
        ("first vector after load", f"{loads['first'] * 1000:.1f} ms"),
        ("whole process to first vector (embed)", f"{loads['process'] * 1000:.0f} ms"),
        ("one short sentence, warm (embed)", f"{single:.2f} ms"),
        (f"batches of {BATCH} (embed)", f"{rate:.0f} sentences/s"),
        (f"ref.: {BATCH} texts per ONNX run", f"{together:.0f} sentences/s"),
    ]
    print(
        f"Local model {local_model.MODEL_DIR.name}, 1 thread; {len(texts)} {source} "
        f"(mean {words:.1f} words); loads: {args.loads} fresh processes, "
        f"throughput: median of {args.repeats}"
    )
    width = max(len(name) for name, _ in rows)
    values = max(len(value) for _, value in rows)
    print(f"| {'measure':<{width}} | {'median':>{values}} |")
    print(f"| {'-' * width} | {'-' * (values - 1)}: |")
    for name, value in rows:
        print(f"| {name:<{width}} | {value:>{values}} |")


if __name__ == "__main__":
    main()
