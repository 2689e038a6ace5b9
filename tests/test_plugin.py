"""The Claude Code plugin in the repository root, against the documented fields
(``../shared/data/claude-code-contract.md`` §1, §6, §7 and ``mcp-notes.md`` §7): the manifest,
hooks/hooks.json, .mcp.json and every skill's frontmatter; every command they name must exist
in the CLI, with the options used; the generated files must match their generator.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import click
import pytest
import yaml

from cortexmem.cli.app import cli
from cortexmem.hosts.claude_code import plugin
from cortexmem.hosts.claude_code.hook import EVENTS
from cortexmem.hosts.claude_code.settings import HOOK_EVENTS, TOOL_EVENTS, cortex_hooks

ROOT = Path(__file__).resolve().parents[1]

# Claude Code's hook events named in the contract (§1-§3), the older ones included.
DOCUMENTED_EVENTS = {
    "SessionStart", "Setup", "UserPromptSubmit", "UserPromptExpansion", "PreToolUse",
    "PermissionRequest", "PermissionDenied", "PostToolUse", "PostToolUseFailure",
    "PostToolBatch", "Notification", "SubagentStart", "SubagentStop", "Stop", "StopFailure",
    "PreCompact", "PostCompact", "SessionEnd", "InstructionsLoaded", "ConfigChange",
    "CwdChanged", "FileChanged", "MessageDisplay", "TeammateIdle", "TaskCreated",
    "TaskCompleted",
}  # fmt: skip
GROUP_FIELDS = {"matcher", "hooks"}
HANDLER_FIELDS = {
    "type", "if", "timeout", "statusMessage", "once",  # every handler
    "command", "args", "async", "asyncRewake", "shell",  # command handlers
}  # fmt: skip
MANIFEST_FIELDS: dict[str, type | tuple[type, ...]] = {
    "name": str, "displayName": str, "version": str, "description": str, "author": dict,
    "homepage": str, "repository": str, "license": str, "keywords": list, "metadata": dict,
    "defaultEnabled": bool,
    # component paths: a "./" path, a list of them, or (hooks, mcpServers) an inline object
    "skills": (str, list), "commands": (str, list), "agents": (str, list),
    "hooks": (str, list, dict), "mcpServers": (str, list, dict), "outputStyles": (str, list),
    "lspServers": (str, list, dict), "experimental": dict, "dependencies": (list, dict),
}  # fmt: skip
SKILL_FIELDS = {
    "name", "description", "when_to_use", "argument-hint", "arguments",
    "disable-model-invocation", "user-invocable", "allowed-tools", "disallowed-tools", "model",
    "effort", "context", "agent", "background", "shell", "hooks", "paths", "metadata",
    "license", "compatibility",
}  # fmt: skip
KEBAB = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


def load(relative: str) -> dict:
    data = json.loads((ROOT / relative).read_text(encoding="utf-8"))
    assert isinstance(data, dict), relative
    return data


def frontmatter(path: Path) -> tuple[dict, str]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n"), f"{path}: no frontmatter"
    head, _, body = text[4:].partition("\n---\n")
    data = yaml.safe_load(head)
    assert isinstance(data, dict), path
    return data, body


def check_cortex_command(line: str, where: str) -> None:
    """``cortex SUB [OPTIONS] ...``: SUB is a command of the CLI, and each option one of its."""
    argv = shlex.split(line)
    assert argv[0] == "cortex", (where, line)
    ctx = click.Context(cli)
    command = cli.get_command(ctx, argv[1])
    assert command is not None, f"{where}: `cortex {argv[1]}` is not a command"
    known = {opt for p in command.params for opt in (*p.opts, *p.secondary_opts)}
    known |= {"--help", "-h"}
    for word in argv[2:]:
        if word == "--":
            break
        if word.startswith("-") and word != "-":
            assert word.split("=")[0] in known, f"{where}: `cortex {argv[1]}` has no {word}"


def cortex_lines(text: str) -> list[str]:
    """The ``cortex ...`` commands written in code spans and code blocks."""
    spans = re.findall(r"`([^`\n]+)`", text)
    spans += [m for block in re.findall(r"```\w*\n(.*?)```", text, re.S) for m in block.split("\n")]
    out = []
    for span in spans:
        span = span.strip().removeprefix("! ")
        if span.startswith("cortex ") and not span.startswith("cortex-"):
            out.append(span.split("#")[0].strip())
    return out


# --------------------------------------------------------------------------------- manifest


def test_the_generated_files_match_their_generator():
    assert plugin.stale(ROOT) == [], "run: python -m cortexmem.hosts.claude_code.plugin ."


def test_manifest_has_the_documented_fields_and_types():
    data = load(".claude-plugin/plugin.json")
    assert KEBAB.match(data["name"]) and data["name"] == plugin.PLUGIN_NAME
    for key, value in data.items():
        assert key in MANIFEST_FIELDS, f"plugin.json: undocumented field {key!r}"
        assert isinstance(value, MANIFEST_FIELDS[key]), key
    from cortexmem import __version__

    assert data["version"] == __version__
    assert set(data["author"]) <= {"name", "email", "url"}
    assert all(isinstance(k, str) for k in data["keywords"])
    for key in ("skills", "commands", "agents", "hooks", "mcpServers", "outputStyles"):
        for path in [data[key]] if isinstance(data.get(key), str) else data.get(key) or []:
            assert isinstance(path, str) and path.startswith("./"), key
    # everything but the manifest (and the marketplace file) sits at the plugin root
    assert {p.name for p in (ROOT / ".claude-plugin").iterdir()} <= {
        "plugin.json",
        "marketplace.json",
    }


def test_marketplace_lists_this_plugin():
    data = load(".claude-plugin/marketplace.json")
    assert KEBAB.match(data["name"]) and isinstance(data["owner"]["name"], str)
    (entry,) = data["plugins"]
    assert entry["name"] == plugin.PLUGIN_NAME and entry["source"] == "./"


# ------------------------------------------------------------------------------------ hooks


def test_hooks_json_wires_every_capture_event_like_init_setup():
    data = load("hooks/hooks.json")
    assert set(data) <= {"description", "hooks"} and isinstance(data["description"], str)
    hooks = data["hooks"]
    assert list(hooks) == list(HOOK_EVENTS)  # every event the capture handles, in order
    assert set(hooks) <= DOCUMENTED_EVENTS and set(hooks) == set(EVENTS)
    assert {"hooks": hooks} == cortex_hooks("cortex-hook")  # the very block --setup installs
    for event, groups in hooks.items():
        assert isinstance(groups, list) and groups, event
        for group in groups:
            assert set(group) <= GROUP_FIELDS and isinstance(group["hooks"], list), event
            if event in TOOL_EVENTS:
                assert group["matcher"] == "*"
            for handler in group["hooks"]:
                assert set(handler) <= HANDLER_FIELDS, handler
                assert handler["type"] == "command"
                timeout = handler.get("timeout")
                assert timeout is None or (isinstance(timeout, int) and 0 < timeout <= 60)
                argv = shlex.split(handler["command"])
                assert argv == ["cortex-hook", event], handler
                assert argv[1] in EVENTS  # the hook program handles it
    assert "timeout" not in hooks["SessionEnd"][0]["hooks"][0]  # see settings.TIMEOUTS


# -------------------------------------------------------------------------------------- mcp


def test_mcp_json_starts_the_server_command():
    data = load(".mcp.json")
    assert set(data) == {"mcpServers"}
    for name, server in data["mcpServers"].items():
        assert KEBAB.match(name)
        assert set(server) <= {"type", "command", "args", "env", "timeout"}
        assert server.get("type", "stdio") == "stdio"
        assert isinstance(server["command"], str)
        assert all(isinstance(a, str) for a in server["args"])
        assert all(isinstance(k, str) and isinstance(v, str)
                   for k, v in server.get("env", {}).items())  # fmt: skip
        check_cortex_command(shlex.join([server["command"], *server["args"]]), ".mcp.json")
    assert data["mcpServers"]["cortex"]["args"] == ["mcp-server"]


def test_no_state_goes_into_the_plugin_folder():
    """The plugin folder changes on every update ($CLAUDE_PLUGIN_ROOT): nothing it starts may
    be pointed there for data. Memory lives in each project's .cortex/ and in $CORTEX_HOME."""
    for relative in plugin.FILES:
        assert "CLAUDE_PLUGIN_ROOT" not in (ROOT / relative).read_text(encoding="utf-8")
    for path in (ROOT / "skills").rglob("*"):
        if path.is_file():
            assert "CLAUDE_PLUGIN_ROOT" not in path.read_text(encoding="utf-8"), path


