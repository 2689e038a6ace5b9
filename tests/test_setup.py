"""`cortex init --setup / --user / --uninstall`: Cortex's hooks in Claude Code settings files.

The merge rules are pure functions (property-tested on random settings); the command is tested
on real files in temporary folders, with $HOME pointed at a temporary folder too.
"""

from __future__ import annotations

import json
import os
import shlex
import string
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from cortexmem.cli.app import cli
from cortexmem.hosts.claude_code import install as hooks_setup
from cortexmem.hosts.claude_code.settings import (
    HOOK_EVENTS,
    TIMEOUTS,
    TOOL_EVENTS,
    cortex_hooks,
    find_ours,
    is_ours,
    merge_hooks,
    remove_hooks,
)

CMD = "/opt/cortex/bin/cortex-hook"
OTHER_EVENTS = ("Notification", "PermissionRequest", "SubagentStart", "InstructionsLoaded")


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A throw-away $HOME (for --user and for the look at the other scope's settings)."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


@pytest.fixture
def command(monkeypatch: pytest.MonkeyPatch):
    """Pin the hook command (the real one depends on where the venv is); returns a setter."""

    def use(value: str) -> None:
        monkeypatch.setattr(hooks_setup, "hook_command", lambda: value)

    use(CMD)
    return use


@pytest.fixture
def run(repo: Path, command):
    runner = CliRunner()

    def invoke(*args: str, code: int = 0, cwd: Path | None = None):
        result = runner.invoke(cli, ["-C", str(cwd or repo), *args])
        assert result.exit_code == code, (result.output, result.stderr, result.exception)
        assert "Traceback" not in result.output
        return result

    return invoke


def project_settings(repo: Path) -> Path:
    return repo / ".claude" / "settings.json"


def rules_file(base: Path) -> Path:
    return base / ".claude" / "rules" / hooks_setup.RULES_NAME


def backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + hooks_setup.BACKUP_INFIX + "*"))


def write_json(path: Path, data: object) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = json.dumps(data, indent=4).encode()  # not our formatting, on purpose
    path.write_bytes(raw)
    return raw


EXISTING: dict[str, Any] = {
    "$schema": "https://json.schemastore.org/claude-code-settings.json",
    "permissions": {"allow": ["Bash(git status)", "Bash(npm run *)"], "deny": ["Read(.env)"]},
    "env": {"NODE_ENV": "development"},
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [{"type": "command", "command": "./hooks/guard.sh", "timeout": 5}],
            }
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "say done", "async": True}]}],
        "Notification": [],
    },
    "model": "opus",
}


# ------------------------------------------------------------------------ the pure merge rules


def test_hooks_block_follows_the_contract():
    block = cortex_hooks(CMD)
    assert list(block) == ["hooks"] and tuple(block["hooks"]) == HOOK_EVENTS
    for event, groups in block["hooks"].items():
        assert len(groups) == 1
        (group,) = groups
        if event in TOOL_EVENTS:
            assert group["matcher"] == "*"
        else:
            assert "matcher" not in group  # omitted: every source/trigger/reason
        (handler,) = group["hooks"]
        assert handler["type"] == "command"
        assert handler["command"] == f"{CMD} {event}"
        assert is_ours(handler, event)
        if event == "SessionEnd":
            # a settings-file timeout would *raise* the shared 1.5 s SessionEnd budget
            assert "timeout" not in handler
        else:
            assert type(handler["timeout"]) is int and 1 <= handler["timeout"] <= 60
            assert handler["timeout"] == TIMEOUTS[event]


def test_every_event_is_one_the_hook_program_handles():
    from cortexmem.hosts.claude_code.hook import EVENTS

    assert set(HOOK_EVENTS) == set(EVENTS)


@pytest.mark.parametrize(
    ("command", "event", "ours"),
    [
        ("cortex-hook Stop", "Stop", True),
        ("/home/me/.venv/bin/cortex-hook Stop", "Stop", True),
        ("'/home/me/my env/bin/cortex-hook' PreToolUse", "PreToolUse", True),
        ('"/home/me/my env/bin/cortex-hook" Stop --verbose', "Stop", True),
        (r"C:\Users\me\venv\Scripts\cortex-hook.exe Stop", "Stop", True),
        ("cortex-hook Stop", "SessionEnd", False),  # another event's argument
        ("cortex-hook", "Stop", False),
        ("uv run cortex-hook Stop", "Stop", False),  # wrapped: a person's own
        ("/bin/cortex-hooks Stop", "Stop", False),
        ("'/unbalanced/cortex-hook Stop", "Stop", False),
    ],
)
def test_which_handlers_are_ours(command: str, event: str, ours: bool):
    assert is_ours({"type": "command", "command": command}, event) is ours


