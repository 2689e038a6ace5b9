"""The CLI as a person and a script use it (click's runner: the real commands, in-process)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cortexmem.cli.app import cli


@pytest.fixture
def run(repo: Path):
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None, code: int = 0):
        result = runner.invoke(cli, ["-C", str(repo), *args], input=input)
        assert result.exit_code == code, (result.output, result.stderr, result.exception)
        assert "Traceback" not in result.output
        return result

    return invoke


def remember(run, text: str, *flags: str) -> str:
    return json.loads(run("remember", *flags, "--json", text).stdout)["memory"]["id"]


def test_help_explains_every_command(run):
    out = run("--help").stdout
    for command in ("init", "remember", "recall", "get", "forget", "status", "reset", "export",
                    "import", "restore", "demo", "ingest", "import-history"):  # fmt: skip
        assert command in out
    assert "--branch" in run("recall", "--help").stdout


def test_init_is_idempotent(run, repo: Path):
    assert "Initialised" in run("init").stdout
    assert "Already initialised" in run("init").stdout
    assert (repo / ".cortex" / "cortex.db").is_file()


def test_remember_recall_get(run):
    mid = remember(run, "Use uv for envs", "-t", "decision", "-p", "8", "-T", "Tooling", "--pin")
    again = json.loads(run("remember", "--json", "-t", "decision", "Use uv for envs").stdout)
    assert again == {"created": False, "memory": again["memory"]} and again["memory"]["id"] == mid
    results = json.loads(run("recall", "--json", "which", "tool", "for", "envs?").stdout)
    assert results[0]["memory"]["id"] == mid and results[0]["rank"] == 1
    assert results[0]["memory"]["tags"] == ["tooling"] and results[0]["memory"]["pinned"]
    detail = json.loads(run("get", "--json", mid[:14]).stdout)
    assert detail["memory"]["priority"] == 8 and detail["scope"] == "project"
    assert mid in run("get", mid).stdout
    assert "decision" in run("recall", "uv").stdout


def test_a_tag_that_starts_like_cortexs_own_markers_is_refused_with_a_way_out(run):
    """Word search leaves Cortex's markers (role:, kind:, code:…) out: a person's
    "role:backend" was stored and never found by its words (a fourth review)."""
    out = run("remember", "-T", "role:backend", "API gateway owns rate limits", code=1).output
    assert "'role:backend' starts like one of Cortex's own markers" in out
    assert "'role-backend'" in out and "No memory store" not in out
    mid = remember(run, "API gateway owns rate limits", "-T", "role-backend", "-T", "team:api")
    found = json.loads(run("recall", "--json", "backend").stdout)
    assert found[0]["memory"]["id"] == mid


def test_remember_reads_stdin(run):
    text = "Multi-line note\nfrom a pipe: keep CHANGELOG entries short.\n"
    out = json.loads(run("remember", "--json", "-t", "pattern", "-", input=text).stdout)
    assert out["memory"]["content"] == text.strip()
    assert out["memory"]["summary"] == ""  # one sentence is its own summary
    long = "Pin the SDK major version. " + "It renamed FastMCP in 2.x and broke servers. " * 5
    out = json.loads(run("remember", "--json", "-", input=long).stdout)
    assert out["memory"]["summary"] == "Pin the SDK major version."


def test_remember_empty_stdin_is_a_user_error(run):
    result = run("remember", "-", input="   \n", code=1)
    assert "empty" in result.stderr


def test_global_memories_are_recalled_with_project_ones(run):
    g = json.loads(run("remember", "--json", "--global", "prefer ruff over flake8").stdout)
    assert g["memory"]["category"] == "global"
    out = json.loads(run("recall", "--json", "ruff").stdout)
    assert out[0]["scope"] == "global"
    assert json.loads(run("recall", "--json", "--scope", "project", "ruff").stdout) == []


def test_user_errors_exit_1_usage_errors_exit_2(run):
    assert "no memory" in run("get", "m-nope", code=1).stderr
    assert "not a memory id" in run("get", "DROP TABLE;", code=1).stderr
    run("remember", "-t", "wish", "x", code=2)
    run("remember", "-p", "11", "x", code=2)
    run("recall", code=2)
    run("recall", "  ", code=2)  # nothing to look for: not ten arbitrary passages
    run("recall", "--branch", "x", "--all-branches", "q", code=2)
    run("forget", code=2)
    run("frobnicate", code=2)


def test_forget_by_id_and_by_query(run):
    a = remember(run, "the staging database lives on port 5433")
    b = remember(run, "staging deploys need the VPN")
    out = json.loads(run("forget", "--json", a).stdout)
    assert out[0]["memory"]["status"] == "archived" and out[0]["archived"] is True
    ids = [r["memory"]["id"] for r in json.loads(run("recall", "--json", "staging").stdout)]
    assert ids == [b]
    # without a terminal and without --yes nothing is touched
    assert "--yes" in run("forget", "--query", "staging VPN", code=1).stderr
    archived = json.loads(run("forget", "--json", "--yes", "--query", "staging VPN").stdout)
    assert [x["memory"]["id"] for x in archived] == [b]
    assert json.loads(run("recall", "--json", "staging").stdout) == []
    assert (
        "no memory holds every word of" in run("forget", "--yes", "--query", "zebra", code=1).stderr
    )


def test_forgetting_what_is_archived_already_says_so_and_recall_archived_marks_it(run):
    """As MCP `forget` does: the second time, nothing is archived, and the reply says so."""
    mid = remember(run, "the staging database lives on port 5433")
    assert run("forget", mid).stdout == f"Archived {mid} (project)\n"
    assert run("forget", mid).stdout == f"{mid} (project) was already archived\n"
    again = json.loads(run("forget", "--json", mid).stdout)
    assert again[0]["archived"] is False and again[0]["memory"]["status"] == "archived"
    kept = remember(run, "staging deploys need the VPN")
    lines = run("recall", "--archived", "staging").stdout.splitlines()
    assert "[context] (archived) the staging database" in next(x for x in lines if "5433" in x)
    assert "(archived)" not in next(x for x in lines if "VPN" in x)
    found = json.loads(run("recall", "--json", "--archived", "staging").stdout)
    statuses = {r["memory"]["id"]: r["memory"]["status"] for r in found}
    assert statuses == {mid: "archived", kept: "active"}


def test_forget_by_query_unattended_takes_only_what_holds_every_word(run, repo: Path):
    """Meaning always finds a neighbour and relevance is relative to the best hit: with --yes
    a query archives only the memories that hold all its words, and never what was said."""
    from cortexmem.services.context import Context
    from cortexmem.services.embedding import Embedder, sync_context

    texts = ("Use SQLite WAL; PostgreSQL only for team sync",
             "The CI runner has no GPU; skip CUDA tests there")  # fmt: skip
    kept = [remember(run, t) for t in texts]
    with Context.for_cwd(repo) as ctx:
        sync_context(ctx, Embedder.for_context(ctx))
    run("forget", "--yes", "--query", "qwertyuiop zxcvb", code=1)
    run("forget", "--yes", "--query", "GPU postgres", code=1)
    run("forget", "--yes", "--query", "do not use SQLite", code=1)  # small words count
    only_small = run("forget", "--yes", "--query", "the", code=1).stderr
    assert "only common words" in only_small  # held by almost anything: it says nothing
    archived = json.loads(run("forget", "--json", "--yes", "--query", "CUDA GPU").stdout)
    assert [x["memory"]["id"] for x in archived] == [kept[1]]
    assert [r["memory"]["id"] for r in json.loads(run("recall", "--json", "WAL").stdout)] == [
        kept[0]
    ]


def test_status_json(run, repo: Path):
    run("remember", "-t", "gotcha", "x is y")
    report = json.loads(run("status", "--json").stdout)
    assert report["project"] == str(repo) and report["branch"] == "main"
    assert report["fts5_available"] is True
    project = report["stores"]["project"]
    assert project["by_type"] == {"gotcha": 1} and project["schema_version"] >= 2
    assert project["size_bytes"] > 0
    assert report["stores"]["global"]["exists"] is False
    text = run("status").stdout
    assert "fts5_available" in text and "gotcha 1" in text
    # piped (no terminal), a line stays one line: rich would cut it at 80 columns
    counts = next(line for line in text.splitlines() if "memories:" in line)
    assert len(counts) > 80 and counts.rstrip().endswith("backups: 0"), text


EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "sessions"


def test_status_counts_transcripts_and_says_how_much_recall_can_weigh_by_meaning(run, repo):
    """The three sample sessions and one subagent's are four transcripts (the cursor of each
    one's tool calls is not another); what capture stored has no vector until reindex."""
    run("ingest", "--into", str(repo), str(EXAMPLES))
    project = json.loads(run("status", "--json").stdout)["stores"]["project"]
    assert project["transcripts"] == 4
    embedded = project["embedded"]
    assert embedded["memories"] == {"embedded": 0, "total": project["memories"]}
    assert embedded["episodes"] == {"embedded": 0, "total": project["episodes"]}
    text = run("status").stdout
    assert "captured: 4 transcripts" in text
    assert f"embedded: 0 of {project['memories']} memories, 0 of {project['episodes']}" in text
    assert "run `cortex reindex`" in text
    said = run("reindex").stdout
    assert said.startswith(
        f"Embedded {project['memories']} memories, {project['episodes']} passages of sessions"
    )
    embedded = json.loads(run("status", "--json").stdout)["stores"]["project"]["embedded"]
    assert embedded["memories"]["embedded"] == project["memories"]
    assert embedded["episodes"]["embedded"] == project["episodes"]
    assert "cortex reindex" not in run("status").stdout


