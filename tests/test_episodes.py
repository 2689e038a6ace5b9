"""Episodes: what was said, captured once, redacted before it is cut, chunked, searchable by
words and meaning beside the memories, with its provenance; remember → recall by meaning at
once; recall's "nothing relevant" floor. Real SQLite, real local model where vectors matter."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cortexmem.core.episodes import MAX_CHUNK, EpisodeCollector, chunk_text
from cortexmem.core.fusion import RELEVANCE_FLOOR
from cortexmem.core.session import Block, Entry
from cortexmem.errors import NotFound
from cortexmem.hosts.claude_code.reader import READER
from cortexmem.hosts.claude_code.transcript import DIALECT
from cortexmem.model import ExtractionCursor
from cortexmem.services import capture
from cortexmem.services.context import Context
from cortexmem.services.embedding import Embedder, sync, sync_context
from cortexmem.services.memories import remember
from cortexmem.services.recall import recall
from cortexmem.store.sqlite.store import SQLiteStore

from conftest import SHARED_DATA

REAL = SHARED_DATA / "transcripts" / "claude-code-log-real_projects"


def record(i: int, text: str, role: str = "user", **extra: object) -> str:
    content: object = text if role == "user" else [{"type": "text", "text": text}]
    return json.dumps(
        {
            "type": role,
            "uuid": f"u-{i}",
            "sessionId": "sess-ep",
            "timestamp": f"2026-01-01T00:00:{i:02d}.000Z",
            "gitBranch": "main",
            "message": {"role": role, "content": content},
            **extra,
        }
    )


def write(path: Path, lines: list[str]) -> None:
    path.write_text("".join(x + "\n" for x in lines), encoding="utf-8")


@pytest.fixture
def store(ctx: Context):
    return ctx.writable("project")


# ----------------------------------------------------------------- chunking (pure)


def test_chunks_are_bounded_and_keep_every_word():
    text = "\n\n".join(
        f"Paragraph {p}. " + " ".join(f"word{p}x{i}." for i in range(150)) for p in range(6)
    )
    chunks = chunk_text(text)
    assert len(chunks) > 1
    assert all(0 < len(c) <= MAX_CHUNK for c in chunks)
    assert " ".join(" ".join(chunks).split()) == " ".join(text.split())


def test_a_word_longer_than_a_chunk_is_cut_where_it_must_be():
    chunks = chunk_text("x" * 3_000, 500)
    assert all(len(c) <= 500 for c in chunks) and "".join(chunks) == "x" * 3_000


def test_a_secret_straddling_a_chunk_boundary_never_survives():
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    # the secret sits exactly where a cut would fall
    text = ("word " * 235) + secret + (" more" * 200)
    collector = EpisodeCollector(session_id="s", dialect=DIALECT)
    episodes = collector.feed(Entry(line=1, role="user", blocks=[Block("text", text)]))
    assert len(episodes) > 1
    joined = "".join(e.text for e in episodes)
    assert secret not in joined and secret[:12] not in joined and secret[-12:] not in joined
    assert "REDACTED" in joined


def test_noise_is_skipped():
    collector = EpisodeCollector(session_id="s", dialect=DIALECT)
    host = Entry(line=1, role="user", blocks=[Block("text", "<command-name>/clear</command-name>")])
    short = Entry(line=2, role="user", blocks=[Block("text", "ok")])
    thinking = Entry(line=3, role="assistant", blocks=[Block("thinking", "a long private thought")])
    meta = Entry(line=4, role="user", is_meta=True, blocks=[Block("text", "Caveat: the messages")])
    reminder = Entry(
        line=5,
        role="assistant",
        blocks=[Block("text", "<system-reminder>injected context here</system-reminder>")],
    )
    for entry in (host, short, thinking, meta, reminder):
        assert collector.feed(entry) == []


def tool_use(i: int, name: str, tool_input: dict, cwd: str = "/home/dev/app") -> str:
    content = [{"type": "tool_use", "id": f"t{i}", "name": name, "input": tool_input}]
    return record(i, "", "assistant", cwd=cwd,
                  message={"role": "assistant", "content": content})  # fmt: skip


def tool_result(
    i: int, call: int, result: dict | None, error: bool = False, cwd: str = "/home/dev/app"
) -> str:
    content = [{"type": "tool_result", "tool_use_id": f"t{call}", "content": "ok",
                "is_error": error}]  # fmt: skip
    return record(i, "", "user", cwd=cwd, toolUseResult=result,
                  message={"role": "user", "content": content})  # fmt: skip


def test_what_was_written_and_planned_is_kept_under_its_path(store, tmp_path: Path):
    doc = "# Notes\n\nNo module system: the scripts load through <script> tags in index.html."
    code = "await ctx.audioWorklet.addModule('worklet.js');"
    t = tmp_path / "s.jsonl"
    write(
        t,
        [
            tool_use(1, "Write", {"file_path": "/home/dev/app/docs/notes.md", "content": doc}),
            tool_result(
                2, 1, {"type": "create", "filePath": "/home/dev/app/docs/notes.md", "content": doc}
            ),
            tool_use(3, "Edit", {"file_path": "/home/dev/app/rec.js", "new_string": code}),
            tool_result(4, 3, {"filePath": "/home/dev/app/rec.js", "newString": code}),
            tool_use(5, "Edit", {"file_path": "/home/dev/app/x.js", "new_string": "refused();"}),
            tool_result(
                6, 5, {"filePath": "/home/dev/app/x.js", "newString": "refused();"}, error=True
            ),
            tool_use(7, "ExitPlanMode", {"plan": "# Plan\n\nMove the recorder to a worklet."}),
        ],
    )
    capture.capture_transcript(store, t, reader=READER, session_id="sess-ep")
    episodes = list(store.iter_episodes())
    assert sorted(e.text for e in episodes if e.role == "written") == [
        f"docs/notes.md:\n{doc}",  # under its path, relative to the session's directory
        f"rec.js:\n{code}",
    ]
    assert [e.text for e in episodes if e.role == "plan"] == [
        "# Plan\n\nMove the recorder to a worklet."
    ]
    assert "refused()" not in " ".join(e.text for e in episodes)  # an edit that failed
    hits = store.search_episodes("where is addModule called", 5)
    assert hits and hits[0][1].text == f"rec.js:\n{code}"


def test_a_file_written_after_the_shell_moved_keeps_its_path_from_the_project(
    store, tmp_path: Path
):
    """After a `cd test` that stayed in effect the host records `/home/dev/app/test` on every
    entry; `test/test_rec.py` is still named so, read at once or in two passes."""
    test = "def test_rec():\n    assert record() == 1"
    moved = "/home/dev/app/test"
    lines = [
        tool_use(1, "Write", {"file_path": "/home/dev/app/rec.py", "content": "x = 1"}),
        tool_result(2, 1, {"type": "create", "filePath": "/home/dev/app/rec.py"}),
        tool_use(3, "Write", {"file_path": f"{moved}/test_rec.py", "content": test}, cwd=moved),
        tool_result(4, 3, {"type": "create", "filePath": f"{moved}/test_rec.py"}, cwd=moved),
    ]
    t = tmp_path / "s.jsonl"
    write(t, lines[:2])
    capture.capture_transcript(store, t, reader=READER, session_id="sess-ep")
    write(t, lines)
    capture.capture_transcript(store, t, reader=READER, session_id="sess-ep")
    written = sorted(e.text for e in store.iter_episodes() if e.role == "written")
    assert written == ["rec.py:\nx = 1", f"test/test_rec.py:\n{test}"]


def test_a_subagents_write_is_kept_from_its_input_even_across_a_pass(store, tmp_path: Path):
    """A subagent's transcript has no ``toolUseResult``: what was written comes from the call's
    input once its result says it succeeded, and a pass boundary between the two loses nothing
    (the pending write is saved with the cursor, redacted)."""
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    doc = f"# Beads\n\nThe command-line tool is `bd`. Token: {secret}"
    t = tmp_path / "agent.jsonl"
    write(t, [tool_use(1, "Write", {"file_path": "/home/dev/app/research-beads.md",
                                    "content": doc})])  # fmt: skip
    capture.capture_transcript(store, t, reader=READER, session_id="sess-ep")
    saved = store.get_cursor(str(t.resolve()))
    assert saved is not None and secret not in saved.state and "REDACTED" in saved.state
    assert not [e for e in store.iter_episodes() if e.role == "written"]  # not yet written
    with t.open("a", encoding="utf-8") as fh:
        fh.write(tool_result(2, 1, None) + "\n")  # "File created successfully" only
        fh.write(
            tool_use(3, "Write", {"file_path": "/home/dev/app/x.md", "content": "nope!"}) + "\n"
        )
        fh.write(tool_result(4, 3, None, error=True) + "\n")
    capture.capture_transcript(store, t, reader=READER, session_id="sess-ep")
    (written,) = [e for e in store.iter_episodes() if e.role == "written"]
    assert written.text.startswith("research-beads.md:\n# Beads")
    assert "`bd`" in written.text and secret not in written.text


def shown(i: int, call: int, text: str, result: dict | None = None, error: bool = False) -> str:
    """A tool's result as the host shows it (a Read: numbered lines), with the host's own
    record of it (``toolUseResult``) when given."""
    content = [{"type": "tool_result", "tool_use_id": f"t{call}", "content": text,
                "is_error": error}]  # fmt: skip
    extra = {"toolUseResult": result} if result is not None else {}
    return record(i, "", "user", cwd="/home/dev/app", **extra,
                  message={"role": "user", "content": content})  # fmt: skip


def test_a_document_of_the_project_is_kept_as_it_was_read_even_across_a_pass(store, tmp_path: Path):
    """A hand-over note is rewritten between sessions: what the session read from it is kept,
    without the host's line numbers. Code, and documents outside the project (a person's
    global instructions), are not."""
    status = "     1\u2192# Status\n     2\u2192\n     3\u2192GPU backend: currently using stub"
    lines = [
        tool_use(1, "Read", {"file_path": "/home/dev/app/STATUS.md"}),
        shown(2, 1, status),
        tool_use(3, "Read", {"file_path": "/home/dev/app/rec.py"}),
        shown(4, 3, "     1\u2192import os"),
        tool_use(5, "Read", {"file_path": "/home/dev/.claude/CLAUDE.md"}),
        shown(6, 5, "     1\u2192Always answer in British English"),
    ]
    t = tmp_path / "s.jsonl"
    write(t, lines[:1])  # the read asked for in one pass, its result in the next
    capture.capture_transcript(store, t, reader=READER, session_id="sess-ep")
    write(t, lines)
    capture.capture_transcript(store, t, reader=READER, session_id="sess-ep")
    read = [e.text for e in store.iter_episodes() if e.role == "read"]
    assert read == ["STATUS.md:\n# Status\n\nGPU backend: currently using stub"]
    # nor a document outside the project while the shell is elsewhere, nor a path that climbs
    # out of it
    away = [tool_use(7, "Read", {"file_path": "/home/dev/.claude/CLAUDE.md"}, cwd="/home/dev"),
            shown(8, 7, "     1\u2192Always answer in British English"),
            tool_use(9, "Read", {"file_path": "/home/dev/app/docs/../../other/NOTES.md"}),
            shown(10, 9, "     1\u2192Someone else's notes")]  # fmt: skip
    write(t, lines + away)
    capture.capture_transcript(store, t, reader=READER, session_id="sess-ep")
    assert [e.text for e in store.iter_episodes() if e.role == "read"] == read
    hits = store.search_episodes("is the GPU backend still a stub", 5)
    assert hits and hits[0][1].role == "read"


def in_session(lines: list[str], session: str, **fields: str) -> list[str]:
    """The records of another session (and, with ``fields``, another branch or folder)."""
    return [json.dumps({**json.loads(x), "sessionId": session, **fields}) for x in lines]


STATUS = {"file_path": "/home/dev/app/STATUS.md"}
MONDAY = "     1\u2192# Status\n     2\u2192Next: wire the GPU backend, still a stub"
FRIDAY = "     1\u2192# Status\n     2\u2192GPU backend wired; next: benchmark the kernels"
OLD = "STATUS.md:\n# Status\nNext: wire the GPU backend, still a stub"
NEW = "STATUS.md:\n# Status\nGPU backend wired; next: benchmark the kernels"


def reads_found(ctx: Context, query: str, *statuses: str, branch: str | None = None) -> list[str]:
    found = recall(ctx, query, limit=10, all_branches=branch is None, branch=branch,
                   statuses=statuses or ("active",))  # fmt: skip
    return sorted(r.memory.content for r in found if r.episode and r.episode.role == "read")


def captured(store, tmp_path: Path, name: str, lines: list[str]) -> None:
    t = tmp_path / f"{name}.jsonl"
    write(t, lines)
    capture.capture_transcript(store, t, reader=READER, session_id=name)


def test_a_document_read_whole_again_replaces_what_it_said_before(ctx: Context, tmp_path: Path):
    """A status note read on Monday and again, rewritten, on Friday: recall gives Friday's
    note, not Monday's "next" beside it; a read of a few of its lines, or the host's note that
    the file did not change, replaces nothing; the old version stays in the store, found when
    history is asked for."""
    store = ctx.writable("project")
    query = "what is next for the GPU backend"
    monday = [tool_use(1, "Read", STATUS), shown(2, 1, MONDAY)]
    captured(store, tmp_path, "monday", in_session(monday, "monday"))
    assert reads_found(ctx, query) == [OLD]
    ranged = [tool_use(10, "Read", {**STATUS, "offset": 1, "limit": 1}),
              shown(11, 10, "     1\u2192# Status"),
              tool_use(12, "Read", STATUS),
              shown(13, 12, "File unchanged since last read. The content from the earlier "
                            "Read tool_result in this conversation is still current.",
                    {"type": "file_unchanged", "file": {"filePath": STATUS["file_path"]}}),
              tool_use(14, "Read", STATUS),  # the host cut what it showed: not all of it
              shown(15, 14, "     1\u2192# Status",
                    {"type": "text", "file": {"numLines": 1, "totalLines": 2}})]  # fmt: skip
    captured(store, tmp_path, "tuesday", in_session(ranged, "tuesday"))
    assert OLD in reads_found(ctx, query)
    assert not [e for e in store.iter_episodes() if "File unchanged" in e.text]
    friday = [tool_use(20, "Read", STATUS), shown(21, 20, FRIDAY)]
    captured(store, tmp_path, "friday", in_session(friday, "friday"))
    assert reads_found(ctx, query) == [NEW]
    assert OLD in reads_found(ctx, query, "active", "archived")
    versions = {(e.session_id, e.document) for e in store.iter_episodes() if e.role == "read"}
    key = "/home/dev/app/status.md"
    assert versions == {("monday", key), ("tuesday", None), ("friday", key)}


def test_a_long_document_read_again_keeps_what_did_not_change(ctx: Context, tmp_path: Path):
    """Read, edited in one place, read again in the same session: the second read is the
    document now, the parts the edit did not touch included."""
    store = ctx.writable("project")
    parts = [f"## Part {n}\n" + " ".join(f"part{n}word{i}" for i in range(150)) for n in range(4)]

    def numbered(text: str) -> str:
        return "".join(f"{n:>6}\u2192{line}\n" for n, line in enumerate(text.split("\n"), 1))

    before = numbered("\n\n".join(parts))
    after = numbered("\n\n".join([*parts[:3], "## Part 3\nrewritten: the last part says this"]))
    captured(store, tmp_path, "s", [tool_use(1, "Read", STATUS), shown(2, 1, before),
                                    tool_use(3, "Read", STATUS), shown(4, 3, after)])  # fmt: skip
    (unchanged,) = [t for t in reads_found(ctx, "part0word5") if "part0word5" in t]
    assert [e.line for e in store.iter_episodes() if e.text == unchanged] == [2, 4]
    assert not [t for t in reads_found(ctx, "part3word7") if "part3word7" in t]
    assert [t for t in reads_found(ctx, "rewritten last part") if "rewritten" in t]
    # `cortex redact` hashes them as they were stored: nothing to do, nothing folded
    assert store.redact_stored(apply=True).rows == ()
    assert [e.line for e in store.iter_episodes() if e.text == unchanged] == [2, 4]


def test_a_document_is_one_whichever_folder_a_session_started_in(ctx: Context, tmp_path: Path):
    """A package's README read from the project's root and from the package's folder is one
    document; the root's README and the package's, both "README.md" to a session started
    beside them, are two; another branch's copy of a file is another file."""
    store = ctx.writable("project")
    root = "/home/dev/app"
    first = [
        tool_use(1, "Read", {"file_path": f"{root}/README.md"}),
        shown(2, 1, "     1\u2192# App\n     2\u2192Deploy with the zebracorn script"),
        tool_use(3, "Read", {"file_path": f"{root}/pkg/README.md"}),
        shown(4, 3, "     1\u2192# pkg\n     2\u2192The parser package, version one"),
    ]
    inside = [
        tool_use(5, "Read", {"file_path": f"{root}/pkg/README.md"}),
        shown(6, 5, "     1\u2192# pkg\n     2\u2192The parser package, version two"),
    ]
    feature = [
        tool_use(7, "Read", {"file_path": f"{root}/README.md"}),
        shown(8, 7, "     1\u2192# App\n     2\u2192Deploy: feature branch notes"),
    ]
    captured(store, tmp_path, "root", in_session(first, "root"))
    captured(store, tmp_path, "pkg", in_session(inside, "pkg", cwd=f"{root}/pkg"))
    captured(store, tmp_path, "feature", in_session(feature, "feature", gitBranch="feature/x"))
    assert reads_found(ctx, "parser package version") == [
        "README.md:\n# pkg\nThe parser package, version two"
    ]
    # the feature branch's read is there too (what was said is not filtered by branch), but
    # it does not stand for main's README
    assert "README.md:\n# App\nDeploy with the zebracorn script" in reads_found(
        ctx, "deploy zebracorn script", branch="main"
    )
    keys = {e.document for e in store.iter_episodes()}
    assert keys == {f"{root}/readme.md", f"{root}/pkg/readme.md"}  # fmt: skip


