"""`cortex redact`: a store an older Cortex wrote, whose rules let secrets through, taken to
today's rules: in the store, its backups and the files beside it, with nothing else lost."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

import cortexmem.core.redact as redaction_rules
import cortexmem.services.redaction as redaction_service
from cortexmem.cli.app import cli
from cortexmem.hosts.claude_code.reader import READER
from cortexmem.model import Episode, Memory
from cortexmem.services.context import Context
from cortexmem.services.ingest import ingest
from cortexmem.services.redaction import FileLeft, redact_file, text_files

SAMPLE = (
    Path(__file__).parent.parent
    / "examples/sessions/-home-dev-payments-api/424b1fee-9709-4315-85d9-5954058b4714.jsonl"
)
PASSWORD = "hunter2(2)xyz"
TOKEN = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
SECRETS = (PASSWORD.encode(), TOKEN.encode())


def planted_transcript(folder: Path) -> Path:
    """The sample session with secrets in the first prompt, a command and its failure."""
    lines = []
    for n, line in enumerate(SAMPLE.read_text(encoding="utf-8").splitlines()):
        record = json.loads(line)
        content = record.get("message", {}).get("content")
        if n == 1:
            record["message"]["content"] = f"{content} Use DB_PASSWORD={PASSWORD} for the db."
        for block in content if isinstance(content, list) else ():
            if block.get("type") == "tool_use" and block.get("name") == "Bash":
                block["input"]["command"] += f" && echo token {TOKEN}"
            if block.get("type") == "tool_result" and block.get("is_error"):
                block["content"] = f"{block['content']}\nauth failed for {TOKEN}"
        lines.append(json.dumps(record))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / SAMPLE.name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def as_an_older_cortex(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rules that let everything through: what an older Cortex's missed looks like."""
    monkeypatch.setattr(redaction_rules, "_redact", lambda text: text)
    monkeypatch.setattr(redaction_rules, "_redact_memo", lambda text: text)


def leaks(folder: Path) -> list[str]:
    """Every file under ``folder`` that holds a planted secret's bytes anywhere (free pages,
    index segments and the write-ahead log included)."""
    return sorted(
        str(p.relative_to(folder))
        for p in folder.rglob("*")
        if p.is_file() and any(s in p.read_bytes() for s in SECRETS)
    )


