"""Shared fixtures: real SQLite files in temporary folders, real git repositories."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cortexmem.services.context import Context

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Cortex Tests",
    "GIT_AUTHOR_EMAIL": "tests@example.invalid",
    "GIT_COMMITTER_NAME": "Cortex Tests",
    "GIT_COMMITTER_EMAIL": "tests@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env={**os.environ, **GIT_ENV},
        check=True,
        capture_output=True,
        text=True,
    )
    return result.stdout.strip()


# ----------------------------------------------------------------- whole cortex processes

PROBE = """
import sys
sys.argv = ["cortex", *sys.argv[1:]]
try:
    from cortexmem.cli.app import main
    main()
except SystemExit as exit:
    code = exit.code or 0
else:
    code = 0
heavy = sorted(m for m in ("rich", "numpy", "onnxruntime", "tokenizers", "torch", "httpx")
               if m in sys.modules)
sys.stderr.write("IMPORTED:" + ",".join(heavy) + "\\n")
sys.exit(code)
"""


def cortex(*args: str, cwd: Path, input: str | None = None) -> subprocess.CompletedProcess[str]:
    """``cortex ARGS`` as a whole process, reporting on stderr which heavy modules it loaded."""
    return subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        input=input,
        timeout=60,
    )


def imported(result: subprocess.CompletedProcess[str]) -> list[str]:
    line = [x for x in result.stderr.splitlines() if x.startswith("IMPORTED:")][-1]
    return [m for m in line.removeprefix("IMPORTED:").split(",") if m]


@pytest.fixture(scope="session", autouse=True)
def recall_servers_stay_in_the_test_run(tmp_path_factory: pytest.TempPathFactory):
    """A hook may start a project's recall server in the background. In tests its socket goes
    to a private folder (short: Unix socket paths are limited to ~100 bytes) and it exits after
    10 idle seconds; at the end every server still running is stopped."""
    import shutil
    import tempfile

    runtime = tempfile.mkdtemp(prefix="cx-", dir="/tmp")
    saved = {k: os.environ.get(k) for k in ("XDG_RUNTIME_DIR", "CORTEX_SERVER_IDLE")}
    os.environ["XDG_RUNTIME_DIR"] = runtime
    os.environ["CORTEX_SERVER_IDLE"] = "10"
    yield
    from cortexmem.recall import client as recall_client

    folder = Path(recall_client.runtime_dir())
    for sock in folder.glob("*.sock") if folder.is_dir() else []:
        recall_client.ask(sock.stem, {"op": "stop"}, 2.0)
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    shutil.rmtree(runtime, ignore_errors=True)


@pytest.fixture(autouse=True)
def cortex_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own global store; none ever touches ~/.cortex."""
    home = tmp_path / "cortex-home"
    monkeypatch.setenv("CORTEX_HOME", str(home))
    return home


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository on branch main with one commit."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("hello\n")
    git(root, "add", "README.md")
    git(root, "commit", "-q", "-m", "first")
    return root


@pytest.fixture
def ctx(repo: Path):
    with Context.for_cwd(repo) as context:
        yield context