def test_a_read_stored_before_documents_were_named_is_named_not_doubled(store, tmp_path: Path):
    """A store written by an older Cortex holds whole reads without their document; reading
    the transcript again from its start names them rather than storing each chunk twice."""
    from dataclasses import replace

    t = tmp_path / "s.jsonl"
    write(t, [tool_use(1, "Read", STATUS), shown(2, 1, MONDAY)])
    capture.capture_transcript(store, t, reader=READER, session_id="s")
    (read,) = [e for e in store.iter_episodes() if e.role == "read"]
    legacy = replace(read, document=None).content_hash
    older = "UPDATE episodes SET document = NULL, content_hash = ? WHERE id = ?"
    store.run(lambda conn: conn.execute(older, (legacy, read.id)))
    store.set_cursor(ExtractionCursor(transcript_path=str(t.resolve())))
    capture.capture_transcript(store, t, reader=READER, session_id="s")
    assert [(e.id, e.document) for e in store.iter_episodes() if e.role == "read"] == [
        (read.id, "/home/dev/app/status.md")
    ]


@pytest.mark.parametrize(
    "secret", ["ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8", "AKIA" + "IOSFODNN7EXAMPLQ"]
)
def test_a_secret_in_a_documents_path_is_not_kept_in_its_name(store, tmp_path: Path, secret):
    """Redacted before the name is lower-cased: an AWS key id is upper case."""
    path = {"file_path": f"/home/dev/app/notes/{secret}.md"}
    captured(store, tmp_path, "s", [tool_use(1, "Read", path), shown(2, 1, "     1\u2192# Notes")])
    (read,) = [e for e in store.iter_episodes() if e.role == "read"]
    assert read.document and "redacted" in read.document
    assert secret.lower() not in read.document.lower() and secret not in read.text
    # and `cortex redact` goes over the name too (a store written before a rule existed)
    store.run(lambda conn: conn.execute("UPDATE episodes SET document = ?", (secret,)))
    store.redact_stored(apply=True)
    (read,) = [e for e in store.iter_episodes() if e.role == "read"]
    assert read.document and secret not in read.document


