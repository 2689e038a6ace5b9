"""Every schema version the project has shipped migrates to the current one, keeping data."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from cortexmem.core.filters import MemoryFilter
from cortexmem.model import Memory
from cortexmem.store.migrations.loader import all_migrations, head_version
from cortexmem.store.sqlite.store import SQLiteStore

# Rows valid at each version, inserted before migrating (version -> statements).
SEED_ROWS = {
    1: [
        "INSERT INTO memories (id, content, memory_type, category, confidence, priority, "
        "source_type, created_at, updated_at, content_hash, tags) VALUES ('m-old-1', "
        "'legacy decision about caching', 'decision', 'project', 0.9, 7, 'manual', "
        "'2025-01-01T00:00:00.000000Z', '2025-01-01T00:00:00.000000Z', 'h1', '[\"cache\"]')",
    ],
    2: [
        "INSERT INTO events (id, kind, content, confidence, salience, created_at, content_hash)"
        " VALUES ('ev-old-1', 'command', 'make test', 1, 0.5, "
        "'2025-01-01T00:00:00.000000Z', 'eh1')",
    ],
    3: [
        "INSERT INTO observations (session_id, tool, ok, at, tool_use_id) VALUES "
        "('s-old', 'Bash', 1, '2025-01-01T00:00:00.000000Z', 'toolu_old')",
    ],
    4: [
        "INSERT INTO embeddings (memory_seq, model, dim, source_hash, vector, version, "
        "embedded_at) SELECT seq, 'old-model', 2, content_hash, zeroblob(8), 1, "
        "'2025-01-01T00:00:00.000000Z' FROM memories WHERE id = 'm-old-1'",
    ],
    5: [
        "INSERT INTO embeddings (memory_seq, model, dim, source_hash, vector, version, "
        "embedded_at) SELECT seq, 'newer-model', 2, content_hash, zeroblob(8), 2, "
        "'2025-01-02T00:00:00.000000Z' FROM memories WHERE id = 'm-old-1' "
        "ON CONFLICT (memory_seq) DO UPDATE SET model = excluded.model, version = 2",
    ],
    6: [
        "INSERT INTO memories (id, content, memory_type, category, confidence, priority, "
        "source_type, created_at, updated_at, content_hash, status, decayed_at, below_since, "
        "archived_at) VALUES ('m-old-6', 'stale progress note', 'progress', 'project', 0.1, 3, "
        "'manual', '2025-01-01T00:00:00.000000Z', '2025-01-27T00:00:00.000000Z', 'h6', "
        "'archived', '2025-01-27T00:00:00.000000Z', '2025-01-13T04:00:00.000000Z', "
        "'2025-01-27T00:00:00.000000Z')",
        "INSERT INTO lifecycle_runs (ran_at, finished_at, duration_ms, decayed, archived) "
        "VALUES ('2025-01-27T00:00:00.000000Z', '2025-01-27T00:00:01.000000Z', 3, 1, 1)",
    ],
    7: [
        "INSERT INTO merge_candidates (a_id, b_id, jaccard, cosine, status, created_at) VALUES "
        "('m-old-1', 'm-old-6', 0.7, 0.8, 'pending', '2025-01-28T00:00:00.000000Z')",
        "INSERT INTO rejected_links (a_id, b_id, relation_type, rejected_at) VALUES "
        "('m-old-1', 'm-old-6', 'relates_to', '2025-01-28T00:00:00.000000Z')",
        "UPDATE upkeep_state SET linked_seq = 2, extractions = 3 WHERE id = 1",
    ],
    8: [
        "INSERT INTO embedding_labels (model, label) VALUES ('newer-model', 'old-project')",
        "UPDATE memories SET summary = 'a newer summary' WHERE id = 'm-old-1'",
    ],
    9: [],  # application_id only: no table, no row
    10: [
        "INSERT INTO extraction_cursors (transcript_path, byte_offset, line, head_hash, "
        "session_id, updated_at, extractor_state) VALUES ('/old/t.jsonl', 10, 1, '10:ab', "
        "'s-old', '2025-01-28T00:00:00.000000Z', '{\"v\": 1}')",
    ],
    11: [
        "INSERT INTO episodes (id, role, text, session_id, transcript_path, line, chunk, "
        "branch, created_at, content_hash) VALUES ('ep-old-1', 'user', 'which cache did we "
        "pick', 's-1', '/t/s-1.jsonl', 3, 0, 'main', '2025-01-01T00:00:00.000000Z', 'eh1')",
        "INSERT INTO memory_episodes (memory_id, episode_id) VALUES ('m-old-1', 'ep-old-1')",
    ],
    12: [
        "INSERT INTO episodes (id, role, text, session_id, transcript_path, line, chunk, "
        "branch, created_at, content_hash) VALUES ('ep-old-2', 'written', 'docs/cache.md:\n"
        "We cache with Redis', 's-1', '/t/s-1.jsonl', 5, 0, 'main', "
        "'2025-01-01T00:00:00.000000Z', 'eh2')",
    ],
    13: [
        "INSERT INTO ai_calls (at, use, provider, model, ok, input_tokens, output_tokens) "
        "VALUES ('2025-01-28T00:00:00.000000Z', 'distill', 'anthropic', 'claude-haiku', 1, 900, "
        "120)",
        "INSERT INTO ai_jobs (kind, session_id, queued_at) VALUES ('distill', 's-1', "
        "'2025-01-28T00:00:00.000000Z')",
        "INSERT INTO distill_state (session_id, last_line, distilled_at) VALUES ('s-1', 3, "
        "'2025-01-28T00:00:00.000000Z')",
    ],
    14: [
        "INSERT INTO learning_sessions (session_id, automated, entrypoint, seen_at, tokens) "
        "VALUES ('s-sdk', 1, 'sdk-cli', '2025-01-29T00:00:00.000000Z', 1200)",
        "INSERT INTO instincts (key, kind, label, rule, confidence, score, observations, "
        "sessions, total_sessions, first_seen, last_seen, status, updated_at) VALUES "
        "('chain:Grep>Read>Edit', 'chain', 'Grep->Read->Edit', 'Frequent tool chain', 0.95, "
        "1.0, 30, 4, 4, '2025-01-25T00:00:00.000000Z', '2025-01-29T00:00:00.000000Z', "
        "'promoted', '2025-01-29T00:00:00.000000Z')",
        "INSERT INTO learning_state (key, value) VALUES ('last_run', "
        "'2025-01-29T00:00:00.000000Z')",
        "INSERT INTO suggestions (id, destination, target, title, text, rationale, source, key, "
        "created_at) VALUES ('sg-1', 'claude_md', 'CLAUDE.md', 'Run tests', "
        "'Run tests with uv run pytest', 'seen 6x', 'instinct', 'claude_md:uv', "
        "'2025-01-29T00:00:00.000000Z')",
        "INSERT INTO audit_log (at, who, action, suggestion_id, target) VALUES "
        "('2025-01-29T00:00:00.000000Z', 'alice', 'apply', 'sg-1', 'CLAUDE.md')",
    ],
    15: [
        "INSERT INTO lessons (id, key, kind, tier, status, text, search, data, created_at, "
        "updated_at) VALUES ('ls-old-1', 'k1', 'failure', 'T2', 'active', 'when pytest fails "
        "on imports, install the package editable', 'pytest imports', '{}', "
        "'2025-01-28T00:00:00.000000Z', '2025-01-28T00:00:00.000000Z')",
        "INSERT INTO lesson_history (lesson_id, at, what) VALUES ('ls-old-1', "
        "'2025-01-28T00:00:00.000000Z', 'learned')",
        "INSERT INTO lesson_warnings (session_id, lesson_id, at, tool) VALUES ('s-1', "
        "'ls-old-1', '2025-01-28T00:00:00.000000Z', 'Bash')",
    ],
    16: [
        "INSERT INTO episodes (id, role, text, session_id, transcript_path, line, chunk, "
        "branch, created_at, content_hash) VALUES ('ep-old-3', 'read', 'STATUS.md:\n"
        "Handed over: the GPU backend is a stub', 's-1', '/t/s-1.jsonl', 7, 0, 'main', "
        "'2025-01-01T00:00:00.000000Z', 'eh3')",
    ],
    17: [
        "INSERT INTO document_listings (document, decision, listed_at) VALUES "
        "('/repo/status.md', 'Keep SQLite in WAL mode', '2025-01-01T00:00:00.000000Z')",
    ],
    18: [
        "INSERT INTO episodes (id, role, text, session_id, transcript_path, line, chunk, "
        "branch, created_at, content_hash) VALUES ('ep-old-4', 'ran', '$ pnpm install\n"
        "Ignored build scripts: esbuild. Run pnpm approve-builds', 's-1', '/t/s-1.jsonl', 9, 0, "
        "'main', '2025-01-01T00:00:00.000000Z', 'eh4')",
    ],
    19: [
        "INSERT INTO memories (id, content, memory_type, category, confidence, priority, "
        "source_type, created_at, updated_at, content_hash, tags) VALUES ('m-old-19', "
        "'Keep the tile size at 64', 'decision', 'project', 0.9, 7, 'extraction', "
        "'2025-01-01T00:00:00.000000Z', '2025-01-01T00:00:00.000000Z', 'h19', "
        '\'["doc:/home/me/gpu/status.md", "event:decision", "kernels"]\')',
    ],
    20: [
        "INSERT INTO memories (id, content, memory_type, category, confidence, priority, "
        "source_type, created_at, updated_at, content_hash, tags) VALUES ('m-old-20', "
        "'Session cookies expire after a day', 'gotcha', 'project', 0.9, 6, 'manual', "
        "'2025-01-01T00:00:00.000000Z', '2025-01-01T00:00:00.000000Z', 'h20', "
        '\'["area:auth", "team:backend"]\')',
    ],
    21: [
        "INSERT INTO episodes (id, role, text, session_id, transcript_path, line, chunk, "
        "branch, created_at, content_hash, document) VALUES ('ep-old-5', 'read', 'STATUS.md:\n"
        "Next: the GPU backend', 's-2', '/t/s-2.jsonl', 3, 0, 'main', "
        "'2025-01-02T00:00:00.000000Z', 'eh5', 'STATUS.md')",
    ],
}


def build_at(path: Path, version: int) -> None:
    conn = sqlite3.connect(path)
    for migration in all_migrations()[:version]:
        for statement in migration.statements():
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {migration.version}")
        for statement in SEED_ROWS.get(migration.version, []):
            conn.execute(statement)
    conn.commit()
    conn.close()


def schema(path: Path) -> list[tuple[str, str]]:
    conn = sqlite3.connect(path)
    rows = conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name"
    ).fetchall()
    conn.close()
    return [(name, " ".join(sql.split())) for name, sql in rows]


def test_migrations_are_numbered_and_split_cleanly():
    versions = [m.version for m in all_migrations()]
    assert versions == list(range(1, head_version() + 1))
    for m in all_migrations():
        assert m.statements(), m.name


def test_seed_rows_cover_every_version():
    assert set(SEED_ROWS) == set(range(1, head_version() + 1))


@pytest.mark.parametrize("start", range(head_version() + 1))
def test_migrate_from_every_earlier_version(tmp_path: Path, start: int):
    old = tmp_path / "old.db"
    build_at(old, start)
    fresh = tmp_path / "fresh.db"
    SQLiteStore.open(fresh).close()

    with SQLiteStore.open(old) as store:
        assert store.schema_version() == head_version()
        if start >= 1:
            memory = store.get_memory("m-old-1")
            assert memory is not None and memory.tags == ("cache",)
            hits = store.search_text("caching", MemoryFilter(), 5, "project")
            assert [h.memory.id for h in hits] == ["m-old-1"]
        backups = [b.name for b in store.list_backups()]
        if 1 <= start < head_version():
            assert len(backups) == 1 and backups[0].endswith(f"pre-migrate-v{start}.db")
        else:
            assert backups == []  # nothing to lose (fresh) or nothing to do (current)
        if start >= 2:
            assert [e.id for e in store.iter_events()] == ["ev-old-1"]
        if start >= 3:
            assert [o.tool_use_id for o in store.iter_observations()] == ["toolu_old"]
        if start >= 12:  # and by 0016, 0018
            assert {e.role for e in store.iter_episodes()} >= {"user", "written"}
        if start >= 18:
            assert "ran" in {e.role for e in store.iter_episodes()}
        if start >= 16:  # a read stored before 0021 is no version of its document; one after is
            versions = {e.id: e.document for e in store.iter_episodes() if e.role == "read"}
            assert versions == {"ep-old-3": None} | (
                {"ep-old-5": "STATUS.md"} if start >= 21 else {}
            )
        if start >= 11:  # the episodes table rebuilt by 0012 keeps its rows and their links
            assert [e.id for e in store.episodes_of_memory("m-old-1")] == ["ep-old-1"]
            found = store.search_episodes("what did we pick", 5)
            assert [e.id for _, e, _ in found] == ["ep-old-1"]
    assert schema(old) == schema(fresh)


def test_the_word_search_reads_a_persons_tags_not_cortexs_markers(tmp_path: Path):
    """A document's path in a decision's marker put "home" into its words (0019): after the
    migration a store searches a person's tag, not the markers, for rows it already had and
    for new ones, and the index stays whole through updates and deletes."""
    old = tmp_path / "old.db"
    build_at(old, 18)
    with sqlite3.connect(old) as conn:
        conn.execute(SEED_ROWS[19][0])
    with SQLiteStore.open(old) as store:

        def found(words: str) -> list[str]:
            return [h.memory.id for h in store.search_text(words, MemoryFilter(), 5, "project")]

        assert found("home status") == [] and found("kernels") == ["m-old-19"]
        new, _ = store.add_memory(
            Memory("Warps of 32", tags=("doc:/home/me/x.md", "gpu", "area:kernels"))
        )
        assert found("home") == [] and found("gpu") == [new.id]
        assert found("area") == [new.id]  # a person's tag with a colon is searched (0020)
        store.replace_tagged("gpu", [Memory("Warps of 64 on this card")], [])
        store.set_status(new.id, "archived")
        store.run(lambda conn: conn.execute(
            "INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')"))  # fmt: skip


def test_the_marker_list_is_the_models():
    """The migration's SQL holds the markers the code files memories under."""
    from cortexmem.model import TAG_MARKERS
    from cortexmem.store.migrations.loader import all_migrations

    sql = all_migrations()[19].sql
    assert all(f"'{marker}'" in sql for marker in TAG_MARKERS)
    assert sql.count("'digest:'") == 5


