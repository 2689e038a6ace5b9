"""Cortex's MCP server in a Claude Code ``.mcp.json``: pure functions over plain dicts, no I/O.

The file maps server names to how to start them::

    {"mcpServers": {"cortex": {"command": "/venv/bin/cortex", "args": ["mcp-server"]}}}

**Which entries are ours.** A stdio entry whose ``command`` is a program named ``cortex`` (any
folder, ``.exe`` allowed) and whose first argument is ``mcp-server``, under any name. So a new
virtualenv path is an update in place, never a second server.

**What ``merge_server`` changes.** Our entries get our ``command`` and ``args`` (a ``type``,
``env`` or ``timeout`` a person added stays). With none of ours, the entry is added as
``cortex``; when a server of someone else's already has that name it is left alone and the
result says ``conflict``. Nothing else is touched: merging twice is merging once.

**What ``remove_server`` deletes.** Our entries, then ``mcpServers`` if that emptied it.
"""

from __future__ import annotations

import copy
import re
from typing import Any, Literal

from cortexmem.errors import CortexError

SERVER_NAME = "cortex"
PROGRAM = "cortex"
ARGS = ("mcp-server",)

Action = Literal["added", "updated", "unchanged", "conflict"]


class McpShapeError(CortexError):
    """``mcpServers`` is not something a server entry can be merged into."""


def server_entry(command: str) -> dict[str, Any]:
    """How Claude Code starts the server: ``command`` (a path, not shell-quoted: exec form)."""
    return {"command": command, "args": list(ARGS)}


def mcp_block(command: str) -> dict[str, Any]:
    return {"mcpServers": {SERVER_NAME: server_entry(command)}}


def is_ours(entry: object) -> bool:
    if not isinstance(entry, dict) or entry.get("type", "stdio") != "stdio":
        return False
    command, args = entry.get("command"), entry.get("args")
    if not isinstance(command, str) or not isinstance(args, list) or not args:
        return False
    name = re.split(r"[\\/]", command)[-1]
    name = name[:-4] if name.lower().endswith(".exe") else name
    return name == PROGRAM and args[0] == ARGS[0]


def find_ours(config: dict[str, Any]) -> list[str]:
    """Names of our entries, in file order."""
    servers = config.get("mcpServers")
    if not isinstance(servers, dict):
        return []
    return [name for name, entry in servers.items() if is_ours(entry)]


def merge_server(config: dict[str, Any], entry: dict[str, Any]) -> tuple[dict[str, Any], Action]:
    """A copy of ``config`` with our server ``entry`` in it, and what that took."""
    result = copy.deepcopy(config)
    servers = result.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise McpShapeError(f'"mcpServers" is {type(servers).__name__}, not an object')
    mine = find_ours(result)
    if not mine:
        if SERVER_NAME in servers:
            return copy.deepcopy(config), "conflict"
        servers[SERVER_NAME] = copy.deepcopy(entry)
        return result, "added"
    changed = False
    for name in mine:
        current = servers[name]
        for key in ("command", "args"):
            if current.get(key) != entry[key]:
                current[key] = copy.deepcopy(entry[key])
                changed = True
    return result, "updated" if changed else "unchanged"


def remove_server(config: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A copy of ``config`` without our entries, and their names."""
    result = copy.deepcopy(config)
    mine = find_ours(result)
    if not mine:
        return result, []
    servers = result["mcpServers"]
    for name in mine:
        del servers[name]
    if not servers:
        del result["mcpServers"]
    return result, mine