def test_reset_backs_up_and_restore_undoes_it(run):
    mid = remember(run, "precious knowledge")
    assert "--yes" in run("reset", code=1).stderr  # no terminal: refuses
    assert "Backup:" in run("reset", "--yes").stdout
    assert json.loads(run("recall", "--json", "precious").stdout) == []
    assert "pre-reset" in run("restore", "--list").stdout
    run("restore", "--yes")
    assert json.loads(run("get", "--json", mid).stdout)["memory"]["content"] == "precious knowledge"


def test_reset_help_says_everything_it_deletes(run, repo: Path):
    """What the help lists is what a reset of captured sessions leaves at zero."""
    text = " ".join(run("reset", "--help").stdout.split())
    listed = ("backup", "memories", "edges", "vectors", "events", "episodes", "lessons",
              "tool observations", "transcripts", "instincts", "suggestions")  # fmt: skip
    assert [what for what in listed if what not in text] == []
    run("ingest", "--into", str(repo), str(EXAMPLES))
    run("reindex")
    held = json.loads(run("status", "--json").stdout)["stores"]["project"]
    assert held["episodes"] and held["observations"] and held["transcripts"]
    run("reset", "--yes")
    from cortexmem.model import LESSON_STATUSES
    from cortexmem.services.context import Context

    with Context.for_cwd(repo) as ctx:
        store = ctx.require("project")
        counts = store.counts()
        assert (counts.memories, counts.edges, counts.events, counts.observations) == (0, 0, 0, 0)
        assert counts.transcripts == 0 and store.get_cursor(str(EXAMPLES)) is None
        assert store.episode_counts().episodes == 0
        assert list(store.iter_lessons(statuses=LESSON_STATUSES)) == []
        assert store.embedding_state("local/all-MiniLM-L6-v2-int8")[0] == 0