def test_a_read_awaiting_its_result_in_a_cursor_saved_before_versions_is_still_kept():
    """A cursor's state saved by an older Cortex lists a pending read as (call id, path)."""
    collector = EpisodeCollector(dialect=DIALECT)
    collector.load_state({"reads": [["t1", "/home/dev/app/STATUS.md"]]})
    assert collector.reads == {"t1": ("/home/dev/app/STATUS.md", False)}
    again = EpisodeCollector(dialect=DIALECT)
    again.load_state(json.loads(json.dumps(collector.to_state())))
    assert again.reads == collector.reads


def test_a_long_status_note_is_kept_as_far_as_its_latest_entry(store, tmp_path: Path):
    """Status notes grow at their end: the latest state of a 16 kB note is its last lines."""
    body = "".join(f"{n:>6}\u2192- [x] step {n} of the earlier work done\n" for n in range(1, 400))
    latest = "   400\u2192## Latest: nvcc builds need the gcc-12 host compiler on the laptop"
    t = tmp_path / "s.jsonl"
    write(t, [tool_use(1, "Read", {"file_path": "/home/dev/app/STATUS.md"}),
              shown(2, 1, body + latest)])  # fmt: skip
    capture.capture_transcript(store, t, reader=READER, session_id="sess-ep")
    assert len(body) > 15_000
    hits = store.search_episodes("which host compiler for nvcc", 5)
    assert hits and hits[0][1].role == "read" and "gcc-12" in hits[0][1].text


