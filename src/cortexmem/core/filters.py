"""Which memories a query may see. The rule lives here once; the SQLite store translates it."""

from __future__ import annotations

from dataclasses import dataclass

from cortexmem.model import BRANCH_SCOPED_TYPES, Memory


@dataclass(frozen=True)
class MemoryFilter:
    """What recall is allowed to return.

    ``branch`` set: memories about the state of a line of work (progress, context) are shown
    only when they were recorded on that branch or on no branch; lasting knowledge (decisions,
    architecture, gotchas, patterns, code) is shared by every branch. ``branch`` None: no
    branch filtering (``--all-branches``).
    """

    types: tuple[str, ...] = ()
    branch: str | None = None
    statuses: tuple[str, ...] = ("active",)


def visible(memory: Memory, flt: MemoryFilter) -> bool:
    if flt.statuses and memory.status not in flt.statuses:
        return False
    if flt.types and memory.memory_type not in flt.types:
        return False
    return visible_on_branch(memory, flt.branch)


def visible_on_branch(memory: Memory, branch: str | None) -> bool:
    if branch is None or memory.memory_type not in BRANCH_SCOPED_TYPES:
        return True
    return memory.branch is None or memory.branch == branch
