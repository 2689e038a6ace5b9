"""Structured input: a subagent's (or another tool's) work summary as extraction entries.

A work summary says outright what was decided, what went wrong and what was done. Each list
item becomes a self-report tag line, so it is stored with self-report confidence; free text
goes through the keyword layer like any assistant reply.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from cortexmem.core.session import Block, Entry

# summary field -> tag type
FIELDS: Final[dict[str, str]] = {
    "decisions": "decision",
    "rejected": "rejected",
    "gotchas": "gotcha",
    "lessons": "fix",
    "patterns": "pattern",
    "architecture": "architecture",
    "progress": "progress",
    "done": "progress",
    "knowledge": "knowledge",
    "notes": "knowledge",
}


def entries_from_summary(
    summary: Mapping[str, Any] | str,
    *,
    session_id: str | None = None,
    branch: str | None = None,
    timestamp: str | None = None,
    source: str | None = None,
) -> list[Entry]:
    """Entries for ``summary``: ``{"summary": text, "decisions": [...], "gotchas": [...]}``
    (any of ``FIELDS``), or plain text."""
    if isinstance(summary, str):
        summary = {"summary": summary}
    lines: list[str] = []
    text = summary.get("summary")
    if isinstance(text, str) and text.strip():
        lines.append(text.strip())
    for name, tag in FIELDS.items():
        items = summary.get(name)
        if isinstance(items, str):
            items = [items]
        if not isinstance(items, list):
            continue
        for item in items:
            if isinstance(item, str) and item.strip():
                body = " ".join(item.split())
                lines.append(f"[MEMORY:{tag}] {body}")
    if not lines:
        return []
    return [
        Entry(
            line=0,
            role="assistant",
            blocks=[Block("text", "\n\n".join(lines))],
            session_id=session_id,
            branch=branch,
            timestamp=timestamp,
            is_sidechain=True,
            transcript_path=source,
        )
    ]
