"""``cortex init --setup`` / ``--uninstall``: Cortex's hooks in a Claude Code settings file and
its rules file beside it. The merging itself is pure (``hosts.claude_code.settings``); this
module reads, backs up and writes.

Files, per scope:

* project: ``<top of the working tree>/.claude/settings.json`` and
  ``.claude/rules/cortex-memory-instructions.md``. The working tree is where Claude Code is
  started (and reads ``.claude/`` from); outside git it is the project root ``cortex`` uses.
* user: ``~/.claude/settings.json`` and ``~/.claude/rules/`` (``$HOME`` is honoured).

The project scope also merges Cortex's MCP server (``cortex mcp-server``) into ``.mcp.json``
beside ``.claude/`` (``hosts.claude_code.mcp_config``; a server named ``cortex`` that is not ours
is left alone), and ``--uninstall`` takes it out again. User-scope MCP servers live in
``~/.claude.json``, which belongs to Claude Code: for them the report gives the ``claude mcp add``
command instead. ``.mcp.json`` is backed up before a change only when it holds more than ours.

Safety rules: nothing is written when the settings file cannot be read as a JSON object; a
settings file that exists and will change is first copied to
``settings.json.cortex-backup-<UTC time>`` beside it; every write goes to a temporary file in the
same folder and is renamed over the target (a symlinked settings file is written through its
link); the rules file is (over)written or removed only when absent or carrying ``MARKER``.
"""

from __future__ import annotations

import difflib
import json
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from cortexmem.errors import CortexError
from cortexmem.hosts.claude_code import mcp_config
from cortexmem.hosts.claude_code.settings import (
    PROGRAM,
    SettingsShapeError,
    cortex_hooks,
    find_ours,
    merge_hooks,
    remove_hooks,
)
from cortexmem.project.files import write_atomic
from cortexmem.project.paths import ProjectPaths

Scope = Literal["project", "user"]

SETTINGS_NAME = "settings.json"
MCP_NAME = ".mcp.json"
RULES_NAME = "cortex-memory-instructions.md"
BACKUP_INFIX = ".cortex-backup-"

# Claude Code strips block HTML comments when it loads a rules file, so the marker costs no
# context. A file without it is a person's own and is never overwritten or removed.
MARKER = "<!-- cortex-managed"

RULES_TEXT = f"""\
{MARKER}: written by `cortex init --setup`; `cortex init --uninstall` removes it. \
Delete this line to keep your own edits: Cortex then leaves the file alone. -->
# Memory tags (Cortex)

Cortex keeps this project's memory across sessions. After each turn it reads the assistant's \
replies and stores every `[MEMORY: ...]` tag it finds there as a memory that later sessions \
can recall.

Two forms:

- `[MEMORY: text]` records `text`.
- `[MEMORY:type] text` records `text` as one type: architecture, decision, pattern, gotcha, \
context or progress.

Worth a tag:

- a decision, with the alternatives rejected and why: `[MEMORY:decision] SQLite WAL for the \
local store, not PostgreSQL: no server to run; PostgreSQL only for team sync`
- a gotcha, behaviour that surprised once and would surprise again
- the fix that resolved an error, together with the error
- a preference the user stated
- how the code is organised (architecture), a convention it follows (pattern), where \
unfinished work stands (progress)

Each tag is one line that makes sense on its own and holds no secrets (keys, tokens, \
passwords). Routine work needs no tag: edits, commands and test runs are captured from the \
session itself.
"""


@dataclass(frozen=True)
class Target:
    """Where one scope's files live."""

    scope: Scope
    settings_path: Path
    rules_path: Path
    mcp_path: Path | None = None  # the project's .mcp.json; None for the user scope

    @classmethod
    def for_scope(cls, scope: Scope, project_dir: Path | None = None) -> Target:
        if scope == "user":
            base = Path.home() / ".claude"
        elif project_dir is None:
            raise ValueError("the project scope needs a project folder")
        else:
            base = project_dir / ".claude"
        mcp = None if scope == "user" else base.parent / MCP_NAME
        return cls(scope, base / SETTINGS_NAME, base / "rules" / RULES_NAME, mcp)


