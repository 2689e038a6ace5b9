"""The dream (``cortex dream``): the consolidation pass, dry-run by default.

It drafts the failures repeated ``recurring_failures`` (3) times or more into suggestions
(a person decides: nothing is ever merged into a permanent tier), compacts what the loop no
longer needs (observations older than the window plus the archive age), and checks the tier-1
files Cortex wrote or proposed (``.claude/rules/cortex-*.md`` and the memory files applied from
suggestions) for dead links, duplicates and entries whose instinct was archived. Every pass
writes a timestamped report under ``.cortex/dream/``. ``apply`` queues the suggestions,
deletes the old observations and removes repeated entries from Cortex's own ``cortex-*`` files;
anything else found is reported, never edited. Two dreams never overlap: a second one is
refused while the first holds the lock.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from cortexmem.core.hygiene import (
    Finding,
    dead_links,
    duplicates,
    report_markdown,
    without_repeated_entries,
)
from cortexmem.core.suggestions import select
from cortexmem.errors import CortexError
from cortexmem.model import format_time, parse_time
from cortexmem.project.files import write_atomic
from cortexmem.project.paths import ensure_data_dir
from cortexmem.services.briefing_cache import PidLock
from cortexmem.services.context import Context
from cortexmem.services.learn import load_config
from cortexmem.services.suggest import failure_drafts, propose, read_target

LOCK = "dream.lock"
REPORTS = "dream"
LAST_DREAM = "last_dream"
RUN_EVERY = timedelta(days=1)


class DreamBusy(CortexError):
    """Another dream holds the lock."""


@dataclass
class DreamReport:
    at: str
    dry_run: bool
    drafts: list[str] = field(default_factory=list)
    queued: int = 0
    compacted: int = 0
    findings: list[Finding] = field(default_factory=list)
    fixed: list[str] = field(default_factory=list)
    report: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "dry_run": self.dry_run,
            "drafts": self.drafts,
            "queued": self.queued,
            "compacted": self.compacted,
            "findings": [f.to_dict() for f in self.findings],
            "fixed": self.fixed,
            "report": self.report,
        }


def tier1_files(ctx: Context) -> dict[str, Path]:
    """Cortex's rule files and the memory files applied from its suggestions."""
    worktree = ctx.paths.worktree or ctx.paths.root
    files = {str(p.relative_to(worktree)): p for p in (worktree / ".claude" / "rules").glob(
        "cortex-*.md")}  # fmt: skip
    store = ctx.store("project")
    if store is not None:
        for s in store.suggestions("applied") + store.suggestions("modified"):
            if s.destination == "memory" and (worktree / s.target).is_file():
                files[s.target] = worktree / s.target
    return dict(sorted(files.items()))


def _obsolete(ctx: Context) -> list[Finding]:
    store = ctx.store("project")
    if store is None:
        return []
    archived = {i.key for i in store.instincts(("archived",))}
    return [
        Finding("obsolete", s.target, f"its pattern ({s.source[9:]}) is no longer seen")
        for s in store.suggestions("applied") + store.suggestions("modified")
        if s.destination == "memory" and s.source.startswith("instinct:")
        and s.source[9:] in archived
    ]  # fmt: skip


def dream(ctx: Context, *, apply: bool = False, now: datetime | None = None) -> DreamReport:
    now = now or datetime.now(UTC)
    ensure_data_dir(ctx.paths.data_dir)  # private, and kept out of git like the store's
    try:
        lock = PidLock(str(ctx.paths.data_dir / LOCK), wait=0, stale_after=3600)
        lock.__enter__()
    except TimeoutError:
        raise DreamBusy("another dream is running for this project; try again later") from None
    try:
        return _dream(ctx, apply, now)
    finally:
        lock.__exit__(None, None, None)


def _dream(ctx: Context, apply: bool, now: datetime) -> DreamReport:
    config, _ = load_config(ctx.paths)
    report = DreamReport(format_time(now), dry_run=not apply)
    store = ctx.writable("project") if apply else ctx.store("project")
    drafts = failure_drafts(ctx, config, now)
    known = store.suggestion_keys() if store is not None else set()
    fresh = select(drafts, known, {d.target: read_target(ctx, d.target) for d in drafts})
    report.drafts = [f"{d.title} ({d.recurrence}x): {d.text}" for d in fresh]
    if apply and fresh:
        report.queued = len(propose(ctx, config, sources=[failure_drafts], now=now).queued)
    if store is not None:
        keep = timedelta(days=config.window_days + config.archive_after_days)
        report.compacted = store.prune_observations(format_time(now - keep), dry_run=not apply)
    files = tier1_files(ctx)
    texts = {
        name: path.read_text(encoding="utf-8", errors="replace") for name, path in files.items()
    }

    def exists(name: str, target: str) -> bool:
        base = files[name].parent
        worktree = ctx.paths.worktree or ctx.paths.root
        return (base / target).exists() or (worktree / target).exists()

    for name, text in texts.items():
        report.findings += dead_links(name, text, exists)
    report.findings += duplicates(texts) + _obsolete(ctx)
    if apply:
        for name, text in texts.items():
            if Path(name).name.startswith("cortex-"):
                cleaned = without_repeated_entries(text)
                if cleaned != text and write_atomic(files[name], cleaned, private=True):
                    report.fixed.append(name)
    folder = ctx.paths.data_dir / REPORTS
    stamp = report.at.replace(":", "").replace(".", "")
    path = folder / f"{stamp}{'' if apply else '-dry-run'}.md"
    write_atomic(path, report_markdown(report.at, not apply, report.drafts, report.compacted,
                                       report.findings, report.fixed), private=True)  # fmt: skip
    report.report = str(path)
    if store is not None and apply:
        store.save_instincts([], {LAST_DREAM: report.at})
    elif store is not None:
        ctx.writable("project").save_instincts([], {LAST_DREAM + "_dry": report.at})
    return report


def maybe_dream(ctx: Context, now: datetime | None = None) -> DreamReport | None:
    """The daily dream from Stop: a dry run (its report waits for a person), once a day."""
    store = ctx.store("project")
    if store is None:
        return None
    now = now or datetime.now(UTC)
    last = store.learning_state(LAST_DREAM + "_dry")
    if last is not None and now - parse_time(last) < RUN_EVERY:
        return None
    try:
        return dream(ctx, now=now)
    except DreamBusy:
        return None
