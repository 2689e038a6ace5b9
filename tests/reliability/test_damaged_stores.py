"""Files at ``.cortex/cortex.db`` that are not a sound Cortex store: someone else's SQLite file,
text, random bytes, a truncated or page-damaged store, a store of a newer Cortex. Each is
refused with one line (CLI exit 1, hook exit 0 and one log line) and left byte for byte as it
was; a damaged store points at `cortex restore`, which brings the newest backup back."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from cortexmem.errors import NotCortexStore, SchemaTooNew, StoreCorrupt
from cortexmem.model import Memory
from cortexmem.store.migrations.loader import head_version
from cortexmem.store.sqlite.store import SQLiteStore

from conftest import cortex, git

HOOK = [sys.executable, "-c", "from cortexmem.hosts.claude_code.hook import run; run()"]
EXAMPLE = (
    Path(__file__).resolve().parents[2]
    / "examples/sessions/-home-dev-payments-api/424b1fee-9709-4315-85d9-5954058b4714.jsonl"
)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def sidecars(path: Path) -> list[str]:
    return [s for s in ("-wal", "-shm", "-journal") if Path(f"{path}{s}").exists()]


def run_hook(event: str, payload: dict, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*HOOK, event],
        input=json.dumps(payload),
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "CLAUDE_PROJECT_DIR": str(cwd)},
        timeout=60,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / ".cortex").mkdir()
    return root


def foreign_sqlite(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    conn.executemany("INSERT INTO invoices (total) VALUES (?)", [(i * 1.5,) for i in range(50)])
    conn.commit()
    conn.close()


def real_store(path: Path, memories: int = 300) -> None:
    with SQLiteStore.open(path) as store:
        for i in range(memories):
            store.add_memory(
                Memory(
                    f"memory number {i}: the retry budget of service {i} is {i % 7} s",
                    memory_type="gotcha",
                )
            )
        store.backup("test")


def page_damaged(path: Path) -> None:
    real_store(path)
    size = path.stat().st_size
    with path.open("r+b") as fh:
        for page in (size // 3, size // 2, 2 * size // 3):
            fh.seek(page // 4096 * 4096)
            fh.write(os.urandom(4096))


def truncated(path: Path) -> None:
    real_store(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])


def newer(path: Path) -> None:
    real_store(path, 5)
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {head_version() + 5}")
    conn.close()


MAKERS = {
    "foreign-sqlite": foreign_sqlite,
    "text": lambda p: p.write_text("these are my notes, not a database\n" * 40),
    "random-bytes": lambda p: p.write_bytes(os.urandom(8192)),
    "zero-header": lambda p: p.write_bytes(b"\0" * 4096),
    "header-only": lambda p: p.write_bytes(b"SQLite format 3\x00" + b"\0" * 20),
    "truncated-store": truncated,
    "page-damaged-store": page_damaged,
    "newer-cortex": newer,
}


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_open_refuses_and_leaves_the_file_as_it_was(tmp_path: Path, kind: str):
    path = tmp_path / "cortex.db"
    MAKERS[kind](path)
    before, around = digest(path), sidecars(path)
    expected = SchemaTooNew if kind == "newer-cortex" else StoreCorrupt
    with pytest.raises(expected) as caught:
        SQLiteStore.open(path)
    assert "\n" not in str(caught.value) and str(path) in str(caught.value)
    assert digest(path) == before
    assert sidecars(path) == around  # nothing new beside it (a WAL store keeps its -wal)
    if kind == "foreign-sqlite":
        assert isinstance(caught.value, NotCortexStore)
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 0
        conn.close()
    if kind == "page-damaged-store":
        assert "cortex restore" in str(caught.value) and "newest backup" in str(caught.value)


def test_new_stores_are_marked_with_the_application_id(tmp_path: Path):
    path = tmp_path / "cortex.db"
    SQLiteStore.open(path).close()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA application_id").fetchone()[0] == 0x43525458
    conn.close()


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["foreign-sqlite", "page-damaged-store", "random-bytes"])
def test_cli_and_hooks_refuse_with_one_line(project: Path, kind: str):
    db = project / ".cortex" / "cortex.db"
    MAKERS[kind](db)
    before, around = digest(db), sidecars(db)
    ingest = ["ingest", "--into", str(project), str(EXAMPLE)]
    for args in (["status"], ["remember", "use tabs"], ["export"], ingest):
        result = cortex(*args, cwd=project)
        assert result.returncode == 1, (args, result.stderr)
        message = [ln for ln in result.stderr.splitlines() if not ln.startswith("IMPORTED:")]
        assert len(message) == 1 and "Traceback" not in result.stderr, (args, result.stderr)
        assert str(db) in message[0]
        assert digest(db) == before and sidecars(db) == around
    log = project / ".cortex" / "cortex.log"
    payload = {"session_id": "s-1", "cwd": str(project), "transcript_path": str(EXAMPLE)}
    stop = run_hook("Stop", {**payload, "hook_event_name": "Stop"}, project)
    assert stop.returncode == 0 and stop.stdout == ""
    lines = [ln for ln in log.read_text().splitlines() if str(db) in ln]
    assert len(lines) == 1 and "Stop failed" in lines[0]
    start = run_hook("SessionStart", {**payload, "source": "startup"}, project)
    assert start.returncode == 0
    context = json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("⚠ the memory store is damaged")
    assert len([ln for ln in log.read_text().splitlines() if str(db) in ln]) == 2
    assert digest(db) == before and sidecars(db) == around


@pytest.mark.slow
def test_restore_replaces_a_damaged_store_and_keeps_it_aside(project: Path):
    db = project / ".cortex" / "cortex.db"
    page_damaged(db)
    damaged = digest(db)
    status = cortex("status", cwd=project)
    assert status.returncode == 1 and "cortex restore" in status.stderr
    result = cortex("restore", "--yes", cwd=project)
    assert result.returncode == 0, result.stderr
    with SQLiteStore.open(db) as store:
        assert store.counts().memories == 300
        assert store.integrity_check() == []
    kept = list((project / ".cortex" / "backups").glob("cortex.db.damaged-*"))
    assert len(kept) == 1 and digest(kept[0]) == damaged
    assert cortex("status", cwd=project).returncode == 0


def test_status_runs_a_full_integrity_check(ctx):
    from cortexmem.services.status import status

    ctx.writable("project").add_memory(
        Memory("the cache is warmed at boot", memory_type="decision")
    )
    assert status(ctx)["stores"]["project"]["integrity"] == ["ok"]


def test_quick_check_runs_once_per_change_of_the_file(tmp_path: Path, monkeypatch):
    from cortexmem.store.sqlite import store as store_module

    path = tmp_path / "cortex.db"
    real_store(path, 20)
    store_module._VERIFIED.clear()
    SQLiteStore.open(path).close()  # stamped by size and mtime
    store_module._VERIFIED.clear()
    calls = []
    real_connect = sqlite3.connect

    class Spy:
        def __init__(self, conn):
            self.conn = conn

        def execute(self, sql, *args):
            calls.append(sql)
            return self.conn.execute(sql, *args)

        def __getattr__(self, name):
            return getattr(self.conn, name)

    monkeypatch.setattr(store_module.sqlite3, "connect",
                        lambda *a, **k: Spy(real_connect(*a, **k)))  # fmt: skip
    SQLiteStore.open(path).close()
    assert not any("quick_check" in c for c in calls)
