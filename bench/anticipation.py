"""How often anticipatory retrieval injects context: on prompts about what the store knows, and
on prompts that have nothing to do with it (where it should stay silent).

The store: the sample sessions of examples/ (a payments API: idempotency keys, webhook
retries, logging) plus 2,000 filler memories about a warehouse inventory service, so a hit is
not just "the only thing there". The unrelated prompts touch neither domain. For each prompt
the selection the UserPromptSubmit hook makes (``core.anticipation.select`` over the recall
order, in-process) is applied while the table sweeps the gate, the weight of the prompt's
information (its words weighted by how rare they are in the store) and the weight of the lift
(how much closer a candidate is to the prompt than to no text at all).

Run:  .venv/bin/python bench/anticipation.py
"""

from __future__ import annotations

import os
import random
import subprocess
import tempfile
from pathlib import Path

from cortexmem.core.anticipation import (
    GATE,
    INFORMATION_WEIGHT,
    LIFT_WEIGHT,
    Pick,
    select,
    worth_asking,
)
from cortexmem.hosts.claude_code.reader import READER
from cortexmem.model import Memory
from cortexmem.services.anticipate import candidates, term_weights
from cortexmem.services.context import Context
from cortexmem.services.embedding import Embedder, sync_context
from cortexmem.services.ingest import ingest
from cortexmem.services.recall import recall

ROOT = Path(__file__).resolve().parents[1]

RELATED = [
    "add idempotency keys to the refunds endpoint too",
    "why do replayed payment requests return 422?",
    "how long do we keep idempotency keys?",
    "the webhook retries are not firing, can you check the scheduler?",
    "should we move webhook retries to Celery?",
    "verify the webhook signature on incoming requests",
    "add a new pattern to the log redaction filter",
    "can we log the card number in debug mode?",
    "run the test suite for the payments module",
    "fix the failing mypy check in the logging module",
    "make sender.py handle connection errors properly",
    "what is the backoff schedule for failed webhooks?",
    "prevent double charges when a client retries a payment",
    "seed some test merchants on staging",
    "the staging database lost all our data again",
    "use a Redis lock for payment deduplication instead",
    "add json logging with the request id to the refunds service",
    "write a migration for the idempotency table index",
    "how do we run python scripts in this repo?",
    "retry failed webhook deliveries with exponential backoff",
]
UNRELATED = [
    "write a haiku about autumn leaves",
    "what is the capital of Australia?",
    "explain the difference between TCP and UDP",
    "add a dark mode toggle to the settings page",
    "write a Dockerfile for a Go HTTP service",
    "refactor this React component to use hooks",
    "how do I center a div with flexbox?",
    "translate this paragraph into French",
    "implement quicksort in Rust",
    "what does the borrow checker complain about here?",
    "set up ESLint with the airbnb config",
    "create a bash script that renames photos by date",
    "why is my Kubernetes pod stuck in CrashLoopBackOff?",
    "optimise this SQL query with a window function",
    "summarise the plot of Hamlet",
    "add unit tests for the date picker component",
    "convert this callback code to async/await in JavaScript",
    "how many bytes is a UUID?",
    "draw an ASCII art cat",
    "write a regex that matches IPv6 addresses",
    "what is the time complexity of binary search?",
    "configure nginx as a reverse proxy for port 3000",
    "generate a random password in Python",
    "fix the typo in the README title",
    "make the navbar sticky on scroll",
    "how do I undo the last git commit?",
    "explain what a monad is",
    "rename the variable foo to user_count everywhere",
    "add a loading spinner to the login button",
    "what's a good name for a cat?",
    "upgrade the project to Node 22",
    "write a cover letter for a backend job",
    "plot a sine wave with matplotlib",
    "why is my CSS grid overflowing on mobile?",
    "add pagination to the blog list page",
    "compute the SHA-256 of a file in Go",
    "tell me a joke about programmers",
    "create a GitHub Actions workflow for a static site",
    "what is the difference between let and const?",
    "resize all images in a folder to 800 pixels wide",
]
WAREHOUSE = [
    "The {c} consumer commits Kafka offsets only after the stock row is written",
    "Pallet moves in the {c} are recorded as events, never as updates",
    "The {c} job reconciles bin counts against the nightly cycle count",
    "Barcode scans in the {c} go through the scanner gateway, not the REST API",
    "The {c} uses optimistic locking on the inventory version column",
    "Forklift assignments in the {c} are recomputed every five minutes",
    "The {c} publishes low-stock alerts to the purchasing topic",
    "Shipment manifests from the {c} are archived to cold storage after 90 days",
]
ZONES = ["receiving dock", "cold store", "picking zone", "returns bay", "cross-dock",
         "packing line", "bulk racking", "yard management", "cycle counter", "replenishment",
         "wave planner", "slotting engine", "dispatch desk", "hazmat cage", "kitting area",
         "quality hold", "transfer hub", "mezzanine", "loading bay", "label printer"]  # fmt: skip


