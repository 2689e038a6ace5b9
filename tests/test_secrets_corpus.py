"""Issue 12 fault 3: no secret survives, wherever it sits, and look-alikes do.

The corpus (``secret_corpus``) is generated: every kind of secret, random but valid-shaped, in
shell commands, .env lines, JSON, YAML, prose and URLs, also placed so it straddles the clip
points (300 characters for commands, 120 for plan steps). It goes through ``redact`` directly
and through the real paths end to end; every artefact is then searched byte for byte for each
secret's distinctive parts.
"""

from __future__ import annotations

from collections import Counter

from cortexmem.core.redact import redact, redact_tag
from cortexmem.core.text import clip_redacted
from secret_corpus import Secret, generated_look_alikes, secrets, straddle

CORPUS = list(secrets())


def leaks_by_kind(items: list[tuple[Secret, str]]) -> Counter[str]:
    return Counter(s.kind for s, out in items if any(p in out for p in s.parts))


def placements(secret: Secret) -> list[str]:
    text = secret.text
    return [text] + [straddle(text, secret.value, cut, k) for cut in (300, 120) for k in (1, 5, 11)]


def test_the_corpus_covers_every_kind():
    kinds = {s.kind for s in CORPUS}
    assert len(kinds) >= 24, kinds
    assert len(CORPUS) >= 300


def test_redact_leaves_no_secret_of_any_kind():
    results = [(s, redact(text)) for s in CORPUS for text in placements(s)]
    assert not leaks_by_kind(results), leaks_by_kind(results)


def test_clipping_after_redaction_keeps_no_prefix():
    results = [
        (s, clip_redacted(text, cut))
        for s in CORPUS
        for text in placements(s)
        for cut in (300, 120)
    ]
    assert not leaks_by_kind(results), leaks_by_kind(results)


def test_secrets_in_tags_are_redacted_before_lower_casing():
    results = [(s, redact_tag(s.value).lower()) for s in CORPUS if " " not in s.value]
    lowered = [(s, redact_tag(s.value.lower())) for s in CORPUS if len(s.value) >= 20]
    assert not leaks_by_kind(results), leaks_by_kind(results)
    assert not leaks_by_kind(lowered), leaks_by_kind(lowered)


def test_a_documents_path_in_a_tag_survives():
    """A decision a document lists is tagged with the document's path; an absolute path with
    capitals is words joined, not a token (it was redacted, and the document's later
    versions could no longer withdraw the decision)."""
    paths = ("/Users/x/Projects/skills/docs/ARCHITECTURE_v2.md",
             "/tmp/walk1/p1/docs/plan-2026-01.md", "docs/configuration-reference.md")  # fmt: skip
    for path in paths:
        assert redact_tag(f"doc:{path}") == f"doc:{path}"


def test_look_alikes_survive():
    texts = generated_look_alikes()
    destroyed = [t for t in texts if redact(t) != t]
    assert len(destroyed) <= len(texts) // 100, destroyed


# ------------------------------------------------------------------ end to end, every artefact

import json  # noqa: E402
import os  # noqa: E402
import select  # noqa: E402
import sqlite3  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

CLI = [sys.executable, "-m", "cortexmem"]
HOOK = [sys.executable, "-c", "from cortexmem.hosts.claude_code.hook import run; run()"]


def sample(per_kind: int = 2) -> list[Secret]:
    seen: Counter[str] = Counter()
    out = []
    for s in CORPUS:
        if seen[s.kind] < per_kind and "\n" not in s.text:
            seen[s.kind] += 1
            out.append(s)
    return out


def _line(session: str, cwd: Path, n: int, role: str, content: object, **extra: object) -> str:
    record = {
        "parentUuid": None, "isSidechain": False, "userType": "external", "cwd": str(cwd),
        "sessionId": session, "version": "2.1.14", "gitBranch": "main", "type": role,
        "message": {"role": role, "content": content}, "uuid": f"{session}-{n:05d}",
        "timestamp": f"2026-03-02T09:{n // 60 % 60:02d}:{n % 60:02d}.000Z", **extra,
    }  # fmt: skip
    return json.dumps(record)


