"""The layers of ``src/cortexmem`` and the one direction their imports run.

Entry points (``cli``, ``mcp``, ``recall``, ``hosts``) call ``services``; services orchestrate
``store``, ``ai`` and ``project`` (the I/O at the edges); all of them use ``core``, the pure
functions, which know nothing of Cortex but ``model``. An import against that direction (a
service reaching into Claude Code's adapter, a core function opening a file through
``project``) fails here, with the line that does it, before it can grow roots.

Every import is counted, at module level or inside a function: a lazy import is still a
dependency, it is only paid for later.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "cortexmem"

# Each room and the rooms it may import (besides itself).
BOTTOM = {"model", "errors", "settings", "__init__"}
ALLOWED: dict[str, set[str]] = {
    "model": {"errors", "__init__"},
    "errors": set(),
    "settings": set(),
    "__init__": set(),
    "__main__": {"cli"},
    "core": {"model"},
    "project": BOTTOM,
    "ai": BOTTOM | {"core", "project"},
    "store": BOTTOM | {"core", "project"},
    "services": BOTTOM | {"core", "project", "ai", "store"},
    # Entry points: they may use each other (the CLI starts the MCP and recall servers and
    # installs a host), never the other way round.
    "recall": BOTTOM | {"core", "project", "ai", "store", "services"},
    # The MCP server learns its project from the host that launched it.
    "mcp": BOTTOM | {"core", "project", "ai", "store", "services", "hosts"},
    "hosts": BOTTOM | {"core", "project", "ai", "store", "services", "recall"},
    "cli": BOTTOM | {"core", "project", "ai", "store", "services", "recall", "mcp", "hosts"},
}


def room_of(module: str) -> str:
    """``cortexmem.services.recall`` → ``services``; ``cortexmem.model`` → ``model``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__" and len(parts) > 2:
        parts = parts[:-1]  # cortexmem.store.__init__ is cortexmem.store
    return ".".join(parts)


def imports_of(path: Path) -> list[tuple[int, str]]:
    """Every ``cortexmem`` module ``path`` imports, with its line, wherever the import sits."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("cortexmem")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                package = module_name(path).split(".")[:-1]
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("cortexmem"):
                continue
            if target == "cortexmem":  # `from cortexmem import x`: x is a room or a name
                found += [(node.lineno, _from_package(a.name)) for a in node.names]
            else:
                found.append((node.lineno, target))
    return found


def _from_package(name: str) -> str:
    is_module = (PACKAGE / f"{name}.py").is_file() or (PACKAGE / name).is_dir()
    return f"cortexmem.{name}" if is_module else "cortexmem"  # __version__ lives in __init__


SOURCES = sorted(p for p in PACKAGE.rglob("*.py") if "models" not in p.parts)


def test_every_room_is_known() -> None:
    rooms = {room_of(module_name(p)) for p in SOURCES}
    assert rooms <= set(ALLOWED), f"a new room needs its place in ALLOWED: {rooms - set(ALLOWED)}"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_run_one_way(path: Path) -> None:
    here = room_of(module_name(path))
    wrong = [
        f"{path.relative_to(PACKAGE)}:{line} imports {target} ({room_of(target)})"
        for line, target in imports_of(path)
        if room_of(target) != here and room_of(target) not in ALLOWED[here]
    ]
    assert not wrong, f"{here} may import only {sorted(ALLOWED[here])}:\n" + "\n".join(wrong)


def _has_code(path: Path) -> bool:
    """Anything in a module but its docstring."""
    body = ast.parse(path.read_text(encoding="utf-8")).body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return bool(body)


def test_package_init_files_are_empty() -> None:
    """The tool hooks import ``cortexmem.hosts.claude_code.*``: every ``__init__`` on the way
    (and every other one, so none grows) must cost nothing. A docstring says what the room
    holds; code belongs in a module with a name."""
    heavy = [
        str(p.relative_to(PACKAGE))
        for p in SOURCES
        if p.name == "__init__.py"
        and p.parent != PACKAGE
        and p.parent.name != "ai"  # the AI façade is the package itself (never on a hook path)
        and _has_code(p)
    ]
    assert not heavy, f"package __init__ files must hold no code: {heavy}"


def test_the_checker_sees_a_wrong_import(tmp_path: Path) -> None:
    """The test above can fail: a core module that imports a service is caught."""
    bad = tmp_path / "cortexmem" / "core" / "bad.py"
    bad.parent.mkdir(parents=True)
    bad.write_text("def f():\n    from cortexmem.services.recall import recall\n")
    ((line, target),) = imports_of(bad)
    assert (line, target) == (2, "cortexmem.services.recall")
    assert room_of(target) not in ALLOWED["core"]


@pytest.mark.parametrize(
    "word", ["TodoWrite", "ExitPlanMode", "MultiEdit", "Bash", "system-reminder", "to proceed"]
)
def test_the_core_holds_none_of_claude_codes_dialect(word: str):
    """Tool names, injected tags and refusal strings are the host's: they live under
    ``hosts/claude_code/`` and reach extraction as neutral records."""
    core = [p for p in SOURCES if p.relative_to(PACKAGE).parts[0] == "core"]
    assert not [str(p) for p in core if word in p.read_text(encoding="utf-8")]
