"""Whole `cortex` processes: exit codes, clean stderr, and what each command imports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import cortex, imported


def test_json_commands_stay_lean(repo: Path):
    assert cortex("remember", "lean imports matter", cwd=repo).returncode == 0
    # (recall loads the model once the store has vectors: `remember` embeds at once, so a
    # remembered memory is found by meaning straight away; a hook never remembers)
    for args in (("status", "--json"),):
        result = cortex(*args, cwd=repo)
        assert result.returncode == 0, result.stderr
        assert imported(result) == [], args
    # a person-facing view loads rich, and only rich
    assert imported(cortex("status", cwd=repo)) == ["rich"]


@pytest.mark.parametrize(
    "args, code, message",
    [
        (("get", "m-missing"), 1, "no memory with id m-missing"),
        (("reset",), 1, "no project store"),
        (("remember", "--priority", "99", "x"), 2, "Invalid value"),
        (("bogus",), 2, "No such command"),
    ],
)
def test_failures_are_one_clear_line(repo: Path, args, code, message):
    result = cortex(*args, cwd=repo)
    assert result.returncode == code
    assert message in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_module_entry_point(repo: Path):
    result = subprocess.run(
        [sys.executable, "-m", "cortexmem", "status", "--json"],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0 and json.loads(result.stdout)["project"] == str(repo)


def run_in_terminal(args: list[str], cwd: Path, answer: str) -> tuple[int, str]:
    """Run `cortex` with a pseudo-terminal as stdin/stdout, as a person would, and answer."""
    import os
    import pty
    import select
    import time

    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "cortexmem", *args],
        cwd=cwd, stdin=follower, stdout=follower, stderr=follower, close_fds=True,
    )  # fmt: skip
    os.close(follower)
    output = b""
    answered = False
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(leader, 4096)
            except OSError:
                break
            if not chunk:
                break
            output += chunk
        if not answered and (b"Archive which?" in output or b"[y/N]" in output):
            os.write(leader, answer.encode() + b"\n")
            answered = True
        if proc.poll() is not None and not ready:
            break
    os.close(leader)
    return proc.wait(timeout=10), output.decode(errors="replace")


def test_forget_query_asks_in_a_terminal(repo: Path):
    # (a real sentence: one word alone is mostly the project label to the embedding model)
    for text in ("redis runs on 6379 locally", "redis cache keys expire hourly",
                 "the frontend uses tailwind for styling"):  # fmt: skip
        assert cortex("remember", text, cwd=repo).returncode == 0
    code, out = run_in_terminal(["forget", "--query", "redis cache"], repo, "1")
    assert code == 0, out
    assert "Archive which?" in out and out.count("Archived ") == 1
    listing = json.loads(cortex("recall", "--json", "redis", cwd=repo).stdout)
    assert len(listing) == 1, listing  # one of the two was archived, the other is still there


def test_reset_asks_in_a_terminal_and_no_means_no(repo: Path):
    assert cortex("remember", "keep this", cwd=repo).returncode == 0
    code, out = run_in_terminal(["reset"], repo, "n")
    assert code == 0 and "Nothing changed" in out
    assert len(json.loads(cortex("recall", "--json", "keep", cwd=repo).stdout)) == 1