def test_exec_form_and_other_handler_types():
    assert is_ours({"type": "command", "command": "/x/cortex-hook", "args": ["Stop"]}, "Stop")
    assert not is_ours({"type": "prompt", "prompt": "cortex-hook Stop"}, "Stop")
    assert not is_ours({"type": "http", "command": "cortex-hook Stop"}, "Stop")
    assert not is_ours("cortex-hook Stop", "Stop")


def test_merge_updates_an_older_handler_in_place_and_keeps_added_fields():
    old = merge_hooks({}, cortex_hooks("/old/venv/bin/cortex-hook"))
    old["hooks"]["Stop"][0]["matcher"] = "main"  # a person narrowed it
    old["hooks"]["Stop"][0]["hooks"][0].update(timeout=3, statusMessage="saving memory")
    old["hooks"]["SessionEnd"][0]["hooks"][0]["timeout"] = 45
    new = merge_hooks(old, cortex_hooks(CMD))
    (group,) = new["hooks"]["Stop"]
    assert group == {
        "hooks": [
            {
                "type": "command",
                "command": f"{CMD} Stop",
                "timeout": 30,
                "statusMessage": "saving memory",
            }
        ],
        "matcher": "main",
    }
    assert new["hooks"]["SessionEnd"] == cortex_hooks(CMD)["hooks"]["SessionEnd"]
    assert all(len(handlers) == 1 for handlers in find_ours(new).values())


def test_merge_refuses_hooks_it_cannot_hold():
    from cortexmem.hosts.claude_code.settings import SettingsShapeError

    with pytest.raises(SettingsShapeError, match='"hooks" is a list'):
        merge_hooks({"hooks": []}, cortex_hooks(CMD))
    with pytest.raises(SettingsShapeError, match=r'"hooks\.Stop" is an object, not a list'):
        merge_hooks({"hooks": {"Stop": {}}}, cortex_hooks(CMD))


def test_remove_keeps_what_was_empty_before_and_drops_what_we_emptied():
    s = {
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": []}],  # a person's empty group
            "Notification": [],
            "Stop": [
                {
                    "hooks": [
                        {"type": "command", "command": "say done"},
                        {"type": "command", "command": "cortex-hook Stop"},  # pasted by hand
                    ]
                }
            ],
            "SessionEnd": [
                {
                    "matcher": "clear",
                    "hooks": [{"type": "command", "command": "cortex-hook SessionEnd"}],
                }
            ],
        }
    }
    assert remove_hooks(s) == {
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": []}],
            "Notification": [],
            "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}],
        }
    }
    # The one documented ambiguity: an empty list under one of our events (or an empty
    # "hooks" object) that merge filled is gone after remove, which Claude Code reads the same.
    assert remove_hooks(merge_hooks({"hooks": {"Stop": []}}, cortex_hooks(CMD))) == {}
    assert remove_hooks(merge_hooks({"hooks": {}}, cortex_hooks(CMD))) == {}
    assert remove_hooks({"hooks": "not ours to judge"}) == {"hooks": "not ours to judge"}


_WORD = st.text(string.ascii_letters + string.digits + "-_./ *|$", min_size=1, max_size=16)
_COMMANDS = st.one_of(
    _WORD,
    st.sampled_from(
        [
            "npm run lint",
            "./hooks/guard.sh",
            "uv run cortex-hook Stop",
            "cortex-hook",
            "/bin/cortex-hook Notification",
            "cortex-hook PreToolUse",
            "'unbalanced",
            '${CLAUDE_PROJECT_DIR}/.claude/hooks/x.sh "$1"',
        ]
    ),
)


@st.composite
def _handler(draw, event: str) -> dict:
    kind = draw(st.sampled_from(["command", "command", "prompt", "http"]))
    if kind == "prompt":
        return {"type": "prompt", "prompt": draw(_WORD)}
    if kind == "http":
        return {"type": "http", "url": "http://localhost:" + str(draw(st.integers(1, 65535)))}
    handler = {
        "type": "command",
        "command": draw(_COMMANDS.filter(lambda c: not is_ours({"command": c}, event))),
    }
    optional = {"timeout": st.integers(1, 600), "async": st.booleans(), "statusMessage": _WORD}
    for key, values in optional.items():
        if draw(st.booleans()):
            handler[key] = draw(values)
    return handler


