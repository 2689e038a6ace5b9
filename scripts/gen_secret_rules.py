"""Regenerate ``src/cortexmem/core/secret_rules.json`` from gitleaks' default rule set.

Usage: ``python scripts/gen_secret_rules.py path/to/gitleaks/config/gitleaks.toml``

gitleaks (MIT licence, (c) 2019 Zachary Rice) keeps its rules as data: a regex per kind, the
capture group holding the secret, keywords that must appear before the regex is worth running,
an entropy floor, and allow-lists. Its regexes are Go RE2; this turns them into Python ``re``
(mid-pattern ``(?i)`` becomes a scoped ``(?i:...)``, ``\\z`` becomes ``\\Z``), checks that
each compiles, and writes the rules Cortex uses. Left out: ``generic-api-key`` (Cortex's own
assignment rule, with its look-alike checks, replaces it) and rules that only match file paths.
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
import warnings
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "src" / "cortexmem" / "core" / "secret_rules.json"
SKIP = {"generic-api-key"}


def scope_inline_flags(pattern: str) -> str:
    """``a(?i)b`` → ``a(?i:b)``: Python only accepts global flags at the very start."""
    out = pattern
    while True:
        pos = out.find("(?i)", 1)
        if pos < 0:
            return out
        depth, i, in_class = 0, pos + 4, False
        while i < len(out):
            ch = out[i]
            if ch == "\\":
                i += 2
                continue
            if in_class:
                in_class = ch != "]"
            elif ch == "[":
                in_class = True
                if out[i + 1 : i + 2] == "]":
                    i += 1
            elif ch == "(":
                depth += 1
            elif ch == ")":
                if depth == 0:
                    break
                depth -= 1
            i += 1
        out = out[:pos] + "(?i:" + out[pos + 4 : i] + ")" + out[i:]


def convert(rule: dict) -> dict | None:
    regex = rule.get("regex")
    if not regex or rule["id"] in SKIP or rule.get("path"):
        return None
    python = scope_inline_flags(regex.replace("\\z", "\\Z"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        try:
            compiled = re.compile(python)
        except re.error as exc:
            print(f"skipped {rule['id']}: {exc}", file=sys.stderr)
            return None
    group = rule.get("secretGroup") or (1 if compiled.groups else 0)
    allow: list[str] = []
    stopwords: list[str] = []
    for item in rule.get("allowlists", []):
        if item.get("regexTarget", "secret") == "secret" and not item.get("paths"):
            allow += item.get("regexes", [])
        stopwords += item.get("stopwords", [])
    out = {
        "id": rule["id"],
        "regex": python,
        "group": group,
        "keywords": sorted({k.lower() for k in rule.get("keywords", [])}),
    }
    if rule.get("entropy"):
        out["entropy"] = rule["entropy"]
    if allow:
        out["allow"] = [scope_inline_flags(a.replace("\\z", "\\Z")) for a in allow]
    if stopwords:
        out["stopwords"] = stopwords
    return out


def main(source: str) -> None:
    data = tomllib.loads(Path(source).read_text(encoding="utf-8"))
    rules = [r for r in (convert(rule) for rule in data["rules"]) if r is not None]
    payload = {
        "source": "gitleaks config/gitleaks.toml (MIT licence, (c) 2019 Zachary Rice), "
        "converted by scripts/gen_secret_rules.py",
        "rules": rules,
    }
    OUT.write_text(json.dumps(payload, indent=1, ensure_ascii=True) + "\n", encoding="utf-8")
    print(f"{len(rules)} rules of {len(data['rules'])} written to {OUT}")


if __name__ == "__main__":
    main(sys.argv[1])
