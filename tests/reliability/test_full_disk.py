"""The disk fills while Cortex writes. A real ``cortex remember`` of a large memory, ``cortex
ingest`` of a real-format transcript, a ``cortex-hook Stop`` and the backup ``cortex reset``
takes first each run on a full disk: the CLI exits 1 with one line on stderr (no traceback),
the hook exits 0 with at most one log line. Once space is back the store passes
``integrity_check``, holds everything committed before, no ``.tmp`` is left, and a normal run
completes with nothing lost or duplicated.

The full disk is a small tmpfs filled with a ballast file (root with mount permission), or
else a file size limit in the child (``RLIMIT_FSIZE``, SIGXFSZ ignored: writes fail EFBIG)."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from mounts import can_mount, fill, tmpfs

from conftest import git
from replay import Snapshot, integrity, snapshot

EXAMPLE = (
    Path(__file__).resolve().parents[2]
    / "examples/sessions/-home-dev-payments-api/424b1fee-9709-4315-85d9-5954058b4714.jsonl"
)
BIN = Path(sys.executable).parent
CORTEX = str(BIN / "cortex")
HOOK = str(BIN / "cortex-hook")
BEFORE = "We decided to keep the retry budget at 3 attempts"
LARGE = "the full payload of the incident report:" + " every line of it" * 6_000
LEAVE_KIB = 48  # free space a tmpfs is filled down to: the store opens, then a write fails
LIMIT = 48 * 1024  # the file size limit in the fallback


@dataclass
class Disk:
    root: Path
    mechanism: str  # "tmpfs" or "rlimit"

    @property
    def project(self) -> Path:
        return self.root / "project"

    @property
    def db(self) -> Path:
        return self.project / ".cortex" / "cortex.db"

    @property
    def log(self) -> Path:
        return self.project / ".cortex" / "cortex.log"

    @property
    def env(self) -> dict[str, str]:
        env = {**os.environ, "CORTEX_HOME": str(self.root / "home")}
        env.pop("CLAUDE_PROJECT_DIR", None)
        return env

    def run(
        self,
        argv: list[str],
        *,
        full: bool = False,
        data: str | None = None,
        leave: int = LEAVE_KIB,
    ) -> subprocess.CompletedProcess[str]:
        with self.filled(leave) if full else contextlib.nullcontext() as preexec:
            return subprocess.run(
                argv,
                cwd=self.project,
                env=self.env,
                input=data,
                capture_output=True,
                text=True,
                timeout=120,
                preexec_fn=preexec,
            )

    @contextlib.contextmanager
    def filled(self, leave: int) -> Iterator[Callable[[], None] | None]:
        if self.mechanism == "rlimit":

            def limit() -> None:
                signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
                resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))

            yield limit
            return
        ballast = fill(self.root, leave)
        try:
            yield None
        finally:
            ballast.unlink()

    def leftover_tmp(self) -> list[Path]:
        return sorted(p for p in self.root.rglob("*.tmp") if ".git" not in p.parts)


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Disk]:
    why = can_mount()
    with tmpfs(tmp_path / "fs", "8m") if not why else contextlib.nullcontext(tmp_path) as root:
        d = Disk(root, "rlimit" if why else "tmpfs")
        d.project.mkdir()
        git(d.project, "init", "-q", "-b", "main")
        done = d.run([CORTEX, "remember", BEFORE, "-t", "decision"])
        assert done.returncode == 0, done.stderr
        yield d


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Snapshot:
    """What a clean ingest of the example leaves (beside the memory remembered before)."""
    d = Disk(tmp_path_factory.mktemp("reference"), "none")
    d.project.mkdir()
    git(d.project, "init", "-q", "-b", "main")
    for argv in ([CORTEX, "remember", BEFORE, "-t", "decision"], ingest_argv(d)):
        assert d.run(argv).returncode == 0
    return snapshot(d.db)


def ingest_argv(d: Disk) -> list[str]:
    return [CORTEX, "ingest", "--into", str(d.project), str(EXAMPLE)]


def stop_payload(d: Disk) -> str:
    return json.dumps(
        {
            "session_id": "424b1fee-9709-4315-85d9-5954058b4714",
            "transcript_path": str(EXAMPLE),
            "cwd": str(d.project),
            "hook_event_name": "Stop",
            "stop_hook_active": False,
        }
    )


def one_line_refusal(d: Disk, done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 1, (done.stdout, done.stderr)
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith("Error: ")
    if d.mechanism == "tmpfs":
        assert "free some space and try again" in lines[0], lines[0]


def sound_and_kept(d: Disk) -> Snapshot:
    assert integrity(d.db) == "ok"
    assert d.leftover_tmp() == []
    snap = snapshot(d.db)
    assert snap.duplicated == 0
    assert BEFORE in contents(d)
    return snap


def contents(d: Disk) -> list[str]:
    conn = sqlite3.connect(f"file:{d.db}?mode=ro", uri=True)
    try:
        return [str(r[0]) for r in conn.execute("SELECT content FROM memories")]
    finally:
        conn.close()


def test_remember_a_large_memory(disk: Disk):
    one_line_refusal(disk, disk.run([CORTEX, "remember", LARGE], full=True))
    sound_and_kept(disk)
    assert LARGE not in contents(disk)
    done = disk.run([CORTEX, "remember", LARGE])
    assert done.returncode == 0, done.stderr
    assert LARGE in contents(disk)


def test_ingest_a_real_transcript(disk: Disk, reference: Snapshot):
    one_line_refusal(disk, disk.run(ingest_argv(disk), full=True))
    sound_and_kept(disk)
    done = disk.run(ingest_argv(disk))
    assert done.returncode == 0, done.stderr
    snap = sound_and_kept(disk)
    assert snap.lost_from(reference) == 0 and snap.extra_over(reference) == 0


def test_a_stop_hook(disk: Disk, reference: Snapshot):
    done = disk.run([HOOK, "Stop"], full=True, data=stop_payload(disk))
    assert done.returncode == 0 and done.stdout == "" and "Traceback" not in done.stderr
    log = disk.log.read_text().splitlines() if disk.log.exists() else []
    assert len(log) <= 1 and all("Stop failed" in line for line in log), log
    sound_and_kept(disk)
    done = disk.run([HOOK, "Stop"], data=stop_payload(disk))
    assert done.returncode == 0
    snap = sound_and_kept(disk)
    assert snap.lost_from(reference) == 0  # the cursor did not pass what was never stored
    assert sum("failed" in line for line in disk.log.read_text().splitlines()) == len(log)


def test_the_backup_before_a_reset(disk: Disk):
    done = disk.run([CORTEX, "ingest", "--into", str(disk.project), str(EXAMPLE)])
    assert done.returncode == 0, done.stderr
    before = sound_and_kept(disk)
    one_line_refusal(disk, disk.run([CORTEX, "reset", "--yes"], full=True))
    after = sound_and_kept(disk)  # nothing reset without its backup
    assert after.lost_from(before) == 0 and after.extra_over(before) == 0
    assert not list((disk.project / ".cortex" / "backups").glob("*"))  # no half a backup
    done = disk.run([CORTEX, "reset", "--yes"])
    assert done.returncode == 0, done.stderr
    backups = list((disk.project / ".cortex" / "backups").glob("*.db"))
    assert len(backups) == 1 and integrity(backups[0]) == "ok"
    assert snapshot(backups[0]).lost_from(before) == 0


def test_no_room_to_open_the_store_is_not_damage(disk: Disk):
    """With no room for the -shm SQLite reads through, the store is not called damaged (which
    would send the user to `cortex restore` or to move it aside)."""
    if disk.mechanism != "tmpfs":
        pytest.skip("needs a file system with no space left at all (a tmpfs)")
    done = disk.run([CORTEX, "remember", "one more thing"], full=True, leave=0)
    one_line_refusal(disk, done)
    assert "damaged" not in done.stderr and "cannot open store" in done.stderr
    sound_and_kept(disk)