@st.composite
def _event_list(draw, event: str) -> list:
    groups = []
    # An empty list under one of our own events is the documented exception (see above).
    for _ in range(draw(st.integers(1 if event in HOOK_EVENTS else 0, 3))):
        group = {}
        if draw(st.booleans()):
            group["matcher"] = draw(_WORD)
        group["hooks"] = draw(st.lists(_handler(event), max_size=3))
        groups.append(group)
    return groups


@st.composite
def _hooks(draw) -> dict:
    events = draw(
        st.lists(st.sampled_from(HOOK_EVENTS + OTHER_EVENTS), min_size=1, max_size=6, unique=True)
    )
    return {event: draw(_event_list(event)) for event in events}


SETTINGS = st.fixed_dictionaries(
    {},
    optional={
        "$schema": st.just("https://json.schemastore.org/claude-code-settings.json"),
        "model": st.sampled_from(["opus", "sonnet", "claude-sonnet-4-5"]),
        "permissions": st.fixed_dictionaries(
            {"allow": st.lists(_WORD, max_size=3)}, optional={"deny": st.lists(_WORD, max_size=3)}
        ),
        "env": st.dictionaries(
            st.text(string.ascii_uppercase + "_", min_size=1, max_size=8), _WORD, max_size=3
        ),
        "hooks": _hooks(),
        "disableAllHooks": st.booleans(),
        "statusLine": st.fixed_dictionaries({"type": st.just("command"), "command": _WORD}),
        "cleanupPeriodDays": st.integers(1, 365),
    },
)
# Where the hook program may live: plain paths, spaces (quoted), Windows-style folders.
HOOK_PATHS = st.builds(
    lambda folder: shlex.quote(folder.rstrip("/") + "/cortex-hook"),
    st.text(string.ascii_letters + string.digits + " -_./\\", min_size=1, max_size=30),
)


@given(SETTINGS, HOOK_PATHS)
@settings(max_examples=300, deadline=None)
def test_merge_is_idempotent_and_remove_undoes_it(s: dict, command: str):
    ours = cortex_hooks(command)
    snapshot = json.dumps(s)
    merged = merge_hooks(s, ours)
    assert json.dumps(s) == snapshot  # the input is never mutated
    assert merge_hooks(merged, ours) == merged
    assert remove_hooks(merged) == s
    assert json.dumps(remove_hooks(merged)) == json.dumps(s)  # key order too
    assert list(merged)[: len(s)] == list(s)
    found = find_ours(merged)
    assert list(found) == [e for e in merged["hooks"] if e in HOOK_EVENTS]
    assert set(found) == set(HOOK_EVENTS)
    for event, handlers in found.items():
        assert handlers == [ours["hooks"][event][0]["hooks"][0]]


@given(SETTINGS, HOOK_PATHS, HOOK_PATHS)
@settings(max_examples=150, deadline=None)
def test_a_moved_environment_is_updated_not_duplicated(s: dict, old: str, new: str):
    assert merge_hooks(merge_hooks(s, cortex_hooks(old)), cortex_hooks(new)) == merge_hooks(
        s, cortex_hooks(new)
    )


# ---------------------------------------------------------------------------------- the files


def test_fresh_install_writes_settings_and_rules(run, repo: Path):
    out = run("init", "--setup").stdout
    assert "Initialised" in out and "added handlers for 10 events" in out
    path = project_settings(repo)
    text = path.read_text()
    assert json.loads(text) == cortex_hooks(CMD)
    assert text == json.dumps(cortex_hooks(CMD), indent=2) + "\n"
    rules = rules_file(repo).read_text()
    assert rules.startswith(hooks_setup.MARKER) and "[MEMORY:decision]" in rules
    for memory_type in ("architecture", "decision", "pattern", "gotcha", "context", "progress"):
        assert memory_type in rules
    assert (repo / ".cortex" / "cortex.db").is_file()
    assert (repo / ".cortex" / ".gitignore").is_file()
    assert backups(path) == []  # nothing existed to back up
    umask = os.umask(0o022)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask  # like any new file, not mkstemp's 0600


def test_existing_settings_are_kept_and_backed_up(run, repo: Path):
    path = project_settings(repo)
    original = write_json(path, EXISTING)
    run("init", "--setup")
    after = json.loads(path.read_text())
    assert list(after) == list(EXISTING)  # key order kept
    assert {k: v for k, v in after.items() if k != "hooks"} == {
        k: v for k, v in EXISTING.items() if k != "hooks"
    }
    assert after["hooks"]["PreToolUse"][0] == EXISTING["hooks"]["PreToolUse"][0]
    assert after["hooks"]["Stop"][0] == EXISTING["hooks"]["Stop"][0]
    assert after["hooks"]["Notification"] == []
    assert remove_hooks(after) == EXISTING
    (backup,) = backups(path)
    assert backup.read_bytes() == original