def test_export_import_round_trip_is_lossless_and_idempotent(run, tmp_path: Path, repo: Path):
    a = remember(run, "alpha decision", "-t", "decision", "-T", "x")
    remember(run, "beta gotcha with ünïcode — and “quotes”", "-t", "gotcha")
    run("recall", "alpha")  # access stats are part of what must survive
    dump = tmp_path / "dump.jsonl"
    run("export", "-o", str(dump))
    first = dump.read_text().splitlines()
    assert json.loads(first[0])["format"] == "cortex-export" and len(first) == 3

    other = tmp_path / "other"
    other.mkdir()
    runner = CliRunner()
    result = runner.invoke(cli, ["-C", str(other), "import", "--json", str(dump)])
    assert json.loads(result.stdout)["inserted"] == 2, result.output
    again = runner.invoke(cli, ["-C", str(other), "import", "--json", str(dump)])
    assert json.loads(again.stdout) | {"scope": None} == {
        "scope": None, "inserted": 0, "updated": 0, "unchanged": 2, "edges_added": 0,
        "events_added": 0, "episodes_added": 0, "episode_links_added": 0, "lessons_added": 0,
        "lesson_edges_added": 0, "observations_added": 0, "skipped": [],
    }  # fmt: skip
    second = runner.invoke(cli, ["-C", str(other), "export"]).stdout.splitlines()
    assert second[1:] == first[1:]  # line 0 is the header, with the time and path
    md = run("export", "--format", "markdown").stdout
    assert "## Decision (1)" in md and a in md