def test_a_secret_in_a_document_read_never_survives_the_cut(store, tmp_path: Path):
    """Short numbered lines shrink a lot once their numbers go: the document is redacted whole
    before it is cut to what is kept."""
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    numbered = "".join(f"{n:>6}\u2192-\n" for n in range(1, 1776))  # 15,975 characters
    t = tmp_path / "s.jsonl"
    write(t, [tool_use(1, "Read", {"file_path": "/home/dev/app/NOTES.md"}),
              shown(2, 1, numbered + f"  1776\u2192clone with {secret} please")])  # fmt: skip
    capture.capture_transcript(store, t, reader=READER, session_id="sess-ep")
    kept = " ".join(e.text for e in store.iter_episodes() if e.role == "read")
    assert kept and "ghp_" not in kept  # not even its first characters


def ran(i: int, call: int, stdout: str, error: bool = False) -> str:
    """A shell call's result as Claude Code records it: the output as the block's content and
    in ``toolUseResult``."""
    return shown(i, call, stdout, {"stdout": stdout, "stderr": "", "interrupted": False}, error)


def test_what_a_command_that_acted_printed_is_kept_under_it_even_across_a_pass(
    store, tmp_path: Path
):
    """An install's warning, the version a tool reported, what a push did: kept under the
    command, redacted, as far as one chunk. What a look at the files printed (``ls``,
    ``git log``), a refused call, silence and the host's word that a command went to the
    background are not; a failing one is a ``tool_error``, under its command too."""
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    warning = (
        "Packages: +12\n Ignored build scripts: esbuild.\n"
        ' Run "pnpm approve-builds" to pick which dependencies should be allowed to run scripts.'
    )
    log = "x" * 5_000
    lines = [
        tool_use(1, "Bash", {"command": "pnpm install"}),
        ran(2, 1, warning),
        tool_use(3, "Bash", {"command": "ls -la src"}),
        ran(4, 3, "main.py\nutil.py"),
        tool_use(5, "Bash", {"command": "git log --oneline -3"}),
        ran(6, 5, "abc123 Add the recorder"),
        tool_use(7, "Bash", {"command": "git push origin main"}),
        ran(8, 7, f"remote: token {secret}\nPushing entire/checkpoints/v1\n" + log),
        tool_use(9, "Bash", {"command": "make build"}),
        ran(10, 9, "make: *** No rule to make target 'build'", error=True),
        tool_use(11, "Bash", {"command": "touch notes.txt"}),
        ran(12, 11, ""),
        tool_use(13, "Bash", {"command": "pnpm dev", "run_in_background": True}),
        shown(14, 13, "Command running in background with ID: dce0af",
              {"stdout": "", "stderr": "", "interrupted": False, "backgroundTaskId": "dce0af"}),
        tool_use(15, "Bash", {"command": "make dist"}),
        shown(16, 15, "dist/app.tar.gz written"),  # no output kept apart: the message is it
    ]  # fmt: skip
    t = tmp_path / "s.jsonl"
    write(t, lines[:1])  # the call in one pass, its output in the next
    capture.capture_transcript(store, t, reader=READER, session_id="sess-ep")
    write(t, lines)
    capture.capture_transcript(store, t, reader=READER, session_id="sess-ep")
    kept = {e.text.split("\n", 1)[0]: e.text for e in store.iter_episodes() if e.role == "ran"}
    assert sorted(kept) == ["$ git push origin main", "$ make dist", "$ pnpm install"]
    assert kept["$ pnpm install"] == f"$ pnpm install\n{warning}"
    pushed = kept["$ git push origin main"]
    assert "Pushing entire/checkpoints/v1" in pushed and secret not in pushed
    assert len(pushed) <= MAX_CHUNK
    failed = [e.text for e in store.iter_episodes() if e.role == "tool_error"]
    assert failed == ["$ make build\nmake: *** No rule to make target 'build'"]
    hits = store.search_episodes("pnpm install printed a warning", 5)
    assert hits and hits[0][1].role == "ran" and "approve-builds" in hits[0][1].text


