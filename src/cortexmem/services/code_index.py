"""``cortex index-code``: store code units raw with their prose descriptions, linked.

Each unit becomes a ``code`` memory (the source, verbatim) and a ``code_description`` memory
(words: see ``core.code_prose``) with a ``source_of`` edge from the prose to the code. Both are
tagged ``code:<path>::<symbol>``; indexing again keeps what did not change and archives the old
version of what did. Code bodies are embedded only by the local model, never sent to a remote
provider (``ai`` routes the ``code`` use to the local model).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from cortexmem.core.code_prose import CodeUnit, code_units
from cortexmem.core.filters import MemoryFilter
from cortexmem.errors import CortexError
from cortexmem.model import Memory, SourceContext
from cortexmem.services.context import Context
from cortexmem.store.protocols import Store

SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", ".venv", "venv", "env", "node_modules", "__pycache__", ".cortex",
     "dist", "build", "target", ".mypy_cache", ".ruff_cache", ".pytest_cache", ".tox", ".idea",
     ".claude"}
)  # fmt: skip
CODE_SUFFIXES = frozenset(
    {".py", ".pyi", ".js", ".jsx", ".mjs", ".ts", ".tsx", ".go", ".rs", ".java", ".kt", ".rb",
     ".php", ".c", ".h", ".cc", ".cpp", ".hpp", ".cs", ".swift", ".scala", ".sh", ".sql", ".lua"}
)  # fmt: skip
MAX_FILE_BYTES = 1_000_000


@dataclass
class IndexReport:
    files: int = 0
    units: int = 0
    added: int = 0
    unchanged: int = 0
    archived: int = 0
    # Units indexed before whose code is no longer there (a function removed, a file
    # deleted), archived: recall no longer serves code that does not exist.
    gone: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "files": self.files,
            "units": self.units,
            "memories_added": self.added,
            "unchanged": self.unchanged,
            "archived": self.archived,
            "gone": self.gone,
            "skipped": [{"path": p, "reason": r} for p, r in self.skipped],
        }


def code_files(root: Path) -> list[Path]:
    """Source files under ``root`` (a file is itself), skipping vendored and generated trees."""
    if root.is_file():
        return [root]
    found: list[Path] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        found += [Path(folder) / f for f in sorted(files) if Path(f).suffix in CODE_SUFFIXES]
    return found


def _display_path(path: Path, ctx: Context) -> str:
    resolved = path.resolve()
    for base in (ctx.paths.worktree, ctx.paths.root):
        if base is not None:
            try:
                return resolved.relative_to(base.resolve()).as_posix()
            except ValueError:
                continue
    return resolved.as_posix()


def _pair(unit: CodeUnit, branch: str | None, commit: str | None) -> list[Memory]:
    tags = (f"code:{unit.key}", f"lang:{Path(unit.path).suffix.lstrip('.') or 'text'}")
    where = SourceContext(branch=branch, commit=commit)
    summary = f"{unit.key} (line {unit.line})"
    prose = Memory(
        unit.description, "code_description", summary=summary, priority=5,
        source_type="code_index", source_context=where, tags=tags,
    )  # fmt: skip
    code = Memory(
        unit.code, "code", summary=summary, priority=4, source_type="code_index",
        source_context=where, tags=tags,
    )  # fmt: skip
    return [prose, code]


def index_code(
    ctx: Context,
    target: str,
    *,
    base: Path | None = None,
    on_file: Callable[[Path], None] | None = None,
) -> IndexReport:
    """Index ``target``: a file, a folder, or ``FILE::SYMBOL`` (``Class.method`` works)."""
    raw_path, _, symbol = target.partition("::")
    path = Path(raw_path).expanduser()
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    if not path.exists():
        raise CortexError(f"no such file or folder: {raw_path}")
    if symbol and not path.is_file():
        raise CortexError("a ::SYMBOL needs a file, not a folder")
    store = ctx.writable("project")
    branch, commit = ctx.paths.branch_and_commit()
    report = IndexReport()
    seen: set[str] = set()  # the keys of the units read now
    read: set[str] = set()  # the files read whole now
    kept: set[str] = set()  # the memories that stand for what was read (one may be shared)
    for file in code_files(path):
        if on_file is not None:
            on_file(file)
        shown = _display_path(file, ctx)
        try:
            if file.stat().st_size > MAX_FILE_BYTES:
                report.skipped.append((str(file), "larger than 1 MB"))
                continue
            source = file.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            report.skipped.append((str(file), "not UTF-8 text"))
            continue
        except OSError as exc:
            report.skipped.append((str(file), exc.strerror or str(exc)))
            continue
        read.add(shown.lower())
        units = code_units(shown, source)
        if symbol:
            units = [u for u in units if u.symbol == symbol or u.symbol.endswith("." + symbol)]
            if not units:
                raise CortexError(f"no function, class or method {symbol!r} in {raw_path}")
        report.files += 1
        for unit in units:
            seen.add(unit.key.lower())
            report.units += 1
            stored, added, archived = store.replace_tagged(
                f"code:{unit.key}", _pair(unit, branch, commit), [(0, 1, "source_of")]
            )
            kept.update(m.id for m in stored)
            report.added += added
            report.unchanged += 2 - added
            report.archived += archived
    if not symbol:
        target = _display_path(path, ctx).lower()
        report.gone = _archive_gone(ctx, store, target, path.is_file(), seen, read, kept)
    return report


def _archive_gone(
    ctx: Context,
    store: Store,
    target: str,
    is_file: bool,
    seen: set[str],
    read: set[str],
    kept: set[str],
) -> int:
    """Archive the code memories of ``target`` (a file, or a folder and what is under it)
    whose code is no longer there: a unit its file, read now, no longer has, or a file no
    longer on disk. A file the walk passes over (a hidden folder, a vendored tree, another
    language) or could not read keeps its units, as does a memory that stands for a unit
    read now (two files holding the same code share one). A memory whose file an older
    Cortex redacted away (``code:[redacted:tag]``) cannot be placed: a whole project's index
    that has no unit with its text archives it."""
    gone = 0
    bases = [b for b in (ctx.paths.worktree, ctx.paths.root) if b is not None]
    listings: dict[Path, dict[str, str]] = {}
    for memory in store.iter_memories(MemoryFilter(types=("code", "code_description"))):
        if memory.id in kept:
            continue
        for key in (t[len("code:") :] for t in memory.tags if t.startswith("code:")):
            file = key.split("::")[0]
            if is_file:
                inside = file == target
            else:
                inside = target == "." or file.startswith(target.rstrip("/") + "/")
            removed = file in read and key not in seen
            if "redacted:" in file:
                stale = target == "." and not is_file
            else:
                stale = inside and (removed or not _on_disk(bases, file, listings))
            if stale:
                store.set_status(memory.id, "archived")
                gone += 1
                break
    return gone


def _on_disk(bases: list[Path], shown: str, listings: dict[Path, dict[str, str]]) -> bool:
    """Whether the file a code memory names is still there: ``shown`` is the path
    ``_display_path`` gave it, relative to the project or absolute, lower-cased by the tag,
    so each part is matched case-blind in its folder (``listings``: each folder's names,
    read once)."""
    shown_path = Path(shown)
    for base in [Path(shown_path.anchor)] if shown_path.is_absolute() else bases:
        here = base
        for part in shown_path.relative_to(shown_path.anchor).parts:
            if here not in listings:
                try:
                    listings[here] = {name.lower(): name for name in os.listdir(here)}
                except OSError:
                    listings[here] = {}
            name = listings[here].get(part)
            if name is None:
                break
            here = here / name
        else:
            return True
    return False