# ----------------------------------------------------------------------------------- skills


def skill_files() -> list[Path]:
    return sorted((ROOT / "skills").glob("*/SKILL.md"))


def test_the_five_skills_are_there():
    assert sorted(p.parent.name for p in skill_files()) == sorted(plugin.SKILLS)


@pytest.mark.parametrize("path", skill_files(), ids=lambda p: p.parent.name)
def test_skill_frontmatter(path: Path):
    data, body = frontmatter(path)
    assert set(data) <= SKILL_FIELDS, set(data) - SKILL_FIELDS
    assert data["name"] == path.parent.name and KEBAB.match(data["name"])
    assert len(data["name"]) <= 64
    description = data["description"]
    assert isinstance(description, str) and 200 <= len(description) <= 1024
    assert len(description) + len(data.get("when_to_use", "")) <= 1536
    # proactive wording: the assistant uses them without being asked
    assert "without being asked" in description.lower() or "reflex" in description.lower()
    for key in ("argument-hint", "allowed-tools"):
        assert isinstance(data.get(key, ""), str), key
    assert body.strip().startswith("# "), "a body with a title"


def test_recall_and_remember_say_it_the_seed_way():
    recall, _ = frontmatter(ROOT / "skills/recall/SKILL.md")
    assert "USE AS A REFLEX" in recall["description"]
    assert "earlier context may exist" in recall["description"]
    remember, _ = frontmatter(ROOT / "skills/remember/SKILL.md")
    assert "STORE WITHOUT BEING ASKED" in remember["description"]
    for kind in ("decision", "gotcha", "preference"):
        assert kind in remember["description"]


