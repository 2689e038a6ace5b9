"""The session-start briefing: what a new session must know, in a few hundred tokens.

Pure: ranked records in, markdown out; tokens are counted by the function passed in
(``core.tokens.count_tokens`` in production).

**Budget.** Dynamic, 300–500 tokens: 300, plus 10 for each high-value item waiting (a
decision, an open problem, a how-to or a command that worked, a preference, an open plan
step, a gotcha of priority 7 or more), capped at 500. Everything counts: headings, markers,
provenance.

**Order: by value to a next session.** Open problems and where the work stands first (the
newest session summary, the files worked on, the recent work folded into one line, the older
summaries), then decisions (immortal, rejected alternatives included), the user's preferences
(short, and they govern everything), how to build, test and run (``how-to`` memories and the
commands that worked, a command a how-to already gives not repeated), gotchas, the active
plan's unfinished steps, and the rest (architecture, patterns, context, code). A memory goes to
a section by its type and its ``event:<kind>`` tag (``event:open_problem``, ``event:howto``,
``event:preference``, ``event:session_summary``), so it works with or without those kinds.
Each section has a line budget (``LINE_BUDGETS``); lines a section leaves unused are
redistributed, in the same order, to sections with more to say. An item that does not fit is
skipped and the next one tried: one long item never ends the briefing (the greedy pitfall).
Budget still unused then widens the lines that were clipped (the newest summary first, then in
order), a step at a time each in turn: a briefing never stops far under its budget while the
outcome, the paths or the commands of a line were cut off.

**Session summaries** are shown part by part (goal, last request, outcome, files changed,
commits, still open), each part cut to its share of the line, so a long opening request never
pushes the outcome off the line; praise and narration ("Perfect!", "Now I understand the
issue.") and markdown are dropped.

**No repetition.** Progress logs ("Done: …", one line per commit) are folded into one line
("Recent work: 12 steps done on main, last: …") instead of crowding out knowledge. No two
lines say the same thing: a line whose words match a line already chosen (the same words, all
its own words, or a Jaccard overlap ≥ ``SAME_OVERLAP``) is left out; a line that contains a
shorter chosen line's words and says more (a gotcha's cause around a command listed above) is
not. A plan step that a commit, a done step or a summary already reports is not listed as
still open, and the active plan's own progress log is not listed beside its steps. What is
said once costs once: the folder the files worked on share is named once, a command chain
each part of which is listed already is left out, and a failure's run counts ("1 failed, 26
passed in 1.48s") are left off its line.

**Overflow.** What the budget counts as high value and left out — a decision or rejection of
priority ≥ 8, an open problem, a gotcha of priority ≥ 7, anything pinned, a how-to, a
preference, an open step of the active plan — may still be added, up to ``OVERFLOW_SHARE`` of
the budget beyond it, breadth first: the best line left out of each section before any
section's second. Nothing else ever exceeds the budget.

**Lines.** ``- ● text — age`` with a confidence marker (● ≥ 0.8, ◐ ≥ 0.5, ○ below), the age,
and the branch when it is not the current one; ``note`` carries what reality anchoring found
(a file that no longer exists, another branch).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Final

from cortexmem.core.extraction.commands import without_runner
from cortexmem.core.extraction.digest import NO_REPLY, STOPPED_AT, stop_of
from cortexmem.core.text import shorten
from cortexmem.model import Memory

BASE_BUDGET: Final = 300
MAX_BUDGET: Final = 500
PER_HIGH_VALUE: Final = 10
OVERFLOW_SHARE: Final = 0.25
ITEM_CHARS: Final = 160
SUMMARY_CHARS: Final = 240
WIDEST_CHARS: Final = 1_000  # how far a clipped line may widen into budget left unused
WIDEN_STEP: Final = 120
SAME_OVERLAP: Final = 0.75
FILES_SHOWN: Final = 5

# section -> (heading, line budget), in the order a next session needs them. Where the work
# stands gets three lines (the newest summary, the files, one more): older sessions are
# recall's business, and their lines crowded out the gotchas and decisions that stay true
# (bench/continuity.py: briefing 0.30 with four lines, 0.32 with three). Preferences get two:
# what the person said stopping the assistant is a preference too, and three of them crowded
# out the how-to lines a session needs first (0.32 with three, 0.35 with two).
SECTIONS: Final[tuple[tuple[str, str, int], ...]] = (
    ("open", "Open problems", 3),
    ("state", "Where the work stands", 3),
    ("decisions", "Decisions", 5),
    ("preferences", "Preferences", 2),
    ("howto", "How to build, test, run", 4),
    ("gotchas", "Gotchas", 4),
    ("plan", "Active plan", 4),
    ("rest", "Also known", 3),
)
LINE_BUDGETS: Final = {name: lines for name, _, lines in SECTIONS}
# The section of a memory by its type, when no event tag says otherwise.
SECTION_OF_TYPE: Final = {
    "decision": "decisions",
    "gotcha": "gotchas",
    "architecture": "rest",
    "pattern": "rest",
    "context": "rest",
    "code_description": "rest",
}
SECTION_OF_TAG: Final = {
    "event:open_problem": "open",
    "event:session_summary": "state",
    "event:compact_summary": "state",
    "event:howto": "howto",
    "event:preference": "preferences",
    "event:plan": "plan",
}
SUMMARY_TAGS: Final = frozenset({"event:session_summary", "event:compact_summary"})
# Memory types the briefing asks the store for (progress is folded, never listed).
BRIEFED_TYPES: Final = ("decision", "gotcha", "pattern", "architecture", "context",
                        "code_description", "progress")  # fmt: skip


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
    session: str | None = None  # the session whose to-do list it is


@dataclass(frozen=True)
class Command:
    """A command that worked in this project (build, test, lint, run), how often it did."""

    text: str
    runs: int = 1
    description: str = ""


@dataclass(frozen=True)
class BriefingInput:
    project: str
    branch: str | None
    now: datetime
    items: Sequence[Item] = ()
    plan: Plan | None = None
    commands: Sequence[Command] = ()
    files: Sequence[str] = ()  # the files worked on most, most first
    alerts: Sequence[str] = ()  # what needs the person (a review queue grown too long)


@dataclass
class Briefing:
    markdown: str
    tokens: int
    budget: int
    lines: dict[str, int] = field(default_factory=dict)
    overflow: list[str] = field(default_factory=list)  # ids of memories added as overflow
    ids: list[str] = field(default_factory=list)

    def size(self) -> str:
        """Its size against its budget, saying why it is over: "480 of 500 tokens", or "620 of
        500 tokens, with 2 high-value items beyond the budget" (a bare "620 of 500" reads as a
        broken budget)."""
        said = f"{self.tokens} of {self.budget} tokens"
        if self.tokens > self.budget and self.overflow:
            n = len(self.overflow)
            said += f", with {n} high-value item{'s' if n != 1 else ''} beyond the budget"
        return said


def tags_of(memory: Memory) -> frozenset[str]:
    return frozenset(t.lower() for t in memory.tags)


def section_of(memory: Memory) -> str | None:
    """The section a memory is listed in; None for progress logs (folded into one line)."""
    tags = tags_of(memory)
    for tag, section in SECTION_OF_TAG.items():
        if tag in tags:
            return section
    return SECTION_OF_TYPE.get(memory.memory_type)


def is_high_value(memory: Memory) -> bool:
    """What may overflow the budget: pinned, a decision of priority 8 or more, an open
    problem, a gotcha of priority 7 or more (one with its cause and fix: the mistake a next
    session would otherwise make again)."""
    return (
        memory.pinned
        or (memory.memory_type == "decision" and memory.priority >= 8)
        or (memory.memory_type == "gotcha" and memory.priority >= 7)
        or "event:open_problem" in tags_of(memory)
    )


def may_overflow(section: str, owner: Item | None) -> bool:
    """Whether a line left out by the budget may overflow it: what ``budget_for`` counts as
    high value (a how-to, a preference, an open step of the active plan) besides the
    ``is_high_value`` memories. Commands that worked are the how-tos' fallback, not theirs."""
    if owner is None:
        return section == "plan"
    return is_high_value(owner.memory) or section in ("howto", "preferences")


