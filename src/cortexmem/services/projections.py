"""Projections meant for git: ``.cortex/decisions.md``, ``.cortex/decisions-archive.md`` and
``.cortex/active-plan.md``, so a team shares the why behind the code through the repository.

Regenerated from the store at every Stop. Stable: decisions in the order they were made (then
by id), no generation timestamps, and a file is rewritten only when its content changed, so an
unchanged memory makes no diff. A file that a merge left with conflict markers simply differs
from what the store says and is rewritten whole: the store is the source of truth. The three
files are re-included in ``.cortex/.gitignore`` (which ignores everything else there).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from cortexmem.core.briefing import step_line
from cortexmem.core.filters import MemoryFilter
from cortexmem.model import Memory
from cortexmem.project.files import write_atomic
from cortexmem.services.brief import active_plan
from cortexmem.services.context import Context

FILES = ("decisions.md", "decisions-archive.md", "active-plan.md")
GIT_INCLUDE = "# Projections Cortex keeps for git (regenerated from the store):\n" + "".join(
    f"!{name}\n" for name in FILES
)


@dataclass
class ProjectionReport:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)


def _decision_line(m: Memory) -> str:
    where = m.branch or ""
    if m.source_context.commit:
        where += f"@{m.source_context.commit[:7]}"
    meta = ", ".join(p for p in (m.created_at[:10], where, f"confidence {m.confidence:.2f}") if p)
    body = " ".join(m.content.split())
    # No memory id: ids differ between machines, and the file must not churn between them.
    return f"- {body} ({meta})"


def decisions_markdown(memories: list[Memory], title: str, empty: str) -> str:
    ordered = sorted(memories, key=lambda m: (m.created_at, m.id))
    lines = [f"# {title}", ""]
    lines += [_decision_line(m) for m in ordered] or [empty]
    return "\n".join(lines) + "\n"


def plan_markdown(ctx: Context, branch: str | None) -> str:
    plan = active_plan(ctx, branch)
    if plan is None:
        return "# Active plan\n\nNo unfinished plan.\n"
    done = sum(1 for s in plan.steps if s.status == "completed")
    lines = [
        "# Active plan",
        "",
        f"{len(plan.steps)} steps, {done} done (branch {plan.branch or '-'}, since "
        f"{(plan.when or '')[:10]}).",
        "",
    ]
    lines += [step_line(s) for s in plan.steps]
    return "\n".join(lines) + "\n"


def _include_in_git(data_dir: Path) -> None:
    ignore = data_dir / ".gitignore"
    try:
        text = ignore.read_text(encoding="utf-8")
    except OSError:
        return
    if all(f"!{name}" in text.split() for name in FILES):
        return
    write_atomic(str(ignore), text.rstrip("\n") + "\n" + GIT_INCLUDE)


def write_projections(ctx: Context) -> ProjectionReport:
    """Regenerate the three files from the project store (written only when changed)."""
    report = ProjectionReport()
    store = ctx.store("project")
    if store is None:
        return report
    branch, _ = ctx.paths.branch_and_commit()
    active = list(store.iter_memories(MemoryFilter(types=("decision",), statuses=("active",))))
    old = list(
        store.iter_memories(MemoryFilter(types=("decision",), statuses=("archived", "superseded")))
    )
    contents = {
        "decisions.md": decisions_markdown(active, "Decisions", "No decisions recorded yet."),
        "decisions-archive.md": decisions_markdown(
            old, "Decisions archive (superseded or archived)", "Nothing archived."
        ),
        "active-plan.md": plan_markdown(ctx, branch),
    }
    data_dir = ctx.paths.data_dir
    ours = _last_written(data_dir)
    for name, text in contents.items():
        target = data_dir / name
        generated = text
        if name != "active-plan.md":
            text = keep_foreign_lines(generated, _read(target), set(ours.get(name, [])))
        changed = write_atomic(str(target), text)
        ours[name] = [ln for ln in generated.splitlines() if ln.startswith("- ")]
        (report.written if changed else report.unchanged).append(name)
    write_atomic(
        str(data_dir / "cache" / LAST_WRITTEN), json.dumps(ours, sort_keys=True), private=True
    )
    _include_in_git(data_dir)
    return report


LAST_WRITTEN = "projections.json"
FOREIGN_HEADING = "## From the repository (not in this store yet)"
_MARKERS = ("<<<<<<<", "=======", ">>>>>>>", "|||||||")


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""


def _last_written(data_dir: Path) -> dict[str, list[str]]:
    try:
        data = json.loads((data_dir / "cache" / LAST_WRITTEN).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def keep_foreign_lines(generated: str, existing: str, ours: set[str]) -> str:
    """``generated`` plus the entries of ``existing`` that neither this store nor Cortex's
    last write produced: a teammate's decisions arriving with ``git pull`` are kept (in their
    own section, in their order) instead of being overwritten. Conflict markers are dropped."""
    have = set(generated.splitlines())
    foreign = [
        ln for ln in existing.splitlines()
        if ln.startswith("- ") and ln not in have and ln not in ours
        and not ln.startswith(_MARKERS)
    ]  # fmt: skip
    if not foreign:
        return generated
    return (
        generated.rstrip("\n")
        + "\n\n"
        + FOREIGN_HEADING
        + "\n\n"
        + "\n".join(dict.fromkeys(foreign))
        + "\n"
    )