def best_similarities(ctx: Context, embedder: Embedder, prompt: str) -> list[Pick]:
    """The recall order's top 10 with their evidence (similarity; the share of the prompt's
    words and information when its words found them), as the hook's selection sees them."""
    if not worth_asking(prompt):
        return []
    sims: dict[tuple[str, str], float] = {}
    words: dict[tuple[str, str], float] = {}
    generic: dict[tuple[str, str], float] = {}
    ranked = recall(ctx, prompt, limit=10, embedder=embedder, count_access=False,
                    with_links=False, all_branches=True, similarities=sims,
                    word_scores=words, baselines=generic)  # fmt: skip
    return candidates(ranked, sims, words, term_weights(ctx, prompt), generic)


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="cortex-bench-anticipation-"))
    os.environ["CORTEX_HOME"] = str(work / "home")
    project = work / "payments-api"
    project.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(project)], check=True)
    ingest([ROOT / "examples" / "sessions"], reader=READER, into=project)
    rng = random.Random(7)
    with Context.for_cwd(project) as ctx:
        store = ctx.writable("project")
        filler = [
            Memory(rng.choice(WAREHOUSE).format(c=rng.choice(ZONES)) + f" (note {i})",
                   rng.choice(["pattern", "context", "architecture"]), source_type="import")
            for i in range(2000)
        ]  # fmt: skip
        store.add_memories(filler)
        embedder = Embedder.for_context(ctx)
        sync_context(ctx, embedder)
        related = [best_similarities(ctx, embedder, p) for p in RELATED]
        unrelated = [best_similarities(ctx, embedder, p) for p in UNRELATED]
    print(f"store: {len(filler)} filler memories + the examples; "
          f"{len(RELATED)} related and {len(UNRELATED)} unrelated prompts")  # fmt: skip
    print(f"{'gate':>5} {'weight':>6} {'lift':>5}  {'injects on related':>18}  "
          f"{'injects on unrelated':>20}")  # fmt: skip
    settings = [(g, INFORMATION_WEIGHT, LIFT_WEIGHT) for g in (0.59, 0.69, 0.74, 0.79, 0.84, 0.89)]
    settings += [(GATE, w, LIFT_WEIGHT) for w in (0.0, 0.6, 1.0)]
    settings += [(GATE, INFORMATION_WEIGHT, b) for b in (0.0, 0.3, 1.0)]
    settings += [(0.76, 0.6, 0.0)]  # the gate before the lift counted
    for gate, weight, lift in settings:

        def rate(
            rows: list[list[Pick]], g: float = gate, w: float = weight, b: float = lift
        ) -> float:
            return sum(1 for picks in rows if select(picks, gate=g, weight=w, lift=b)) / len(rows)

        default = (gate, weight, lift) == (GATE, INFORMATION_WEIGHT, LIFT_WEIGHT)
        mark = "  <- default" if default else ""
        print(f"{gate:>5.2f} {weight:>6.2f} {lift:>5.2f}  {rate(related):>18.0%}  "
              f"{rate(unrelated):>20.0%}{mark}")  # fmt: skip


if __name__ == "__main__":
    main()