def budget_for(data: BriefingInput) -> int:
    waiting = 0
    for i in data.items:
        section = section_of(i.memory)
        if section in ("decisions", "open", "howto", "preferences") or (
            section == "gotchas" and i.memory.priority >= 7
        ):
            waiting += 1
    if data.plan is not None:
        waiting += sum(1 for s in data.plan.steps if s.status != "completed")
    waiting += min(len(data.commands), LINE_BUDGETS["howto"])
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


# The parts of a session summary ("Session 2025-07-13: goal: …. Last request: …. Outcome: ….
# Files changed: …. Commits: …. Still open: …"), each with its share of the line: the outcome
# and what was left open say what a next session needs more than the opening request does.
_PARTS = re.compile(
    r"(?:^|[.:?!…]\s+)(goal|Last request|Outcome|Files changed|Commits|Still open):\s*"
)
_PART_SHARE: Final = {"goal": 0.2, "Last request": 0.12, "Outcome": 0.43, "Files changed": 0.1,
                      "Commits": 0.07, "Still open": 0.08}  # fmt: skip
# Praise and narration that open a closing message ("Perfect! ", "Now I understand the issue.")
_FILLER = re.compile(
    r"^(?:(?:perfect|excellent|great|done|good|ok|okay|sure|all set|got it)[!.:]+\s*"
    r"|(?:now )?i (?:now )?(?:understand|see)[^.!:]*[.!:]\s*"
    r"|(?:here'?s|here is) (?:a |the |what )?(?:summary|overview|i )[^:]*:\s*"
    r"|let me (?:provide|give|summari[sz]e)[^:.]*[:.]\s*)+",
    re.I,
)
_MARKUP = re.compile(r"\*\*|__|^#+\s*|\s#+\s+|`{3,}|[✅❌✓✔⚠️🎉]")
_LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]+)\)")  # [text](target): the target says more
# The opening request says why; past a point the line is better spent on what came of it.
_PART_CAP: Final = {"goal": 200, "Last request": 140}


