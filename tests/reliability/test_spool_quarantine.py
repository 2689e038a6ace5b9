"""One bad spooled tool record never blocks capture of its session (issue 12, fault 1).

The tool hooks accept what Claude Code sends; a ``duration_ms`` past SQLite's integers or a
``tool_use_id`` holding half a surrogate pair used to make every later Stop of the session
fail before the transcript was read. Now the spool writer clamps and mends such fields, and
the drain quarantines a record that still cannot be stored (a log line, a copy under
``.cortex/quarantine/``) and moves its cursor past it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from cortexmem.hosts.claude_code import spool as observe
from cortexmem.services.context import Context

from conftest import cortex

HOOK = [sys.executable, "-c", "from cortexmem.hosts.claude_code.hook import run; run()"]
SESSION = "sess-poisoned-0001"
HUGE = 18446744073709551616  # 2**64: past SQLite's INTEGER


def hook(event: str, data: bytes | dict, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    result = subprocess.run(
        [*HOOK, event],
        input=raw,
        cwd=cwd,
        capture_output=True,
        env={**os.environ, "CLAUDE_PROJECT_DIR": str(cwd)},
        timeout=60,
    )
    assert result.returncode == 0
    assert not result.stdout.strip() or isinstance(json.loads(result.stdout), dict)
    return result


def record(i: int, role: str, content: list | str, cwd: Path, session: str = SESSION) -> str:
    """One transcript line in Claude Code's format."""
    return json.dumps(
        {
            "parentUuid": f"u-{i - 1}" if i else None, "isSidechain": False,
            "userType": "external", "cwd": str(cwd), "sessionId": session,
            "version": "2.1.0", "gitBranch": "main", "type": role, "uuid": f"u-{i}",
            "timestamp": f"2026-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}.000Z",
            "message": {"role": role, "content": content},
        }
    )  # fmt: skip


def said(i: int, text: str, cwd: Path, session: str = SESSION) -> str:
    return record(i, "assistant", [{"type": "text", "text": text}], cwd, session)


def shell(i: int, call: str, command: str, output: str, error: bool, cwd: Path) -> list[str]:
    use = [{"type": "tool_use", "id": call, "name": "Bash", "input": {"command": command}}]
    result = [{"type": "tool_result", "tool_use_id": call, "content": output, "is_error": error}]
    return [record(i, "assistant", use, cwd), record(i + 1, "user", result, cwd)]


def write(path: Path, lines: list[str]) -> None:
    path.write_text("".join(x + "\n" for x in lines), encoding="utf-8")


def stored(repo: Path) -> tuple[list[str], int]:
    with Context.for_cwd(repo) as ctx:
        store = ctx.writable("project")
        return [e.content for e in store.iter_events()], len(list(store.iter_observations()))


def stop(repo: Path, transcript: Path) -> None:
    payload = {"session_id": SESSION, "transcript_path": str(transcript), "cwd": str(repo),
               "hook_event_name": "Stop", "stop_hook_active": False}  # fmt: skip
    hook("Stop", payload, repo)


def test_a_huge_duration_and_a_lone_surrogate_id_do_not_block_the_session(
    repo: Path, tmp_path: Path
):
    post = {"session_id": SESSION, "cwd": str(repo), "hook_event_name": "PostToolUse",
            "tool_name": "Bash", "tool_input": {"command": "pytest -q"}}  # fmt: skip
    hook("PostToolUse", {**post, "tool_use_id": "toolu_big", "duration_ms": HUGE}, repo)
    # As Claude Code would send it: the escape of half a surrogate pair, in the JSON text.
    raw = json.dumps({**post, "tool_use_id": "toolu_X"}).replace("toolu_X", "toolu_\\ud83d")
    hook("PostToolUse", raw.encode(), repo)

    transcript = tmp_path / f"{SESSION}.jsonl"
    first = [said(0, "We decided to use SQLite because it needs no server.", repo)]
    write(transcript, first)
    stop(repo, transcript)
    events, observations = stored(repo)
    assert any("SQLite" in e for e in events), events
    assert observations == 2

    more = [*first, said(1, "We decided to keep the spool append-only for safety.", repo)]
    write(transcript, more)
    stop(repo, transcript)
    events, _ = stored(repo)
    assert any("append-only" in e for e in events), events
    assert not any("failed" in line for line in (repo / ".cortex" / "cortex.log").open())


