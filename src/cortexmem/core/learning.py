"""The learning loop, stages 2 to 5, as pure functions over observations and instincts.

Stage 2 (analyse) finds the patterns of a rolling window of observations:

* **chains**: the 3-tool chains (the two tools before a call, then the call), and the
  workflows: three different steps of the work in a row (``workflow_steps``: edits and the
  project's own commands by their form), ending on a command, ``Edit -> `uv run ruff check` ->
  `uv run pytest` ``: something an assistant can follow;
* **retries**: a call that failed and was immediately made again (the same tool; for a shell
  command, also the same command form: ``pytest`` failed, ``pytest`` again);
* **fixes**: a shell command that failed and the same step run another way that passed
  (``pytest`` failed, ``uv run pytest`` passed): how this project wants it run.

Each pattern is scored ``confidence = frequency × consistency × recency``:

* frequency: its count over the count of the most common pattern of its family (tool chains
  with tool chains, workflows with workflows, fixes with fixes), each session counting at most
  ``session_cap`` times, so one long session cannot make a pattern frequent on its own;
* consistency: the sessions it was seen in over the sessions of the window (at least
  ``min_sessions``: a window of one session does not confirm itself);
* recency: ``0.5 ** (days since last seen / half_life)``, the decay of stage 5.

Stage 3 (instincts): patterns scoring at least ``drop_below`` become or stay instincts, at most
``max_active`` of them; stage 4 (promote): an instinct at ``promote_at`` or more, seen at least
``min_observations`` times over ``min_sessions`` sessions, no one session holding more than
``max_session_share`` of it, becomes a generated rule and stays one while it keeps at least
``drop_below``; stage 5 (decay): an instinct no longer seen fades as
``score × 0.5 ** (days since last seen / half_life)`` and is archived below ``drop_below`` or
after ``archive_after_days``.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import datetime, timedelta
from typing import Any, Final

from cortexmem.core.command_form import form_step
from cortexmem.core.extraction.commands import step_kind
from cortexmem.model import Instinct, Observation, format_time, parse_time

# How far after a failed command its fix may come (observations of the same session).
FIX_REACH = 5


# The largest a setting may be, by its unit (the end of its name): ten years of days or hours,
# a million of anything counted, 1 for a share.
MAX_SETTING: Final = {"days": 3650.0, "hours": 87_600.0}
MAX_COUNT: Final = 1_000_000


@dataclass(frozen=True)
class LearningConfig:
    """Every parameter of the loop (``.cortex/learning.yaml`` overrides any of them)."""

    window_days: float = 7.0
    half_life_days: float = 7.0
    drop_below: float = 0.50
    promote_at: float = 0.90
    min_observations: int = 5
    min_sessions: int = 2
    max_active: int = 30
    archive_after_days: float = 30.0
    session_cap: int = 50
    max_session_share: float = 0.8
    run_every_hours: float = 1.0
    recurring_failures: int = 3
    review_alert: int = 20
    lesson_min_calls: int = 40
    session_quiet_hours: float = 1.0
    skill_min_tasks: int = 3
    skills_every_days: float = 7.0
    skills_window_days: float = 30.0

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None) -> tuple[LearningConfig, list[str]]:
        """The defaults overridden by ``data``; what was ignored, and why (fail-soft: a bad
        value keeps its default, an unknown key is reported)."""
        problems: list[str] = []
        if not data:
            return cls(), problems
        if not isinstance(data, Mapping):
            return cls(), [f"expected a mapping of settings, got {type(data).__name__}"]
        known = {f.name: f for f in fields(cls)}
        values: dict[str, Any] = {}
        for key, value in data.items():
            if key not in known:
                problems.append(f"unknown setting {key!r}")
                continue
            kind = int if known[key].type in ("int", int) else float
            if isinstance(value, bool) or not isinstance(value, int | float):
                problems.append(f"{key}: expected a number, got {value!r}")
                continue
            if (
                value < 0
                or math.isnan(value)
                or math.isinf(value)
                or (kind is int and value != int(value))
            ):
                problems.append(f"{key}: {value!r} is not a valid value")
                continue
            limit = MAX_SETTING.get(key.rsplit("_", 1)[-1], MAX_COUNT if kind is int else 1.0)
            if value > limit:
                # a share above 1; a date that far back or ahead is past what a calendar holds
                problems.append(f"{key}: {value!r} is above {limit:g}")
                continue
            if key in ("half_life_days", "window_days") and value == 0:
                problems.append(f"{key}: must be above 0")
                continue
            values[key] = kind(value)
        return cls(**values), problems


# ----------------------------------------------------------------- formulas


def decay(days: float, half_life: float) -> float:
    """``0.5 ** (days / half_life)``: 1 today, 0.5 after one half-life (never above 1)."""
    return 0.5 ** (max(0.0, days) / half_life)


def decayed_score(score: float, days: float, half_life: float) -> float:
    """Stage 5: ``score × 0.5 ** (days since last seen / half_life)``."""
    return score * decay(days, half_life)


def confidence(frequency: float, consistency: float, recency: float) -> float:
    """``frequency × consistency × recency``, each in [0, 1]."""
    return max(0.0, min(1.0, frequency)) * max(0.0, min(1.0, consistency)) * recency


def days_between(earlier: str, later: datetime) -> float:
    return (later - parse_time(earlier)).total_seconds() / 86_400


# ----------------------------------------------------------------- stage 2: patterns


@dataclass(frozen=True)
class Pattern:
    """A pattern seen in the window: how often, in which sessions, when."""

    key: str
    kind: str
    family: str
    label: str
    count: int
    sessions: frozenset[str]
    first_seen: str
    last_seen: str
    per_session: tuple[int, ...] = ()
    rule: str = ""

    def capped(self, cap: int) -> int:
        return sum(min(n, cap) for n in self.per_session)

    @property
    def top_share(self) -> float:
        return max(self.per_session) / self.count if self.count else 0.0


@dataclass
class _Seen:
    kind: str
    family: str
    label: str
    rule: str
    sessions: Counter[str] = field(default_factory=Counter)
    first: str = ""
    last: str = ""

    def add(self, session: str, at: str) -> None:
        self.sessions[session] += 1
        self.first = min(self.first, at) if self.first else at
        self.last = max(self.last, at)


def _fix_rule(failed: str, passed: str) -> str:
    kind = step_kind(passed)
    how = {"test": "Run tests", "check": "Run checks", "build": "Build"}.get(kind or "")
    lead = f"{how} with `{passed}`" if how else f"Run `{passed}` rather than `{failed}`"
    return f"{lead}: `{failed}` failed where `{passed}` passed"


def workflow_steps(
    calls: Sequence[Observation], edit_tools: frozenset[str] = frozenset()
) -> list[tuple[str, Observation]]:
    """A session's calls as the steps of its work: each edit, and each run of one of the
    project's own steps (a test, a check, a build, by the command's form), in order, failed
    calls left out (fixing them is the ``fix`` family's business) and a step repeated in a row
    counted once (three edits in a row are one edit step). Looking around (reads, searches,
    ``ls``, ``git log``) is not a step. ``edit_tools``: the host's tools that change files
    (``core.session.Dialect.edit_tools``; none known: workflows of commands only)."""
    out: list[tuple[str, Observation]] = []
    for call in calls:
        if not call.ok:
            continue
        if call.command and step_kind(call.command):
            step = f"`{call.command}`"
        elif call.tool in edit_tools:
            step = "Edit"
        else:
            continue
        if out and out[-1][0] == step:
            out[-1] = (step, call)
        else:
            out.append((step, call))
    return out


def find_patterns(
    observations: Iterable[Observation],
    exclude_sessions: frozenset[str] = frozenset(),
    edit_tools: frozenset[str] = frozenset(),
) -> tuple[list[Pattern], int]:
    """The window's patterns and how many sessions it holds (``exclude_sessions`` left out)."""
    seen: dict[str, _Seen] = {}

    def note(key: str, make: tuple[str, str, str, str], session: str, at: str) -> None:
        entry = seen.get(key)
        if entry is None:
            entry = seen[key] = _Seen(*make)
        entry.add(session, at)

    by_session: dict[str, list[Observation]] = defaultdict(list)
    for o in observations:
        if o.session_id in exclude_sessions:
            continue
        by_session[o.session_id].append(o)
    for session, calls in by_session.items():
        calls.sort(key=lambda o: o.at)  # stable: the store's order breaks ties
        for i, o in enumerate(calls):
            if o.prev_tool and o.prev2_tool:
                label = f"{o.prev2_tool}->{o.prev_tool}->{o.tool}"
                rule = f"Frequent tool chain: {label}"
                note(f"chain:{o.prev2_tool}>{o.prev_tool}>{o.tool}",
                     ("chain", "chain", label, rule), session, o.at)  # fmt: skip
            if o.ok or i + 1 >= len(calls):
                continue
            after = calls[i + 1]
            if after.tool == o.tool:
                rule = f"{o.tool} error-retry pairs detected. Consider pre-validation."
                note(f"retry:{o.tool}", ("retry", "retry", f"{o.tool} error-retry", rule),
                     session, after.at)  # fmt: skip
                if o.command and after.command == o.command:  # a shell command, run as is
                    label = f"`{o.command}` error-retry"
                    rule = (f"`{o.command}` failed and was run again as is. "
                            "Check what it needs before running it.")  # fmt: skip
                    note(f"retry:{o.tool}:{o.command}", ("retry", "command-retry", label, rule),
                         session, after.at)  # fmt: skip
            if not o.command:  # only shell commands have a form
                continue
            step = form_step(o.command)
            for later in calls[i + 1 : i + 1 + FIX_REACH]:
                if later.tool != o.tool or not later.command:
                    continue
                if form_step(later.command) != step:
                    continue
                if later.ok and later.command != o.command:
                    label = f"`{o.command}` -> `{later.command}`"
                    note(f"fix:{o.command}>{later.command}",
                         ("fix", "fix", label, _fix_rule(o.command, later.command)),
                         session, later.at)  # fmt: skip
                break  # the next run of the same program decides
        # Workflows: three different steps of the work in a row, ending on a command.
        steps = workflow_steps(calls, edit_tools)
        for j in range(2, len(steps)):
            names = tuple(step for step, _ in steps[j - 2 : j + 1])
            if names[-1] == "Edit" or len(set(names)) < 3:
                continue
            label = "->".join(names)
            rule = "Workflow: " + ", then ".join(names)
            note(f"chain:{'>'.join(names)}", ("chain", "workflow", label, rule),
                 session, steps[j][1].at)  # fmt: skip
    patterns = [
        Pattern(
            key=key,
            kind=s.kind,
            family=s.family,
            label=s.label,
            count=sum(s.sessions.values()),
            sessions=frozenset(s.sessions),
            first_seen=s.first,
            last_seen=s.last,
            per_session=tuple(sorted(s.sessions.values(), reverse=True)),
            rule=s.rule,
        )
        for key, s in seen.items()
    ]
    patterns.sort(key=lambda p: (-p.count, p.key))
    return patterns, len(by_session)


# ----------------------------------------------------------------- stages 3-5: instincts


@dataclass(frozen=True)
class Scored:
    """A pattern with its three factors and its confidence."""

    pattern: Pattern
    frequency: float
    consistency: float
    recency: float

    @property
    def confidence(self) -> float:
        return confidence(self.frequency, self.consistency, self.recency)

    @property
    def score(self) -> float:
        """Frequency × consistency: what decays once the pattern is no longer seen."""
        return confidence(self.frequency, self.consistency, 1.0)

    def to_dict(self) -> dict[str, Any]:
        p = self.pattern
        return {
            "key": p.key,
            "label": p.label,
            "kind": p.kind,
            "observations": p.count,
            "sessions": len(p.sessions),
            "frequency": round(self.frequency, 4),
            "consistency": round(self.consistency, 4),
            "recency": round(self.recency, 4),
            "confidence": round(self.confidence, 4),
        }


def score_patterns(
    patterns: Sequence[Pattern], total_sessions: int, now: datetime, config: LearningConfig
) -> list[Scored]:
    """Each pattern's factors: frequency against the most common of its family."""
    top: dict[str, int] = {}
    for p in patterns:
        top[p.family] = max(top.get(p.family, 0), p.capped(config.session_cap))
    out = []
    for p in patterns:
        peak = top[p.family]
        out.append(
            Scored(
                pattern=p,
                frequency=p.capped(config.session_cap) / peak if peak else 0.0,
                # A window of one session cannot be consistent with itself: the sessions
                # counted are never fewer than the promotion's minimum.
                consistency=len(p.sessions) / max(total_sessions, config.min_sessions, 1),
                recency=decay(days_between(p.last_seen, now), config.half_life_days),
            )
        )
    out.sort(key=lambda s: (-s.confidence, s.pattern.key))
    return out


@dataclass(frozen=True)
class LearningPlan:
    """What one analysis decided: the instincts to write, and what changed."""

    now: str
    scored: list[Scored]
    instincts: list[Instinct]
    sessions: int
    observations: int
    dropped: int = 0

    @property
    def active(self) -> list[Instinct]:
        return [i for i in self.instincts if i.status == "active"]

    @property
    def promoted(self) -> list[Instinct]:
        return [i for i in self.instincts if i.status == "promoted"]

    @property
    def newly_promoted(self) -> list[Instinct]:
        return [i for i in self.promoted if i.promoted_at == self.now]

    @property
    def archived(self) -> list[Instinct]:
        return [i for i in self.instincts if i.status == "archived"]


def rule_text(kind: str, rule: str, count: int) -> str:
    """The seed's wording, with the count: ``Frequent tool chain: A->B->C (seen 30x)``."""
    if kind == "chain":
        return f"{rule} (seen {count}x)"
    if kind == "retry" and rule.endswith("Consider pre-validation."):
        head = rule.removesuffix(" Consider pre-validation.").rstrip(".")
        return f"{head} ({count}x). Consider pre-validation."
    return f"{rule} ({count}x)"


def plan(
    previous: Iterable[Instinct],
    observations: Sequence[Observation],
    now: datetime,
    config: LearningConfig,
    exclude_sessions: frozenset[str] = frozenset(),
    edit_tools: frozenset[str] = frozenset(),
) -> LearningPlan:
    """One run of stages 2-5 over ``observations`` (already limited to the window)."""
    stamp = format_time(now)
    since = format_time(now - timedelta(days=config.window_days))
    window = [o for o in observations if since <= o.at <= stamp]
    patterns, total = find_patterns(window, exclude_sessions, edit_tools)
    scored = score_patterns(patterns, total, now, config)
    before = {i.key: i for i in previous}
    candidates: list[Instinct] = []
    dropped = 0
    seen_keys: set[str] = set()
    for s in scored:
        p = s.pattern
        seen_keys.add(p.key)
        old = before.get(p.key)
        conf = s.confidence
        if conf < config.drop_below:
            if old is not None and old.status != "archived":
                candidates.append(
                    _archived(old, conf, s.score, stamp, p.count, len(p.sessions), total)
                )
            else:
                dropped += 1
            continue
        promotable = (
            conf >= config.promote_at
            and p.count >= config.min_observations
            and len(p.sessions) >= config.min_sessions
            and p.top_share <= config.max_session_share
        )
        was_promoted = old is not None and old.status == "promoted"
        status = "promoted" if promotable or was_promoted else "active"
        candidates.append(
            Instinct(
                key=p.key,
                kind=p.kind,
                label=p.label,
                rule=rule_text(p.kind, p.rule, p.count),
                confidence=conf,
                score=s.score,
                observations=p.count,
                sessions=len(p.sessions),
                total_sessions=total,
                first_seen=min(p.first_seen, old.first_seen) if old else p.first_seen,
                last_seen=p.last_seen,
                status=status,
                updated_at=stamp,
                promoted_at=(old.promoted_at if was_promoted and old else stamp)
                if status == "promoted"
                else None,
            )
        )
    for old in before.values():
        if old.key in seen_keys or old.status == "archived":
            continue
        age = days_between(old.last_seen, now)
        conf = decayed_score(old.score, age, config.half_life_days)
        if conf < config.drop_below or age > config.archive_after_days:
            candidates.append(replace(old, confidence=conf, status="archived", updated_at=stamp))
        else:
            candidates.append(replace(old, confidence=conf, updated_at=stamp))
    kept = sorted(
        (i for i in candidates if i.status != "archived"),
        key=lambda i: (i.status != "promoted", -i.confidence, i.key),
    )
    instincts = [i for i in candidates if i.status == "archived"]
    for n, inst in enumerate(kept):
        if n < config.max_active:
            instincts.append(inst)
        elif inst.key in before:
            instincts.append(replace(inst, status="archived", promoted_at=None))
        else:
            dropped += 1
    instincts.sort(key=lambda i: (i.status == "archived", -i.confidence, i.key))
    return LearningPlan(stamp, scored, instincts, total, len(window), dropped)


def _archived(
    old: Instinct, conf: float, score: float, stamp: str, count: int, sessions: int, total: int
) -> Instinct:
    return replace(
        old,
        confidence=conf,
        score=score,
        observations=count,
        sessions=sessions,
        total_sessions=total,
        status="archived",
        updated_at=stamp,
    )


# ----------------------------------------------------------------- what is written


def percent(value: float) -> int:
    return round(100 * value)


def rule_line(instinct: Instinct) -> str:
    """``- **[95%, 30x seen]** Frequent tool chain: Grep->Read->Edit (seen 30x)``"""
    return f"- **[{percent(instinct.confidence)}%, {instinct.observations}x seen]** {instinct.rule}"


RULES_HEADER = (
    "# Rules learned from your sessions\n\n"
    "<!-- Written by Cortex's learning loop (`cortex learn`): patterns seen in at least two "
    "sessions with high confidence. Regenerated on every run; your edits would be lost. -->\n"
)


def rules_markdown(promoted: Iterable[Instinct]) -> str:
    """The generated rules file, or "" when nothing is promoted."""
    lines = [rule_line(i) for i in sorted(promoted, key=lambda i: (-i.confidence, i.key))]
    return RULES_HEADER + "\n" + "\n".join(lines) + "\n" if lines else ""


def _title(instinct: Instinct) -> str:
    if instinct.kind == "chain":
        return f"{instinct.label} chain"
    return instinct.label


def instinct_markdown(instinct: Instinct) -> str:
    """An instinct file (stage 3), in the seed's shape."""
    return (
        f"# Instinct: {_title(instinct)}\n"
        f"- Confidence: {percent(instinct.confidence)}%\n"
        f"- Observations: {instinct.observations}\n"
        f"- First seen: {instinct.first_seen[:10]}\n"
        f"- Last seen: {instinct.last_seen[:10]}\n"
        f"- Sessions: {instinct.sessions}/{instinct.total_sessions}\n"
        f"- Status: {instinct.status}\n"
        f"- Rule: {instinct.rule}\n"
    )


def instinct_slug(instinct: Instinct) -> str:
    text = "".join(ch if ch.isalnum() else "-" for ch in instinct.key.lower())
    return "-".join(part for part in text.split("-") if part)[:80] or "instinct"


def daily_summary(plan_: LearningPlan, config: LearningConfig) -> str:
    """The day's rollup: the window, what was found, the instincts and the rules."""
    lines = [
        f"# Learning summary — {plan_.now[:10]}",
        "",
        f"- Window: {config.window_days:g} days, {plan_.observations} observations over "
        f"{plan_.sessions} sessions",
        f"- Patterns: {len(plan_.scored)} found, {plan_.dropped} below "
        f"{percent(config.drop_below)}% dropped",
        f"- Instincts: {len(plan_.active)} active, {len(plan_.promoted)} promoted "
        f"({len(plan_.newly_promoted)} new), {len(plan_.archived)} archived by this run",
        "",
    ]
    live = plan_.promoted + plan_.active
    if live:
        lines += ["| instinct | confidence | seen | sessions | status |", "|---|---|---|---|---|"]
        lines += [
            f"| {_title(i)} | {percent(i.confidence)}% | {i.observations}x | "
            f"{i.sessions}/{i.total_sessions} | {i.status} |"
            for i in live
        ]
    return "\n".join(lines) + "\n"