@pytest.mark.parametrize("path", skill_files(), ids=lambda p: p.parent.name)
def test_every_command_a_skill_names_exists(path: Path):
    data, body = frontmatter(path)
    lines = cortex_lines(body)
    assert lines, "each skill shows the CLI command it falls back on"
    for line in lines:
        check_cortex_command(line, str(path))
    tools = [t.strip() for t in data.get("allowed-tools", "").split(",") if t.strip()]
    for tool in tools:
        bash = re.fullmatch(r"Bash\((cortex [^:*)]+)(?::\*)?\)", tool)
        if bash:
            check_cortex_command(bash.group(1), f"{path} allowed-tools")
            continue
        mcp = re.fullmatch(r"mcp__(?:plugin_cortex_)?cortex__(\w+)", tool)
        assert mcp, f"{path}: unexpected allowed tool {tool!r}"
        assert mcp.group(1) in MCP_TOOLS, tool


MCP_TOOLS = {
    "search", "search_decisions", "get_plan", "get_recent", "get_status", "remember", "get",
    "traverse", "forget", "lessons_for_action", "lesson_feedback",
}  # fmt: skip


def test_the_mcp_tools_the_skills_name_are_the_servers():
    """The list above is the server's (without starting it: the tools are registered on build)."""
    import anyio

    from cortexmem.mcp.server import build_server

    server = build_server(ROOT)
    names = {t.name for t in anyio.run(server.list_tools)}
    assert names == MCP_TOOLS


def test_the_command_checker_catches_mistakes():
    with pytest.raises(AssertionError, match="is not a command"):
        check_cortex_command("cortex recal --json x", "here")
    with pytest.raises(AssertionError, match="has no --jsn"):
        check_cortex_command("cortex recall --jsn x", "here")
    check_cortex_command('cortex recall --all-branches --json "x y"', "here")