@pytest.fixture
def older_store(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``repo`` with a store an older Cortex wrote from the planted session, a backup of it,
    and a log line that quoted a secret."""
    transcript = planted_transcript(tmp_path / "transcripts")
    with monkeypatch.context() as old:
        as_an_older_cortex(old)
        ingest([transcript.parent], reader=READER, into=repo)
        with Context.for_cwd(repo) as ctx:
            ctx.require("project").backup("before-upgrade")
    data = repo / ".cortex"
    (data / "cortex.log").write_text(f"2026-01-01T00:00:00Z hook failed: {TOKEN}\n")
    assert leaks(data), "the older store was meant to hold the secrets"
    return repo


def cortex(repo: Path, *args: str, code: int = 0, input: str | None = None):
    result = CliRunner().invoke(cli, ["-C", str(repo), *args], input=input)
    assert result.exit_code == code, (result.output, result.exception)
    return result


def test_dry_run_says_what_would_change_and_writes_nothing(older_store: Path):
    data = older_store / ".cortex"
    before = {p: p.read_bytes() for p in data.rglob("*") if p.is_file()}
    report = json.loads(cortex(older_store, "redact", "--dry-run", "--json").stdout)
    project = report["stores"]["project"]
    assert report["dry_run"] and project["store"]["rows"]["episodes"] >= 2
    assert {"events", "memories"} <= set(project["store"]["rows"])
    assert next(iter(project["backups"].values()))["rows"] == project["store"]["rows"]
    assert project["files"] == {str(data / "cortex.log"): 1}
    after = {p: p.read_bytes() for p in data.rglob("*") if p.is_file()}
    assert after == before


def test_redact_leaves_no_secret_anywhere_and_loses_nothing(older_store: Path, tmp_path: Path):
    data = older_store / ".cortex"
    with Context.for_cwd(older_store) as ctx:
        counts = ctx.require("project").counts()
    out = cortex(older_store, "redact", "--yes").stdout
    assert "rows changed" in out and "cortex.log: 1 secret redacted" in out
    assert leaks(data) == []
    assert "nothing to redact" in cortex(older_store, "redact", "--dry-run").stdout
    with Context.for_cwd(older_store) as ctx:
        store = ctx.require("project")
        assert store.counts() == counts  # rows rewritten, none lost
        assert store.integrity_check() == []
        said = [e.text for e in store.iter_episodes()]
        assert any("DB_PASSWORD=[REDACTED" in t for t in said)
        # The older Cortex clipped a refused command through the token before redacting:
        # what is left of it is redacted as a token cut short.
        cut = [e for e in store.iter_events() if "[REDACTED:cut-token]" in e.content]
        assert [e.kind for e in cut] == ["preference"]
    # The same session read again from another path (no cursor for it): every event and
    # episode is already there under its new hash, exactly once, but for the one clipped
    # through its secret (today's capture redacts, then clips: another text), and the
    # preference drawn from it.
    again = ingest([planted_transcript(tmp_path / "elsewhere")], reader=READER, into=older_store)
    added = again.projects[str(older_store)]
    assert added["events_added"] == added["memories_added"] == len(cut)
    # Events are append-only again.
    with sqlite3.connect(data / "cortex.db") as conn, pytest.raises(sqlite3.IntegrityError):
        conn.execute("UPDATE events SET content = 'x'")


def test_every_backup_is_redacted_and_still_restores(older_store: Path):
    """A reset and a restore leave three backups (before the upgrade, before the reset, the
    emptied store before the restore: the free pages of an emptied store can still hold what
    was deleted); each is redacted and compacted, and each still restores."""
    data = older_store / ".cortex"
    cortex(older_store, "reset", "--yes")
    cortex(older_store, "restore", "--yes", "--list")
    pre_reset = sorted((data / "backups").glob("*-pre-reset.db"))[-1]
    cortex(older_store, "restore", "--yes", pre_reset.name)
    assert len(list((data / "backups").glob("*.db"))) == 3
    cortex(older_store, "redact", "--yes")
    assert leaks(data) == []
    cortex(older_store, "restore", "--yes", pre_reset.name)
    with Context.for_cwd(older_store) as ctx:
        store = ctx.require("project")
        assert store.counts().memories > 0
        assert any("[REDACTED:github-token]" in e.text for e in store.iter_episodes())
    assert leaks(data) == []


def test_copies_once_redacted_become_one(repo: Path, monkeypatch: pytest.MonkeyPatch):
    """Two episodes that differed only by their secret are one after redaction; the memory
    drawn from the second points at the first."""
    with monkeypatch.context() as old:
        as_an_older_cortex(old)
        with Context.for_cwd(repo) as ctx:
            store = ctx.writable("project")
            first, second = (
                Episode(f"connect with DB_PASSWORD={p}", session_id="s1", line=n)
                for n, p in ((1, PASSWORD), (2, "other(9)pass"))
            )
            memory = Memory("the db password is in the vault")
            store.import_records(
                [memory], [], [], episodes=[first, second], episode_links=[(memory.id, second.id)]
            )
    cortex(repo, "redact", "--yes")
    with Context.for_cwd(repo) as ctx:
        store = ctx.require("project")
        assert [e.id for e in store.iter_episodes()] == [first.id]
        assert [e.id for e in store.episodes_of_memory(memory.id)] == [first.id]


def test_files_a_person_wrote_are_left_alone(older_store: Path):
    data = older_store / ".cortex"
    (data / "ai.yaml").write_text(f"# token {TOKEN}\n")
    review = data / "backups" / "review"
    review.mkdir(parents=True)
    (review / "CLAUDE.md").write_text(f"token {TOKEN}\n")
    quarantine = data / "quarantine" / "records.jsonl"
    quarantine.parent.mkdir()
    quarantine.write_text(json.dumps({"record": {"command": f"curl -H 'token {TOKEN}'"}}) + "\n")
    assert data / "ai.yaml" not in text_files(data)
    assert review / "CLAUDE.md" not in text_files(data)
    assert redact_file(quarantine, apply=True) == 1
    record = json.loads(quarantine.read_text())  # still one JSON record a line
    assert TOKEN not in record["record"]["command"]
    cortex(older_store, "redact", "--yes")
    assert leaks(data) == ["ai.yaml", "backups/review/CLAUDE.md"]


def test_it_asks_first_and_a_script_must_say_yes(older_store: Path):
    data = older_store / ".cortex"
    before = (data / "cortex.db").read_bytes()
    out = cortex(older_store, "redact", code=1).output  # no terminal to ask on
    assert "--yes" in out or "-y" in out
    assert (data / "cortex.db").read_bytes() == before


def test_nothing_stored_yet(repo: Path, tmp_path: Path):
    shutil.rmtree(repo / ".cortex", ignore_errors=True)
    assert "nothing to redact" in cortex(repo, "redact", "--dry-run").stdout


def test_a_pending_calls_path_is_redacted_in_the_saved_state(repo: Path, tmp_path: Path):
    """A transcript read while a Write waits for its result: the call is saved with the
    extractor's state until the result comes, and its path is redacted there too."""
    lines = SAMPLE.read_text(encoding="utf-8").splitlines()
    cut = next(n for n, line in enumerate(lines) if '"name":"Write"' in line.replace(" ", ""))
    record = json.loads(lines[cut])
    for block in record["message"]["content"]:
        if block.get("type") == "tool_use":
            block["input"]["file_path"] = f"/home/dev/payments-api/keys/{TOKEN}/app.py"
    folder = tmp_path / "waiting"
    folder.mkdir()
    (folder / SAMPLE.name).write_text("\n".join([*lines[:cut], json.dumps(record)]) + "\n")
    ingest([folder], reader=READER, into=repo)
    with sqlite3.connect(repo / ".cortex" / "cortex.db") as conn:
        (state,) = conn.execute("SELECT extractor_state FROM extraction_cursors").fetchone()
    assert "/keys/" in state and TOKEN not in state


def test_an_imported_lesson_is_redacted_in_every_field(repo: Path):
    """An export is a file anyone can have edited: a lesson's trigger, source, sessions and
    timeline arrive redacted like its text."""
    from cortexmem.model import Lesson, Trigger

    lesson = Lesson(
        f"when deploying, log in first ({TOKEN})",
        trigger=Trigger(program=f"deploy-{TOKEN}", domain=TOKEN, command=f"login {TOKEN}"),
        sessions=(f"s-{TOKEN}",),
    )
    with Context.for_cwd(repo) as ctx:
        store = ctx.writable("project")
        store.import_records([], [], [], lessons=[lesson],
                             lesson_history={lesson.id: [("2026-01-01T00:00:00.000000Z",
                                                          f"learned {TOKEN}", TOKEN)]})  # fmt: skip
    assert leaks(repo / ".cortex") == []


def test_lines_hooks_append_while_the_log_is_redacted_are_kept(tmp_path: Path):
    """Hooks append to cortex.log at any moment; redacting it rewrites it by a rename. An
    appender holds a shared lock the rewrite waits for, and one that waited finds the name
    now names the new file: every line is kept (one a rewrite was lost before)."""
    import threading
    import time

    from cortexmem.project.log import log_line

    log = tmp_path / "cortex.log"
    lines = 1_000

    def hooks() -> None:
        for n in range(lines):
            log_line(log, f"hook {n} saw {TOKEN}")
            time.sleep(0.0005)

    writer = threading.Thread(target=hooks)
    writer.start()
    rewrites = 0
    while writer.is_alive():
        rewrites += bool(redact_file(log, apply=True))
    writer.join()
    redact_file(log, apply=True)
    kept = log.read_text().splitlines()
    assert rewrites > 20 and TOKEN not in "\n".join(kept)
    assert len(kept) == lines


@pytest.mark.parametrize("pause", ["before its lock", "holding its lock"])
def test_an_appender_paused_across_a_rewrite_keeps_its_line(tmp_path: Path, monkeypatch, pause):
    """A hook the scheduler pauses for 50 ms after opening the log (shown by a second
    review: its line went to the replaced file)."""
    import threading
    import time

    import cortexmem.project.log as project_log

    log = tmp_path / "cortex.log"
    log.write_text(f"old line {TOKEN}\n")
    paused = threading.Event()
    name = "_lock_shared" if pause == "before its lock" else "still_named"
    original = getattr(project_log, name)

    def slow(*args):
        if pause == "before its lock":
            paused.set()
            time.sleep(0.05)
            return original(*args)
        locked = original(*args)
        paused.set()
        time.sleep(0.05)
        return locked

    monkeypatch.setattr(project_log, name, slow)
    writer = threading.Thread(target=project_log.append_line, args=(log, b"the hook's line\n"))
    writer.start()
    paused.wait()
    assert redact_file(log, apply=True) == 1
    writer.join()
    assert log.read_text().splitlines() == ["old line [REDACTED:github-token]", "the hook's line"]


def test_a_key_block_in_a_report_is_redacted_whole(tmp_path: Path):
    """Text files that are not a line per record are redacted whole: a key block spans
    lines, and line by line its base64 lines stayed."""
    body = "\n".join("MIIEowIBAAKCAQEA" + "x7Qz" * 12 for _ in range(6))
    report = tmp_path / "dream" / "report.md"
    report.parent.mkdir()
    report.write_text(f"# Dream\n\n-----BEGIN RSA PRIVATE KEY-----\n{body}\n"
                      "-----END RSA PRIVATE KEY-----\n")  # fmt: skip
    assert redact_file(report, apply=True) == 1
    assert "x7Qz" not in report.read_text() and report.read_text().startswith("# Dream")


def test_a_log_with_bytes_that_are_not_utf8_is_redacted_around_them(tmp_path: Path):
    """A log line a crashed writer cut mid-character made the whole log unreadable as UTF-8,
    and the log was skipped with its secrets: now the odd bytes stay as they were."""
    log = tmp_path / "cortex.log"
    log.write_bytes(b"caf\xe9 cut here\n" + f"hook failed: {TOKEN}\n".encode())
    assert redact_file(log, apply=True) == 1
    assert log.read_bytes() == b"caf\xe9 cut here\nhook failed: [REDACTED:github-token]\n"


def test_a_file_that_cannot_be_checked_is_named_with_why(older_store: Path, monkeypatch):
    """A file too big to be Cortex's, or one another process kept replacing, was passed over
    in silence; the person is told which file still holds what it held, and why."""
    data = older_store / ".cortex"
    (data / "reports").mkdir()
    big = data / "reports" / "huge.txt"
    big.write_text(f"{TOKEN}\n")
    monkeypatch.setattr(redaction_service, "MAX_FILE_BYTES", 10)
    with pytest.raises(FileLeft, match="more than any file Cortex writes"):
        redact_file(big, apply=True)
    report = json.loads(cortex(older_store, "redact", "--yes", "--json", code=1).stdout)
    left = report["stores"]["project"]["left"]
    assert set(left) >= {str(big), str(data / "cortex.log")}
    text = cortex(older_store, "redact", "--dry-run", code=1).stdout
    assert f"{big} not checked (" in text and "anything secret in it is still there" in text


def test_a_json_line_with_a_byte_that_is_not_utf8_keeps_it_as_it_was(tmp_path: Path):
    lines = tmp_path / "records.jsonl"
    lines.write_bytes(b'{"msg": "caf\xe9 ok", "password": "Xk9mPq2vLz77Hq"}\n')
    assert redact_file(lines, apply=True) == 1
    assert lines.read_bytes() == b'{"msg": "caf\xe9 ok", "password": "[REDACTED:assignment]"}\n'


def test_a_json_line_with_half_an_emoji_is_redacted_and_keeps_its_escapes(tmp_path: Path):
    """A lone surrogate escape (an emoji cut in half) crashed the whole run, leaving every
    later file with its secrets; an escaped non-UTF-8 name came back as a raw byte (a second
    review)."""
    lines = tmp_path / "records.jsonl"
    lines.write_text(f'{{"t": "cut \\ud83d", "p": "caf\\udce9.txt", "n": "{TOKEN}"}}\n')
    assert redact_file(lines, apply=True) == 1
    assert lines.read_text() == (
        '{"t": "cut \\ud83d", "p": "caf\\udce9.txt", "n": "[REDACTED:github-token]"}\n'
    )


def test_a_file_replaced_at_every_look_is_named_too(tmp_path: Path, monkeypatch):
    log = tmp_path / "cortex.log"
    log.write_text(f"{TOKEN}\n")
    monkeypatch.setattr(redaction_service, "still_named", lambda fd, path: False)
    with pytest.raises(FileLeft, match="replaced it each time"):
        redact_file(log, apply=True)
    assert TOKEN in log.read_text()


def test_the_briefing_claude_code_reads_is_written_again(older_store: Path, monkeypatch):
    """`.claude/rules/cortex-briefing.md` lies outside .cortex/ and quoted the store as it
    was: redacting the store writes it again."""
    with monkeypatch.context() as old:
        as_an_older_cortex(old)
        cortex(older_store, "remember", "-t", "decision", "-p", "9",
               f"Deploys authenticate with the token {TOKEN}")  # fmt: skip
        cortex(older_store, "brief", "--write")
    rules = older_store / ".claude" / "rules" / "cortex-briefing.md"
    assert TOKEN in rules.read_text()
    out = json.loads(cortex(older_store, "redact", "--yes", "--json").stdout)
    assert out["briefing_written"]  # with --json too
    assert TOKEN not in rules.read_text() and "Deploys authenticate" in rules.read_text()
    with monkeypatch.context() as old:  # a global memory the briefing quotes
        as_an_older_cortex(old)
        cortex(older_store, "remember", "-g", "-t", "decision", "-p", "9",
               f"Every project signs releases with {TOKEN}")  # fmt: skip
        cortex(older_store, "brief", "--write")
    assert TOKEN in rules.read_text()
    assert "again" in cortex(older_store, "redact", "--scope", "global", "--yes").stdout
    assert TOKEN not in rules.read_text() and "signs releases" in rules.read_text()


def test_what_the_learning_loop_keeps_is_redacted_too(repo: Path):
    """An MCP tool is named by its server: an instinct's key and label, a suggestion's
    source and a warning's tool can name it (an independent review found them left)."""
    tool = f"mcp__vault_{TOKEN}__read"
    with Context.for_cwd(repo) as ctx:
        ctx.writable("project")
    with sqlite3.connect(repo / ".cortex" / "cortex.db") as conn:  # as an older Cortex wrote
        conn.execute(
            "INSERT INTO instincts (key, kind, label, rule, confidence, score, observations, "
            "sessions, total_sessions, first_seen, last_seen, status, updated_at) VALUES "
            "(?, 'chain', ?, 'r', 0.9, 0.9, 5, 2, 2, 't', 't', 'active', 't')",
            (f"chain:Read>{tool}>Edit", f"Read->{tool}->Edit"),
        )
    cortex(repo, "redact", "--yes")
    assert leaks(repo / ".cortex") == []
    with sqlite3.connect(repo / ".cortex" / "cortex.db") as conn:
        (key,) = conn.execute("SELECT key FROM instincts").fetchone()
    assert key.startswith("chain:Read>mcp__vault_[REDACTED")


def test_a_log_rotated_while_it_is_redacted_keeps_its_lines_and_no_secret(
    tmp_path: Path, monkeypatch
):
    """A hook rotates the log (over 1 MB) while `cortex redact` rewrites it: the rotation
    waits for the rewrite and finds the log replaced (and smaller), so no copy keeps a secret
    and the hook's line is in the new log (a third review: 138 secrets left in cortex.log.1,
    the hook's line gone)."""
    import threading
    import time

    import cortexmem.services.redaction as service
    from cortexmem.project.log import MAX_LOG_BYTES, log_line

    log = tmp_path / "cortex.log"
    line = f"2026-01-01T00:00:00Z hook saw Bearer {TOKEN}\n"
    log.write_text(line * (MAX_LOG_BYTES // len(line) + 10))
    hook = threading.Thread(target=log_line, args=(log, "the hook's line"))
    real = service.write_atomic

    def slow_write(path, text, **kw):
        hook.start()  # it finds the log over 1 MB and rotates, while this holds it
        time.sleep(0.05)
        return real(path, text, **kw)

    monkeypatch.setattr(service, "write_atomic", slow_write)
    assert redact_file(log, apply=True) > 100
    hook.join()
    rotated = log.with_name("cortex.log.1")
    kept = log.read_text() + (rotated.read_text() if rotated.exists() else "")
    assert TOKEN not in kept and log.read_text().rstrip().endswith("the hook's line")
