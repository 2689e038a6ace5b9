from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from cortexmem.core.filters import MemoryFilter
from cortexmem.errors import NotFound, SchemaTooNew, StoreCorrupt
from cortexmem.model import Edge, Event, ExtractionCursor, Memory, Provenance
from cortexmem.store.migrations import head_version
from cortexmem.store.sqlite.store import SQLiteStore


@pytest.fixture
def store(tmp_path: Path):
    with SQLiteStore.open(tmp_path / "s" / "cortex.db") as s:
        yield s


def test_fresh_store_is_wal_with_foreign_keys(store: SQLiteStore):
    conn = sqlite3.connect(store.path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.schema_version() == head_version()
    assert store._conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_add_dedups_identical_active_content(store: SQLiteStore):
    first, created = store.add_memory(Memory("Use WAL  mode", memory_type="decision"))
    again, created_again = store.add_memory(Memory("Use WAL mode", memory_type="decision"))
    assert created and not created_again and again.id == first.id
    other_type, created_other = store.add_memory(Memory("Use WAL mode", memory_type="gotcha"))
    assert created_other and other_type.id != first.id


def test_get_prefix_and_status(store: SQLiteStore):
    m, _ = store.add_memory(Memory("alpha"))
    assert store.get_memory(m.id) == m
    assert store.find_by_prefix(m.id[:12]) == [m]
    assert store.find_by_prefix("zzz") == []
    archived = store.set_status(m.id, "archived")
    assert archived.status == "archived" and archived.updated_at > m.updated_at
    with pytest.raises(NotFound):
        store.set_status("m-missing", "archived")


def test_fts_index_follows_inserts_updates_and_deletes(store: SQLiteStore):
    m, _ = store.add_memory(Memory("the parser streams transcript lines", tags=("io",)))
    flt = MemoryFilter()
    assert [c.memory.id for c in store.search_text("streaming", flt, 10, "project")] == [m.id]
    assert [c.memory.id for c in store.search_text("io", flt, 10, "project")] == [m.id]
    store.write(
        lambda c: c.execute("UPDATE memories SET content = 'a lexer' WHERE id = ?", (m.id,))
    )
    assert store.search_text("parser", flt, 10, "project") == []
    assert len(store.search_text("lexer", flt, 10, "project")) == 1
    store.write(lambda c: c.execute("DELETE FROM memories WHERE id = ?", (m.id,)))
    assert store.search_text("lexer", flt, 10, "project") == []
    # FTS5's own check raises "database disk image is malformed" if index and table disagree
    store._conn.execute(
        "INSERT INTO memories_fts(memories_fts, rank) VALUES ('integrity-check', 1)"
    )


def test_archived_memories_are_not_searched_by_default(store: SQLiteStore):
    m, _ = store.add_memory(Memory("hidden treasure"))
    store.set_status(m.id, "archived")
    assert store.search_text("treasure", MemoryFilter(), 10, "project") == []
    found = store.search_text("treasure", MemoryFilter(statuses=("archived",)), 10, "project")
    assert [c.memory.id for c in found] == [m.id]


def test_edges_are_unique_and_cascade(store: SQLiteStore):
    a, _ = store.add_memory(Memory("prose about parse()", memory_type="code_description"))
    b, _ = store.add_memory(Memory("def parse(): ...", memory_type="code"))
    edge, created = store.add_edge(Edge(a.id, b.id, "source_of"))
    dup, created_dup = store.add_edge(Edge(a.id, b.id, "source_of", strength=0.2))
    assert created and not created_dup and dup.id == edge.id and dup.strength == 1.0
    assert store.add_edge(Edge(a.id, b.id, "relates_to"))[1]
    with pytest.raises(NotFound):
        store.add_edge(Edge(a.id, "m-nowhere", "relates_to"))
    hits = store.search_text("def parse", MemoryFilter(), 10, "project")
    target = next(c for c in hits if c.memory.id == b.id)
    assert target.in_degree == 2 and target.max_in_degree == 2
    store.write(lambda c: c.execute("DELETE FROM memories WHERE id = ?", (b.id,)))
    assert list(store.iter_edges()) == []


def test_events_are_append_only_and_deduplicated(store: SQLiteStore):
    ev = Event("command", "pytest -q", provenance=Provenance(session_id="s1", line=4))
    assert store.append_event(ev) is True
    assert store.append_event(Event("command", "pytest -q", provenance=ev.provenance)) is False
    assert list(store.iter_events()) == [ev]
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        store.write(lambda c: c.execute("UPDATE events SET content = 'x'"))


def test_cursors_upsert(store: SQLiteStore):
    assert store.get_cursor("/t.jsonl") is None
    store.set_cursor(ExtractionCursor("/t.jsonl", offset=10, line=2, head_hash="h"))
    store.set_cursor(ExtractionCursor("/t.jsonl", offset=99, line=7, head_hash="h"))
    cursor = store.get_cursor("/t.jsonl")
    assert cursor is not None and (cursor.offset, cursor.line) == (99, 7)


def test_counts(store: SQLiteStore):
    store.add_memories([Memory(f"m{i}", memory_type="gotcha") for i in range(3)])
    m, _ = store.add_memory(Memory("d", memory_type="decision"))
    store.set_status(m.id, "archived")
    counts = store.counts()
    assert counts.by_type == {"gotcha": 3}
    assert counts.by_status == {"active": 3, "archived": 1}
    assert counts.memories == 4 and store.size_bytes() > 0


def test_a_corrupt_file_is_reported_and_never_overwritten(tmp_path: Path):
    path = tmp_path / "cortex.db"
    junk = b"this is not sqlite at all" * 100
    path.write_bytes(junk)
    with pytest.raises(StoreCorrupt, match="not a SQLite database"):
        SQLiteStore.open(path)
    assert path.read_bytes() == junk


def test_a_damaged_database_is_reported(tmp_path: Path):
    path = tmp_path / "cortex.db"
    with SQLiteStore.open(path) as s:
        s.add_memories([Memory(f"memory number {i} " * 20) for i in range(200)])
        s._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(path.read_bytes())
    data[4096 * 2 : 4096 * 6] = b"\xff" * (4096 * 4)
    path.write_bytes(bytes(data))
    with pytest.raises(StoreCorrupt):
        s2 = SQLiteStore.open(path)
        s2.search_text("memory", MemoryFilter(), 10, "project")
        s2.counts()


def test_a_newer_schema_is_refused(tmp_path: Path):
    path = tmp_path / "cortex.db"
    SQLiteStore.open(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {head_version() + 1}")
    conn.close()
    with pytest.raises(SchemaTooNew):
        SQLiteStore.open(path)


def test_backup_restore_and_clear(store: SQLiteStore):
    kept, _ = store.add_memory(Memory("keep me"))
    backup = store.clear()
    assert store.counts().memories == 0
    assert backup.exists() and backup in store.list_backups()
    safety = store.restore(backup)
    assert store.get_memory(kept.id) == kept
    assert len(store.search_text("keep", MemoryFilter(), 10, "project")) == 1
    assert safety.exists() and safety.name.endswith("pre-restore.db")


def test_restore_refuses_junk(store: SQLiteStore, tmp_path: Path):
    junk = tmp_path / "junk.db"
    junk.write_text("nope")
    with pytest.raises(StoreCorrupt):
        store.restore(junk)
    with pytest.raises(NotFound):
        store.restore(tmp_path / "missing.db")


def test_old_backups_are_pruned(store: SQLiteStore):
    for i in range(25):
        store.backup(f"n{i}")
    assert len(store.list_backups()) == 20


def test_secrets_never_reach_the_file(store: SQLiteStore):
    token = "ghp_" + "a1B2c3D4e5" * 4
    m, _ = store.add_memory(Memory(f"deploy with GITHUB_TOKEN={token}", tags=("ci",)))
    store.append_event(Event("command", f"gh auth login {token}", payload={"cmd": token}))
    assert token not in m.content and "[REDACTED:github-token]" in m.content
    store._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert token.encode() not in store.path.read_bytes()


def test_restore_works_in_a_folder_with_uri_characters(tmp_path: Path):
    folder = tmp_path / "proj#1 100%?x"
    with SQLiteStore.open(folder / "cortex.db") as store:
        kept, _ = store.add_memory(Memory("survives the reset"))
        backup = store.clear()
        store.restore(backup)
        assert store.get_memory(kept.id) == kept
    assert sorted(p.name for p in tmp_path.iterdir()) == ["proj#1 100%?x"]


def test_backups_are_single_files(store: SQLiteStore):
    store.add_memory(Memory("x"))
    backup = store.backup("manual")
    store.restore(backup)
    leftovers = [p.name for p in store.backup_dir.iterdir() if not p.name.endswith(".db")]
    assert leftovers == []
    assert sqlite3.connect(backup).execute("PRAGMA journal_mode").fetchone()[0] == "delete"


def test_restoring_an_older_schema_backup_migrates_it(tmp_path: Path):
    from test_migrations import build_at

    old = tmp_path / "old-backup.db"
    build_at(old, 1)
    with SQLiteStore.open(tmp_path / "live" / "cortex.db") as store:
        store.add_memory(Memory("will be replaced"))
        store.restore(old)
        assert [m.id for m in store.iter_memories()] == ["m-old-1"]
        assert store.schema_version() == head_version()
        assert store.search_text("caching", MemoryFilter(), 5, "project")[0].memory.id == "m-old-1"
    assert sqlite3.connect(old).execute("PRAGMA user_version").fetchone()[0] == 1  # untouched


def test_restore_refuses_a_sqlite_file_that_is_not_a_store(store: SQLiteStore, tmp_path: Path):
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(StoreCorrupt, match="not a Cortex store"):
        store.restore(other)


def test_reset_while_others_write_loses_nothing(tmp_path: Path):
    """Every memory written concurrently ends up in the store or in the reset's backup."""
    import subprocess
    import sys

    path = tmp_path / "cortex.db"
    SQLiteStore.open(path).close()
    worker = (
        "import sys\nfrom pathlib import Path\n"
        "from cortexmem.store.sqlite.store import SQLiteStore\nfrom cortexmem.model import Memory\n"
        "for i in range(150):\n"
        "    with SQLiteStore.open(Path(sys.argv[1])) as s:\n"
        "        s.add_memory(Memory(f'w{sys.argv[2]} n{i}', id=f'm-w{sys.argv[2]}-{i}'))\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", worker, str(path), str(w)]) for w in range(3)]
    with SQLiteStore.open(path) as store:
        backups = []
        # A few resets spread over the run (fewer than the backups kept, so none is pruned).
        while any(p.poll() is None for p in procs) and len(backups) < 8:
            backups.append(store.clear())
            time.sleep(0.05)
    assert all(p.wait() == 0 for p in procs)
    seen = set()
    for source in [path, *backups]:
        conn = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
        seen |= {row[0] for row in conn.execute("SELECT id FROM memories")}
        conn.close()
    assert seen == {f"m-w{w}-{i}" for w in range(3) for i in range(150)}