def test_a_global_export_goes_back_into_the_global_store_unless_told_otherwise(run):
    """`cortex export -g | cortex import -` put the global memories into the project store
    under the same ids: recall showed each twice, forget reached the project's copy only."""
    mid = remember(run, "prefer ruff over flake8", "--global")
    dump = run("export", "-g").stdout
    result = json.loads(run("import", "--json", "-", input=dump).stdout)
    assert (result["scope"], result["inserted"], result["unchanged"]) == ("global", 0, 1)
    assert [r["memory"]["id"] for r in json.loads(run("recall", "--json", "ruff").stdout)] == [mid]
    assert "Imported into the global store" in run("import", "-", input=dump).stdout
    run("import", "-g", "--into-project", "-", input=dump, code=2)
    asked = json.loads(run("import", "--json", "--into-project", "-", input=dump).stdout)
    assert (asked["scope"], asked["inserted"]) == ("project", 1)  # as the person said


def test_an_export_of_the_same_knowledge_under_other_ids_is_not_stored_twice(run, tmp_path: Path):
    """Another machine captured the same session (its memories have other ids): importing
    its export takes each for the memory already here, and its edges follow."""
    from cortexmem.services.context import Context

    here = remember(run, "the staging database listens on 5433", "-t", "gotcha")
    other = tmp_path / "laptop"
    other.mkdir()
    runner = CliRunner()
    theirs = json.loads(runner.invoke(cli, ["-C", str(other), "remember", "--json", "-t",
                                            "gotcha", "the staging database listens on 5433"]
                                      ).stdout)["memory"]["id"]  # fmt: skip
    new = json.loads(
        runner.invoke(
            cli,
            ["-C", str(other), "remember", "--json", "-t", "decision", "staging runs Postgres 16"],
        ).stdout
    )
    with Context.for_cwd(other) as ctx:
        from cortexmem.model import Edge

        ctx.require("project").add_edge(Edge(new["memory"]["id"], theirs, "relates_to"))
    dump = tmp_path / "laptop.jsonl"
    runner.invoke(cli, ["-C", str(other), "export", "-o", str(dump)])
    assert theirs != here
    result = json.loads(run("import", "--json", str(dump)).stdout)
    assert (result["inserted"], result["unchanged"], result["edges_added"]) == (1, 1, 1)
    ids = [r["memory"]["id"] for r in json.loads(run("recall", "--json", "staging").stdout)]
    assert here in ids and theirs not in ids
    edges = json.loads(run("get", "--json", here).stdout)["edges"]
    assert [e["source_id"] for e in edges] == [new["memory"]["id"]]


def test_knowledge_from_an_old_export_is_not_archived_on_arrival(run, tmp_path: Path):
    """A memory learned a year ago elsewhere starts its decay clock when it arrives, as a
    captured one does: the first lifecycle pass after the import archives nothing."""
    remember(run, "placeholder")
    dump = tmp_path / "old.jsonl"
    run("export", "-o", str(dump))
    header, record = dump.read_text().splitlines()
    memory = json.loads(record)
    memory.update(id="m-01h0000000-aaaaaaaa", content="Retry flaky uploads twice, not more",
                  memory_type="pattern", created_at="2025-11-01T00:00:00.000000Z",
                  updated_at="2025-11-01T00:00:00.000000Z")  # fmt: skip
    dump.write_text(f"{header}\n{json.dumps(memory)}\n")
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    runner = CliRunner()
    assert json.loads(runner.invoke(cli, ["-C", str(fresh), "import", "--json", str(dump)]
                                    ).stdout)["inserted"] == 1  # fmt: skip
    report = json.loads(runner.invoke(cli, ["-C", str(fresh), "lifecycle", "--json"]).stdout)
    got = json.loads(runner.invoke(cli, ["-C", str(fresh), "get", "--json", memory["id"]]).stdout)
    assert report["archived"] == [] and got["memory"]["confidence"] > 0.99


