"""The session-start briefing: what a new session must know, in a few hundred tokens.

Pure: ranked records in, markdown out; tokens are counted by the function passed in
(``core.tokens.count_tokens`` in production).

**Budget.** Dynamic, 300–500 tokens: 300, plus 10 for each high-value item waiting (a
decision, an open plan step, a gotcha of priority 7 or more), capped at 500. Everything
counts: headings, markers, provenance.

**Order.** Sections are filled in priority order: decisions (immortal) and rejected
alternatives, the active plan and its progress, gotchas, recent progress on this branch, then
the rest (architecture, patterns, context, code). Each category has a line budget
(``LINE_BUDGETS``); lines a category leaves unused are redistributed, in the same priority
order, to categories with more to say. An item that does not fit is skipped and the next one
tried: one long item never ends the briefing (the greedy pitfall).

**Overflow.** High-value items (a decision or rejection of priority ≥ 8, or anything pinned)
left out by the budget may still be added, up to ``OVERFLOW_SHARE`` of the budget beyond it.
Nothing else ever exceeds the budget.

**Lines.** ``- ● text — type · confidence · branch@commit · age`` with a confidence marker
(● ≥ 0.8, ◐ ≥ 0.5, ○ below) and provenance; ``note`` carries what reality anchoring found
(a file that no longer exists, another branch).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final

from cortexmem.core.text import shorten
from cortexmem.model import Memory

BASE_BUDGET: Final = 300
MAX_BUDGET: Final = 500
PER_HIGH_VALUE: Final = 10
OVERFLOW_SHARE: Final = 0.25
ITEM_CHARS: Final = 160

# section -> (heading, memory types, line budget)
SECTIONS: Final[tuple[tuple[str, str, tuple[str, ...], int], ...]] = (
    ("decisions", "Decisions", ("decision",), 6),
    ("plan", "Active plan", (), 6),
    ("gotchas", "Gotchas", ("gotcha",), 4),
    ("progress", "Recent progress", ("progress",), 4),
    ("rest", "Also known", ("architecture", "pattern", "context", "code_description"), 5),
)
LINE_BUDGETS: Final = {name: lines for name, _, _, lines in SECTIONS}
SECTION_OF_TYPE: Final = {t: name for name, _, types, _ in SECTIONS for t in types}


@dataclass(frozen=True)
class Item:
    """A memory offered to the briefing, with its rank score and an anchoring note."""

    memory: Memory
    score: float
    note: str = ""


@dataclass(frozen=True)
class PlanStep:
    text: str
    status: str  # pending | in_progress | completed


@dataclass(frozen=True)
class Plan:
    title: str
    steps: tuple[PlanStep, ...]
    branch: str | None = None
    when: str | None = None


@dataclass(frozen=True)
class BriefingInput:
    project: str
    branch: str | None
    now: datetime
    items: Sequence[Item] = ()
    plan: Plan | None = None


@dataclass
class Briefing:
    markdown: str
    tokens: int
    budget: int
    lines: dict[str, int] = field(default_factory=dict)
    overflow: list[str] = field(default_factory=list)  # ids of memories added as overflow
    ids: list[str] = field(default_factory=list)


def is_high_value(memory: Memory) -> bool:
    return memory.pinned or (memory.memory_type == "decision" and memory.priority >= 8)


def budget_for(data: BriefingInput) -> int:
    waiting = sum(
        1
        for i in data.items
        if i.memory.memory_type == "decision"
        or (i.memory.memory_type == "gotcha" and i.memory.priority >= 7)
    )
    if data.plan is not None:
        waiting += sum(1 for s in data.plan.steps if s.status != "completed")
    return min(MAX_BUDGET, BASE_BUDGET + PER_HIGH_VALUE * waiting)


def marker(confidence: float) -> str:
    return "●" if confidence >= 0.8 else "◐" if confidence >= 0.5 else "○"


def age(created_at: str, now: datetime) -> str:
    try:
        days = (now - datetime.fromisoformat(created_at)).total_seconds() / 86_400
    except (ValueError, TypeError):
        return "?"
    if days < 1:
        return "today"
    if days < 60:
        return f"{int(days)}d ago"
    return f"{int(days / 30)}mo ago"


def item_line(item: Item, now: datetime) -> str:
    m = item.memory
    where = m.branch or ""
    if m.source_context.commit:
        where = f"{where}@{m.source_context.commit[:7]}"
    provenance = " · ".join(
        p for p in (m.memory_type, f"{m.confidence:.2f}", where, age(m.created_at, now)) if p
    )
    note = f" ({item.note})" if item.note else ""
    return f"- {marker(m.confidence)} {shorten(m.content, ITEM_CHARS)}{note} — {provenance}"


def step_line(step: PlanStep, width: int | None = None) -> str:
    """``- [x] done``, ``- [>] in progress``, ``- [ ] pending`` (text cut to ``width``)."""
    box = {"completed": "[x]", "in_progress": "[>]"}.get(step.status, "[ ]")
    return f"- {box} {shorten(step.text, width) if width else step.text}"


def plan_lines(plan: Plan) -> list[str]:
    done = sum(1 for s in plan.steps if s.status == "completed")
    lines = [f"{plan.title} — {done}/{len(plan.steps)} done"]
    # Open steps first (what to do next), then what is done.
    order = sorted(plan.steps, key=lambda s: {"in_progress": 0, "pending": 1}.get(s.status, 2))
    lines += [step_line(s, 160) for s in order]
    return lines


def header(data: BriefingInput) -> list[str]:
    where = f" (branch {data.branch})" if data.branch else ""
    return [
        f"# Cortex briefing — {data.project}{where}",
        "Memory from earlier sessions. ● sure ◐ likely ○ unsure; verify before relying on it. "
        "`cortex recall <question>` for more.",
    ]


def build(data: BriefingInput, count: Callable[[str], int]) -> Briefing:
    """The briefing for ``data`` under its budget; ``count`` counts tokens."""
    budget = budget_for(data)
    pools: dict[str, list[str]] = {name: [] for name in LINE_BUDGETS}
    owners: dict[str, list[Item | None]] = {name: [] for name in LINE_BUDGETS}
    ranked = sorted(data.items, key=lambda i: (-i.score, i.memory.created_at, i.memory.id))
    for item in ranked:
        section = SECTION_OF_TYPE.get(item.memory.memory_type)
        if section is not None:
            pools[section].append(item_line(item, data.now))
            owners[section].append(item)
    if data.plan is not None and data.plan.steps:
        title, *steps = plan_lines(data.plan)
        pools["plan"] = steps
        owners["plan"] = [None] * len(steps)
    else:
        title = ""

    chosen: dict[str, list[int]] = {name: [] for name in LINE_BUDGETS}
    head = "\n".join(header(data))
    used = count(head)
    headings = {name: f"## {heading}" for name, heading, _, _ in SECTIONS}
    if title:
        headings["plan"] = f"## Active plan: {title}"

    def cost(name: str, line: str) -> int:
        extra = count("\n" + headings[name]) if not chosen[name] else 0
        return count("\n" + line) + extra

    def take(name: str, limit: int | None, ceiling: int) -> None:
        nonlocal used
        for index, line in enumerate(pools[name]):
            if limit is not None and len(chosen[name]) >= limit:
                return
            if index in chosen[name]:
                continue
            price = cost(name, line)
            if used + price <= ceiling:
                chosen[name].append(index)
                used += price

    # 1. each category up to its own line budget, in priority order
    for name in LINE_BUDGETS:
        take(name, LINE_BUDGETS[name], budget)
    # 2. the lines left unused go to whoever has more to say, in the same order
    spare = sum(LINE_BUDGETS.values()) - sum(len(v) for v in chosen.values())
    for name in LINE_BUDGETS:
        if spare <= 0:
            break
        before = len(chosen[name])
        take(name, before + spare, budget)
        spare -= len(chosen[name]) - before
    # 3. overflow: high-value memories the budget left out
    overflow: list[str] = []
    ceiling = budget + int(budget * OVERFLOW_SHARE)
    for name in LINE_BUDGETS:
        for index, owner in enumerate(owners[name]):
            if owner is None or index in chosen[name] or not is_high_value(owner.memory):
                continue
            price = cost(name, pools[name][index])
            if used + price <= ceiling:
                chosen[name].append(index)
                used += price
                overflow.append(owner.memory.id)

    out = header(data)
    ids: list[str] = []
    for name in LINE_BUDGETS:
        if not chosen[name]:
            continue
        out.append(headings[name])
        for index in sorted(chosen[name]):
            out.append(pools[name][index])
            owner = owners[name][index]
            if owner is not None:
                ids.append(owner.memory.id)
    if len(out) == 2:
        out.append("Nothing remembered for this project yet.")
    markdown = "\n".join(out) + "\n"
    return Briefing(
        markdown=markdown,
        tokens=count(markdown.rstrip("\n")),
        budget=budget,
        lines={name: len(v) for name, v in chosen.items()},
        overflow=overflow,
        ids=ids,
    )
