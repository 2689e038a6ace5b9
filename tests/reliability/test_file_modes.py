"""Memory is private: under umask 022 every file Cortex creates in a whole session run (init,
remember, a Stop on a real transcript, SessionStart, export, backup, lifecycle, consolidate)
is 0600 and every folder 0700, except the projections meant for git. Plus the rest of what
a killed or read-only run leaves: stale temporary files, recall server lock files, a
read-only store that still answers."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cortexmem.project.files import write_atomic
from cortexmem.store.sqlite.store import SQLiteStore

from conftest import git

HOOK = [sys.executable, "-c", "from cortexmem.hosts.claude_code.hook import run; run()"]
CLI = [sys.executable, "-m", "cortexmem"]
EXAMPLE = (
    Path(__file__).resolve().parents[2]
    / "examples/sessions/-home-dev-payments-api/424b1fee-9709-4315-85d9-5954058b4714.jsonl"
)
GIT_MEANT = {"decisions.md", "decisions-archive.md", "active-plan.md", ".gitignore"}


def run(cmd: list[str], cwd: Path, data: str | None = None) -> subprocess.CompletedProcess[str]:
    def umask022() -> None:
        os.umask(0o022)

    result = subprocess.run(
        cmd, cwd=cwd, input=data, capture_output=True, text=True, timeout=120, preexec_fn=umask022
    )
    assert result.returncode == 0, (cmd, result.stderr)
    return result


def readable_by_others(*roots: Path) -> list[str]:
    found = []
    for root in roots:
        paths = [root, *root.rglob("*")] if root.is_dir() else [root]
        for path in paths:
            if path.is_symlink() or not path.exists():
                continue
            mode = path.stat().st_mode
            if path.is_file() and path.name in GIT_MEANT and path.parent.name == ".cortex":
                continue
            if mode & 0o077:
                found.append(f"{oct(stat.S_IMODE(mode))} {path}")
    return found


@pytest.mark.slow
def test_a_whole_session_leaves_nothing_readable_by_others(tmp_path: Path, cortex_home: Path):
    root = tmp_path / "proj"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    transcript = tmp_path / "session.jsonl"
    shutil.copy(EXAMPLE, transcript)
    run([*CLI, "init"], root)
    run([*CLI, "remember", "We decided to keep retries at 3 attempts", "-t", "decision"], root)
    payload = {"session_id": "s-1", "cwd": str(root), "transcript_path": str(transcript)}
    run([*HOOK, "Stop"], root, json.dumps({**payload, "hook_event_name": "Stop"}))
    run([*HOOK, "SessionStart"], root, json.dumps({**payload, "source": "startup"}))
    run([*CLI, "export", "-o", str(root / ".cortex" / "export.jsonl")], root)
    run([*CLI, "remember", "--global", "Prefer small commits"], root)
    run([*CLI, "lifecycle"], root)
    run([*CLI, "consolidate", "--help"], root)
    run([*CLI, "reset", "--yes"], root)  # takes a backup
    run([*CLI, "restore", "--yes"], root)
    rules = sorted((root / ".claude" / "rules").glob("cortex-*"))
    assert (root / ".cortex" / "cortex.db").exists() and rules
    assert list((root / ".cortex" / "backups").glob("*.db"))
    exposed = readable_by_others(root / ".cortex", cortex_home, *rules)
    assert exposed == []
    projections = [root / ".cortex" / n for n in ("decisions.md",)]
    assert all(p.stat().st_mode & 0o044 for p in projections if p.exists())


def test_a_tool_hook_that_runs_first_creates_cortex_home_private(tmp_path: Path, cortex_home):
    """The first thing to run in a fresh install may be a tool hook spooling a call: the
    folder of every project's memory is 0700 from then on, not once the CLI tightens it."""
    payload = {"session_id": "s-1", "cwd": str(tmp_path), "hook_event_name": "PostToolUse",
               "tool_name": "Bash", "tool_input": {"command": "uv run pytest"},
               "tool_response": {"stdout": "1 passed"}, "tool_use_id": "toolu_1"}  # fmt: skip
    assert not cortex_home.exists()
    run([*HOOK, "PostToolUse"], tmp_path, json.dumps(payload))
    assert list((cortex_home / "observations").iterdir())  # the call was spooled
    assert readable_by_others(cortex_home) == []


def test_existing_open_files_are_closed_on_open(tmp_path: Path):
    path = tmp_path / "cortex.db"
    SQLiteStore.open(path).close()
    os.chmod(path, 0o644)
    with SQLiteStore.open(path) as store:
        store.backup("x")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    for backup in (tmp_path / "backups").iterdir():
        assert not backup.stat().st_mode & 0o077


def test_wal_and_shm_follow_the_store_mode(tmp_path: Path):
    old = os.umask(0o022)
    try:
        with SQLiteStore.open(tmp_path / "cortex.db") as store:
            store.add_memory  # noqa: B018
            for suffix in ("", "-wal", "-shm"):
                side = Path(f"{tmp_path / 'cortex.db'}{suffix}")
                if side.exists():
                    assert stat.S_IMODE(side.stat().st_mode) == 0o600, suffix
    finally:
        os.umask(old)