def poison_spool(session: str) -> Path:
    """A spool as an older writer left it: records no store can hold, between good ones."""
    path = Path(observe.spool_path(session))
    path.parent.mkdir(parents=True, exist_ok=True)
    good = {"p": "post", "t": 1_767_225_600_000_000_000, "tool": "Read", "ok": True}
    lines = [
        json.dumps({**good, "id": "toolu_good1"}),
        json.dumps({**good, "id": "toolu_huge", "ms": HUGE}),
        json.dumps({**good, "id": "toolu_\ud83d"}),  # written as the escape \\ud83d
        json.dumps({**good, "id": "toolu_good2"}),
    ]
    path.write_text("".join(x + "\n" for x in lines), encoding="ascii")
    return path


def test_records_that_cannot_be_stored_are_quarantined_and_the_cursor_moves_on(
    repo: Path, tmp_path: Path
):
    spool = poison_spool(SESSION)
    transcript = tmp_path / f"{SESSION}.jsonl"
    lines = [
        said(0, "We decided to quarantine bad records instead of retrying them.", repo),
        *shell(1, "toolu_t1", "uv run pytest -q", "1 failed, 3 passed", True, repo),
        *shell(3, "toolu_t2", "uv run pytest -q", "4 passed", False, repo),
    ]
    write(transcript, lines)
    stop(repo, transcript)
    events, observations = stored(repo)
    assert any("quarantine bad records" in e for e in events)
    assert any(e.startswith("`uv run pytest -q` failed") for e in events)  # error_resolved
    assert observations == 2  # the two good ones

    quarantine = repo / ".cortex" / "quarantine" / "records.jsonl"
    kept = [json.loads(x) for x in quarantine.read_text().splitlines()]
    assert sorted(k["record"]["id"] for k in kept) == sorted(["toolu_huge", "toolu_\ud83d"])
    assert all(k["source"].startswith("spool ") and k["reason"] for k in kept)
    assert (quarantine.stat().st_mode & 0o777) == 0o600
    log = (repo / ".cortex" / "cortex.log").read_text().splitlines()
    assert sum("quarantined a record" in x for x in log) == 2

    # The cursor is past the bad records: the next Stop takes only what is new.
    with spool.open("a") as fh:
        fh.write(json.dumps({"p": "post", "t": 1_767_225_700_000_000_000, "tool": "Edit",
                             "ok": True, "id": "toolu_good3"}) + "\n")  # fmt: skip
    write(transcript, [*lines, said(5, "We decided to log one line per quarantined record.", repo)])
    stop(repo, transcript)
    events, observations = stored(repo)
    assert observations == 3
    assert any("one line per quarantined record" in e for e in events)
    assert len(quarantine.read_text().splitlines()) == 2  # nothing quarantined twice


def test_ingest_with_a_poisoned_spool_completes_every_file(repo: Path, tmp_path: Path):
    folder = tmp_path / "history"
    folder.mkdir()
    sessions = [f"sess-ingest-{n}" for n in range(3)]
    for n, session in enumerate(sessions):
        write(
            folder / f"{session}.jsonl",
            [said(0, f"We decided to use backend number {n} because it scales.", repo, session)],
        )
    poison_spool(sessions[0])
    poison_spool(sessions[2])
    result = cortex("ingest", str(folder), "--into", str(repo), "--json", cwd=repo)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    events, observations = stored(repo)
    for n in range(3):
        assert any(f"backend number {n}" in e for e in events), events
    assert observations == 4  # the two good records of each poisoned spool
