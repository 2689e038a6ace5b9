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

import contextlib
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from cortexmem.core.suggestions import change, diff, holds
from cortexmem.errors import CortexError, NotFound
from cortexmem.model import Suggestion, utc_now
from cortexmem.project.files import write_atomic
from cortexmem.project.locks import flocked
from cortexmem.services.context import Context
from cortexmem.services.suggest import target_path
from cortexmem.store.protocols import AuditEntry

BACKUP_DIR = Path("backups") / "review"
LOCK_NAME = "review.lock"
LOCK_WAIT = 10.0


def find(ctx: Context, ref: str) -> Suggestion:
    """The suggestion whose id is or starts with ``ref``."""
    ref = ref.strip()
    if not ref:  # an unset shell variable must not name every suggestion at once
        raise CortexError("give a suggestion's id (see `cortex review`)")
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
    """(the file's content after the change, the diff) against the file as it is now: what
    applying would write. A file that already says it gets no diff (applying records the
    decision and writes nothing), nor does a suggestion already decided."""
    before, _ = _read(ctx, suggestion)
    final = text.strip() if text is not None and text.strip() else suggestion.text
    if suggestion.status != "pending" or holds(suggestion.destination, before, final):
        return before, ""
    return _changed(suggestion, before, final)


def _changed(suggestion: Suggestion, before: str, text: str) -> tuple[str, str]:
    """(the file's content after ``text`` goes into ``before``, the diff)."""
    try:
        after = change(suggestion.destination, before, text, suggestion.title)
    except ValueError as exc:  # settings that are not JSON, a fragment that is not an object
        raise CortexError(f"cannot apply {suggestion.id} to {suggestion.target}: {exc}") from None
    return after, diff(before, after, suggestion.target)


def _read(ctx: Context, suggestion: Suggestion) -> tuple[str, str]:
    """The target file's text with its lines ending in ``\n``, and the line ending it uses.
    A file that is not there reads as empty; one that cannot be read as UTF-8 text is never
    taken for empty (the edit would replace what the person wrote)."""
    path = target_path(ctx, suggestion.target)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return "", "\n"
    except OSError as exc:
        raise CortexError(f"cannot read {suggestion.target}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise CortexError(
            f"{suggestion.target} is not UTF-8 text: Cortex does not edit it "
            f"(refuse {suggestion.id}, or convert the file and apply again)"
        ) from None
    # The file keeps the line ending most of its lines have (a CRLF file stays CRLF; one
    # stray CRLF line does not turn an LF file into a CRLF one).
    crlf = text.count("\r\n")
    ending = "\r\n" if crlf > text.count("\n") - crlf else "\n"
    return text.replace("\r\n", "\n"), ending


def _check_target(ctx: Context, target: str) -> None:
    """Nothing outside the project: no absolute path, no "..", and no symlink along the way
    that leads out of the working tree (or, for ``.cortex/…``, the project's data folder)."""
    path = PurePosixPath(target)
    if path.is_absolute() or ".." in path.parts or not path.parts:
        raise CortexError(f"refusing to write outside the project: {target!r}")
    if target.startswith(".cortex/"):
        inside = [ctx.paths.data_dir]
    else:  # this worktree, or the repository's main one (a `.claude` shared by a symlink)
        inside = [ctx.paths.worktree or ctx.paths.root, ctx.paths.root]
    real = target_path(ctx, target).resolve()
    if not any(real.is_relative_to(folder.resolve()) for folder in inside):
        raise CortexError(
            f"refusing to write outside the project: {target} leads to {real} (a symlink)"
        )


def _check_writable(path: Path, target: str) -> None:
    """A file its owner made read-only is not replaced: the edit goes in by a rename, which
    the file's own mode does not stop (nor does anything stop root)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return
    if not mode & 0o222 or not os.access(path, os.W_OK):
        raise CortexError(
            f"{target} is read-only: Cortex does not replace it (make it writable and apply "
            "again, or refuse the suggestion)"
        )


@contextlib.contextmanager
def _deciding(ctx: Context) -> Iterator[None]:
    """One decision at a time in a project: two reviews applying at once would each write the
    file as they read it, and one edit would be lost. Waits up to ``LOCK_WAIT`` seconds."""
    folder = ctx.paths.data_dir
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    with flocked(folder / LOCK_NAME, wait=LOCK_WAIT) as held:
        if not held:
            raise CortexError("another review is deciding a suggestion; try again")
        yield


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
    find(ctx, ref)  # no store, no such suggestion: said before any lock is made
    with _deciding(ctx):
        return _apply(ctx, find(ctx, ref), who=who, text=text)


def _apply(ctx: Context, suggestion: Suggestion, *, who: str, text: str | None) -> Decision:
    _undecided(suggestion)
    _check_target(ctx, suggestion.target)
    patched = text is not None and text.strip() != suggestion.text.strip()
    final = text.strip() if text is not None and text.strip() else suggestion.text
    before, ending = _read(ctx, suggestion)
    after, shown = _changed(suggestion, before, final)
    path = target_path(ctx, suggestion.target)
    now = utc_now()
    if after == before or holds(suggestion.destination, before, final):
        # The person (or an earlier edit) already wrote it: decided, nothing to write.
        done = replace(suggestion, status="modified" if patched else "applied", text=final,
                       after=before, decided_at=now)  # fmt: skip
        entry = AuditEntry(None, now, who, "patch" if patched else "apply", suggestion.id,
                           suggestion.target, "", None)  # fmt: skip
        ctx.writable("project").decide_suggestion(done, entry)
        return Decision(done, str(path), None, "")
    _check_writable(path, suggestion.target)
    backup = None
    if path.is_file():
        folder = ctx.paths.data_dir / BACKUP_DIR
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        flat = suggestion.target.replace("/", "__")
        backup_path = folder / f"{now.replace(':', '').replace('.', '')}-{flat}"
        shutil.copy2(path, backup_path)
        backup = str(backup_path)
    existed = path.is_file()
    write_atomic(path, after.replace("\n", ending))
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
    find(ctx, ref)  # no store, no such suggestion: said before any lock is made
    with _deciding(ctx):
        suggestion = find(ctx, ref)
        _undecided(suggestion)
        now = utc_now()
        decided = replace(suggestion, status="refused", decided_at=now)
        entry = AuditEntry(None, now, who, "refuse", suggestion.id, suggestion.target, reason)
        ctx.writable("project").decide_suggestion(decided, entry)
        return Decision(decided)