def settings_root(paths: ProjectPaths) -> Path:
    """The folder whose ``.claude/`` Claude Code reads: the top of the current working tree in
    git (each worktree has its own checked-out ``.claude/``), else the project root."""
    return paths.repo.worktree if paths.repo is not None else paths.root


def hook_command() -> str:
    """The hook program as one shell word: the ``cortex-hook`` installed beside the running
    interpreter (the same environment as this ``cortex``), else the one on PATH, else the bare
    name. Not resolved through symlinks: a virtualenv's python is a link out of it."""
    folder = Path(sys.executable).absolute().parent
    for name in (PROGRAM, PROGRAM + ".exe"):
        if (folder / name).is_file():
            return shlex.quote(str(folder / name))
    found = shutil.which(PROGRAM)
    return shlex.quote(found) if found else PROGRAM


def cortex_command() -> str:
    """The ``cortex`` program for ``.mcp.json`` (exec form: a path, not shell-quoted), found
    like ``hook_command``."""
    folder = Path(sys.executable).absolute().parent
    for name in (mcp_config.PROGRAM, mcp_config.PROGRAM + ".exe"):
        if (folder / name).is_file():
            return str(folder / name)
    return shutil.which(mcp_config.PROGRAM) or mcp_config.PROGRAM


@dataclass
class SettingsChange:
    path: Path
    existed: bool
    before: dict[str, Any]
    after: dict[str, Any]
    added: list[str] = field(default_factory=list)  # events that get a handler of ours
    updated: list[str] = field(default_factory=list)  # events whose handler of ours changed
    removed: list[str] = field(default_factory=list)  # events whose handler of ours went
    delete_file: bool = False  # uninstall left nothing but "{}" in a file only we filled
    backup: Path | None = None

    @property
    def changed(self) -> bool:
        return self.before != self.after or self.delete_file

    def diff(self) -> str:
        old = _dump(self.before).splitlines(keepends=True) if self.existed else []
        new = [] if self.delete_file else _dump(self.after).splitlines(keepends=True)
        name = str(self.path)
        return "".join(
            difflib.unified_diff(
                old, new, fromfile=name if self.existed else "/dev/null", tofile=name
            )
        )


@dataclass
class RulesChange:
    path: Path
    # setup: created | updated | unchanged | kept (a file without our marker)
    # uninstall: removed | kept | absent
    action: str


@dataclass
class Report:
    action: Literal["setup", "uninstall"]
    scope: Scope
    dry_run: bool
    command: str | None
    settings: SettingsChange
    rules: RulesChange
    notes: list[str] = field(default_factory=list)
    mcp: SettingsChange | None = None  # .mcp.json (project scope); names of servers in the lists
    mcp_command: str | None = None

    def to_dict(self) -> dict[str, Any]:
        s = self.settings
        return {
            "action": self.action,
            "scope": self.scope,
            "dry_run": self.dry_run,
            "hook_command": self.command,
            "settings": {
                "path": str(s.path),
                "changed": s.changed,
                "added": s.added,
                "updated": s.updated,
                "removed": s.removed,
                "deleted": s.delete_file,
                "backup": str(s.backup) if s.backup else None,
            },
            "rules": {"path": str(self.rules.path), "action": self.rules.action},
            "mcp": None if self.mcp is None else _mcp_dict(self.mcp, self.dry_run),
            "notes": self.notes,
            "diff": s.diff() if self.dry_run else None,
        }


# ------------------------------------------------------------------------------- the actions


def setup(
    target: Target, *, command: str | None = None, dry_run: bool = False, other: Path | None = None
) -> Report:
    """Merge Cortex's hooks into ``target``'s settings and write its rules file."""
    report = plan_setup(target, command=command, dry_run=dry_run, other=other)
    return report if dry_run else apply(report)


def uninstall(target: Target, *, dry_run: bool = False) -> Report:
    """Remove Cortex's hooks from ``target``'s settings and its rules file; nothing else."""
    report = plan_uninstall(target, dry_run=dry_run)
    return report if dry_run else apply(report)