def test_import_rejects_bad_files_and_writes_nothing(run, tmp_path: Path):
    bad = tmp_path / "bad.jsonl"
    header = json.dumps({"format": "cortex-export", "version": 1})
    good = json.dumps({"record": "memory", "content": "ok", "id": "m-good"})
    bad.write_text("\n".join([header, good, '{"record": "memory", "content": ""}']) + "\n")
    assert "line 3" in run("import", str(bad), code=1).stderr
    assert json.loads(run("recall", "--json", "ok").stdout) == []
    bad.write_text("not json\n")
    assert "line 1" in run("import", str(bad), code=1).stderr
    run("import", str(tmp_path / "missing.jsonl"), code=2)


def test_a_corrupt_store_is_a_one_line_error(run, repo: Path):
    (repo / ".cortex").mkdir()
    (repo / ".cortex" / "cortex.db").write_text("garbage " * 100)
    result = run("recall", "anything", code=1)
    assert "not a SQLite database" in result.stderr
    assert (repo / ".cortex" / "cortex.db").read_text() == "garbage " * 100


def test_demo_runs_offline_on_a_throwaway_store(run, cortex_home: Path):
    out = run("demo").stdout
    assert "1. capture" in out and "7. status" in out
    assert "embedded with local/all-MiniLM-L6-v2-int8" in out
    assert "3. briefing" in out and "## Decisions" in out
    # asked in other words than the session used, answered by meaning: the decision and the
    # request it answered (what was said, with where it was said) come first
    first_answer = out.split("4. recall", 1)[1].split("4. [", 1)[0]
    assert "[decision] I decided to enforce idempotency" in first_answer
    assert "[said: user] Add idempotency keys to POST /payments" in first_answer
    assert not cortex_home.exists()  # the user's own global store was never touched


def test_round_trip_keeps_edges_events_and_archived_memories(tmp_path: Path, repo: Path):
    from cortexmem.model import Edge, Event, Memory, Provenance
    from cortexmem.services.context import Context

    with Context.for_cwd(repo) as ctx:
        store = ctx.writable("project")
        a, b = Memory("we chose SQLite", memory_type="decision"), Memory("old plan")
        store.add_memories([a, b])
        store.add_edge(Edge(a.id, b.id, "supersedes"))
        prov = Provenance(session_id="s1")
        store.append_event(Event("decision", "we chose SQLite", provenance=prov))
        store.set_status(b.id, "archived")
    runner = CliRunner()
    dump = tmp_path / "dump.jsonl"
    assert runner.invoke(cli, ["-C", str(repo), "export", "-o", str(dump)]).exit_code == 0
    kinds = [json.loads(line).get("record") for line in dump.read_text().splitlines()[1:]]
    assert sorted(kinds) == ["edge", "event", "memory", "memory"]

    other = tmp_path / "other"
    other.mkdir()
    result = runner.invoke(cli, ["-C", str(other), "import", "--json", str(dump)])
    assert json.loads(result.stdout)["edges_added"] == 1
    assert json.loads(result.stdout)["events_added"] == 1
    again = runner.invoke(cli, ["-C", str(other), "export"]).stdout.splitlines()
    assert again[1:] == dump.read_text().splitlines()[1:]
    archived = json.loads(runner.invoke(cli, ["-C", str(other), "get", "--json", b.id]).stdout)
    assert archived["memory"]["status"] == "archived"


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("content", 123, "content"),
        ("tags", "abc", "tags"),
        ("pinned", "no", "pinned"),
        ("priority", 11, "priority"),
        ("created_at", "yesterday", "created_at"),
    ],
)
def test_import_checks_field_types(run, tmp_path: Path, field: str, value, message: str):
    bad = tmp_path / "typed.jsonl"
    header = json.dumps({"format": "cortex-export", "version": 1})
    record = {"record": "memory", "content": "typed", "id": "m-typed"} | {field: value}
    bad.write_text(header + "\n" + json.dumps(record) + "\n")
    assert message in run("import", str(bad), code=1).stderr


def test_import_normalises_other_iso_timestamps(run, tmp_path: Path):
    dump = tmp_path / "iso.jsonl"
    header = json.dumps({"format": "cortex-export", "version": 1})
    record = {"record": "memory", "content": "dated", "id": "m-dated",
              "created_at": "2025-03-04T05:06:07+02:00"}  # fmt: skip
    dump.write_text(header + "\n" + json.dumps(record) + "\n")
    run("import", str(dump))
    got = json.loads(run("get", "--json", "m-dated").stdout)["memory"]
    assert got["created_at"] == "2025-03-04T03:06:07.000000Z"