def test_second_run_changes_nothing(run, repo: Path):
    path = project_settings(repo)
    write_json(path, EXISTING)
    run("init", "--setup")
    settings_bytes, rules_bytes = path.read_bytes(), rules_file(repo).read_bytes()
    assert len(backups(path)) == 1
    out = run("init", "--setup").stdout
    assert "already installed" in out and "up to date" in out
    assert path.read_bytes() == settings_bytes and rules_file(repo).read_bytes() == rules_bytes
    assert len(backups(path)) == 1  # no new backup


def test_a_moved_environment_is_updated_in_place(run, repo: Path, command):
    run("init", "--setup")
    command("'/new home/venv/bin/cortex-hook'")
    out = run("init", "--setup").stdout
    assert "updated SessionStart" in out
    after = json.loads(project_settings(repo).read_text())
    assert after == cortex_hooks("'/new home/venv/bin/cortex-hook'")
    assert len(backups(project_settings(repo))) == 1


def test_uninstall_restores_the_original(run, repo: Path):
    path = project_settings(repo)
    write_json(path, EXISTING)
    run("init", "--setup")
    out = run("init", "--uninstall").stdout
    assert "removed Cortex's from 10 events" in out
    assert json.loads(path.read_text()) == EXISTING
    assert not rules_file(repo).exists()
    assert len(backups(path)) == 2
    assert "none of Cortex's" in run("init", "--uninstall").stdout
    assert (repo / ".cortex" / "cortex.db").is_file()  # the memory stays


def test_uninstall_after_a_fresh_install_leaves_no_settings_file(run, repo: Path):
    run("init", "--setup")
    out = run("init", "--uninstall").stdout
    assert "held nothing else" in out
    assert not project_settings(repo).exists() and not rules_file(repo).exists()
    (backup,) = backups(project_settings(repo))
    assert json.loads(backup.read_text()) == cortex_hooks(CMD)


def test_a_rules_file_without_the_marker_is_never_touched(run, repo: Path):
    rules = rules_file(repo)
    rules.parent.mkdir(parents=True)
    rules.write_text("# My own memory notes\n")
    result = run("init", "--setup")
    assert rules.read_text() == "# My own memory notes\n"
    assert "kept" in result.stderr and "no Cortex marker" in result.stderr
    assert json.loads(project_settings(repo).read_text()) == cortex_hooks(CMD)  # hooks still in
    result = run("init", "--uninstall")
    assert rules.read_text() == "# My own memory notes\n" and "kept" in result.stderr


def test_our_older_rules_file_is_updated(run, repo: Path):
    rules = rules_file(repo)
    rules.parent.mkdir(parents=True)
    rules.write_text(hooks_setup.MARKER + " -->\nan older version\n")
    assert "Rules: updated" in run("init", "--setup").stdout
    assert rules.read_text() == hooks_setup.RULES_TEXT


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"hooks": {', "is not valid JSON"),
        ("[1, 2]", "holds a JSON array, not an object"),
        ('{"hooks": []}', '"hooks" is a list, not an object'),
        (b"\xff\xfe{}", "is not UTF-8"),
    ],
)
@pytest.mark.parametrize("action", ["--setup", "--uninstall"])
def test_unreadable_settings_stop_before_anything_is_written(
    run, repo: Path, content: str | bytes, message: str, action: str
):
    path = project_settings(repo)
    path.parent.mkdir(parents=True)
    raw = content if isinstance(content, bytes) else content.encode()
    path.write_bytes(raw)
    if action == "--uninstall" and "hooks" in message:
        run("init", action)  # nothing of ours can be in there: nothing to refuse or remove
        assert path.read_bytes() == raw and backups(path) == []
        return
    result = run("init", action, code=1)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "nothing was changed" in lines[0]
    assert path.read_bytes() == raw
    assert backups(path) == [] and not rules_file(repo).exists()
    assert not (repo / ".cortex").exists()  # checked before the store is created


def test_user_scope_writes_under_home(run, repo: Path, home: Path):
    result = run("init", "--setup", "--user")
    assert json.loads((home / ".claude" / "settings.json").read_text()) == cortex_hooks(CMD)
    assert rules_file(home).read_text() == hooks_setup.RULES_TEXT
    assert not (repo / ".claude").exists() and not (repo / ".cortex").exists()
    assert "Initialised" not in result.stdout
    run("init", "--uninstall", "--user")
    assert not (home / ".claude" / "settings.json").exists() and not rules_file(home).exists()