def apply(report: Report) -> Report:
    """Write what ``report`` plans (fills in ``report.settings.backup``)."""
    _apply_settings(report.settings)
    if report.mcp is not None:
        _apply_mcp(report.mcp)
    rules = report.rules
    if rules.action in ("created", "updated"):
        write_atomic(rules.path, RULES_TEXT)
    elif rules.action == "removed":
        rules.path.unlink(missing_ok=True)
    return report


def plan_setup(
    target: Target, *, command: str | None = None, dry_run: bool = False, other: Path | None = None
) -> Report:
    """What ``setup`` would change, computed without writing anything. Raises ``CortexError``
    when the settings file cannot be read or merged into.

    ``other`` is the other scope's settings file: when it holds Cortex hooks with a different
    command, both would run on every event, and the report says so.
    """
    command = command or hook_command()
    before, existed = read_settings(target.settings_path)
    try:
        after = merge_hooks(before, cortex_hooks(command))
    except SettingsShapeError as exc:
        raise CortexError(f"{target.settings_path}: {exc}; nothing was changed") from None
    change = SettingsChange(target.settings_path, existed, before, after)
    old, new = find_ours(before), find_ours(after)
    change.added = [event for event in new if event not in old]
    change.updated = [event for event in new if event in old and old[event] != new[event]]

    rules_action = _rules_setup_action(target.rules_path)
    report = Report(
        "setup",
        target.scope,
        dry_run,
        command,
        change,
        RulesChange(target.rules_path, rules_action),
        mcp_command=(mcp_command := cortex_command()),
    )
    if target.mcp_path is not None:
        report.mcp = _plan_mcp_setup(target.mcp_path, mcp_command, report.notes)
    if other is not None and other != target.settings_path:
        report.notes.extend(_other_scope_notes(other, target.scope, new))
    return report


def plan_uninstall(target: Target, *, dry_run: bool = False) -> Report:
    """What ``uninstall`` would change, computed without writing anything."""
    before, existed = read_settings(target.settings_path)
    after = remove_hooks(before)
    change = SettingsChange(target.settings_path, existed, before, after)
    change.removed = list(find_ours(before))
    # A file that held nothing but our hooks goes with them (a backup is kept), unless it is a
    # symlink: the link belongs to whoever made it.
    change.delete_file = (
        existed and bool(change.removed) and not after and not target.settings_path.is_symlink()
    )

    rules = target.rules_path
    rules_action = "absent" if not rules.exists() else "removed" if _is_ours(rules) else "kept"
    report = Report(
        "uninstall", target.scope, dry_run, None, change, RulesChange(rules, rules_action)
    )
    if target.mcp_path is not None:
        report.mcp = _plan_mcp_uninstall(target.mcp_path)
    return report


def _plan_mcp_setup(path: Path, command: str, notes: list[str]) -> SettingsChange:
    before, existed = read_settings(path)
    try:
        after, action = mcp_config.merge_server(before, mcp_config.server_entry(command))
    except mcp_config.McpShapeError as exc:
        raise CortexError(f"{path}: {exc}; nothing was changed") from None
    change = SettingsChange(path, existed, before, after)
    if action == "added":
        change.added = [mcp_config.SERVER_NAME]
    elif action == "updated":
        change.updated = mcp_config.find_ours(after)
    elif action == "conflict":
        notes.append(
            f"{path} already has a server named {mcp_config.SERVER_NAME!r} that is not Cortex's;"
            f" it was left alone (add ours under another name: {command} mcp-server)"
        )
    return change


def _plan_mcp_uninstall(path: Path) -> SettingsChange:
    before, existed = read_settings(path)
    after, removed = mcp_config.remove_server(before)
    change = SettingsChange(path, existed, before, after, removed=removed)
    change.delete_file = existed and bool(removed) and not after and not path.is_symlink()
    return change


def _apply_mcp(change: SettingsChange) -> None:
    """Like the settings file, except that a file holding nothing but ours is not backed up
    (it is ours to recreate, and its backup would sit at the top of the working tree)."""
    if not change.changed:
        return
    others, _ = mcp_config.remove_server(change.before)
    if change.existed and others:
        change.backup = backup(change.path)
    if change.delete_file:
        change.path.unlink()
    else:
        write_atomic(change.path, _dump(change.after))