def test_a_long_command_leaves_room_for_what_it_printed(store, tmp_path: Path):
    """A 2,000-character heredoc is kept as far as its head: the warning, the error are what
    the episode is for."""
    script = "python3 - <<'EOF'\n" + "print('step')  # a line of the script\n" * 60 + "EOF"
    lines = [
        tool_use(1, "Bash", {"command": "pip install requests && " + script}),
        ran(2, 1, "Successfully installed requests-2.32.3 but urllib3 2.0 is incompatible"),
        tool_use(3, "Bash", {"command": script}),
        ran(4, 3, "ModuleNotFoundError: No module named 'yaml'", error=True),
    ]
    t = tmp_path / "s.jsonl"
    write(t, lines)
    capture.capture_transcript(store, t, reader=READER, session_id="sess-ep")
    kept = {e.role: e.text for e in store.iter_episodes()}
    assert "urllib3 2.0 is incompatible" in kept["ran"]
    assert "No module named 'yaml'" in kept["tool_error"]
    assert kept["ran"].startswith("$ pip install requests && python3 - <<'EOF'\nprint")
    assert len(kept["ran"]) <= MAX_CHUNK


def test_a_secret_in_a_long_command_never_reaches_the_saved_state(store, tmp_path: Path):
    """A call waiting for its output is saved with the cursor: its command is redacted before
    it is cut, so a token the cut would split is not kept by half."""
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    for at in (290, 3_170):  # the token across the head's cut, and far past it
        command = "cat > .env <<'EOF'\n" + "#" * (at - 24) + "\nEOF\necho " + secret
        t = tmp_path / f"s{at}.jsonl"
        write(t, [tool_use(1, "Bash", {"command": command + " | gh auth login --with-token"})])
        capture.capture_transcript(store, t, reader=READER, session_id=f"sess-{at}")
        saved = store.get_cursor(str(t.resolve()))
        assert saved is not None and secret[:12] not in saved.state


def test_a_command_read_whole_or_in_two_passes_gives_the_same_episodes(tmp_path: Path):
    """Whether a command only looks, and the head it is kept under, are settled when the call
    is seen: a pass boundary before its output changes nothing, even when redacting takes a
    piece out of the command (a private key written by a heredoc)."""
    command = ("cat > k <<'EOF'\n-----BEGIN OPENSSH PRIVATE KEY-----\n"
               "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
               "EOF\nssh-keygen -y -f k")  # fmt: skip
    lines = [
        tool_use(1, "Bash", {"command": command}),
        ran(2, 1, 'Load key "k": invalid format'),
        tool_use(3, "Bash", {"command": "npm install"}),
        ran(4, 3, "added 12 packages; 1 moderate severity vulnerability"),
    ]
    kept = {}
    for way, cuts in (("whole", [4]), ("pieces", [1, 3, 4])):
        t = tmp_path / f"{way}.jsonl"
        with SQLiteStore.open(tmp_path / f"{way}.db") as store:
            for cut in cuts:
                write(t, lines[:cut])
                capture.capture_transcript(store, t, reader=READER, session_id="sess-ep")
            kept[way] = [e.text for e in store.iter_episodes()]
    assert kept["whole"] == kept["pieces"] and len(kept["whole"]) == 2
    assert "PRIVATE KEY-----" not in " ".join(kept["whole"])
    assert "b3BlbnNzaC1rZXktdjEA" not in " ".join(kept["whole"])