def test_private_atomic_writes_and_stale_temporaries(tmp_path: Path):
    target = tmp_path / "cache" / "briefing-x.json"
    old = os.umask(0o022)
    try:
        write_atomic(target, "one", private=True)
        assert stat.S_IMODE(target.stat().st_mode) == 0o600
        assert stat.S_IMODE(target.parent.stat().st_mode) == 0o700
        leftover = target.parent / f".{target.name}.k1ll3d__.tmp"
        fresh = target.parent / f".{target.name}.w0rk1ng_.tmp"
        leftover.write_text("half")
        fresh.write_text("half")
        past = time.time() - 120
        os.utime(leftover, (past, past))
        write_atomic(target, "two", private=True)
        assert not leftover.exists() and fresh.exists()
        shared = tmp_path / "decisions.md"
        write_atomic(shared, "for git")
        assert stat.S_IMODE(shared.stat().st_mode) == 0o644
    finally:
        os.umask(old)


def test_a_read_only_store_still_answers_recall(ctx):
    from cortexmem.model import Memory
    from cortexmem.services.recall import recall

    ctx.writable("project").add_memory(Memory("retries back off exponentially", tags=("net",)))
    path = ctx.db_path("project")
    ctx.close()
    ctx._open["project"] = SQLiteStore.open(path, read_only=True)
    hits = recall(ctx, "retries")
    assert [h.memory.content for h in hits] == ["retries back off exponentially"]


def test_the_briefing_is_returned_when_its_cache_cannot_be_written(ctx, monkeypatch):
    from cortexmem.model import Memory
    from cortexmem.services import briefing_cache, publish

    ctx.writable("project").add_memory(
        Memory("we decided on SQLite for storage", memory_type="decision")
    )

    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Read-only file system")

    monkeypatch.setattr(briefing_cache, "write_cached", refuse)
    published = publish.publish(ctx.paths, write=None, ctx=ctx)
    assert "SQLite" in published.markdown and not published.cached


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file modes")
def test_a_read_only_cortex_folder(ctx):  # pragma: no cover - runs as a normal user
    from cortexmem.model import Memory
    from cortexmem.services.recall import recall

    ctx.writable("project").add_memory(Memory("retries back off exponentially"))
    ctx.close()
    data = ctx.paths.data_dir
    for p in data.rglob("*"):
        p.chmod(0o444 if p.is_file() else 0o555)
    data.chmod(0o555)
    try:
        assert recall(ctx, "retries")
    finally:
        data.chmod(0o700)


def test_the_recall_server_removes_its_lock_file(tmp_path: Path, repo: Path):
    from cortexmem.project.paths import resolve
    from cortexmem.recall import client, server

    key = resolve(repo).project_hash[:16]
    server.run(repo, idle=0.2)
    folder = Path(client.runtime_dir())
    assert not list(folder.glob(f"{key}.*"))


def _read_only_runner(tmp_path: Path) -> tuple[str, Path]:
    """How this run can make ``.cortex`` read-only for a process that is root: a read-only
    bind mount, else an unprivileged user (``setpriv``); ("", reason) when neither works."""
    from mounts import can_mount

    why = can_mount()
    if not why:
        return "mount", tmp_path
    if os.geteuid() == 0 and shutil.which("setpriv"):
        # nobody must reach the project: a folder of its own outside root's private temp dir
        import tempfile

        base = Path(tempfile.mkdtemp(prefix="cortex-ro-"))
        base.chmod(0o755)
        return "setpriv", base
    return "", Path(f"no read-only mechanism: {why}; and not root or no setpriv")


def test_a_read_only_cortex_folder_as_root(tmp_path: Path):
    """``.cortex`` read-only for every process, root included: recall answers, brief prints the
    briefing, SessionStart returns it, nothing raises (a read-only bind mount, else nobody)."""
    from mounts import read_only

    mechanism, base = _read_only_runner(tmp_path)
    if not mechanism:
        pytest.skip(str(base))
    root, home = base / "proj", base / "home"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    env = {**os.environ, "CORTEX_HOME": str(home), "HOME": str(base)}
    env.pop("CLAUDE_PROJECT_DIR", None)
    bin_dir = Path(sys.executable).parent
    prefix: list[str] = []
    if mechanism == "setpriv":
        prefix = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]

    def cortex(*args: str, data: str | None = None, user: bool = False) -> str:
        done = subprocess.run(
            [*(prefix if user else []), *args],
            cwd=root, env=env, input=data, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0 and "Traceback" not in done.stderr, (args, done.stderr)
        return done.stdout

    cortex(
        str(bin_dir / "cortex"), "remember", "we decided on SQLite for storage", "-t", "decision"
    )
    cortex(str(bin_dir / "cortex"), "remember", "retries back off exponentially")
    data = root / ".cortex"
    mounted = contextlib.nullcontext(data) if mechanism == "setpriv" else read_only(data)
    if mechanism == "setpriv":  # readable, not writable, by nobody
        for p in [base, *base.rglob("*")]:
            p.chmod(0o444 if p.is_file() else 0o555)
    try:
        with mounted:
            recalled = cortex(str(bin_dir / "cortex"), "recall", "retries", user=True)
            assert "retries back off exponentially" in recalled
            assert "SQLite" in cortex(str(bin_dir / "cortex"), "brief", user=True)
            payload = {"session_id": "s-1", "cwd": str(root), "source": "startup"}
            start = cortex(str(bin_dir / "cortex-hook"), "SessionStart",
                           data=json.dumps(payload), user=True)  # fmt: skip
            context = json.loads(start)["hookSpecificOutput"]["additionalContext"]
            assert "SQLite" in context
    finally:
        if mechanism == "setpriv":
            for p in [base, *base.rglob("*")]:
                p.chmod(0o700)
            shutil.rmtree(base, ignore_errors=True)