def transcript(session: str, cwd: Path, items: list[Secret]) -> str:
    """A Claude Code transcript whose prose, Bash commands and TodoWrite steps hold secrets."""
    lines, n = [], 0
    for i, s in enumerate(items):
        command = straddle(s.text, s.value, 300, 3 + i % 9)
        step = straddle(s.text, s.value, 120, 3 + i % 9)
        tid, pid = f"toolu_b{i:04d}", f"toolu_t{i:04d}"
        prose = f"We decided to keep the config as is: {s.text}. [MEMORY: gotcha] {s.text}"
        lines.append(_line(session, cwd, n := n + 1, "user", f"Please run this: {s.text}"))
        lines.append(_line(session, cwd, n := n + 1, "assistant", [
            {"type": "text", "text": prose},
            {"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": command}},
        ]))  # fmt: skip
        lines.append(_line(session, cwd, n := n + 1, "user", [
            {"tool_use_id": tid, "type": "tool_result", "is_error": True,
             "content": f"Error: authentication failed for {s.text}"}],
            toolUseResult={"stdout": "", "stderr": f"Error: auth failed {s.text}",
                           "interrupted": False}))  # fmt: skip
        todos = [{"content": step, "status": "in_progress", "activeForm": step}]
        lines.append(
            _line(
                session,
                cwd,
                n := n + 1,
                "assistant",
                [{"type": "tool_use", "id": pid, "name": "TodoWrite", "input": {"todos": todos}}],
            )
        )
        lines.append(_line(session, cwd, n := n + 1, "user", [
            {"tool_use_id": pid, "type": "tool_result", "content": "Todos have been modified"}],
            toolUseResult={"oldTodos": [], "newTodos": todos}))  # fmt: skip
    return "\n".join(lines) + "\n"


def mcp_remember(repo: Path, texts: list[tuple[str, list[str]]]) -> list[str]:
    """Each text through the MCP server's ``remember`` tool, on the real stdio process."""
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(repo)}
    proc = subprocess.Popen([*CLI, "mcp-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env, cwd=repo)  # fmt: skip
    assert proc.stdin and proc.stdout
    answers = []

    def send(message: dict) -> None:
        proc.stdin.write(json.dumps(message).encode() + b"\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]

    def receive() -> str:
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        assert ready, "the MCP server did not answer"
        return proc.stdout.readline().decode()  # type: ignore[union-attr]

    try:
        send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}})  # fmt: skip
        receive()
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for i, (text, tags) in enumerate(texts, 1):
            args = {"text": text, "memory_type": "gotcha", "tags": tags}
            send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                  "params": {"name": "remember", "arguments": args}})  # fmt: skip
            answers.append(receive())
    finally:
        proc.stdin.close()
        proc.wait(30)
    return answers


def artefact_bytes(*roots: Path) -> dict[str, bytes]:
    for root in roots:
        for db in root.rglob("*.db"):
            with sqlite3.connect(db) as conn:
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    found = {}
    for root in roots:
        for path in root.rglob("*"):
            if path.is_file() and ".git" not in path.relative_to(root).parts:
                found[str(path)] = path.read_bytes()
    return found


def test_no_secret_reaches_any_artefact(repo: Path, tmp_path: Path, cortex_home: Path):
    items = sample()
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(repo)}

    def cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([*CLI, *args], cwd=repo, env=env, input=stdin,
                              capture_output=True, timeout=120)  # fmt: skip

    assert cli("init").returncode == 0
    for s in items:  # cortex remember, with the secret in the text and in a tag
        tag = s.value if " " not in s.value else "deploy"
        result = cli("remember", "-t", "gotcha", "-T", tag, "-T", "ops", f"Careful: {s.text}")
        assert result.returncode == 0, result.stderr.decode()
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    live = sessions / "live.jsonl"
    live.write_text(transcript("live-1", repo, items))
    payload = {"session_id": "live-1", "cwd": str(repo), "transcript_path": str(live)}
    hook = subprocess.run([*HOOK, "Stop"], input=json.dumps(payload).encode(), cwd=repo,
                          env=env, capture_output=True, timeout=120)  # fmt: skip
    assert hook.returncode == 0
    old = sessions / "old.jsonl"
    old.write_text(transcript("old-1", repo, list(reversed(items))))
    assert cli("ingest", str(old)).returncode == 0
    answers = mcp_remember(repo, [(f"Remember: {s.text}", [s.value[:60]]) for s in items])
    assert all('"result"' in a for a in answers), answers[:2]
    assert cli("brief", "--write").returncode == 0
    export = tmp_path / "export"
    export.mkdir()
    (export / "export.jsonl").write_bytes(cli("export").stdout)
    (export / "recall.txt").write_bytes(cli("recall", "deploy key password token").stdout)

    with sqlite3.connect(repo / ".cortex" / "cortex.db") as conn:
        stored = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
        events = conn.execute("SELECT count(*) FROM events").fetchone()[0]
    assert stored >= len(items) and events > len(items)  # the paths really stored things

    files = artefact_bytes(repo, cortex_home, export)
    assert any(name.endswith("cortex-briefing.md") for name in files)
    leaks: Counter[str] = Counter()
    where: dict[str, set[str]] = {}
    for s in items:
        for part in s.parts:
            needle = part.encode()
            hits = {name for name, data in files.items() if needle in data}
            if hits:
                leaks[s.kind] += 1
                where.setdefault(s.kind, set()).update(hits)
    assert not leaks, (dict(leaks), where)