def test_a_command_the_person_ran_is_kept_with_the_end_of_what_it_printed(store, tmp_path: Path):
    """`!uv run pytest` in the prompt: Claude Code writes the command, then what it printed,
    as the person's turns; both were skipped as the host's words, and "which tests fail now"
    had no answer (an independent reading). Kept as a command that acted, its head and its
    verdict (pytest's comes last), across a pass too; a look (`!git status`) is not."""
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    header = "=" * 29 + " test session starts " + "=" * 30 + "\nplatform linux\n" * 120
    lines = [
        record(1, "<bash-input>uv run pytest test/test_names.py</bash-input>"),
        record(2, f"<bash-stdout>{header}token {secret}\nFAILED test/test_names.py::test_nested"
                  "\n===== 5 failed, 6 passed in 0.37s =====</bash-stdout><bash-stderr>"
                  "</bash-stderr>"),
        record(3, "<bash-input>git status</bash-input>"),
        record(4, "<bash-stdout>On branch main\nnothing to commit</bash-stdout>"),
    ]  # fmt: skip
    t = tmp_path / "s.jsonl"
    write(t, lines[:1])  # the command in one pass, what it printed in the next
    capture.capture_transcript(store, t, reader=READER, session_id="sess-ep")
    write(t, lines)
    capture.capture_transcript(store, t, reader=READER, session_id="sess-ep")
    (ran,) = [e.text for e in store.iter_episodes() if e.role == "ran"]
    assert ran.startswith("$ uv run pytest test/test_names.py\n=====")
    assert ran.endswith("===== 5 failed, 6 passed in 0.37s =====")
    assert "FAILED test/test_names.py::test_nested" in ran and secret not in ran
    assert len(ran) <= MAX_CHUNK
    assert not [e for e in store.iter_episodes() if "<bash-" in e.text]
    # an output so long that its closing tag was cut off with its end is still kept
    long = [record(5, "<bash-input>make test</bash-input>"),
            record(6, "<bash-stdout>" + "building\n" * 30_000)]  # fmt: skip
    write(t, lines + long)
    capture.capture_transcript(store, t, reader=READER, session_id="sess-ep")
    made = [e.text for e in store.iter_episodes() if e.text.startswith("$ make test")]
    assert made and "more characters]" in made[0] and len(made[0]) <= MAX_CHUNK


def test_a_command_refused_keeps_nothing_of_what_it_would_have_printed(store, tmp_path: Path):
    """The person said no: the call did not run, so there is neither output nor failure."""
    refusal = {"type": "tool_result", "tool_use_id": "t1", "is_error": True,
               "content": "The user doesn't want to proceed with this tool use."}  # fmt: skip
    t = tmp_path / "s.jsonl"
    write(t, [tool_use(1, "Bash", {"command": "rm -rf build"}),
              record(2, "", "user", cwd="/home/dev/app",
                     message={"role": "user", "content": [refusal]})])  # fmt: skip
    capture.capture_transcript(store, t, reader=READER, session_id="sess-ep")
    assert not [e for e in store.iter_episodes() if e.role in ("ran", "tool_error")]


# ----------------------------------------------------------------- capture


def test_episodes_are_captured_once_with_provenance(store, tmp_path: Path):
    t = tmp_path / "s.jsonl"
    write(
        t,
        [
            record(1, "Which message queue should we use for the billing workers?"),
            record(
                2, "We will use RabbitMQ with quorum queues for the billing workers.", "assistant"
            ),
        ],
    )
    capture.capture_transcript(store, t, reader=READER, session_id="sess-ep")
    first = list(store.iter_episodes())
    assert [e.role for e in first] == ["user", "assistant"]
    assert first[1].line == 2 and first[1].session_id == "sess-ep" and first[1].branch == "main"
    assert first[1].transcript_path == str(t.resolve())
    assert first[1].created_at.startswith("2026-01-01T00:00:02")
    # read again from the top (a restart of the cursor): nothing doubles
    store.set_cursor(ExtractionCursor(transcript_path=str(t.resolve())))
    capture.capture_transcript(store, t, reader=READER, session_id="sess-ep")
    assert store.episode_counts().episodes == 2


def test_a_real_transcript_ingested_twice_keeps_the_same_episodes(ctx: Context, tmp_path: Path):
    project = REAL / "-Users-dain-workspace-claude-code-log-sample"
    sessions = sorted(project.glob("*.jsonl"))[:3]
    store = ctx.writable("project")
    for path in sessions:
        capture.capture_transcript(store, path, reader=READER, session_id=path.stem)
    counts = store.episode_counts()
    assert counts.episodes > 0 and counts.sessions >= 1
    for path in sessions:
        key = str(path.resolve())
        store.set_cursor(ExtractionCursor(transcript_path=key))
        capture.capture_transcript(store, path, reader=READER, session_id=path.stem)
    assert store.episode_counts() == counts
    assert all(len(e.text) <= MAX_CHUNK for e in store.iter_episodes())


@pytest.mark.skipif(not REAL.exists(), reason=f"{REAL} is not here")
def test_export_import_round_trip_of_a_real_ingested_store(repo: Path, tmp_path: Path):
    """Export carries episodes and memory↔episode links; importing into an empty project gives
    the same store, and importing twice (or into itself) changes nothing."""
    from click.testing import CliRunner

    from cortexmem.cli.app import cli

    runner = CliRunner()
    source = REAL / "-Users-dain-workspace-JSSoundRecorder"
    done = runner.invoke(cli, ["-C", str(repo), "ingest", "--into", str(repo), str(source)])
    assert done.exit_code == 0, done.output
    dump = tmp_path / "dump.jsonl"
    assert runner.invoke(cli, ["-C", str(repo), "export", "-o", str(dump)]).exit_code == 0
    records = [json.loads(line) for line in dump.read_text().splitlines()[1:]]
    kinds = {r["record"] for r in records}
    assert {"memory", "episode", "episode_link"} <= kinds

    def state(root: Path) -> tuple[object, ...]:
        with Context.for_cwd(root) as ctx:
            store = ctx.require("project")
            memories, edges, events = store.snapshot()
            return (
                sorted(m.id for m in memories),
                sorted(e.id for e in edges),
                sorted(e.content_hash for e in events),
                sorted(e.to_dict().items() for e in store.iter_episodes()),
                sorted(store.iter_episode_links()),
            )

    other = tmp_path / "other"
    other.mkdir()
    first = runner.invoke(cli, ["-C", str(other), "import", "--json", str(dump)])
    assert first.exit_code == 0, first.output
    counts = json.loads(first.output)
    assert counts["episodes_added"] == sum(r["record"] == "episode" for r in records)
    assert counts["episode_links_added"] == sum(r["record"] == "episode_link" for r in records)
    assert counts["skipped"] == []
    assert state(other) == state(repo)
    again = json.loads(runner.invoke(cli, ["-C", str(other), "import", "--json", str(dump)]).output)
    assert (again["inserted"], again["episodes_added"], again["episode_links_added"]) == (0, 0, 0)
    assert state(other) == state(repo)
    itself = json.loads(runner.invoke(cli, ["-C", str(repo), "import", "--json", str(dump)]).output)
    assert (itself["episodes_added"], itself["episode_links_added"]) == (0, 0)


