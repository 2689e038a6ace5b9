from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from cortexmem.core.filters import MemoryFilter
from cortexmem.errors import SchemaTooNew, StoreCorrupt
from cortexmem.model import Edge, Event, Memory, Provenance
from cortexmem.store.migrations.loader import head_version
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


def test_edges_cascade_when_a_memory_row_is_deleted(store: SQLiteStore):
    # Uniqueness and in-degree: tests/contract/test_store_contract.py::test_edges_are_unique
    a, _ = store.add_memory(Memory("prose about parse()", memory_type="code_description"))
    b, _ = store.add_memory(Memory("def parse(): ...", memory_type="code"))
    store.add_edge(Edge(a.id, b.id, "source_of"))
    store.add_edge(Edge(a.id, b.id, "relates_to"))
    assert len(list(store.iter_edges())) == 2
    store.write(lambda c: c.execute("DELETE FROM memories WHERE id = ?", (b.id,)))
    assert list(store.iter_edges()) == []


def test_events_are_append_only(store: SQLiteStore):
    # Deduplication: tests/contract/test_store_contract.py::test_events_are_deduplicated
    ev = Event("command", "pytest -q", provenance=Provenance(session_id="s1", line=4))
    assert store.append_event(ev) is True
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        store.write(lambda c: c.execute("UPDATE events SET content = 'x'"))


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


def test_old_backups_are_pruned(store: SQLiteStore):
    for i in range(25):
        store.backup(f"n{i}")
    assert len(store.list_backups()) == 20


def test_secrets_never_reach_the_file(store: SQLiteStore):
    # Redaction of what is returned: tests/contract (test_secrets_are_redacted_...)
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