def summary_parts(content: str) -> tuple[str, dict[str, str]]:
    """A session summary's head ("Session 2025-07-13") and its parts by name."""
    pieces = _PARTS.split(" ".join(content.split()))
    head = pieces[0].rstrip(": ")
    parts = {}
    for name, text in zip(pieces[1::2], pieces[2::2], strict=False):
        text = _MARKUP.sub(" ", _LINK.sub(lambda m: m[2] if "/" in m[2] else m[1], text))
        if name == "Outcome":
            text = _FILLER.sub("", text)
        parts[name] = " ".join(text.split()).rstrip(". ")
    return head, parts


def _paths(text: str, width: int) -> str:
    """As many whole paths of a list as fit in ``width`` (a path cut in two names no file),
    else the first one by its name alone."""
    paths = text.split(", ")
    shown: list[str] = []
    for path in paths:
        if len(", ".join([*shown, path])) > width:
            break
        shown.append(path)
    if not shown:
        shown = [paths[0].rsplit("/", 1)[-1][: max(width - 1, 1)]]
    more = "…" if len(shown) < len(paths) else ""
    return ", ".join(shown) + more


_STOPPED: Final = ((STOPPED_AT, "stopped at "), (NO_REPLY, "last request unanswered"))


def stopped_briefly(still: str) -> str:
    """Where a session stopped, in the few words a summary line has room for: the part gets a
    tenth of the line, which the digest's full sentence filled with 'unfinished: the…'."""
    for said, brief in _STOPPED:
        if still.startswith(said):
            return brief + still[len(said) :]
    return still


def summary_text(content: str, width: int, *, open_listed: bool = False) -> str:
    """A session summary in ``width`` characters: each part cut to its share of the line (a
    share a short part leaves unused goes to the others), so the outcome, the files changed and
    what is still open are never clipped away behind a long opening request. With
    ``open_listed`` (the session's open problems have lines of their own) it does not say
    again what is still open."""
    head, parts = summary_parts(content)
    if open_listed:
        stop = stop_of(parts.pop("Still open", ""))
        if stop:  # where the session stopped: no other line says it
            parts["Still open"] = stop
    if "Still open" in parts:
        parts["Still open"] = stopped_briefly(parts["Still open"])
    if not parts:
        return shorten(content, width)
    room = max(width - len(head) - 2, 40)
    shares = {n: _PART_SHARE.get(n, 0.1) for n in parts}
    sizes = {n: 0 for n in parts}
    left = room
    for _ in range(4):  # hand out the room, then what short parts leave, again
        wanting = {
            n: min(len(parts[n]), _PART_CAP.get(n, len(parts[n]))) - sizes[n]
            for n in parts
            if min(len(parts[n]), _PART_CAP.get(n, len(parts[n]))) > sizes[n]
        }
        if not wanting or left <= 8:
            break
        total = sum(shares[n] for n in wanting)
        spent = 0
        for n, want in wanting.items():
            give = min(want, int(left * shares[n] / total))
            sizes[n] += give
            spent += give
        left -= spent
        if spent == 0:
            break
    label = {"Outcome": "outcome", "Last request": "last request", "Files changed": "files",
             "Commits": "commits", "Still open": "still open"}  # fmt: skip
    cut = {n: _paths if n == "Files changed" else shorten for n in parts}
    said = [
        f"{label.get(n, n)}: {cut[n](parts[n], sizes[n])}"
        for n in parts
        if sizes[n] >= 12 or (sizes[n] and sizes[n] >= len(parts[n]))
    ]
    return f"{head}: " + ". ".join(said)