@pytest.mark.skipif(not REAL.exists(), reason=f"{REAL} is not here")
def test_a_real_ingested_store_carries_real_edges_and_episode_links(ctx: Context):
    """Memories link to the episodes they were drawn from, and each session's summary
    generalizes the session's memories; ingesting again adds nothing."""
    project = REAL / "-Users-dain-workspace-claude-code-log-sample"
    store = ctx.writable("project")
    sessions = sorted(p for p in project.glob("*.jsonl") if not p.name.startswith("agent-"))

    def ingest() -> tuple[list[tuple[str, str, str]], list[tuple[str, str]]]:
        for path in sessions:
            capture.capture_transcript(store, path, reader=READER, session_id=path.stem)
        edges = list(store.iter_edges())
        return (sorted((e.source_id, e.target_id, e.relation_type) for e in edges),
                sorted(store.iter_episode_links()))  # fmt: skip

    edges, links = ingest()
    assert links and any(kind == "generalizes" for _, _, kind in edges)
    summaries = {m.id: m for m in store.iter_memories() if "event:session_summary" in m.tags}
    for source, target, kind in edges:
        if kind == "generalizes":
            held = store.get_memory(target)
            assert source in summaries and held is not None
            assert held.source_session == summaries[source].source_session
    digest_linked = {m for m, _ in links if m in summaries}
    assert digest_linked  # the summaries link to the episodes they were drawn from
    for path in sessions:  # read again from the top: the same graph
        store.set_cursor(ExtractionCursor(transcript_path=str(path.resolve())))
    assert ingest() == (edges, links)


def test_a_memory_links_to_the_episode_it_was_drawn_from(store, tmp_path: Path):
    t = tmp_path / "s.jsonl"
    write(
        t,
        [record(1, "We decided to use PostgreSQL because it has row level security.", "assistant")],
    )
    report = capture.capture_transcript(store, t, reader=READER, session_id="sess-ep")
    assert report.memories_added >= 1
    memory = next(iter(store.iter_memories()))
    linked = store.episodes_of_memory(memory.id)
    assert [e.line for e in linked] == [1]
    assert store.memories_of_episode(linked[0].id) == [m.id for m in store.iter_memories()][:1]


# ----------------------------------------------------------------- recall


def test_recall_returns_an_episode_with_its_provenance(ctx: Context, tmp_path: Path):
    t = tmp_path / "s.jsonl"
    write(
        t,
        [
            record(
                1, "The flaky upload test needs the TUSD_ENDPOINT variable set to localhost:1080."
            ),
            record(
                2,
                "Understood, I will export it in the test fixture before the upload suite.",
                "assistant",
            ),
        ],
    )
    capture.capture_transcript(ctx.writable("project"), t, reader=READER, session_id="sess-ep")
    hits = recall(ctx, "TUSD_ENDPOINT upload test", all_branches=True, count_access=False)
    # The session's summary (a typed memory saying the same) may rank above the raw prompt;
    # the prompt itself is served too, as an episode with where it was said.
    said = [h for h in hits if h.kind == "episode"]
    assert said and said[0].episode is not None
    episode = said[0].episode
    assert episode.role == "user" and episode.line == 1
    assert episode.session_id == "sess-ep" and "TUSD_ENDPOINT" in said[0].memory.content
    # the MCP `search` lists it by id; `get` gives it back with what was drawn from it
    from cortexmem.services import mcp_tools

    listed = [r for r in mcp_tools.search(ctx, "TUSD_ENDPOINT upload test")["results"]
              if r.get("kind") == "episode"]  # fmt: skip
    got = mcp_tools.get(ctx, listed[0]["id"])
    assert got["episode"]["content"] == listed[0]["content"] and got["episode"]["line"] == 1
    assert all(m["id"].startswith("m-") for m in got["memories"])
    with pytest.raises(NotFound, match="whole id"):
        mcp_tools.get(ctx, "ep-nothere")


def test_episodes_are_found_by_meaning(ctx: Context, tmp_path: Path):
    t = tmp_path / "s.jsonl"
    write(
        t,
        [
            record(1, "Please make the login page remember the user for thirty days."),
            record(
                2,
                "The nightly backup job copies the database to the cold storage bucket.",
                "assistant",
            ),
        ],
    )
    capture.capture_transcript(ctx.writable("project"), t, reader=READER, session_id="sess-ep")
    embedder = Embedder.for_context(ctx)
    sync_context(ctx, embedder)
    hits = recall(ctx, "where do we archive snapshots of our data", alpha=1.0,
                  all_branches=True, embedder=embedder, count_access=False)  # fmt: skip
    said = [h for h in hits if h.kind == "episode"]  # the session summary may come first
    assert said and "backup" in said[0].memory.content and said[0] in hits[:2]