def test_both_scopes_with_different_commands_get_a_note(run, command):
    command("/old/venv/bin/cortex-hook")
    run("init", "--setup", "--user")
    command(CMD)
    result = run("init", "--setup")
    assert "note:" in result.stderr and "runs both" in result.stderr
    assert "cortex init --uninstall --user" in result.stderr


def test_dry_run_writes_nothing(run, repo: Path):
    path = project_settings(repo)
    original = write_json(path, EXISTING)
    out = run("init", "--setup", "--dry-run").stdout
    assert f"+++ {path}" in out and f'+            "command": "{CMD} Stop"' in out
    assert "would add handlers for 10 events" in out and "Dry run: nothing was written." in out
    assert path.read_bytes() == original and backups(path) == []
    assert not rules_file(repo).exists() and not (repo / ".cortex").exists()
    report = json.loads(run("init", "--uninstall", "--dry-run", "--json").stdout)
    assert report["dry_run"] and report["settings"]["removed"] == [] and report["diff"] == ""


def test_json_output(run, repo: Path):
    report = json.loads(run("init", "--setup", "--json").stdout)
    assert report["action"] == "setup" and report["scope"] == "project"
    assert report["store"]["created"] and report["store"]["path"].endswith("cortex.db")
    assert report["settings"] == {
        "path": str(project_settings(repo)),
        "changed": True,
        "added": list(HOOK_EVENTS),
        "updated": [],
        "removed": [],
        "deleted": False,
        "backup": None,
    }
    assert report["rules"] == {"path": str(rules_file(repo)), "action": "created"}
    assert report["hook_command"] == CMD and report["diff"] is None
    again = json.loads(run("init", "--uninstall", "--json").stdout)
    assert again["settings"]["removed"] == list(HOOK_EVENTS) and again["settings"]["deleted"]
    assert again["rules"]["action"] == "removed" and again["settings"]["backup"]


def test_plain_init_prints_the_hooks_to_paste(run, repo: Path):
    out = run("init").stdout
    assert "Initialised" in out and "cortex init --setup" in out
    assert json.loads(out[out.index("\n{") :]) == cortex_hooks(CMD)
    assert not (repo / ".claude").exists()
    data = json.loads(run("init", "--json").stdout)
    assert data["hooks"] == cortex_hooks(CMD) and data["store"]["created"] is False


def test_the_settings_go_to_the_top_of_the_working_tree(run, repo: Path):
    sub = repo / "src" / "pkg"
    sub.mkdir(parents=True)
    run("init", "--setup", cwd=sub)
    assert project_settings(repo).is_file() and not (sub / ".claude").exists()


def test_a_symlinked_settings_file_is_written_through_its_link(run, repo: Path, tmp_path: Path):
    real = tmp_path / "dotfiles" / "claude-settings.json"
    write_json(real, {"model": "opus"})
    link = project_settings(repo)
    link.parent.mkdir(parents=True)
    link.symlink_to(real)
    run("init", "--setup")
    assert link.is_symlink()
    assert json.loads(real.read_text()) == {"model": "opus", **cortex_hooks(CMD)}
    run("init", "--uninstall")
    assert link.is_symlink() and json.loads(real.read_text()) == {"model": "opus"}


def test_usage_errors(run):
    assert "--setup or --uninstall" in run("init", "--user", code=2).stderr
    assert "--setup or --uninstall" in run("init", "--dry-run", code=2).stderr
    assert "cannot be combined" in run("init", "--setup", "--uninstall", code=2).stderr


def test_help_explains_the_options(run):
    out = run("init", "--help").stdout
    for option in ("--setup", "--user", "--uninstall", "--dry-run", "--json", "cortex-hook"):
        assert option in out


def test_hook_command_is_the_script_beside_the_interpreter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    folder = tmp_path / "my env" / "bin"
    folder.mkdir(parents=True)
    (folder / "python").touch()
    monkeypatch.setattr("sys.executable", str(folder / "python"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    from cortexmem.hosts.claude_code.install import hook_command

    assert hook_command() == "cortex-hook"  # nowhere: the bare name (and a warning)
    (folder / "cortex-hook").touch()
    assert hook_command() == shlex.quote(str(folder / "cortex-hook"))
    assert shlex.split(hook_command()) == [str(folder / "cortex-hook")]
    assert is_ours({"type": "command", "command": f"{hook_command()} Stop"}, "Stop")


def test_a_missing_hook_program_is_warned_about(run, command):
    command("cortex-hook")
    result = run("init", "--setup")
    assert "warning: cortex-hook is neither beside this Python nor on PATH" in result.stderr
