"""The human review: a person applies, refuses or patches each suggestion.

Applying performs the real edit of the destination (``core.suggestions.change`` on the file
as it is now, not as it was when the suggestion was drafted), atomically (``write_atomic``),
after copying the file to ``.cortex/backups/review/``; then the decision and its audit entry
(who, when, what, the diff, the backup) are recorded in one transaction. If that record
cannot be written the file is put back, so no change is ever left without its audit line.
This is the only path by which Cortex edits a file outside ``.cortex/`` and
``.claude/rules/cortex-*``.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from cortexmem.core.suggestions import change, diff
from cortexmem.errors import CortexError, NotFound
from cortexmem.model import Suggestion, utc_now
from cortexmem.project.files import write_atomic
from cortexmem.services.context import Context
from cortexmem.services.suggest import read_target, target_path
from cortexmem.store.protocols import AuditEntry

BACKUP_DIR = Path("backups") / "review"


def find(ctx: Context, ref: str) -> Suggestion:
    """The suggestion whose id is or starts with ``ref``."""
    store = ctx.require("project")
    found = store.find_suggestions(ref)
    exact = [s for s in found if s.id == ref]
    if exact:
        return exact[0]
    if not found:
        raise NotFound(f"no suggestion {ref!r} (see `cortex review`)")
    if len(found) > 1:
        raise CortexError(f"{ref!r} names {len(found)} suggestions; give more of the id")
    return found[0]


def pending(ctx: Context, limit: int = 1000) -> list[Suggestion]:
    store = ctx.store("project")
    return store.suggestions("pending", limit) if store is not None else []


def preview(ctx: Context, suggestion: Suggestion, text: str | None = None) -> tuple[str, str]:
    """(the file's content after the change, the diff) against the file as it is now."""
    before = read_target(ctx, suggestion.target)
    try:
        after = change(suggestion.destination, before, text or suggestion.text, suggestion.title)
    except ValueError as exc:  # settings that are not JSON, a fragment that is not an object
        raise CortexError(f"cannot apply {suggestion.id} to {suggestion.target}: {exc}") from None
    return after, diff(before, after, suggestion.target)


def _check_target(target: str) -> None:
    path = PurePosixPath(target)
    if path.is_absolute() or ".." in path.parts or not path.parts:
        raise CortexError(f"refusing to write outside the project: {target!r}")


@dataclass(frozen=True)
class Decision:
    suggestion: Suggestion
    path: str | None = None
    backup: str | None = None
    diff: str = ""

    def to_dict(self) -> dict[str, object]:
        return {
            "suggestion": self.suggestion.to_dict(),
            "path": self.path,
            "backup": self.backup,
            "diff": self.diff,
        }


def _undecided(suggestion: Suggestion) -> None:
    if suggestion.status != "pending":
        raise CortexError(f"suggestion {suggestion.id} was already {suggestion.status}")


def apply(ctx: Context, ref: str, *, who: str, text: str | None = None) -> Decision:
    """Apply a pending suggestion (``text``: a person's patched version of it)."""
    suggestion = find(ctx, ref)
    _undecided(suggestion)
    _check_target(suggestion.target)
    patched = text is not None and text.strip() != suggestion.text.strip()
    final = text.strip() if text is not None and text.strip() else suggestion.text
    after, shown = preview(ctx, suggestion, final)
    path = target_path(ctx, suggestion.target)
    now = utc_now()
    backup = None
    if path.is_file():
        folder = ctx.paths.data_dir / BACKUP_DIR
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        flat = suggestion.target.replace("/", "__")
        backup_path = folder / f"{now.replace(':', '').replace('.', '')}-{flat}"
        shutil.copy2(path, backup_path)
        backup = str(backup_path)
    existed = path.is_file()
    write_atomic(path, after)
    decided = replace(
        suggestion,
        status="modified" if patched else "applied",
        text=final,
        after=after,
        decided_at=now,
    )
    entry = AuditEntry(
        None, now, who, "patch" if patched else "apply", suggestion.id, suggestion.target,
        shown, backup,
    )  # fmt: skip
    try:
        ctx.writable("project").decide_suggestion(decided, entry)
    except BaseException:  # no change without its audit line: put the file back
        if backup is not None:
            shutil.copy2(backup, path)
        elif not existed:
            path.unlink(missing_ok=True)
        raise
    return Decision(decided, str(path), backup, shown)


def refuse(ctx: Context, ref: str, *, who: str, reason: str = "") -> Decision:
    suggestion = find(ctx, ref)
    _undecided(suggestion)
    now = utc_now()
    decided = replace(suggestion, status="refused", decided_at=now)
    entry = AuditEntry(None, now, who, "refuse", suggestion.id, suggestion.target, reason)
    ctx.writable("project").decide_suggestion(decided, entry)
    return Decision(decided)