def test_what_documents_listed_is_taken_from_the_events_a_store_already_has(tmp_path: Path):
    """A store written before 0017 kept a listing's document in the event: the migration
    weighs those (the latest listing and the latest drop of each decision)."""
    old = tmp_path / "old.db"
    build_at(old, 16)
    conn = sqlite3.connect(old)
    for n, (kind, day) in enumerate([("decision", 1), ("withdrawn", 3), ("decision", 5)]):
        conn.execute(
            "INSERT INTO events (id, kind, content, payload, confidence, salience, created_at, "
            "content_hash) VALUES (?, ?, 'One worker at a time', "
            '\'{"document": "/repo/status.md"}\', 1, 0.5, ?, ?)',
            (f"ev-doc-{n}", kind, f"2025-01-0{day}T00:00:00.000000Z", f"hd{n}"),
        )
    conn.commit()
    conn.close()
    with SQLiteStore.open(old) as store:
        listed = (("One worker at a time", "2025-01-05T00:00:00.000000Z"),)
        assert store.document_decisions() == [("/repo/status.md", listed)]
    rows = sqlite3.connect(old).execute("SELECT dropped_at FROM document_listings").fetchall()
    assert rows == [("2025-01-03T00:00:00.000000Z",)]


def test_processes_racing_to_create_and_migrate(tmp_path: Path):
    """Several processes open the same missing file at once: one migrates, none fails."""
    import subprocess
    import sys

    for round_ in range(3):
        path = tmp_path / f"race-{round_}.db"
        opener = "import sys; from cortexmem.store.sqlite.store import SQLiteStore; "
        opener += "SQLiteStore.open(sys.argv[1]).close()"
        procs = [
            subprocess.Popen([sys.executable, "-c", opener, str(path)], stderr=subprocess.PIPE)
            for _ in range(6)
        ]
        errors = [p.communicate()[1] for p in procs]
        assert all(p.returncode == 0 for p in procs), errors
        with SQLiteStore.open(path) as store:
            assert store.schema_version() == head_version()
        assert schema(path) == schema_of_fresh(tmp_path)


def schema_of_fresh(tmp_path: Path) -> list[tuple[str, str]]:
    fresh = tmp_path / "fresh-reference.db"
    if not fresh.exists():
        SQLiteStore.open(fresh).close()
    return schema(fresh)