def item_line(
    item: Item,
    now: datetime,
    branch: str | None = None,
    width: int = ITEM_CHARS,
    open_listed: frozenset[str] = frozenset(),
) -> str:
    """The line of ``item``; ``open_listed``: the sessions whose open problems the briefing
    lists (their summaries do not repeat them)."""
    m = item.memory
    note = f" ({item.note})" if item.note else ""
    where = f"{m.branch} · " if m.branch and branch and m.branch != branch and not note else ""
    if tags_of(m) & SUMMARY_TAGS:
        text = summary_text(m.content, width, open_listed=m.source_session in open_listed)
    else:
        # "`cmd` failed (1 failed, 26 passed in 1.48s): cause": the counts were that run's
        text = shorten(_RUN_COUNTS.sub(r"\1 failed: ", m.content, count=1), width)
    return f"- {marker(m.confidence)} {text}{note} — {where}{age(m.created_at, now)}"


_RUN_COUNTS = re.compile(r"^(`[^`\n]+`) failed \([^()\n]*(?:\([^()\n]*\)[^()\n]*)*\): ")


_WORD = re.compile(r"[^\W_]+|_+", re.UNICODE)
_LOG_PREFIX = re.compile(r"^\s*(?:done|plan|session summary|committed \w+ on \S+)\s*:\s*", re.I)


def words(text: str) -> frozenset[str]:
    """The lower-cased words of ``text`` without its log prefix ("Done: ", "Plan: ")."""
    return frozenset(w for w in _WORD.findall(_LOG_PREFIX.sub("", text).lower()) if w.strip("_"))


def same(a: frozenset[str], b: frozenset[str]) -> bool:
    """Whether two texts say the same thing: the same words, the shorter one's words (three
    or more) all in the other, or a word overlap (Jaccard) of ``SAME_OVERLAP`` or more."""
    if not a or not b:
        return False
    common = len(a & b)
    if common == min(len(a), len(b)) and (a == b or common >= 3):
        return True
    return common / len(a | b) >= SAME_OVERLAP


def restates(line: frozenset[str], chosen: frozenset[str]) -> bool:
    """Whether ``line`` adds nothing to a line already ``chosen``: ``same``, but a line that
    holds all the words of a shorter chosen one and more (a gotcha's cause around a command
    listed above) says more, and is not left out for it."""
    if not line or not chosen:
        return False
    common = len(line & chosen)
    if line == chosen or (common == len(line) and common >= 3):
        return True
    return common / len(line | chosen) >= SAME_OVERLAP


def files_line(files: Sequence[str]) -> str:
    """``- Files worked on most: …``, the folder they all share said once."""
    folders = [f.split("/")[:-1] for f in files]
    common: list[str] = []
    for level in zip(*folders, strict=False):
        if len(set(level)) != 1:
            break
        common.append(level[0])
    if len(files) < 2 or not common:
        return "- Files worked on most: " + ", ".join(f"`{f}`" for f in files)
    lead = "/".join(common) + "/"
    return f"- Files worked on most, in `{lead}`: " + ", ".join(
        f"`{f[len(lead) :]}`" for f in files
    )


def step_line(step: PlanStep, width: int | None = None) -> str:
    """``- [x] done``, ``- [>] in progress``, ``- [ ] pending`` (text cut to ``width``)."""
    box = {"completed": "[x]", "in_progress": "[>]"}.get(step.status, "[ ]")
    return f"- {box} {shorten(step.text, width) if width else step.text}"