def test_import_of_a_file_that_is_not_utf8_is_a_user_error(run, tmp_path: Path):
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes(b'{"format": "cortex-export", "version": 1}\n{"content": "caf\xe9"}\n')
    assert "not UTF-8" in run("import", str(bad), code=1).stderr


def test_export_to_a_missing_folder_is_a_user_error(run, tmp_path: Path):
    remember(run, "something")
    result = run("export", "-o", str(tmp_path / "no" / "such" / "dump.jsonl"), code=1)
    assert result.stderr.count("\n") == 1


def test_an_export_never_overwrites_a_store_or_its_journal(run, repo: Path, tmp_path: Path):
    remember(run, "We chose SQLite in WAL mode because several sessions write at once")
    store = repo / ".cortex" / "cortex.db"
    before = store.read_bytes()
    for target in (store, Path(f"{store}-wal")):
        result = run("export", "-o", str(target), code=1)
        assert "not overwritten" in result.stderr and result.stderr.count("\n") == 1
    assert store.read_bytes()[:16] == before[:16] == b"SQLite format 3\x00"
    assert "SQLite in WAL mode" in run("recall", "which database did we choose").stdout
    run("export", "-o", str(tmp_path / "dump.jsonl"))  # any other file is written as before
    (tmp_path / "notes").write_text("my notes")
    run("export", "-o", str(tmp_path / "notes-journal"))  # beside a file that is no database
    run("export", "-o", str(tmp_path / "-wal"))  # a name that is only the suffix


def test_a_file_where_the_store_folder_should_be_is_a_user_error(run, repo: Path):
    (repo / ".cortex").write_text("not a folder")
    result = run("remember", "x", code=1)
    assert result.stderr.count("\n") == 1 and ".cortex" in result.stderr


def test_sessions_of_a_project_folder_gone_are_skipped_in_one_line(tmp_path: Path):
    """`cortex import-history` on a machine where the projects moved: one line per project
    folder gone (the first file and how many more), not one per session."""
    folder = tmp_path / "projects" / "-gone-app"
    folder.mkdir(parents=True)
    for n in range(3):
        record = {"type": "user", "uuid": f"u{n}", "sessionId": f"s{n}", "cwd": "/gone/app",
                  "timestamp": "2026-01-01T00:00:00Z",
                  "message": {"role": "user", "content": "hello there"}}  # fmt: skip
        (folder / f"s{n}.jsonl").write_text(json.dumps(record) + "\n")
    result = CliRunner().invoke(cli, ["import-history", str(tmp_path / "projects")])
    said = [line for line in result.stderr.splitlines() if "skipped" in line]
    assert said == [f"  skipped {folder / 's0.jsonl'} and 2 more: its project folder /gone/app "
                    "is gone (use --into DIR)"], result.output  # fmt: skip
    assert result.exit_code == 1 and "no transcript was captured" in result.stderr


