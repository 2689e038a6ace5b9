"""Imports run one way (DESIGN.md): the core knows nothing of Cortex but the records and itself,
no service reaches into a host adapter, and the core holds none of Claude Code's dialect."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "cortexmem"


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def sources(package: str) -> list[Path]:
    return sorted((SRC / package).rglob("*.py"))


@pytest.mark.parametrize("path", sources("core"), ids=lambda p: str(p.relative_to(SRC)))
def test_the_core_imports_only_the_records_and_itself(path: Path):
    ours = {m for m in imported_modules(path) if m.split(".")[0] == "cortexmem"}
    assert all(m == "cortexmem.model" or m.startswith("cortexmem.core") for m in ours), ours


@pytest.mark.parametrize("path", sources("services"), ids=lambda p: str(p.relative_to(SRC)))
def test_services_never_import_a_host(path: Path):
    assert not [m for m in imported_modules(path) if m.startswith("cortexmem.hosts")]


@pytest.mark.parametrize(
    "word", ["TodoWrite", "ExitPlanMode", "MultiEdit", "Bash", "system-reminder", "to proceed"]
)
def test_the_core_holds_none_of_claude_codes_dialect(word: str):
    assert not [str(p) for p in sources("core") if word in p.read_text(encoding="utf-8")]
