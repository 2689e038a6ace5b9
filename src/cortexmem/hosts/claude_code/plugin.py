"""The Claude Code plugin's JSON files, generated from the same definitions ``cortex init
--setup`` uses, so the two install paths cannot drift apart.

The plugin is the repository itself (``claude --plugin-dir .``, or ``/plugin marketplace add``
then ``/plugin install cortex@cortex``):

* ``.claude-plugin/plugin.json``: the manifest (components are found at their default places);
* ``.claude-plugin/marketplace.json``: a one-plugin marketplace whose source is the repository;
* ``hooks/hooks.json``: every hook event ``cortex init --setup`` installs, same handlers, with
  ``cortex-hook`` taken from PATH (a plugin cannot carry a Python environment);
* ``.mcp.json``: ``cortex mcp-server``;
* ``skills/*/SKILL.md``: written by hand, checked by the tests.

State never goes into the plugin folder: each project's memory is its ``.cortex/``, the global
store is ``$CORTEX_HOME`` (``~/.cortex``), the same places the CLI uses.

``python -m cortexmem.hosts.claude_code.plugin [ROOT]`` rewrites the JSON files (``--check``
only reports the ones that differ).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cortexmem import __version__
from cortexmem.hosts.claude_code.mcp_config import mcp_block
from cortexmem.hosts.claude_code.settings import PROGRAM as HOOK_PROGRAM
from cortexmem.hosts.claude_code.settings import cortex_hooks

PLUGIN_NAME = "cortex"
DESCRIPTION = (
    "Persistent memory for Claude Code: captures decisions, gotchas, plans and fixes from every "
    "session, briefs each new session, and lets Claude search and add to the memory mid-session "
    "(MCP server and skills). Needs the `cortex` and `cortex-hook` programs on PATH: install "
    "the cortex-memory Python package (pip or pipx)."
)
SKILLS = ("recall", "remember", "index-code", "forget", "consolidate")


def manifest() -> dict[str, Any]:
    return {
        "name": PLUGIN_NAME,
        "displayName": "Cortex memory",
        "version": __version__,
        "description": DESCRIPTION,
        "author": {"name": "The Cortex team"},
        "license": "MIT",
        "keywords": ["memory", "mcp", "hooks", "skills", "sqlite"],
    }


def marketplace() -> dict[str, Any]:
    return {
        "name": PLUGIN_NAME,
        "owner": {"name": "The Cortex team"},
        "plugins": [
            {
                "name": PLUGIN_NAME,
                "source": "./",
                "description": DESCRIPTION,
                "version": __version__,
            }
        ],
    }


def hooks_file() -> dict[str, Any]:
    return {
        "description": "Cortex captures each session and briefs the next: every event runs "
        "`cortex-hook <Event>`, which always exits 0.",
        **cortex_hooks(HOOK_PROGRAM),
    }


def mcp_file() -> dict[str, Any]:
    return mcp_block("cortex")


FILES: dict[str, Callable[[], dict[str, Any]]] = {
    ".claude-plugin/plugin.json": manifest,
    ".claude-plugin/marketplace.json": marketplace,
    "hooks/hooks.json": hooks_file,
    ".mcp.json": mcp_file,
}


def render(relative: str) -> str:
    return json.dumps(FILES[relative](), indent=2, ensure_ascii=False) + "\n"


def stale(root: Path) -> list[str]:
    """The generated files under ``root`` that are missing or differ from what they should be."""
    out = []
    for relative in FILES:
        path = root / relative
        if not path.is_file() or path.read_text(encoding="utf-8") != render(relative):
            out.append(relative)
    return out


def write(root: Path) -> list[str]:
    """Rewrite the stale files under ``root``; returns them."""
    changed = stale(root)
    for relative in changed:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(relative), encoding="utf-8")
    return changed


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    args = [a for a in args if a != "--check"]
    root = Path(args[0]) if args else Path.cwd()
    changed = stale(root) if check else write(root)
    for relative in changed:
        print(f"{'differs' if check else 'wrote'}: {relative}")
    return 1 if check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
