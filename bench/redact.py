"""Speed of secret redaction (``core.redact``), as medians: the texts of real sessions, and
inputs built to make a regular expression backtrack.

Every text Cortex stores, clips, embeds or sends is redacted first, on the hooks' path. A rule
whose look-ahead or ``.*`` is unbounded costs the square of a text's length on some inputs: an
independent review found 10 kB of dashes before ``key=x`` taking 6.7 s, 30 kB 60 s, and 100 kB
of ``curl `` 91 s (gitleaks' curl rules). Their times here are the regression check: each
should stay in milliseconds and grow about linearly with the text.

* real: every user and assistant text and tool result of ``../shared/data/transcripts`` (when
  the folder is there), redacted once per run: the total, and the slowest single text.
* adversarial: each input at 10 kB and 100 kB, timed ``--runs`` times.

Run:  .venv/bin/python bench/redact.py [--runs 5] [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from cortexmem.core.redact import _redact

ADVERSARIAL: dict[str, Callable[[int], str]] = {
    "dashes then key=x": lambda n: "-" * n + " key=x",
    "a- then key=x": lambda n: "a-" * (n // 2) + "key=x",
    "curl curl curl": lambda n: "curl " * (n // 5),
    "mysql mysql": lambda n: "mysql " * (n // 6),
    "docker login": lambda n: "docker login " * (n // 13),
    "sqlplus -a 1 …": lambda n: "sqlplus" + " -a 1" * (n // 5),
    "sqlplus -sqlplus …": lambda n: "sqlplus" + " -sqlplus" * (n // 9) + " !",
    "conn a/b lines": lambda n: "conn a/b\n" * (n // 9),
    "a.a.a. then ://": lambda n: "a." * (n // 2) + " ://",
    "password=(((": lambda n: "password=" + "(" * n,
    "name: X value: (k8s)": lambda n: "name: DB_PASSWORD value: " * (n // 25),
    "password: | (YAML)": lambda n: "password: |\n" * (n // 12),
    "curl -u, line by line": lambda n: ("curl -u " * 30 + "\n") * (n // 241),
    "base64 lines, END": lambda n: ("A" * 60 + "\n") * (n // 61) + "-----END PRIVATE KEY",
    '\\"password\\":\\"': lambda n: '\\"password\\":\\"' * (n // 15),
}


def texts_of(folder: Path) -> list[str]:
    """The message texts and tool results of every transcript under ``folder``."""
    out: list[str] = []
    for path in sorted(folder.rglob("*.jsonl")):
        for line in path.open(encoding="utf-8", errors="replace"):
            try:
                record = json.loads(line)
            except ValueError:
                continue
            message = record.get("message") if isinstance(record, dict) else None
            content = message.get("content") if isinstance(message, dict) else None
            if isinstance(content, str):
                out.append(content)
                continue
            for block in content if isinstance(content, list) else []:
                if not isinstance(block, dict):
                    continue
                value = block.get("text") or block.get("content") or block.get("input")
                out.append(value if isinstance(value, str) else json.dumps(value))
    return [t for t in out if t]


def timed(text: str) -> float:
    start = time.perf_counter()
    _redact(text)
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--data", type=Path, default=Path(__file__).parents[2] / "shared/data")
    args = parser.parse_args()
    _redact("key=x warm-up: compile the rules")
    folder = args.data / "transcripts"
    if folder.is_dir():
        texts = texts_of(folder)
        for text in texts:  # compile every rule a text can reach
            _redact(text)
        totals, slowest = [], []
        for _ in range(args.runs):
            each = [timed(t) for t in texts]
            totals.append(sum(each))
            slowest.append(max(each))
        size = sum(len(t) for t in texts) / 1e6
        print(f"real: {len(texts):,} texts, {size:.1f} MB: median total "
              f"{statistics.median(totals):,.0f} ms, slowest text "
              f"{statistics.median(slowest):.1f} ms ({args.runs} runs)")  # fmt: skip
    else:
        print(f"real: skipped ({folder} is not here)")
    print(f"{'adversarial input':24} {'10 kB ms':>10} {'100 kB ms':>10} {'ratio':>7}")
    for name, build in ADVERSARIAL.items():
        small = statistics.median(timed(build(10_000)) for _ in range(args.runs))
        large = statistics.median(timed(build(100_000)) for _ in range(args.runs))
        print(f"{name:24} {small:10.1f} {large:10.1f} {large / max(small, 0.01):7.1f}")


if __name__ == "__main__":
    main()