def plan_lines(plan: Plan, reported: Sequence[frozenset[str]] = ()) -> list[str]:
    """The plan's title line, then its open steps (in progress first); a step a commit, a done
    step or a summary in ``reported`` already reports counts as done and is not listed."""
    open_steps = [
        s
        for s in plan.steps
        if s.status != "completed" and not any(same(words(s.text), r) for r in reported)
    ]
    done = len(plan.steps) - len(open_steps)
    lines = [f"{plan.title} — {done}/{len(plan.steps)} done"]
    order = sorted(open_steps, key=lambda s: {"in_progress": 0, "pending": 1}.get(s.status, 2))
    return lines + [step_line(s, 160) for s in order]


def fold_progress(progress: Sequence[Item], branch: str | None, now: datetime) -> str | None:
    """One line for many progress logs: how many, on which branches, the newest one."""
    if not progress:
        return None
    newest = max(
        progress, key=lambda i: (i.memory.created_at, i.memory.content, i.memory.id)
    ).memory
    branches = sorted({i.memory.branch for i in progress if i.memory.branch})
    on = ""
    if branches:
        shown = [b for b in branches if b == branch] or branches[:2]
        more = f" (+{len(branches) - len(shown)})" if len(branches) > len(shown) else ""
        on = f" on {', '.join(shown)}{more}"
    count = len(progress)
    what = "step done" if count == 1 else "steps done"
    last = shorten(_LOG_PREFIX.sub("", newest.content), 120)
    return f"- Recent work: {count} {what}{on}, last ({age(newest.created_at, now)}): {last}"


_HOWTO = re.compile(r"^(How to [^:`]{3,40}):\s*(`[^`]+`)\s*\.?$")


def fold_howtos(howtos: Sequence[Item]) -> dict[str, Item]:
    """How-tos of one kind ("How to run the tests: `uv run pytest`", "… `uv run pytest -m
    browser -v`") folded into one line of their kind, best first ("How to run the tests:
    `a`; `b`"), keyed by the id of the best one; a how-to of another shape stays as it is. A
    chain of commands ("`a && b`") each of which is listed on its own is left out."""
    groups: dict[str, list[tuple[Item, str]]] = {}
    out: dict[str, Item] = {}
    for item in howtos:
        match = _HOWTO.match(" ".join(item.memory.content.split()))
        if match is None:
            out[item.memory.id] = item
        else:
            groups.setdefault(match[1], []).append((item, match[2]))
    alone = {c.strip("`").strip() for pairs in groups.values() for _, c in pairs}
    for label, pairs in groups.items():
        # one line per step: `ruff format` run bare by one session and as `uv run ruff format`
        # by another is one command (the best-ranked form is shown)
        steps: dict[str, str] = {}
        for _, c in pairs:
            steps.setdefault(without_runner(c.strip("`").strip()), c)
        commands = [
            c
            for c in steps.values()
            if not ("&&" in c and all(p.strip() in alone for p in c.strip("`").split("&&")))
        ]
        best = pairs[0][0]
        if not commands:
            continue
        content = f"{label}: " + "; ".join(commands)
        out[best.memory.id] = Item(replace(best.memory, content=content), best.score, best.note)
    return out


_GOAL: Final = re.compile(
    r"^Session [^\n]{1,40}?: goal: (.{1,600}?)"
    r"(?:\. (?:Last request|Outcome|Files changed|Commits|Still open): |\.?$)",
    re.DOTALL,
)
GOAL_KEY_CHARS: Final = 80
# A request this short ("continue", "fix the tests") says too little to be the same work.
GOAL_MIN_WORDS: Final = 5


def goal_key(summary: str) -> str | None:
    """What a session summary says it set out to do, as a key (words, lower case, its start);
    None for a request too short to tell one piece of work from another."""
    found = _GOAL.match(summary)
    if found is None:
        return None
    words = _WORD.findall(found.group(1).lower())
    return " ".join(words)[:GOAL_KEY_CHARS] if len(words) >= GOAL_MIN_WORDS else None