def test_a_renamed_project_embeds_its_episodes_again(ctx: Context, tmp_path: Path):
    """An episode's embedding text carries the project's name, as a memory's does."""
    t = tmp_path / "s.jsonl"
    write(t, [record(1, "The nightly backup job copies the database to cold storage.")])
    store = ctx.writable("project")
    capture.capture_transcript(store, t, reader=READER, session_id="sess-ep")
    embedder = Embedder.for_context(ctx)
    sync_context(ctx, embedder)
    assert store.episode_embedding_backlog_size(embedder.model) == 0
    renamed = Embedder(embedder.routing, "a-new-name")
    report = sync(store, renamed, project="a-new-name")
    episodes = store.episode_counts().episodes
    assert episodes >= 1 and report.embedded >= episodes and report.remaining == 0
    assert store.episode_embedding_backlog_size(embedder.model) == 0
    assert sync(store, renamed, project="a-new-name").embedded == 0


def test_remember_is_found_by_meaning_at_once(ctx: Context):
    remember(
        ctx,
        "We chose SQLite in WAL mode because several sessions write at once",
        memory_type="decision",
        embed=True,
    )
    hits = recall(ctx, "which database did we choose", alpha=1.0, count_access=False)
    assert hits and "SQLite" in hits[0].memory.content


def test_nothing_relevant_is_said_plainly(ctx: Context):
    remember(ctx, "We chose SQLite in WAL mode because several sessions write at once",
             memory_type="decision", embed=True)  # fmt: skip
    unrelated = recall(ctx, "recipe for banana bread with walnuts", floor=RELEVANCE_FLOOR,
                       count_access=False)  # fmt: skip
    assert unrelated == []
    related = recall(ctx, "which database did we choose", floor=RELEVANCE_FLOOR,
                     count_access=False)  # fmt: skip
    assert related


def said_short_lines(ctx: Context, tmp_path: Path) -> None:
    """A session of short lines and one passage with a subject, captured and embedded."""
    t = tmp_path / "s.jsonl"
    said = [
        ("user", "ok, fine, let's do vite"),
        ("assistant", "The nightly backup job copies the database to cold storage at 02:00 UTC."),
        ("assistant", "Let me fix this last reference:"),
        ("assistant", "Perfect! Now let's run formatting and linting:"),
        ("user", "are they still being written?"),
    ]
    write(t, [record(i, text, role) for i, (role, text) in enumerate(said)])
    capture.capture_transcript(ctx.writable("project"), t, reader=READER, session_id="sess-ep")
    sync_context(ctx, Embedder.for_context(ctx))


def test_lines_near_every_query_are_no_answer_to_a_query_that_says_nothing(
    ctx: Context, tmp_path: Path
):
    """Short lines (an announcement, a one-line request) are close in meaning to almost
    anything: found by meaning alone, they answer nothing; what words find still counts."""
    said_short_lines(ctx, tmp_path)
    for nonsense in ("xyzzy plugh", "?!.", "😀", "asdf qwer zxcv", "lorem ipsum dolor sit amet"):
        assert recall(ctx, nonsense, floor=RELEVANCE_FLOOR, count_access=False) == [], nonsense
    (found, *_) = recall(ctx, "when does the backup run", floor=RELEVANCE_FLOOR,
                         count_access=False)  # fmt: skip
    assert "cold storage" in found.memory.content
    by_word = recall(ctx, "vite", floor=RELEVANCE_FLOOR, count_access=False)
    assert "ok, fine, let's do vite" in [r.memory.content for r in by_word]


def test_recall_tells_how_close_each_result_is_to_no_text_at_all(ctx: Context, tmp_path: Path):
    """What the prompt hook weighs: a passage about the question is much closer to it than to
    no text at all; a line that announces a next step is close to everything."""
    said_short_lines(ctx, tmp_path)
    near: dict[tuple[str, str], float] = {}
    meaning: dict[tuple[str, str], float] = {}
    hits = recall(ctx, "when does the backup run", similarities=meaning, baselines=near,
                  count_access=False)  # fmt: skip
    lift = {r.memory.content: meaning[(r.scope, r.memory.id)] - near[(r.scope, r.memory.id)]
            for r in hits if (r.scope, r.memory.id) in near}  # fmt: skip
    backup = lift["The nightly backup job copies the database to cold storage at 02:00 UTC."]
    assert backup > 0.2
    assert all(v < 0.0 for k, v in lift.items() if "cold storage" not in k)  # the short lines
    assert set(near) <= {(r.scope, r.memory.id) for r in hits}  # only for what is served


def test_a_subject_in_a_word_the_store_does_not_hold_is_found_by_meaning(ctx: Context):
    """A query of a word or two lands near the empty query too; the memory it is about is
    still much closer to it than to no text at all."""
    remember(ctx, "Responses from the pricing API are memoized in Redis for ten minutes",
             memory_type="architecture", embed=True)  # fmt: skip
    remember(ctx, "We ship to production by pushing a git tag; GitHub Actions builds the image",
             memory_type="decision", embed=True)  # fmt: skip
    for query, found in (("caching", "Redis"), ("deploy", "git tag")):
        hits = recall(ctx, query, floor=RELEVANCE_FLOOR, count_access=False)
        assert hits and found in hits[0].memory.content, query


def test_cli_recall_says_nothing_relevant(repo: Path, monkeypatch: pytest.MonkeyPatch):
    from click.testing import CliRunner

    from cortexmem.cli.app import cli

    monkeypatch.chdir(repo)
    runner = CliRunner()
    said = "We chose SQLite in WAL mode because several sessions write at once"
    done = runner.invoke(cli, ["remember", "-t", "decision", said])
    assert done.exit_code == 0, done.output
    found = runner.invoke(cli, ["recall", "which database did we choose"])
    assert "SQLite" in found.output
    nothing = runner.invoke(cli, ["recall", "recipe for banana bread with walnuts"])
    assert "Nothing relevant found for" in nothing.output
    as_json = runner.invoke(cli, ["recall", "--json", "recipe for banana bread with walnuts"])
    assert json.loads(as_json.output) == []
