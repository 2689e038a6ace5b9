"""The store contract, written against ``store.protocols`` only and run on every backend.

A backend joins by adding an opener to ``BACKENDS`` (a PostgreSQL one opens a fresh schema).
Nothing here touches SQL, files or connections: what is SQLite's own (WAL, file modes,
migrations, the FTS index, locks) is tested in ``tests/test_store_sqlite.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from cortexmem.core.budget import Call
from cortexmem.core.filters import MemoryFilter
from cortexmem.errors import CortexError, NotFound, StoreCorrupt
from cortexmem.model import (
    Edge,
    Episode,
    Event,
    ExtractionCursor,
    Lesson,
    Memory,
    Observation,
    Provenance,
)
from cortexmem.store.protocols import (
    AIStore,
    BackupStore,
    DistillState,
    EpisodeStore,
    EventStore,
    GraphStore,
    LearningStore,
    LessonStore,
    LifecycleStore,
    MemoryStore,
    Store,
    StoreInfo,
    UpkeepStore,
    VectorStore,
)


def _open_sqlite(tmp_path: Path) -> Store:
    from cortexmem.store.sqlite.store import SQLiteStore

    return SQLiteStore.open(tmp_path / "s" / "cortex.db")


BACKENDS: dict[str, Callable[[Path], Store]] = {"sqlite": _open_sqlite}


@pytest.fixture(params=sorted(BACKENDS))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    opened = BACKENDS[request.param](tmp_path)
    try:
        yield opened
    finally:
        opened.close()


def test_the_backend_implements_every_protocol(store: Store):
    for protocol in (
        StoreInfo,
        MemoryStore,
        VectorStore,
        GraphStore,
        UpkeepStore,
        EventStore,
        EpisodeStore,
        LearningStore,
        LifecycleStore,
        BackupStore,
        AIStore,
        LessonStore,
        Store,
    ):
        assert isinstance(store, protocol), protocol.__name__


# ----------------------------------------------------------------- the AI façade's bookkeeping


def test_the_ledger_returns_calls_since_a_time_oldest_first(store: Store):
    old = Call("2026-01-01T09:00:00.000000Z", "distill", "anthropic", "haiku", True, 100, 20)
    failed = Call(
        "2026-01-01T11:00:00.000000Z", "distill", "anthropic", "haiku", False,
        session_id="s1", error="anthropic answered 529: overloaded " + "x" * 1000,
    )  # fmt: skip
    done = Call("2026-01-01T10:00:00.000000Z", "judge", "ollama", "qwen", True, 50, 5)
    for call in (old, failed, done):
        store.record_ai_call(call)

    since = store.ai_calls_since("2026-01-01T09:30:00.000000Z")

    assert [c.at for c in since] == [done.at, failed.at]
    assert since[0] == done
    assert since[1].session_id == "s1" and not since[1].ok
    assert since[1].error is not None and len(since[1].error) <= 300


def test_a_job_is_queued_once_per_kind_and_session_and_counts_its_failures(store: Store):
    assert store.enqueue_ai_job("distill", "s1", "/t/s1.jsonl") is True
    assert store.enqueue_ai_job("distill", "s1", "/t/s1.jsonl") is False
    assert store.enqueue_ai_job("distill", "s2", None) is True
    assert store.enqueue_ai_job("judge", "s1", None) is True

    jobs = store.ai_jobs("distill")
    assert [(j.session_id, j.transcript_path) for j in jobs] == [
        ("s1", "/t/s1.jsonl"),
        ("s2", None),
    ]
    assert store.fail_ai_job(jobs[0].id, "timeout") == 1
    assert store.fail_ai_job(jobs[0].id, "timeout again") == 2
    assert store.ai_jobs("distill")[0].last_error == "timeout again"

    store.finish_ai_job(jobs[0].id)

    assert [j.session_id for j in store.ai_jobs("distill")] == ["s2"]
    assert len(store.ai_jobs()) == 2


def test_distill_state_moves_forward_and_adds_up_tokens(store: Store):
    assert store.distill_state("s1") is None
    first = DistillState("s1", 40, "2026-01-01T10:00:00.000000Z", 3, "anthropic/haiku", 900, 80)
    store.set_distill_state(first)
    store.set_distill_state(
        DistillState("s1", 95, "2026-01-01T11:00:00.000000Z", 1, "anthropic/haiku", 500, 40)
    )

    state = store.distill_state("s1")

    assert state == DistillState(
        "s1", 95, "2026-01-01T11:00:00.000000Z", 4, "anthropic/haiku", 1400, 120
    )


# ----------------------------------------------------------------- memories & search


def test_add_dedups_identical_active_content(store: Store):
    first, created = store.add_memory(Memory("Use WAL  mode", memory_type="decision"))
    again, created_again = store.add_memory(Memory("Use WAL mode", memory_type="decision"))
    assert created and not created_again and again.id == first.id
    other_type, created_other = store.add_memory(Memory("Use WAL mode", memory_type="gotcha"))
    assert created_other and other_type.id != first.id


def test_get_prefix_and_status(store: Store):
    m, _ = store.add_memory(Memory("alpha"))
    assert store.get_memory(m.id) == m
    assert store.find_by_prefix(m.id[:12]) == [m]
    assert store.find_by_prefix("zzz") == []
    assert store.get_memories([m.id, "m-missing"]) == {m.id: m}
    archived = store.set_status(m.id, "archived")
    assert archived.status == "archived" and archived.updated_at > m.updated_at
    with pytest.raises(NotFound):
        store.set_status("m-missing", "archived")


def test_archived_memories_are_not_searched_by_default(store: Store):
    m, _ = store.add_memory(Memory("hidden treasure"))
    store.set_status(m.id, "archived")
    assert store.search_text("treasure", MemoryFilter(), 10, "project") == []
    found = store.search_text("treasure", MemoryFilter(statuses=("archived",)), 10, "project")
    assert [c.memory.id for c in found] == [m.id]


def test_term_documents_counts_memories_and_episodes_holding_each_word(store: Store):
    store.add_memory(Memory("Webhook retries back off exponentially"))
    store.add_memory(Memory("The test suite runs with uv run pytest"))
    store.add_episodes([Episode("why do the webhook tests fail?", session_id="s1", line=1)])
    total, found = store.term_documents(["webhook", "tests", "nothing", 'a"b', "webhook"])
    assert total == 3
    # words match as the word search matches them (stemmed: "tests" holds "test")
    assert found == {"webhook": 2, "tests": 2, "nothing": 0, 'a"b': 0}
    assert store.term_documents([]) == (3, {})


def test_secrets_are_redacted_before_they_are_stored(store: Store):
    token = "ghp_" + "a1B2c3D4e5" * 4
    m, _ = store.add_memory(Memory(f"deploy with GITHUB_TOKEN={token}", tags=("ci",)))
    store.append_event(Event("command", f"gh auth login {token}", payload={"cmd": token}))
    assert token not in m.content and "[REDACTED:github-token]" in m.content
    stored = store.get_memory(m.id)
    assert stored is not None and token not in stored.content
    assert all(token not in e.content and token not in str(e.payload) for e in store.iter_events())


def test_record_access_counts_and_the_maxima_follow(store: Store):
    m, _ = store.add_memory(Memory("served twice"))
    store.record_access([m.id], "2025-01-01T00:00:00.000000Z")
    store.record_access([m.id], "2025-01-02T00:00:00.000000Z")
    served = store.get_memory(m.id)
    assert served is not None and served.access_count == 2
    assert served.last_accessed_at == "2025-01-02T00:00:00.000000Z"
    assert store.maxima() == (0, 2)


def test_the_briefing_token_changes_with_what_a_briefing_reads(store: Store):
    empty = store.briefing_token()
    m, _ = store.add_memory(Memory("a decision", memory_type="decision"))
    added = store.briefing_token()
    store.set_status(m.id, "archived")
    assert len({empty, added, store.briefing_token()}) == 3


# ----------------------------------------------------------------- graph


def test_edges_are_unique(store: Store):
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
    assert {e.relation_type for e in store.edges_touching([b.id])} == {"source_of", "relates_to"}
    assert len(list(store.iter_edges())) == 2


def test_supersedes_edges_come_only_from_a_merge(store: Store):
    a, _ = store.add_memory(Memory("use pytest -q"))
    b, _ = store.add_memory(Memory("run pytest quietly"))
    with pytest.raises(ValueError):
        store.apply_links([Edge(a.id, b.id, "supersedes")], [], 0)
    edge = store.merge(a.with_changes(content="run pytest -q (quiet)"), b.id)
    assert edge.relation_type == "supersedes" and (edge.source_id, edge.target_id) == (a.id, b.id)
    dropped, kept = store.get_memory(b.id), store.get_memory(a.id)
    assert dropped is not None and dropped.status == "superseded"
    assert kept is not None and kept.content == "run pytest -q (quiet)"
    with pytest.raises(CortexError):
        store.merge(a, b.id)  # no longer active


# ----------------------------------------------------------------- events & capture


def test_events_are_deduplicated(store: Store):
    ev = Event("command", "pytest -q", provenance=Provenance(session_id="s1", line=4))
    assert store.append_event(ev) is True
    assert store.append_event(Event("command", "pytest -q", provenance=ev.provenance)) is False
    assert list(store.iter_events()) == [ev]
    assert store.recent_events(["command"], 5) == [ev]


def test_cursors_upsert(store: Store):
    assert store.get_cursor("/t.jsonl") is None
    store.set_cursor(ExtractionCursor("/t.jsonl", offset=10, line=2, head_hash="h"))
    store.set_cursor(ExtractionCursor("/t.jsonl", offset=99, line=7, head_hash="h"))
    cursor = store.get_cursor("/t.jsonl")
    assert cursor is not None and (cursor.offset, cursor.line) == (99, 7)


def _observation(n: int, session: str = "s1") -> Observation:
    return Observation(session, "Bash", True, f"2025-01-01T00:00:0{n}.000000Z", tool_use_id=f"t{n}")


def test_record_capture_is_one_transaction(store: Store):
    events = [Event("prompt", f"question {i}") for i in range(3)]
    cursor = ExtractionCursor("/t.jsonl", offset=30, line=3, head_hash="h")

    def failing(fresh: list[Event]) -> list[Memory]:
        raise RuntimeError("extraction failed half-way")

    with pytest.raises(RuntimeError):
        store.record_capture(events, failing, cursor, [_observation(1)])
    assert list(store.iter_events()) == [] and store.get_cursor("/t.jsonl") is None
    assert list(store.iter_observations()) == []

    def memories_for(fresh: list[Event]) -> list[Memory]:
        return [Memory(f"learned from {e.content}") for e in fresh]

    result = store.record_capture(events, memories_for, cursor, [_observation(1)])
    assert (result.events_added, result.memories_added, result.observations_added) == (3, 3, 1)
    again = store.record_capture(events, memories_for, cursor, [_observation(1)])
    assert (again.events_added, again.memories_added, again.observations_added) == (0, 0, 0)
    stored = store.get_cursor("/t.jsonl")
    assert stored is not None and stored.offset == 30
    assert store.counts().memories == 3 and store.counts().events == 3


def test_observations_are_kept_per_session_in_order(store: Store):
    store.record_capture([], lambda _: [], None, [_observation(1), _observation(2)])
    store.record_capture([], lambda _: [], None, [_observation(3, "s2")])
    assert [o.tool_use_id for o in store.iter_observations()] == ["t1", "t2", "t3"]
    assert [o.tool_use_id for o in store.iter_observations("s2")] == ["t3"]


def test_counts(store: Store):
    store.add_memories([Memory(f"m{i}", memory_type="gotcha") for i in range(3)])
    m, _ = store.add_memory(Memory("d", memory_type="decision"))
    store.set_status(m.id, "archived")
    counts = store.counts()
    assert counts.by_type == {"gotcha": 3}
    assert counts.by_status == {"active": 3, "archived": 1}
    assert counts.memories == 4 and store.size_bytes() > 0


# ----------------------------------------------------------------- vectors


def test_embeddings_put_and_load(store: Store):
    a, _ = store.add_memory(Memory("first", memory_type="gotcha"))
    b, _ = store.add_memory(Memory("second", memory_type="code"))
    assert store.embedding_backlog_size("tiny") == 2
    backlog = store.embedding_backlog("tiny", 10, skip_types=("code",))
    assert [m.id for _, m in backlog] == [a.id]
    seqs = store.seq_of([a.id, b.id])
    vector = bytes(8)  # two float32 zeros
    with pytest.raises(ValueError):
        store.put_embeddings("tiny", 3, [(seqs[a.id], a.content_hash, vector)])
    assert store.put_embeddings("tiny", 2, [(seqs[a.id], a.content_hash, vector)]) == 1
    assert store.embedding_state("tiny") == (1, 1)
    assert store.load_embeddings("tiny") == [(seqs[a.id], 1, "gotcha", vector)]
    assert store.load_embeddings("tiny", after_version=1) == []
    assert store.vectors_of("tiny", [seqs[a.id], seqs[b.id]]) == {seqs[a.id]: vector}
    assert store.last_embedded_at("tiny") is not None and store.last_embedded_at("x") is None
    assert store.embedding_backlog_size("tiny", ("code",)) == 0
    found = store.candidates_by_seq([(seqs[a.id], 0.9)], MemoryFilter(), "project")
    assert [(c.memory.id, c.relevance) for c in found] == [(a.id, 0.9)]


def test_embedding_coverage_counts_current_vectors_of_the_model(store: Store):
    a, _ = store.add_memory(Memory("first", memory_type="gotcha"))
    store.add_memory(Memory("def f(): pass", memory_type="code"))
    seq = store.seq_of([a.id])[a.id]
    assert store.embedding_coverage("tiny") == (0, 2)
    store.put_embeddings("tiny", 2, [(seq, a.content_hash, bytes(8))])
    assert store.embedding_coverage("tiny") == (1, 2)
    assert store.embedding_coverage("tiny", ("code",)) == (1, 1)
    assert store.embedding_coverage("other") == (0, 2)  # another model's vector is not one
    store.put_embeddings("tiny", 2, [(seq, "an older text", bytes(8))])
    assert store.embedding_coverage("tiny") == (0, 2)  # nor one made for other words


# ----------------------------------------------------------------- lifecycle & upkeep


def test_lifecycle_pass_dry_run_changes_nothing_and_a_recent_pass_is_skipped(store: Store):
    old = Memory(
        "a fading progress note", memory_type="progress", created_at="2020-01-01T00:00:00.000000Z"
    )
    store.add_memories([old])
    dry = store.lifecycle_pass("2025-01-01T00:00:00.000000Z", dry_run=True)
    assert old.id in dry.archived + dry.pruned + dry.decayed
    assert store.get_memory(old.id) == old
    done = store.lifecycle_pass("2025-01-01T00:00:00.000000Z")
    assert done.counts() == dry.counts()
    again = store.lifecycle_pass("2025-01-01T01:00:00.000000Z", every=timedelta(hours=24))
    assert again.skipped
    assert store.restore_archived([]) == []


def test_upkeep_state_counts_extractions_and_claims_a_run_once(store: Store):
    store.add_memory(Memory("something to link"))
    state = store.upkeep_state()
    assert state.unlinked and state.extractions == 0
    _, claimed = store.claim_upkeep_run(add_extraction=True, may_run=False, due=lambda s: True)
    assert not claimed and store.upkeep_state().extractions == 1
    _, claimed = store.claim_upkeep_run(add_extraction=False, may_run=True, due=lambda s: True)
    assert claimed and store.upkeep_state().extractions == 0
    store.set_linked_seq(store.upkeep_state().newest_seq)
    assert not store.upkeep_state().unlinked and store.count_after(0) == 1


# ----------------------------------------------------------------- backups & transfer


def test_backup_restore_and_clear(store: Store):
    kept, _ = store.add_memory(Memory("keep me"))
    backup = store.clear()
    assert store.counts().memories == 0
    assert backup.exists() and backup in store.list_backups()
    assert store.backup_status_counts(backup) == {"active": 1}
    safety = store.restore(backup)
    assert store.get_memory(kept.id) == kept
    assert len(store.search_text("keep", MemoryFilter(), 10, "project")) == 1
    assert safety.exists() and safety.name.endswith("pre-restore.db")


def test_restore_refuses_junk(store: Store, tmp_path: Path):
    junk = tmp_path / "junk.db"
    junk.write_text("nope")
    with pytest.raises(StoreCorrupt):
        store.restore(junk)
    with pytest.raises(NotFound):
        store.restore(tmp_path / "missing.db")


def test_snapshot_and_import_are_idempotent(store: Store, tmp_path: Path):
    a, _ = store.add_memory(Memory("exported one"))
    b, _ = store.add_memory(Memory("exported two"))
    store.add_edge(Edge(a.id, b.id, "relates_to"))
    store.append_event(Event("prompt", "what was said"))
    memories, edges, events = store.snapshot()
    assert (len(memories), len(edges), len(events)) == (2, 1, 1)
    other = BACKENDS[sorted(BACKENDS)[0]](tmp_path / "other")
    try:
        first = other.import_records(memories, edges, events)
        assert (first.inserted, first.edges_added, first.events_added) == (2, 1, 1)
        second = other.import_records(memories, edges, events)
        assert (second.inserted, second.updated, second.unchanged) == (0, 0, 2)
        assert (second.edges_added, second.events_added) == (0, 0)
        assert other.snapshot() == (memories, edges, events)
        orphan = other.import_records([], [Edge(a.id, "m-elsewhere", "relates_to")], [])
        assert orphan.edges_added == 0 and len(orphan.skipped) == 1
    finally:
        other.close()


# ----------------------------------------------------------------- episodes


def _episode(text: str, line: int = 1, session: str = "s-1", role: str = "user") -> Episode:
    return Episode(text, role=role, session_id=session, transcript_path="/t/s.jsonl", line=line)


def test_episodes_are_stored_once_by_content(store: Store):
    said = [
        _episode("Which queue do the billing workers use?"),
        _episode("RabbitMQ.", 2, role="assistant"),
    ]
    assert store.add_episodes(said) == 2
    assert store.add_episodes([_episode("Which queue do the billing workers use?", 9)]) == 0
    assert store.episode_counts().episodes == 2
    assert store.episode_counts().by_role == {"user": 1, "assistant": 1}
    # the same words in another session are another episode
    assert store.add_episodes([_episode("RabbitMQ.", 2, "s-2", "assistant")]) == 1


def test_episodes_read_back_whole(store: Store):
    episode = _episode("The upload test needs TUSD_ENDPOINT set.", 7)
    store.add_episodes([episode])
    assert store.get_episode(episode.id) == episode
    assert store.get_episode("ep-missing") is None
    assert list(store.iter_episodes("s-1")) == [episode]
    assert list(store.iter_episodes("s-other")) == []


def test_episodes_are_searched_by_words_stemmed(store: Store):
    store.add_episodes([_episode("The uploads failed on the staging bucket.", 1),
                        _episode("Lunch is at noon.", 2)])  # fmt: skip
    hits = store.search_episodes("upload failing?", 10)
    assert [e.line for _, e, _ in hits] == [1]
    seq, _, relevance = hits[0]
    assert relevance > 0 and store.episodes_by_seq([seq])[seq].line == 1
    assert store.search_episodes("", 10) == []


def test_episode_vectors_backlog_and_state(store: Store):
    store.add_episodes([_episode("one episode here", 1), _episode("another episode", 2)])
    backlog = store.episode_embedding_backlog("m", 10)
    assert len(backlog) == 2 and store.episode_embedding_backlog_size("m") == 2
    vector = (b"\x00\x00\x80\x3f") * 4
    assert store.put_episode_embeddings("m", 4, [(seq, vector) for seq, _ in backlog]) == 2
    assert store.episode_embedding_backlog_size("m") == 0
    count, version = store.episode_embedding_state("m")
    assert count == 2 and version >= 1
    rows = store.load_episode_embeddings("m")
    assert [r[0] for r in rows] == [seq for seq, _ in backlog] and rows[0][2] == "user"
    assert store.load_episode_embeddings("m", version) == []
    assert store.episode_embedding_backlog_size("other") == 2


def test_episodes_and_their_links_import_idempotently(store: Store, tmp_path: Path):
    """Export carries episodes and memory↔episode links; importing twice changes nothing, and
    an episode the store already holds under another id takes the links meant for it."""
    cursor = ExtractionCursor(transcript_path="/t/s.jsonl", offset=10, line=1)
    said = _episode("We decided to use PostgreSQL because it has row level security.")
    store.record_capture(
        [Event("decision", "Use PostgreSQL", provenance=Provenance(
            session_id="s-1", transcript_path="/t/s.jsonl", line=1), created_at=said.created_at)],
        lambda events: [Memory("Use PostgreSQL", "decision", source_session="s-1",
                               created_at=said.created_at)],
        cursor, episodes=[said],
    )  # fmt: skip
    memories, edges, events = store.snapshot()
    episodes, links = list(store.iter_episodes()), list(store.iter_episode_links())
    assert len(episodes) == 1 and links == [(memories[0].id, episodes[0].id)]
    other = BACKENDS[sorted(BACKENDS)[0]](tmp_path / "other")
    try:
        # the same words, captured there already under another id
        other.add_episodes([_episode(said.text)])
        first = other.import_records(memories, edges, events, episodes=episodes,
                                     episode_links=links)  # fmt: skip
        assert (first.episodes_added, first.episode_links_added) == (0, 1)
        (held,) = other.iter_episodes()
        assert held.id != said.id and other.memories_of_episode(held.id) == [memories[0].id]
        again = other.import_records(memories, edges, events, episodes=episodes,
                                     episode_links=links)  # fmt: skip
        assert (again.episodes_added, again.episode_links_added, again.skipped) == (0, 0, [])
        orphan = other.import_records([], [], [], episode_links=[("m-elsewhere", held.id)])
        assert orphan.episode_links_added == 0 and len(orphan.skipped) == 1
    finally:
        other.close()


def test_edges_are_added_in_bulk_once_and_only_between_memories(store: Store):
    a, _ = store.add_memory(Memory("Session summary: retries", source_session="s-1"))
    b, _ = store.add_memory(Memory("Retries back off exponentially", source_session="s-1"))
    store.add_memory(Memory("Another session's note", source_session="s-2"))
    assert sorted(store.memories_of_session("s-1")) == sorted([a.id, b.id])
    edges = [Edge(a.id, b.id, "generalizes"), Edge(a.id, "m-elsewhere", "generalizes")]
    assert store.add_edges(edges) == 1
    assert store.add_edges(edges) == 0 and len(list(store.iter_edges())) == 1


def test_a_new_label_puts_episode_vectors_back_in_the_backlog(store: Store):
    """Episodes are embedded with the project's name too: a renamed project re-embeds them,
    and recall keeps the old vectors until the new ones are written."""
    store.add_episodes([_episode("one episode here", 1), _episode("another episode", 2)])
    vector = (b"\x00\x00\x80\x3f") * 4
    store.relabel_embeddings("m", "old-name")
    backlog = store.episode_embedding_backlog("m", 10)
    store.put_episode_embeddings("m", 4, [(seq, vector) for seq, _ in backlog])
    assert store.relabel_embeddings("m", "old-name") == 0
    assert store.relabel_embeddings("m", "new-name") == 2
    assert store.episode_embedding_backlog_size("m") == 2
    assert len(store.load_episode_embeddings("m")) == 2  # still served meanwhile
    assert store.relabel_embeddings("m", "new-name") == 0
    store.put_episode_embeddings("m", 4, [(seq, vector) for seq, _ in backlog])
    assert store.episode_embedding_backlog_size("m") == 0


def test_capture_records_episodes_in_its_transaction(store: Store):
    cursor = ExtractionCursor(transcript_path="/t/s.jsonl", offset=10, line=1)
    result = store.record_capture([], lambda _: [], cursor, episodes=[_episode("said once, kept")])
    assert result.episodes_added == 1
    again = store.record_capture([], lambda _: [], cursor, episodes=[_episode("said once, kept")])
    assert again.episodes_added == 0 and store.episode_counts().episodes == 1


def test_replacing_tagged_versions_deletes_the_old_ones_but_never_a_pinned_one(store: Store):
    """A session digest is rebuilt at every pass and its older version deleted; a version a
    person pinned is kept (superseded) instead."""
    tag = "digest:contract"
    first, _, _ = store.replace_tagged(
        tag, [Memory("Session goal: add retries (v1)", tags=(tag,))], [], retire="deleted"
    )
    second, _, _ = store.replace_tagged(
        tag, [Memory("Session goal: add retries (v2)", tags=(tag,))], [], retire="deleted"
    )
    assert store.get_memory(first[0].id) is None
    pinned = store.add_memory(Memory("Session goal: add retries (v3)", tags=(tag,), pinned=True))
    store.replace_tagged(
        tag, [Memory("Session goal: add retries (v4)", tags=(tag,))], [], retire="deleted"
    )
    assert store.get_memory(second[0].id) is None
    kept = store.get_memory(pinned[0].id)
    assert kept is not None and kept.status == "superseded"


# ----------------------------------------------------------------- learning and review


def test_instincts_and_the_loops_state_are_saved_together(store: Store):
    from cortexmem.model import Instinct

    inst = Instinct(
        key="chain:Grep>Read>Edit", kind="chain", label="Grep->Read->Edit",
        rule="Frequent tool chain: Grep->Read->Edit (seen 30x)", confidence=0.95, score=1.0,
        observations=30, sessions=4, total_sessions=4, first_seen="2026-03-06T09:00:00.000000Z",
        last_seen="2026-03-11T09:00:26.000000Z", status="promoted",
        updated_at="2026-03-11T21:00:00.000000Z", promoted_at="2026-03-11T21:00:00.000000Z",
    )  # fmt: skip
    store.save_instincts([inst], {"last_run": "2026-03-11T21:00:00.000000Z"})
    assert store.instincts(("promoted",)) == [inst] and store.instincts(("active",)) == []
    assert store.learning_state("last_run") == "2026-03-11T21:00:00.000000Z"
    store.save_instincts([inst.__class__(**{**inst.to_dict(), "status": "archived",
                                            "confidence": 0.2})], {})  # fmt: skip
    assert [i.status for i in store.instincts()] == ["archived"]


def test_observations_of_a_window_sessions_and_their_tokens(store: Store):
    calls = [
        Observation(session_id="a", tool="Bash", ok=False, at="2026-03-01T10:00:00.000000Z",
                    tool_use_id="t1", command="pytest"),
        Observation(session_id="a", tool="Bash", ok=True, at="2026-03-09T10:00:00.000000Z",
                    tool_use_id="t2", command="uv run pytest"),
    ]  # fmt: skip
    store.record_capture([], lambda _: [], None, calls)
    assert [o.command for o in store.observations_since("2026-03-05T00:00:00.000000Z")] == [
        "uv run pytest"
    ]
    mark = store.observation_mark()
    assert store.prune_observations("2026-03-05T00:00:00.000000Z", dry_run=True) == 1
    assert store.prune_observations("2026-03-05T00:00:00.000000Z") == 1
    assert store.observation_mark() == mark and len(list(store.iter_observations())) == 1
    store.add_session_tokens("a", 1000)
    assert not store.session_marked("a")  # tokens alone do not say what started it
    store.mark_session("a", automated=True, entrypoint="sdk-cli")
    store.mark_session("a", automated=False, entrypoint="cli")  # once automated, always
    store.add_session_tokens("a", 500)
    assert store.session_marked("a") and store.automated_sessions() == {"a"}
    assert store.session_tokens() == {"a": 1500}


def test_suggestions_are_queued_once_ranked_and_decided_with_an_audit_line(store: Store):
    from dataclasses import replace

    from cortexmem.model import Suggestion
    from cortexmem.store.protocols import AuditEntry

    def make(n: int, recurrence: int, evidence: int) -> Suggestion:
        return Suggestion(
            id=f"sg-{n}", destination="claude_md", target="CLAUDE.md", title=f"Rule {n}",
            text=f"- Rule {n}.", rationale="seen", source="test", key=f"k{n}",
            evidence=tuple(f"e{i}" for i in range(evidence)), recurrence=recurrence,
            created_at=f"2026-03-0{n}T00:00:00.000000Z",
        )  # fmt: skip

    assert store.add_suggestions([make(1, 3, 1), make(2, 9, 1), make(3, 3, 4)]) == 3
    # The same key again: not queued twice, but the pending one takes its recurrence.
    again = replace(make(1, 5, 2), id="sg-9")
    assert store.add_suggestions([again]) == 0
    assert [s.id for s in store.suggestions()] == ["sg-2", "sg-1", "sg-3"]  # 9, 5, 3+4 evidence
    assert store.suggestion_keys() == {"k1", "k2", "k3"}
    (found,) = store.find_suggestions("sg-2")
    store.decide_suggestion(
        replace(found, status="applied", decided_at="2026-03-10T00:00:00.000000Z"),
        AuditEntry(
            None,
            "2026-03-10T00:00:00.000000Z",
            "alice",
            "apply",
            "sg-2",
            "CLAUDE.md",
            "--- a/CLAUDE.md\n",
            None,
        ),
    )
    assert store.count_suggestions() == 2 and store.count_suggestions("applied") == 1
    (entry,) = store.audit_entries()
    assert (entry.who, entry.action, entry.suggestion_id) == ("alice", "apply", "sg-2")


# ----------------------------------------------------------------- lessons


def _lesson(text: str = "when pytest cannot import the package, install it editable", **kw):
    return Lesson(text=text, **kw)


def test_a_lesson_is_stored_once_per_key_and_read_back_whole(store: Store):
    lesson = _lesson(key="k1", sessions=("s1",), noise=(("wrong_repo", 1),))
    assert store.add_lesson(lesson) == (lesson, True)
    again, added = store.add_lesson(_lesson("other words, same key", key="k1"))
    assert not added and again == lesson
    assert store.get_lesson(lesson.id) == lesson
    assert store.get_lesson(lesson.id[:6]) == lesson
    assert store.lesson_by_key("k1") == lesson
    assert store.lesson_count() == 1
    assert [h[1] for h in store.lesson_history(lesson.id)] == ["learned"]


def test_a_lesson_update_is_searchable_at_once_and_has_its_history(store: Store):
    lesson, _ = store.add_lesson(_lesson())
    ((seq, found, score),) = store.search_lessons("pytest import", 5)
    assert found == lesson and score > 0
    changed = lesson.with_changes(text="when ruff complains about imports, sort them", tier="T2")
    store.update_lesson(changed, "promoted", "T3 → T2")
    assert store.search_lessons("pytest", 5) == []
    assert store.search_lessons("ruff", 5)[0][1] == changed
    assert store.lessons_by_seq([seq]) == {seq: changed}
    assert [h[1:] for h in store.lesson_history(lesson.id)] == [
        ("learned", ""),
        ("promoted", "T3 → T2"),
    ]
    assert list(store.iter_lessons(("archived",))) == []
    with pytest.raises(KeyError):
        store.update_lesson(_lesson("never stored"), "x")


def test_lesson_edges_are_unique(store: Store):
    a, _ = store.add_lesson(_lesson("a lesson"))
    b, _ = store.add_lesson(_lesson("a principle"))
    assert store.add_lesson_edge(b.id, a.id, "generalizes")
    assert not store.add_lesson_edge(b.id, a.id, "generalizes")
    assert store.lesson_edges([a.id]) == [(b.id, a.id, "generalizes")]


def test_a_warning_is_shown_once_per_session_and_judged(store: Store):
    a, _ = store.add_lesson(_lesson())
    assert store.record_warning("s1", a.id, "Bash", "pytest -q", "toolu_1")
    assert not store.record_warning("s1", a.id, "Bash", "pytest -q", "toolu_2")
    assert store.record_warning("s2", a.id, "Bash", "pytest -q", None)
    assert store.set_warning_outcome("s1", "toolu_1", "ok: 3 passed") == 1
    (first, second) = store.unjudged_warnings()
    assert first.outcome == "ok: 3 passed" and second.session_id == "s2"
    store.judge_warning(first.id, "FOLLOWED", None)
    assert [w.session_id for w in store.unjudged_warnings()] == ["s2"]
    assert store.warnings_of_session("s1")[0].verdict == "FOLLOWED"


def test_lesson_vectors_put_and_load(store: Store):
    a, _ = store.add_lesson(_lesson())
    ((seq, lesson),) = store.lesson_embedding_backlog("m", 10)
    assert lesson == a
    assert store.put_lesson_embeddings("m", 2, [(seq, b"\0" * 8)]) == 1
    assert store.lesson_embedding_backlog("m", 10) == []
    assert store.lesson_embedding_state("m") == (1, 1)
    assert [r[0] for r in store.load_lesson_embeddings("m")] == [seq]
    store.update_lesson(a.with_changes(text="a new text"), "rewritten")
    assert store.lesson_embedding_state("m") == (0, 0)