def _mcp_dict(change: SettingsChange, dry_run: bool) -> dict[str, Any]:
    return {
        "path": str(change.path),
        "changed": change.changed,
        "added": change.added,
        "updated": change.updated,
        "removed": change.removed,
        "deleted": change.delete_file,
        "backup": str(change.backup) if change.backup else None,
        "diff": change.diff() if dry_run else None,
    }


# -------------------------------------------------------------------------------- file access


def read_settings(path: Path) -> tuple[dict[str, Any], bool]:
    """The settings object and whether the file exists; ``{}`` for a missing or blank file."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return {}, False
    except UnicodeDecodeError:
        raise CortexError(f"{path} is not UTF-8 text; nothing was changed") from None
    if not text.strip():
        return {}, True
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CortexError(
            f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno});"
            " fix it and run again, nothing was changed"
        ) from None
    if not isinstance(data, dict):
        kind = _JSON_KINDS.get(type(data), "value")
        raise CortexError(f"{path} holds a JSON {kind}, not an object; nothing was changed")
    return data, True


def backup(path: Path, now: datetime | None = None) -> Path:
    """Copy ``path`` to ``<name>.cortex-backup-<UTC time>`` beside it (never over another)."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    candidate = path.with_name(f"{path.name}{BACKUP_INFIX}{stamp}")
    n = 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}{BACKUP_INFIX}{stamp}-{n}")
    shutil.copy2(path.resolve(), candidate)
    return candidate


def _apply_settings(change: SettingsChange) -> None:
    if not change.changed:
        return
    if change.existed:
        change.backup = backup(change.path)
    if change.delete_file:
        change.path.unlink()
    else:
        write_atomic(change.path, _dump(change.after))


_JSON_KINDS: dict[type, str] = {
    list: "array",
    str: "string",
    int: "number",
    float: "number",
    bool: "boolean",
    type(None): "null",
}


def _dump(settings: dict[str, Any]) -> str:
    return json.dumps(settings, indent=2, ensure_ascii=False) + "\n"


def _is_ours(rules: Path) -> bool:
    try:
        return MARKER in rules.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def _rules_setup_action(rules: Path) -> str:
    if not rules.exists():
        return "created"
    if not _is_ours(rules):
        return "kept"
    return "unchanged" if rules.read_text(encoding="utf-8") == RULES_TEXT else "updated"


def _other_scope_notes(
    other: Path, scope: Scope, ours: dict[str, list[dict[str, Any]]]
) -> list[str]:
    try:
        settings, _ = read_settings(other)
    except (CortexError, OSError):
        return []
    theirs = find_ours(settings)
    mine = {h.get("command") for handlers in ours.values() for h in handlers}
    differing = {h.get("command") for handlers in theirs.values() for h in handlers} - mine
    if not differing:
        return []  # none there, or identical commands (Claude Code runs those once)
    how = "cortex init --uninstall --user" if scope == "project" else "cortex init --uninstall"
    return [
        f"{other} also has Cortex hooks with another command, so Claude Code runs both on every"
        f" event; `{how}` removes that set"
    ]


# ---------------------------------------------------------------------------------- reporting

MCP_HINT = (
    "MCP server for .mcp.json (`cortex init --setup` adds it for you; "
    "or `claude mcp add cortex -- <cortex> mcp-server`):"
)

PASTE_HINT = (
    "Claude Code hooks for this environment; `cortex init --setup` merges them into"
    " .claude/settings.json for you (--user: ~/.claude/settings.json, every project):"
)