def test_a_reader_that_stops_early_is_no_error(run, repo: Path, tmp_path: Path):
    """`cortex export | head -1`: the command stops quietly when its reader has had enough
    (it printed "Error: Broken pipe" and exited 1)."""
    import subprocess
    import sys

    remember(run, "seed")
    dump = tmp_path / "many.jsonl"
    run("export", "-o", str(dump))
    header, record = dump.read_text().splitlines()
    memory = json.loads(record)
    lines = [header] + [
        json.dumps(memory | {"id": f"m-01h{n:07d}-aaaaaaaa", "content": f"note {n} " + "x" * 300})
        for n in range(400)
    ]
    dump.write_text("\n".join(lines) + "\n")
    run("import", str(dump))
    export = subprocess.Popen(
        [sys.executable, "-m", "cortexmem", "-C", str(repo), "export"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert export.stdout is not None and export.stderr is not None
    assert export.stdout.read(10)
    export.stdout.close()
    assert export.wait(timeout=60) == 0
    assert export.stderr.read() == b""


def test_restore_of_a_file_that_is_not_a_backup_says_so(run, tmp_path: Path):
    remember(run, "something")
    stray = tmp_path / "notes.txt"
    stray.write_text("not a database\n")
    err = run("restore", "--yes", str(stray), code=1).stderr
    assert "is not a backup of a Cortex store" in err and "cortex restore" not in err


def test_the_lifecycles_marks_travel_with_an_export(run, repo: Path, tmp_path: Path):
    """Where the lifecycle stands with each memory (decayed when, below the bar since when,
    archived by it, not by a person) is part of the export: after a round trip the same
    passes archive and revive the same memories."""
    import sqlite3

    from cortexmem.services.context import Context

    kept = remember(run, "Retry flaky uploads twice", "-t", "pattern")
    faded = remember(run, "Deploys freeze on Fridays", "-t", "context")
    with sqlite3.connect(repo / ".cortex" / "cortex.db") as conn:  # as passes left them
        conn.execute(
            "UPDATE memories SET decayed_at = '2026-01-02T00:00:00.000000Z', "
            "below_since = '2026-01-03T00:00:00.000000Z' WHERE id = ?",
            (kept,),
        )
        conn.execute("UPDATE memories SET status = 'archived' WHERE id = ?", (faded,))
        conn.execute("UPDATE memories SET archived_at = '2026-01-04T00:00:00.000000Z' "
                     "WHERE id = ?", (faded,))  # fmt: skip
    dump = tmp_path / "dump.jsonl"
    run("export", "-o", str(dump))
    other = tmp_path / "other"
    other.mkdir()
    CliRunner().invoke(cli, ["-C", str(other), "import", str(dump)])
    with Context.for_cwd(repo) as here, Context.for_cwd(other) as there:
        marks = here.require("project").lifecycle_marks()
        assert set(marks) == {kept, faded}
        assert there.require("project").lifecycle_marks() == marks
    # Later the lifecycle archives the other one here; imported again, the newer copy
    # brings its marks with it (it came back archived by hand, never to be revived)
    with sqlite3.connect(repo / ".cortex" / "cortex.db") as conn:
        conn.execute(
            "UPDATE memories SET status = 'archived', updated_at = "
            "'2027-01-01T00:00:00.000000Z' WHERE id = ?",
            (kept,),
        )
        conn.execute("UPDATE memories SET archived_at = '2027-01-01T00:00:00.000000Z' "
                     "WHERE id = ?", (kept,))  # fmt: skip
    run("export", "-o", str(dump))
    CliRunner().invoke(cli, ["-C", str(other), "import", str(dump)])
    with Context.for_cwd(repo) as here, Context.for_cwd(other) as there:
        marks = here.require("project").lifecycle_marks()
        assert marks[kept]["archived_at"].startswith("2027")
        assert there.require("project").lifecycle_marks() == marks


def test_the_tool_calls_observed_travel_with_an_export(run, repo: Path, tmp_path: Path):
    """What the learning loop learns from is part of the export: imported once, kept once."""
    from cortexmem.model import Observation
    from cortexmem.services.context import Context

    remember(run, "something")
    calls = [Observation(session_id="s1", tool=tool, ok=ok, at=f"2026-01-01T00:00:0{n}.000000Z",
                         tool_use_id=call, command=cmd)
             for n, (tool, ok, call, cmd) in enumerate([("Bash", False, "t1", "pytest"),
                                                        ("Bash", True, "t2", "uv run pytest"),
                                                        ("Read", True, None, None)])]  # fmt: skip
    with Context.for_cwd(repo) as ctx:
        ctx.require("project").record_capture([], lambda _: [], None, calls)
        ctx.require("project").mark_session("s1", automated=True, entrypoint="sdk-py")
    dump = tmp_path / "dump.jsonl"
    run("export", "-o", str(dump))
    other = tmp_path / "other"
    other.mkdir()
    for expected in (3, 0):
        out = CliRunner().invoke(cli, ["-C", str(other), "import", "--json", str(dump)]).stdout
        assert json.loads(out)["observations_added"] == expected
    with Context.for_cwd(other) as ctx:
        got = [o.to_dict() for o in ctx.require("project").iter_observations()]
        # an automated session is still one the loop does not learn from
        assert ctx.require("project").automated_sessions() == {"s1"}
    assert got == [o.to_dict() for o in calls]


def test_restore_of_a_backup_cut_short_says_it_is_damaged(run, tmp_path: Path):
    remember(run, "something")
    cut = tmp_path / "cut.db"
    cut.write_bytes(b"SQLite format 3\x00" + b"\x00" * 40)
    err = run("restore", "--yes", str(cut), code=1).stderr
    assert "damaged" in err and "not a backup" not in err