def newest_per_goal(summaries: Sequence[Item]) -> list[Item]:
    """``summaries`` (newest first) without the older sessions that set out to do the same as a
    newer one that has an outcome: the same request asked again (after a try that failed, was
    refused or lost its context) is where the work stands now; the older outcome is
    superseded. A newer session without an outcome supersedes nothing."""
    concluded: set[str] = set()
    out = []
    for item in summaries:
        key = goal_key(item.memory.content)
        if key is not None and key in concluded:
            continue
        if key is not None and ". Outcome: " in item.memory.content:
            concluded.add(key)
        out.append(item)
    return out


def command_line(command: Command) -> str:
    runs = f" (ran {command.runs}×)" if command.runs > 1 else ""
    return f"- `{shorten(command.text, 100)}`{runs}"


def header(data: BriefingInput) -> list[str]:
    where = f" (branch {data.branch})" if data.branch else ""
    return [
        f"# Cortex briefing — {data.project}{where}",
        "From earlier sessions (● sure ◐ likely ○ unsure: verify before relying on it); "
        "`cortex recall <question>` for more.",
        *(f"⚑ {alert}" for alert in data.alerts),
    ]


Line = tuple[str, Item | None, frozenset[str]]  # text, the memory it shows, its words


def by_score(items: Sequence[Item]) -> list[Item]:
    """Best score first; older first on a tie, then by what it says: the same sessions give the
    same order however often they are ingested (ids are minted at random when a memory is made,
    so an order by id changed between two stores of the same sessions)."""
    return sorted(items, key=lambda i: (-i.score, i.memory.created_at, i.memory.content,
                                        i.memory.id))  # fmt: skip


def open_listed(data: BriefingInput) -> frozenset[str]:
    """The sessions whose open problems all get a line of the open problems' section (what a
    session's summary says is still open is then not said twice)."""
    ranked = by_score(data.items)
    problems = [i.memory.source_session for i in ranked if section_of(i.memory) == "open"]
    shown = set(problems[: LINE_BUDGETS["open"]])
    return frozenset(s for s in shown - set(problems[LINE_BUDGETS["open"] :]) if s)


def pools_of(
    data: BriefingInput, listed: frozenset[str] = frozenset()
) -> tuple[dict[str, list[Line]], str]:
    """Each section's candidate lines, best first, and the plan's title ('' without one);
    ``listed``: the sessions whose open problems have lines of their own (``open_listed``)."""
    pools: dict[str, list[Line]] = {name: [] for name in LINE_BUDGETS}
    ranked = by_score(data.items)
    progress = [i for i in ranked if section_of(i.memory) is None
                and i.memory.memory_type == "progress"]  # fmt: skip
    summaries = newest_per_goal(sorted(
        (i for i in ranked if tags_of(i.memory) & SUMMARY_TAGS),
        key=lambda i: (i.memory.created_at, i.memory.content, i.memory.id),
        reverse=True,
    ))  # fmt: skip
    # the newest session in full, then the short lines (the files worked on, the recent work
    # folded), then the older sessions at the width of an item (budget left widens them)
    for item in summaries[:1]:
        line = item_line(item, data.now, data.branch, SUMMARY_CHARS, listed)
        pools["state"].append((line, item, words(item.memory.content)))
    if data.files:
        pools["state"].append((files_line(data.files[:FILES_SHOWN]), None, frozenset()))
    folded = fold_progress(progress, data.branch, data.now)
    if folded is not None:
        pools["state"].append((folded, None, words(folded)))
    for item in summaries[1:]:
        line = item_line(item, data.now, data.branch, ITEM_CHARS, listed)
        pools["state"].append((line, item, words(item.memory.content)))
    folds = fold_howtos([i for i in ranked if section_of(i.memory) == "howto"])
    for item in ranked:
        section = section_of(item.memory)
        if section is None or section == "state":
            continue
        if (
            section == "plan"
            and data.plan is not None
            and data.plan.session
            and item.memory.source_session == data.plan.session
        ):
            continue  # the active plan's own progress log: its steps are listed below
        if section == "howto":
            if item.memory.id not in folds:
                continue  # folded into the line of its kind
            item = folds[item.memory.id]
        pools[section].append(
            (item_line(item, data.now, data.branch), item, words(item.memory.content))
        )
    # a command a how-to memory already gives is not listed again
    howtos = " ".join(" ".join(i.memory.content.split()) for i in ranked
                      if section_of(i.memory) == "howto")  # fmt: skip
    run = {" ".join(c.text.split()) for c in data.commands}
    for command in data.commands:
        text = " ".join(command.text.split())
        if text in howtos:
            continue
        parts = [p.strip() for p in text.split("&&")]
        if len(parts) > 1 and all(p in howtos or p in run for p in parts):
            continue  # a chain of steps each of which is given already
        pools["howto"].append((command_line(command), None, words(command.text)))
    title = ""
    if data.plan is not None and data.plan.steps:
        reported = [words(i.memory.content) for i in progress + summaries]
        title, *steps = plan_lines(data.plan, reported)
        if steps:
            pools["plan"] = [(s, None, words(s[6:])) for s in steps] + pools["plan"]
        else:
            title = ""
    return pools, title