def describe(report: Report) -> list[tuple[str, bool]]:
    """The report as lines for a person: (text, is_warning). Warnings go to stderr."""
    s, dry = report.settings, report.dry_run
    lines: list[tuple[str, bool]] = []
    if dry:
        diff = s.diff()
        lines.append((diff.rstrip("\n") if diff else f"No change to {s.path}", False))
    if report.action == "setup":
        lines.append((_setup_hooks_line(s, dry), False))
        if report.command:
            lines.append((f"  hook command: {report.command} <Event>", False))
    else:
        lines.append((_uninstall_hooks_line(s, dry), False))
    if s.backup:
        lines.append((f"  backup of the previous file: {s.backup}", False))
    rules_line = _rules_line(report.rules, report.action, dry)
    lines.append((rules_line, rules_line.startswith("warning:")))
    lines.extend(_mcp_lines(report))
    if report.command == PROGRAM:
        lines.append(
            (
                f"warning: {PROGRAM} is neither beside this Python nor on PATH; the hooks fail"
                " (harmlessly) until it is installed (pip install -e . in the Cortex clone)",
                True,
            )
        )
    lines.extend((f"note: {note}", True) for note in report.notes)
    if dry:
        lines.append(("Dry run: nothing was written.", False))
    elif report.action == "setup" and s.changed:
        lines.append(("New Claude Code sessions load the hooks (`/hooks` lists them).", False))
    return lines


def _mcp_lines(report: Report) -> list[tuple[str, bool]]:
    m, dry, name = report.mcp, report.dry_run, mcp_config.SERVER_NAME
    if m is None:  # the user scope: ~/.claude.json is Claude Code's to write
        if report.action == "setup":
            how = f"claude mcp add --scope user {name} -- {report.mcp_command} mcp-server"
        else:
            how = f"claude mcp remove --scope user {name}"
        return [(f"MCP server: user-scope servers live in ~/.claude.json; run `{how}`", False)]
    lines: list[tuple[str, bool]] = []
    if dry and m.changed:
        lines.append((m.diff().rstrip("\n"), False))
    if m.added:
        line = f"MCP server: {'would add' if dry else 'added'} {name} to {m.path}"
    elif m.updated:
        line = f"MCP server: {'would update' if dry else 'updated'} {name} in {m.path}"
    elif m.removed:
        line = f"MCP server: {'would remove' if dry else 'removed'} {name} from {m.path}"
        if m.delete_file:
            line += f"; the file held nothing else and {'would be' if dry else 'was'} deleted"
    elif report.action == "setup":
        if mcp_config.find_ours(m.before):
            line = f"MCP server: already in {m.path}; nothing to change"
        else:
            line = f"MCP server: not added to {m.path} (see the note)"
    else:
        line = f"MCP server: none of Cortex's in {m.path}; nothing to remove"
    lines.append((line, False))
    if m.backup:
        lines.append((f"  backup of the previous file: {m.backup}", False))
    return lines


def _setup_hooks_line(s: SettingsChange, dry: bool) -> str:
    if not s.changed:
        return f"Hooks: already installed in {s.path}; nothing to change"
    parts = []
    if s.added:
        parts.append(f"{'would add' if dry else 'added'} handlers for {len(s.added)} events")
    if s.updated:
        verb = "would update" if dry else "updated"
        parts.append(f"{verb} {', '.join(s.updated)}")
    return f"Hooks: {' and '.join(parts) or 'normalised'} in {s.path}"


def _uninstall_hooks_line(s: SettingsChange, dry: bool) -> str:
    if not s.removed:
        where = s.path if s.existed else f"{s.path} (no such file)"
        return f"Hooks: none of Cortex's in {where}; nothing to remove"
    verb = "would remove" if dry else "removed"
    line = f"Hooks: {verb} Cortex's from {len(s.removed)} events in {s.path}"
    if s.delete_file:
        line += f"; the file held nothing else and {'would be' if dry else 'was'} deleted"
    return line


def _rules_line(rules: RulesChange, action: str, dry: bool) -> str:
    path, what = rules.path, rules.action
    if what == "kept":
        if action == "setup":
            return (
                f"warning: kept {path}: it has no Cortex marker line, so it is yours and was not"
                " overwritten (move it away and run again for Cortex's version)"
            )
        return f"warning: kept {path}: it has no Cortex marker line, so Cortex did not write it"
    verbs = {
        "created": ("would write", "wrote"),
        "updated": ("would update", "updated"),
        "removed": ("would remove", "removed"),
    }
    if what in verbs:
        return f"Rules: {verbs[what][0] if dry else verbs[what][1]} {path}"
    if what == "unchanged":
        return f"Rules: {path} is up to date"
    return f"Rules: no {path}; nothing to remove"
