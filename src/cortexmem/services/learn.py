"""The learning loop's run: observations of the window → instincts → generated rules.

``learn`` reads the project's observations of the rolling window (sessions marked automated
left out: Cortex's own and scripted ``claude -p`` / SDK runs), plans stages 2-5
(``core.learning.plan``) and, unless it is a dry run, writes in one transaction the
instincts and the loop's state, then the views of them:

* ``.cortex/learning/instincts/<pattern>.md`` (active and promoted; archived ones under
  ``archive/``) and ``.cortex/learning/daily-summary.md``;
* ``.claude/rules/cortex-generated-rules.md``: the promoted instincts, which Claude Code loads
  in every session (rewritten only when its content changes; removed when nothing is promoted).

Every parameter comes from ``.cortex/learning.yaml`` (``LearningConfig``; a missing or invalid
file falls back to the defaults, and says why in the report). ``maybe_learn`` is the check at
Stop: one small query when nothing is due.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from cortexmem.core.learning import (
    LearningConfig,
    LearningPlan,
    daily_summary,
    instinct_markdown,
    instinct_slug,
    plan,
    rules_markdown,
)
from cortexmem.model import format_time, parse_time
from cortexmem.project.files import write_atomic
from cortexmem.project.git import exclude_from_git
from cortexmem.project.paths import ProjectPaths
from cortexmem.services.context import Context

CONFIG_FILE = "learning.yaml"
LEARNING_DIR = "learning"
RULES_FILE = Path(".claude") / "rules" / "cortex-generated-rules.md"
LAST_RUN = "last_run"
LAST_MARK = "last_mark"
LAST_SKILLS = "last_skills"


def config_path(paths: ProjectPaths) -> Path:
    return paths.data_dir / CONFIG_FILE


def load_config(paths: ProjectPaths) -> tuple[LearningConfig, list[str]]:
    """The loop's parameters: the defaults, overridden by ``.cortex/learning.yaml`` when it
    exists and reads; what was ignored, and why (never raises)."""
    path = config_path(paths)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return LearningConfig(), []
    except (OSError, UnicodeDecodeError) as exc:
        return LearningConfig(), [f"{path}: cannot be read ({exc}); defaults used"]
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        return LearningConfig(), [f"{path}: not valid YAML ({exc}); defaults used"]
    config, problems = LearningConfig.from_mapping(data)
    return config, [f"{path}: {p}" for p in problems]


def rules_path(paths: ProjectPaths) -> Path:
    return (paths.worktree or paths.root) / RULES_FILE


@dataclass
class LearnReport:
    plan: LearningPlan
    config: LearningConfig
    dry_run: bool
    problems: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    suggested: int = 0
    # When the window holds nothing: the newest observation before it (imported history is
    # months old; ``--as-of`` analyses it), else None.
    latest_before: str | None = None

    def to_dict(self) -> dict[str, Any]:
        p = self.plan
        return {
            "at": p.now,
            "dry_run": self.dry_run,
            "observations": p.observations,
            "sessions": p.sessions,
            "patterns": len(p.scored),
            "dropped": p.dropped,
            "active": [i.to_dict() for i in p.active],
            "promoted": [i.to_dict() for i in p.promoted],
            "newly_promoted": [i.key for i in p.newly_promoted],
            "archived": [i.key for i in p.archived],
            "top_patterns": [s.to_dict() for s in p.scored[:20]],
            "rules": rules_markdown(p.promoted),
            "problems": self.problems,
            "written": self.written,
            "suggestions_queued": self.suggested,
            "latest_before_window": self.latest_before,
        }


def learn(
    ctx: Context,
    *,
    now: datetime | None = None,
    dry_run: bool = False,
    write_files: bool = True,
    suggest: bool = True,
    edit_tools: frozenset[str] = frozenset(),
) -> LearnReport:
    """One run of the loop on the project store (see the module); then, unless it is a dry
    run, the suggestions its promotions and the recurring failures make are queued for review
    (templates only: a model is never waited for here). ``edit_tools``: the host's tools that
    change files (its ``Dialect``), the edit steps of workflows."""
    now = now or datetime.now(UTC)
    config, problems = load_config(ctx.paths)
    store = ctx.store("project") if dry_run else ctx.writable("project")
    if store is None:
        empty = plan([], [], now, config)
        return LearnReport(empty, config, dry_run, problems)
    since = format_time(now - timedelta(days=config.window_days))
    observations = store.observations_since(since)
    previous = store.instincts()
    automated = frozenset(store.automated_sessions())
    result = plan(previous, observations, now, config, automated, edit_tools)
    report = LearnReport(result, config, dry_run, problems)
    if result.observations == 0:  # none in the window (as of ``now``, not after it)
        report.latest_before = store.latest_observation()
    if dry_run:
        return report
    # Only what changed is written back (archived instincts stay as they were).
    store.save_instincts(
        result.instincts,
        {LAST_RUN: result.now, LAST_MARK: str(store.observation_mark())},
    )
    if write_files:
        report.written = write_views(ctx.paths, result, config)
    if suggest:
        from cortexmem.services.suggest import SOURCES, WEEKLY, propose

        last = store.learning_state(LAST_SKILLS)
        weekly = last is None or now - parse_time(last) >= timedelta(days=config.skills_every_days)
        sources = [s for s in SOURCES if weekly or s not in WEEKLY]
        report.suggested = len(propose(ctx, config, sources=sources, now=now).queued)
        if weekly:
            store.save_instincts([], {LAST_SKILLS: result.now})
    return report


def write_views(paths: ProjectPaths, result: LearningPlan, config: LearningConfig) -> list[str]:
    """The instinct files, the daily summary and the generated rules; the files changed."""
    written: list[str] = []
    folder = paths.data_dir / LEARNING_DIR / "instincts"
    archive = folder / "archive"
    for inst in result.instincts:
        name = instinct_slug(inst) + ".md"
        target, other = (archive, folder) if inst.status == "archived" else (folder, archive)
        with contextlib.suppress(FileNotFoundError):
            (other / name).unlink()
        if write_atomic(target / name, instinct_markdown(inst), private=True):
            written.append(str(target / name))
    summary = paths.data_dir / LEARNING_DIR / "daily-summary.md"
    if write_atomic(summary, daily_summary(result, config), private=True):
        written.append(str(summary))
    rules = rules_path(paths)
    text = rules_markdown(result.promoted)
    if text:
        if paths.repo is not None:  # private like the store: never shown as a change to commit
            with contextlib.suppress(OSError):
                exclude_from_git(str(paths.repo.common_dir), "/" + RULES_FILE.as_posix())
        if write_atomic(rules, text, private=True):
            written.append(str(rules))
    elif rules.is_file():
        rules.unlink()
        written.append(str(rules))
    return written


def is_due(ctx: Context, now: datetime | None = None) -> bool:
    """Whether the loop should run: new observations since its last run, and at least
    ``run_every_hours`` since then. Cheap: two lookups in the store."""
    store = ctx.store("project")
    if store is None:
        return False
    last = store.learning_state(LAST_RUN)
    if last is None:
        return store.observation_mark() > 0
    mark = store.learning_state(LAST_MARK)
    if mark is not None and mark == str(store.observation_mark()):
        return False
    config, _ = load_config(ctx.paths)
    now = now or datetime.now(UTC)
    try:
        return now - parse_time(last) >= timedelta(hours=config.run_every_hours)
    except ValueError:
        return True


def maybe_learn(
    ctx: Context, now: datetime | None = None, edit_tools: frozenset[str] = frozenset()
) -> LearnReport | None:
    """Run the loop when it is due (at Stop, off the hook's path); None when it was not."""
    if not is_due(ctx, now):
        return None
    return learn(ctx, now=now, edit_tools=edit_tools)


def review_status(ctx: Context) -> dict[str, Any]:
    """The loop's state for ``cortex status`` and the briefing: the last run, instincts and
    rules, the suggestions waiting, and the alert when the queue is over ``review_alert``."""
    store = ctx.store("project")
    if store is None:
        return {"pending": 0, "alert": None, "last_run": None, "instincts": 0, "rules": 0}
    config, _ = load_config(ctx.paths)
    waiting = store.count_suggestions("pending")
    live = store.instincts(("active", "promoted"))
    return {
        "pending": waiting,
        "alert": review_alert(waiting, config.review_alert),
        "last_run": store.learning_state(LAST_RUN),
        "instincts": sum(1 for i in live if i.status == "active"),
        "rules": sum(1 for i in live if i.status == "promoted"),
    }


def review_alert(waiting: int, threshold: int) -> str | None:
    if waiting < max(1, threshold):
        return None
    return f"{waiting} suggestions wait for your review: run `cortex review`"
