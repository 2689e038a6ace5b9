"""The relevance floor: does recall say "nothing relevant" to a query that concerns nothing in
the store, and still answer the questions that do?

Both question sets of ``bench/continuity.py`` (the dev set and ``continuity-heldout.json``), on
the same fresh stores (each project ingested up to each cutoff and embedded), are put to
recall with the floor ``cortex recall`` and the MCP ``search`` tool use (``RELEVANCE_FLOOR``):
``answered`` is the share whose keys are in the top 5, as in the continuity bench. Then, on
each project's whole store, a fixed list of queries about nothing in any of these projects
(``UNRELATED``: a recipe, the weather, gibberish, punctuation, an emoji, another script) is
put the same way: ``unrelated answered`` is how many got any result at all, each listed with
its first result and whether a word of the query found it (a word the store holds, "good" in
"recommend a good sci-fi novel", is a match by words, not by meaning).

Run: .venv/bin/python bench/relevance_floor.py [--only PROJECT]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import continuity

UNRELATED = (
    "banana bread recipe",
    "what is the weather in Paris tomorrow",
    "recommend a good sci-fi novel",
    "how tall is mount everest",
    "lorem ipsum dolor sit amet",
    "xyzzy plugh",
    "asdf qwer zxcv",
    "hello",
    "日本語 テスト",
    "?!.",
    "???",
    "😀",
    "{}",
    "*",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="only this project")
    args = parser.parse_args()
    sets = [continuity.DEFAULT_QUESTIONS, continuity.ROOT / "bench" / "continuity-heldout.json"]
    for path in sets:
        if not path.is_file():
            raise SystemExit(f"no question set at {path} (is ../shared beside the clone?)")
    questions = [q for path in sets for q in json.loads(path.read_text(encoding="utf-8"))]
    if args.only:
        questions = [q for q in questions if q["project"] == args.only]
    os.environ["CORTEX_HOME"] = tempfile.mkdtemp(prefix="cortex-floor-home-")

    from cortexmem.core.fusion import RELEVANCE_FLOOR
    from cortexmem.services.recall import recall

    groups: dict[tuple[str, str], list[dict]] = {}
    for q in questions:
        groups.setdefault((q["project"], json.dumps(q["cutoff"], sort_keys=True)), []).append(q)
    answered = empty = 0
    unrelated: list[tuple[str, str, str, bool]] = []
    tried = 0
    whole = json.dumps({"files": "all"}, sort_keys=True)
    for (project, cutoff), group in sorted(groups.items()):
        harness = continuity.Harness(Path(tempfile.mkdtemp()), project, json.loads(cutoff))

        def ask(text: str, words: dict | None = None, harness=harness) -> list:
            with harness._fresh() as ctx:
                return recall(ctx, text, limit=continuity.RECALL_K, all_branches=True,
                              embedder=harness.embedder, count_access=False,
                              floor=RELEVANCE_FLOOR, word_scores=words)  # fmt: skip

        for q in group:
            hits = ask(continuity.query_of(q))
            text = "\n".join(f"{h.memory.content}\n{h.memory.summary or ''}" for h in hits)
            answered += continuity.hit(text, q["keys"])
            empty += not hits
        if cutoff == whole:
            for query in UNRELATED:
                words: dict = {}
                hits = ask(query, words)
                tried += 1
                if hits:
                    first = hits[0]
                    by_word = (first.scope, first.memory.id) in words
                    unrelated.append((project, query, first.memory.content, by_word))
        print(f"{project}: {len(group)} questions", file=sys.stderr)
    print(f"{len(questions)} questions: answered {answered} ({answered / len(questions):.2f}), "
          f"{empty} with nothing relevant")  # fmt: skip
    by_word = sum(1 for *_, w in unrelated if w)
    print(f"unrelated queries answered: {len(unrelated)} of {tried} "
          f"({by_word} by a word they share with the store)")  # fmt: skip
    for project, query, content, word in unrelated:
        first = " ".join(content.split())[:70]
        print(f"  {project[:30]:30} {query!r:40} {'word' if word else 'meaning'}: {first}")


if __name__ == "__main__":
    main()
