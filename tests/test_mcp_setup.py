"""`cortex init` and the MCP server entry: `--setup` merges it into the project's .mcp.json,
`--uninstall` takes it out, plain `init` prints it. The merge rules are pure (property-tested);
the command runs on real files in temporary folders.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from cortexmem.cli.app import cli
from cortexmem.hosts.claude_code import install as hooks_setup
from cortexmem.hosts.claude_code.mcp_config import (
    McpShapeError,
    find_ours,
    is_ours,
    mcp_block,
    merge_server,
    remove_server,
    server_entry,
)

CORTEX = "/opt/cortex/bin/cortex"
HOOK = "/opt/cortex/bin/cortex-hook"
OTHERS = {
    "github": {"type": "http", "url": "https://api.example.invalid/mcp"},
    "files": {"command": "npx", "args": ["-y", "files-server"], "env": {"ROOT": "/srv"}},
}


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


@pytest.fixture
def run(repo: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(hooks_setup, "hook_command", lambda: HOOK)
    monkeypatch.setattr(hooks_setup, "cortex_command", lambda: CORTEX)
    runner = CliRunner()

    def invoke(*args: str, code: int = 0, cwd: Path | None = None):
        result = runner.invoke(cli, ["-C", str(cwd or repo), *args])
        assert result.exit_code == code, (result.output, result.stderr, result.exception)
        return result

    return invoke


def mcp_file(repo: Path) -> Path:
    return repo / ".mcp.json"


def backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + hooks_setup.BACKUP_INFIX + "*"))


# ------------------------------------------------------------------------------- pure rules


@pytest.mark.parametrize(
    ("entry", "ours"),
    [
        ({"command": "cortex", "args": ["mcp-server"]}, True),
        ({"command": "/v/bin/cortex", "args": ["mcp-server", "--log-level", "INFO"]}, True),
        ({"command": "C:\\v\\Scripts\\cortex.exe", "args": ["mcp-server"]}, True),
        ({"type": "stdio", "command": "cortex", "args": ["mcp-server"]}, True),
        ({"command": "cortex", "args": ["status"]}, False),
        ({"command": "uvx", "args": ["cortex", "mcp-server"]}, False),
        ({"command": "cortex-hook", "args": ["mcp-server"]}, False),
        ({"type": "http", "url": "https://x.invalid"}, False),
        ("cortex mcp-server", False),
    ],
)
def test_which_entries_are_ours(entry, ours: bool):
    assert is_ours(entry) is ours


def test_merge_adds_updates_in_place_and_respects_a_foreign_cortex():
    added, action = merge_server({}, server_entry(CORTEX))
    assert action == "added" and added == mcp_block(CORTEX)
    assert merge_server(added, server_entry(CORTEX)) == (added, "unchanged")
    mine = {"mcpServers": {"memory": {"command": "/old/bin/cortex", "args": ["mcp-server"],
                                      "env": {"X": "1"}, "timeout": 9000}}}  # fmt: skip
    moved, action = merge_server(mine, server_entry(CORTEX))
    assert action == "updated"
    assert moved == {"mcpServers": {"memory": {"command": CORTEX, "args": ["mcp-server"],
                                               "env": {"X": "1"}, "timeout": 9000}}}  # fmt: skip
    foreign = {"mcpServers": {"cortex": {"command": "node", "args": ["cortex.js"]}}}
    assert merge_server(foreign, server_entry(CORTEX)) == (foreign, "conflict")
    with pytest.raises(McpShapeError):
        merge_server({"mcpServers": ["cortex"]}, server_entry(CORTEX))


servers = st.dictionaries(
    st.text("abcdefgh-", min_size=1, max_size=8).filter(lambda n: n != "cortex"),
    st.fixed_dictionaries({"command": st.sampled_from(["npx", "node", "uvx"]),
                           "args": st.lists(st.text("abc", max_size=3), max_size=2)}),
    max_size=4,
)  # fmt: skip


@given(others=servers, extra=st.booleans())
def test_remove_undoes_merge(others: dict, extra: bool):
    config: dict[str, object] = {"mcpServers": others} if others or extra else {}
    if extra:
        config["x-note"] = "kept"
    merged, action = merge_server(config, server_entry(CORTEX))
    assert action == "added" and find_ours(merged) == ["cortex"]
    assert merge_server(merged, server_entry(CORTEX)) == (merged, "unchanged")
    removed, names = remove_server(merged)
    assert names == ["cortex"]
    expected = dict(config)
    if not others:
        expected.pop("mcpServers", None)
    assert removed == expected


# ---------------------------------------------------------------------------------- command


def test_setup_writes_the_server_and_uninstall_removes_the_file(run, repo: Path):
    out = run("init", "--setup").stdout
    assert f"MCP server: added cortex to {mcp_file(repo)}" in out
    assert mcp_file(repo).read_text() == json.dumps(mcp_block(CORTEX), indent=2) + "\n"
    assert "already in" in run("init", "--setup").stdout
    out = run("init", "--uninstall").stdout
    assert "removed cortex from" in out and "held nothing else" in out
    assert not mcp_file(repo).exists() and backups(mcp_file(repo)) == []  # it was only ours
    assert "none of Cortex's" in run("init", "--uninstall").stdout


def test_other_servers_are_kept_and_backed_up(run, repo: Path):
    original = json.dumps({"mcpServers": OTHERS, "x-team": "ops"}, indent=4)
    mcp_file(repo).write_text(original)
    run("init", "--setup")
    after = json.loads(mcp_file(repo).read_text())
    assert after == {"mcpServers": {**OTHERS, "cortex": server_entry(CORTEX)}, "x-team": "ops"}
    (backup,) = backups(mcp_file(repo))
    assert backup.read_text() == original
    run("init", "--setup")
    assert len(backups(mcp_file(repo))) == 1  # nothing changed, no new backup
    run("init", "--uninstall")
    assert json.loads(mcp_file(repo).read_text()) == json.loads(original)
    assert len(backups(mcp_file(repo))) == 2


def test_a_moved_environment_is_updated_in_place(run, repo: Path, monkeypatch):
    run("init", "--setup")
    monkeypatch.setattr(hooks_setup, "cortex_command", lambda: "/new/venv/bin/cortex")
    assert "updated cortex in" in run("init", "--setup").stdout
    assert json.loads(mcp_file(repo).read_text()) == mcp_block("/new/venv/bin/cortex")


def test_a_foreign_server_named_cortex_is_left_alone(run, repo: Path):
    foreign = {"mcpServers": {"cortex": {"command": "node", "args": ["cortex.js"]}}}
    raw = json.dumps(foreign)
    mcp_file(repo).write_text(raw)
    result = run("init", "--setup")
    assert "not Cortex's" in result.stderr and "left alone" in result.stderr
    assert mcp_file(repo).read_text() == raw
    run("init", "--uninstall")
    assert mcp_file(repo).read_text() == raw


def test_an_unreadable_mcp_json_stops_before_anything_is_written(run, repo: Path):
    mcp_file(repo).write_text('{"mcpServers": [')
    result = run("init", "--setup", code=1)
    assert "is not valid JSON" in result.stderr and "nothing was changed" in result.stderr
    assert not (repo / ".claude").exists() and not (repo / ".cortex").exists()
    mcp_file(repo).write_text('{"mcpServers": ["cortex"]}')
    assert '"mcpServers" is list' in run("init", "--setup", code=1).stderr


def test_dry_run_and_json(run, repo: Path):
    out = run("init", "--setup", "--dry-run").stdout
    assert f"+++ {mcp_file(repo)}" in out and "would add cortex" in out
    assert not mcp_file(repo).exists()
    report = json.loads(run("init", "--setup", "--json").stdout)
    assert report["mcp"] == {"path": str(mcp_file(repo)), "changed": True, "added": ["cortex"],
                             "updated": [], "removed": [], "deleted": False, "backup": None,
                             "diff": None}  # fmt: skip
    report = json.loads(run("init", "--uninstall", "--json").stdout)
    assert report["mcp"]["removed"] == ["cortex"] and report["mcp"]["deleted"]


def test_the_entry_goes_to_the_top_of_the_working_tree(run, repo: Path):
    sub = repo / "src" / "pkg"
    sub.mkdir(parents=True)
    run("init", "--setup", cwd=sub)
    assert mcp_file(repo).is_file() and not mcp_file(sub).exists()


def test_user_scope_prints_the_claude_mcp_command(run, repo: Path, home: Path):
    out = run("init", "--setup", "--user").stdout
    assert f"claude mcp add --scope user cortex -- {CORTEX} mcp-server" in out
    assert not mcp_file(repo).exists() and not (home / ".mcp.json").exists()
    assert json.loads(run("init", "--setup", "--user", "--json").stdout)["mcp"] is None
    assert "claude mcp remove --scope user cortex" in run("init", "--uninstall", "--user").stdout


def test_plain_init_prints_the_mcp_configuration(run, repo: Path):
    out = run("init").stdout
    line = next(x for x in out.splitlines() if x.startswith("MCP server for .mcp.json"))
    assert json.loads(line[line.index("{") :]) == mcp_block(CORTEX)
    data = json.loads(run("init", "--json").stdout)
    assert data["mcp"] == mcp_block(CORTEX)
    assert not mcp_file(repo).exists()
