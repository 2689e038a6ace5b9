"""Tier-1 hygiene (pure): what is wrong with the rule and memory files every session loads.

* dead links: a Markdown link to a relative path that does not exist;
* duplicates: two files with the same content (by hash), and the same entry (a line) said
  twice, in one file or in two;
* obsolete: a memory file drawn from an instinct the learning loop has since archived.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final

_LINK: Final = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


@dataclass(frozen=True)
class Finding:
    kind: str  # dead_link | same_file | same_entry | obsolete
    file: str
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "file": self.file, "detail": self.detail}


def dead_links(name: str, text: str, exists: Callable[[str, str], bool]) -> list[Finding]:
    """Links of ``name`` to local paths ``exists(name, target)`` does not find."""
    out = []
    for target in _LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # a URL, a mail address, an anchor
        path = target.split("#", 1)[0]
        if path and not exists(name, path):
            out.append(Finding("dead_link", name, path))
    return out


def _entry(line: str) -> str:
    return " ".join(line.strip().lstrip("-*").split()).lower()


def duplicates(files: Mapping[str, str]) -> list[Finding]:
    """Files with the same content, and entries (lines of 20 characters or more, outside
    headings) said more than once."""
    out: list[Finding] = []
    by_hash: dict[str, list[str]] = defaultdict(list)
    for name, text in sorted(files.items()):
        by_hash[hashlib.sha256(text.strip().encode()).hexdigest()].append(name)
    for names in by_hash.values():
        for other in names[1:]:
            out.append(Finding("same_file", other, f"same content as {names[0]}"))
    seen: dict[str, str] = {}
    for name, text in sorted(files.items()):
        for line in text.splitlines():
            entry = _entry(line)
            if len(entry) < 20 or line.lstrip().startswith(("#", "<!--")):
                continue
            if entry in seen:
                out.append(
                    Finding("same_entry", name, f"{line.strip()[:120]} (also in {seen[entry]})")
                )
            else:
                seen[entry] = name
    return out


def without_repeated_entries(text: str) -> str:
    """``text`` with each entry kept once (the first time it is said)."""
    seen: set[str] = set()
    kept = []
    for line in text.splitlines():
        entry = _entry(line)
        if len(entry) >= 20 and not line.lstrip().startswith(("#", "<!--")):
            if entry in seen:
                continue
            seen.add(entry)
        kept.append(line)
    return "\n".join(kept) + ("\n" if text.endswith("\n") else "")


def report_markdown(
    at: str,
    dry_run: bool,
    drafts: list[str],
    compacted: int,
    findings: list[Finding],
    fixed: list[str],
) -> str:
    """The dream's timestamped report."""
    mode = "dry run: nothing was changed" if dry_run else "applied"
    lines = [f"# Cortex dream — {at}", "", f"Mode: {mode}.", ""]
    lines += [f"## Repeated failures drafted as suggestions ({len(drafts)})", ""]
    lines += [f"- {d}" for d in drafts] or ["- none"]
    verb = "would be" if dry_run else "were"
    lines += ["", "## Compaction", ""]
    lines += [f"- {compacted} observations older than the loop needs {verb} deleted.", ""]
    lines += [f"## Tier-1 hygiene ({len(findings)} findings)", ""]
    lines += [f"- {f.kind}: {f.file}: {f.detail}" for f in findings] or ["- nothing to report"]
    if fixed:
        lines += ["", "## Fixed in Cortex's own files", ""] + [f"- {name}" for name in fixed]
    return "\n".join(lines) + "\n"