def build(data: BriefingInput, count: Callable[[str], int]) -> Briefing:
    """The briefing for ``data`` under its budget; ``count`` counts tokens."""
    budget = budget_for(data)
    listed = open_listed(data)
    pools, title = pools_of(data, listed)
    chosen: dict[str, list[int]] = {name: [] for name in LINE_BUDGETS}
    said: list[frozenset[str]] = []  # the words of every line chosen so far
    head = "\n".join(header(data))
    used = count(head)
    headings = {name: f"## {heading}" for name, heading, _ in SECTIONS}
    if title:
        headings["plan"] = f"## Active plan: {title}"

    def cost(name: str, line: str) -> int:
        extra = count("\n" + headings[name]) if not chosen[name] else 0
        return count("\n" + line) + extra

    def fits(name: str, index: int, ceiling: int) -> bool:
        nonlocal used
        line, _, text = pools[name][index]
        if index in chosen[name] or any(restates(text, other) for other in said):
            return False
        price = cost(name, line)
        if used + price > ceiling:
            return False
        chosen[name].append(index)
        said.append(text)
        used += price
        return True

    def take(name: str, limit: int, ceiling: int) -> None:
        for index in range(len(pools[name])):
            if len(chosen[name]) >= limit:
                return
            fits(name, index, ceiling)

    # 1. each section up to its own line budget, in order of value
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
    # 3. budget left unused widens the lines clipped short (summaries first, in the same
    # order), a step at a time each in turn, so the outcome, the paths and the commands cut
    # off behind the first words reach the session instead of an empty budget
    shown: dict[tuple[str, int], str] = {}
    widths: dict[tuple[str, int], int] = {}
    for name in LINE_BUDGETS:
        for index in chosen[name]:
            owner = pools[name][index][1]
            if owner is None:
                continue
            for start in (ITEM_CHARS, SUMMARY_CHARS):  # the width the line was drawn at
                drawn = item_line(owner, data.now, data.branch, start, listed)
                if drawn == pools[name][index][0] and len(owner.memory.content) > start:
                    widths[(name, index)] = start
    for step in (WIDEN_STEP, WIDEN_STEP // 4):  # then a finer step for the last few tokens
        full = set()
        growing = True
        while growing:
            growing = False
            for key, width in widths.items():
                if key in full or width >= WIDEST_CHARS:
                    continue
                name, index = key
                owner = pools[name][index][1]
                assert owner is not None
                old = shown.get(key, pools[name][index][0])
                new = item_line(owner, data.now, data.branch, width + step, listed)
                price = count("\n" + new) - count("\n" + old)
                if new == old or used + price > budget:
                    full.add(key)
                    continue
                shown[key] = new
                widths[key] = width + step
                used += price
                growing = True
    # 4. overflow: high-value lines the budget left out, breadth first (the best one left out
    # of each section before any section's second), so one section's many gotchas do not
    # take the whole overflow from the how-to or the plan step after them
    overflow: list[str] = []
    ceiling = budget + int(budget * OVERFLOW_SHARE)
    ranks = sorted((index, order, name) for order, name in enumerate(LINE_BUDGETS)
                   for index in range(len(pools[name])))  # fmt: skip
    for index, _, name in ranks:
        owner = pools[name][index][1]
        if may_overflow(name, owner) and fits(name, index, ceiling) and owner is not None:
            overflow.append(owner.memory.id)  # (an open plan step has no memory to name)

    out = header(data)
    ids: list[str] = []
    for name in LINE_BUDGETS:
        if not chosen[name]:
            continue
        out.append(headings[name])
        for index in sorted(chosen[name]):
            line, owner, _ = pools[name][index]
            out.append(shown.get((name, index), line))
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
