"""The memory lifecycle: decay by type (pure), the lifecycle plan (pure, with properties), and
passes over a real SQLite store with a controllable clock, through the service, the CLI and the
Stop hook."""

from __future__ import annotations

import json
import math
import sqlite3
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cortexmem.cli.app import cli
from cortexmem.core.decay import (
    HALF_LIFE_DAYS,
    days_to_fall_below,
    decayed_confidence,
    half_life_days,
)
from cortexmem.core.lifecycle import (
    ARCHIVE_AFTER_DAYS,
    PRUNE_AFTER_DAYS,
    LifeRecord,
    advance,
    apply,
    plan,
    restore,
)
from cortexmem.core.ranking import centrality
from cortexmem.model import MEMORY_TYPES, Edge, Memory, format_time, parse_time
from cortexmem.services.context import Context
from cortexmem.services.lifecycle import maybe_run, run_lifecycle
from cortexmem.services.recall import recall
from cortexmem.store.sqlite.lifecycle import load_records

T0 = datetime(2025, 3, 1, tzinfo=UTC)
STABLE = ("architecture", "decision", "code_description", "code")


def day(n: float) -> datetime:
    return T0 + timedelta(days=n)


# ============================================================================ pure decay


@pytest.mark.parametrize(
    ("memory_type", "half_life"),
    [("pattern", 60), ("gotcha", 45), ("context", 30), ("progress", 7)]
    + [(t, math.inf) for t in STABLE],
)
def test_half_life_by_type(memory_type: str, half_life: float):
    assert HALF_LIFE_DAYS[memory_type] == half_life
    assert half_life_days(memory_type) == half_life
    if math.isinf(half_life):
        assert decayed_confidence(0.9, memory_type, 10_000) == 0.9
    else:
        assert decayed_confidence(0.8, memory_type, half_life) == pytest.approx(0.4)
        assert decayed_confidence(0.8, memory_type, 2 * half_life) == pytest.approx(0.2)
        assert decayed_confidence(0.8, memory_type, 0) == 0.8


def test_every_memory_type_has_a_half_life():
    assert set(HALF_LIFE_DAYS) == set(MEMORY_TYPES)


@pytest.mark.parametrize("memory_type", ["pattern", "gotcha", "context", "progress"])
def test_modifiers(memory_type: str):
    base = HALF_LIFE_DAYS[memory_type]
    assert half_life_days(memory_type, pinned=True) == math.inf
    assert decayed_confidence(0.7, memory_type, 1000, pinned=True) == 0.7
    # access_count > 10 doubles: 10 does not, 11 does
    assert half_life_days(memory_type, access_count=10) == base
    assert half_life_days(memory_type, access_count=11) == 2 * base
    # centrality > 0.5 doubles: 0.5 does not
    assert half_life_days(memory_type, centrality=0.5) == base
    assert half_life_days(memory_type, centrality=0.51) == 2 * base
    assert half_life_days(memory_type, access_count=11, centrality=1.0) == 4 * base
    assert decayed_confidence(0.8, memory_type, 4 * base, False, 50, 0.9) == pytest.approx(0.4)


def test_decisions_never_decay_whatever_the_modifiers():
    for pinned in (False, True):
        assert decayed_confidence(0.5, "decision", 1e6, pinned, 0, 0.0) == 0.5
        assert half_life_days("decision", pinned, 100, 1.0) == math.inf


def test_decay_composes_so_how_often_it_runs_does_not_matter():
    once = decayed_confidence(0.9, "gotcha", 7)
    twice = decayed_confidence(decayed_confidence(0.9, "gotcha", 3), "gotcha", 4)
    assert once == pytest.approx(twice, rel=1e-12)


def test_days_to_fall_below():
    assert days_to_fall_below(1.0, 0.3, 7) == pytest.approx(7 * math.log2(1 / 0.3))
    assert days_to_fall_below(0.2, 0.3, 7) == 0
    assert days_to_fall_below(0.9, 0.3, math.inf) == math.inf


def test_unknown_type_is_an_error():
    with pytest.raises(ValueError):
        half_life_days("bogus")


@given(
    confidence=st.floats(0, 1),
    memory_type=st.sampled_from(MEMORY_TYPES),
    d1=st.floats(-10, 5000),
    d2=st.floats(-10, 5000),
    pinned=st.booleans(),
    access=st.integers(0, 50),
    cent=st.floats(0, 1),
)
def test_decay_is_monotonic_in_time_and_bounded(confidence, memory_type, d1, d2, pinned, access,
                                                cent):  # fmt: skip
    early, late = sorted((d1, d2))
    a = decayed_confidence(confidence, memory_type, early, pinned, access, cent)
    b = decayed_confidence(confidence, memory_type, late, pinned, access, cent)
    assert 0 <= b <= a <= confidence


# ============================================================================ pure lifecycle


def rec(**kw) -> LifeRecord:
    base = {"id": "m-1", "memory_type": "progress", "status": "active", "confidence": 1.0}
    return LifeRecord(**{**base, **kw})


def test_a_progress_memory_is_archived_14_days_after_falling_below_and_pruned_30_later():
    crossed = 7 * math.log2(1 / 0.3)  # ~12.16 days
    r = rec(decayed_at=0.0)
    r = advance(r, 10).after
    assert r.status == "active" and r.below_since is None and r.decayed_at == 10
    r = advance(r, 20).after
    assert r.below_since == pytest.approx(crossed) and r.status == "active"
    assert advance(r, crossed + ARCHIVE_AFTER_DAYS - 0.01).after.status == "active"
    change = advance(r, crossed + ARCHIVE_AFTER_DAYS)
    assert change.transition == "archive" and change.after.archived_at == crossed + 14
    r = change.after
    assert advance(r, r.archived_at + PRUNE_AFTER_DAYS - 0.01) is None
    pruned = advance(r, r.archived_at + PRUNE_AFTER_DAYS)
    assert pruned.transition == "prune" and pruned.after is None


def test_being_recalled_restarts_the_archive_clock():
    r = rec(confidence=0.2, decayed_at=0.0, below_since=0.0, last_accessed_at=10.0)
    assert advance(r, 20).transition is None
    assert advance(r, 24).transition == "archive"


def test_hubs_decay_but_are_never_archived_or_pruned():
    hub = rec(confidence=0.1, centrality=0.8, below_since=0.0)
    change = advance(hub, 100)
    assert change.after.status == "active" and change.decayed
    archived_hub = rec(status="archived", archived_at=0.0, centrality=0.8)
    assert advance(archived_hub, 1000) is None


def test_memories_archived_by_a_person_are_left_alone():
    forgotten = rec(status="archived", archived_at=None, confidence=0.01, last_accessed_at=50.0)
    assert advance(forgotten, 1000) is None
    assert restore(forgotten, 1000) is None


def test_an_access_after_archiving_restores_at_the_next_pass():
    r = rec(status="archived", confidence=0.1, archived_at=5.0, last_accessed_at=6.0)
    change = advance(r, 7)
    assert change.transition == "restore"
    assert change.after.status == "active" and change.after.below_since == 7
    assert change.after.decayed_at == 7  # the archived days are not charged as decay


def test_stable_types_below_the_threshold_are_archived_from_when_seen():
    low = rec(memory_type="architecture", confidence=0.2, decayed_at=0.0)
    first = advance(low, 50).after
    assert first.below_since == 50 and first.confidence == 0.2
    assert advance(first, 64).transition == "archive"


# Hypothesis: records of every kind, and sequences of passes at any times (in any order).

times = st.floats(0, 400, allow_nan=False)


@st.composite
def records(draw, n_max: int = 12) -> list[LifeRecord]:
    out = []
    for i in range(draw(st.integers(1, n_max))):
        status = draw(st.sampled_from(["active", "active", "archived", "superseded"]))
        out.append(
            LifeRecord(
                id=f"m-{i}",
                memory_type=draw(st.sampled_from(MEMORY_TYPES)),
                status=status,
                confidence=draw(st.one_of(st.floats(0, 1), st.sampled_from([0.3, 0.29, 1.0]))),
                pinned=draw(st.booleans()),
                access_count=draw(st.sampled_from([0, 3, 10, 11, 40])),
                centrality=draw(st.sampled_from([0.0, 0.2, 0.5, 0.51, 1.0])),
                decayed_at=draw(times),
                below_since=draw(st.none() | times),
                archived_at=draw(st.none() | times) if status == "archived" else None,
                last_accessed_at=draw(st.none() | times),
            )
        )
    return out


@settings(max_examples=300)
@given(
    start=records(),
    steps=st.lists(
        st.tuples(times, st.lists(st.integers(0, 11), max_size=3), st.booleans()), max_size=12
    ),
)
def test_immortal_memories_survive_any_sequence_of_passes(start, steps):
    state = list(start)
    immortal = {r.id: r for r in start if r.immortal}
    for now, accessed, restore_them in steps:
        # between passes, some memories are recalled (and restored when the recall served them)
        ids = {f"m-{i}" for i in accessed}
        state = [
            r if r.id not in ids else LifeRecord(**{**_fields(r), "last_accessed_at": now})
            for r in state
        ]
        if restore_them:
            state = apply(state, [c for r in state if (c := restore(r, now)) and r.id in ids])
        state = apply(state, plan(state, now))
        by_id = {r.id: r for r in state}
        for rid, original in immortal.items():
            assert rid in by_id  # never pruned
            kept = by_id[rid]
            assert (kept.confidence, kept.status) == (original.confidence, original.status)
            assert kept.below_since == original.below_since


def _fields(r: LifeRecord) -> dict:
    return {name: getattr(r, name) for name in LifeRecord.__slots__}


@settings(max_examples=300)
@given(start=records(), now=times)
def test_planning_twice_at_the_same_moment_plans_nothing_the_second_time(start, now):
    after = apply(start, plan(start, now))
    assert plan(after, now) == []


@settings(max_examples=200)
@given(start=records(), nows=st.lists(times, min_size=1, max_size=8))
def test_without_outside_writes_confidence_never_rises(start, nows):
    state = list(start)
    for now in nows:
        previous = {r.id: r.confidence for r in state}
        state = apply(state, plan(state, now))
        for r in state:
            assert r.confidence <= previous[r.id]


# ============================================================================ on a real store


def mem(text: str, memory_type: str = "progress", created: float = 0.0, **kw) -> Memory:
    return Memory(content=text, memory_type=memory_type, created_at=format_time(day(created)),
                  **kw)  # fmt: skip


def status_of(store, memory_id: str) -> str | None:
    m = store.get_memory(memory_id)
    return None if m is None else m.status


def lifecycle_columns(store, memory_id: str) -> tuple:
    return store._conn.execute(
        "SELECT decayed_at, below_since, archived_at FROM memories WHERE id = ?", (memory_id,)
    ).fetchone()


def dump(path: Path) -> list:
    with sqlite3.connect(path) as conn:
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '%fts%' "
            "ORDER BY name")]  # fmt: skip
        return [(t, sorted(map(repr, conn.execute(f'SELECT * FROM "{t}"')))) for t in tables]


def test_progress_decays_is_archived_after_14_days_below_then_pruned(ctx: Context):
    store = ctx.writable("project")
    note = mem("deploy script half migrated to the new runner")
    keeper = mem("we decided to keep the old runner for windows", "decision")
    others = [mem(f"decision {i} on runners", "decision") for i in range(3)]
    store.add_memories([note, keeper, *others])
    store.add_edge(Edge(keeper.id, note.id, "relates_to"))
    for other in others:  # the keeper is the hub (in-degree 3); the note is not (1 of 3)
        store.add_edge(Edge(other.id, keeper.id, "relates_to"))
    store.put_embeddings("test-model", 2, [(store.seq_of([note.id])[note.id], "h", b"\0" * 8)])

    report = run_lifecycle(ctx, day(10))
    assert [i for _, i in report.decayed] == [note.id]
    assert store.get_memory(note.id).confidence == pytest.approx(0.5 ** (10 / 7))
    crossed = 7 * math.log2(1 / 0.3)
    report = run_lifecycle(ctx, day(20))
    below = parse_time(lifecycle_columns(store, note.id)[1])
    assert abs((below - day(crossed)).total_seconds()) < 1  # when it crossed, not when seen
    assert not report.archived
    assert not run_lifecycle(ctx, day(crossed + 13.9)).archived
    report = run_lifecycle(ctx, day(crossed + 14))
    assert report.archived == [("project", note.id)] and status_of(store, note.id) == "archived"
    served = recall(ctx, "deploy runner", count_access=False, all_branches=True)
    assert note.id not in [r.memory.id for r in served]
    archived_at = crossed + 14
    assert not run_lifecycle(ctx, day(archived_at + 29.9)).pruned
    report = run_lifecycle(ctx, day(archived_at + 30))
    assert report.pruned == [("project", note.id)]
    assert len(report.backups) == 1 and Path(report.backups[0]).is_file()
    assert store.get_memory(note.id) is None
    assert store.edges_touching([note.id]) == []  # its edge went with it
    assert len(list(store.iter_edges())) == 3
    assert store.embedding_state("test-model")[0] == 0
    assert store.get_memory(keeper.id).confidence == 1.0  # the decision: untouched throughout
    # the backup holds the pruned memory
    with sqlite3.connect(report.backups[0]) as conn:
        assert conn.execute("SELECT status FROM memories WHERE id = ?", (note.id,)).fetchone() == (
            "archived",
        )


def archived_note(ctx: Context, text: str) -> Memory:
    """A progress memory the lifecycle archived (created 60 days before today's real clock)."""
    created = (datetime.now(UTC) - T0).days - 60
    note = mem(text, created=created)
    ctx.writable("project").add_memory(note)
    run_lifecycle(ctx)
    assert status_of(ctx.require("project"), note.id) == "archived"
    return note


def test_a_recalled_archived_memory_is_restored(ctx: Context):
    note = archived_note(ctx, "flaky websocket reconnect test skipped on CI")
    store = ctx.require("project")
    assert recall(ctx, "websocket reconnect", all_branches=True) == []  # active only by default
    assert status_of(store, note.id) == "archived"
    results = recall(ctx, "websocket reconnect", all_branches=True,
                     statuses=("active", "archived"))  # fmt: skip
    assert [r.memory.id for r in results] == [note.id]
    assert results[0].memory.status == "active" and status_of(store, note.id) == "active"
    _, below_since, archived_at = lifecycle_columns(store, note.id)
    assert archived_at is None and below_since is not None  # its 14 days start again
    assert not run_lifecycle(ctx).archived  # not archived again at once
    assert recall(ctx, "websocket reconnect", all_branches=True)[0].memory.id == note.id


def test_an_access_that_did_not_restore_is_caught_by_the_next_pass(ctx: Context):
    note = archived_note(ctx, "the staging database was rebuilt from scratch")
    store = ctx.require("project")
    later = datetime.now(UTC) + timedelta(seconds=1)
    store.record_access([note.id], format_time(later))
    report = run_lifecycle(ctx, later + timedelta(seconds=1))
    assert report.restored == [("project", note.id)] and status_of(store, note.id) == "active"


def test_a_forgotten_memory_is_never_restored_or_pruned(ctx: Context):
    from cortexmem.services.memories import forget

    store = ctx.writable("project")
    note = mem("notes about the old build", "context")
    store.add_memory(note)
    forget(ctx, note.id)
    recall(ctx, "old build", all_branches=True, statuses=("active", "archived"))
    assert status_of(store, note.id) == "archived"
    assert not run_lifecycle(ctx, day(1000)).pruned
    assert status_of(store, note.id) == "archived"


def test_a_status_change_by_hand_takes_the_memory_out_of_the_lifecycles_hands(ctx: Context):
    note = archived_note(ctx, "temporary branch for the release candidate")
    store = ctx.require("project")
    store.set_status(note.id, "active")
    assert lifecycle_columns(store, note.id)[1:] == (None, None)


def test_hubs_are_exempt_from_archiving(ctx: Context):
    store = ctx.writable("project")
    hub = mem("progress on the auth rewrite, the thread everything hangs on")
    leaf = mem("progress on a side quest")
    others = [mem(f"decision {i} about auth", "decision") for i in range(4)]
    store.add_memories([hub, leaf, *others])
    for o in others:
        store.add_edge(Edge(o.id, hub.id, "relates_to"))
    store.add_edge(Edge(others[0].id, leaf.id, "relates_to"))
    run_lifecycle(ctx, day(60))
    run_lifecycle(ctx, day(80))
    assert status_of(store, hub.id) == "active" and status_of(store, leaf.id) == "archived"
    # the hub still decays, at twice the half-life
    assert store.get_memory(hub.id).confidence == pytest.approx(0.5 ** (80 / 14))
    assert run_lifecycle(ctx, day(1000)).pruned == [("project", leaf.id)]
    assert status_of(store, hub.id) == "active"


def test_centrality_is_in_degree_over_the_stores_highest(ctx: Context):
    store = ctx.writable("project")
    ms = [mem(f"gotcha number {i}", "gotcha") for i in range(5)]
    store.add_memories(ms)
    for src in ms[1:]:
        store.add_edge(Edge(src.id, ms[0].id, "relates_to"))
    store.add_edge(Edge(ms[0].id, ms[1].id, "relates_to"))
    store.add_edge(Edge(ms[2].id, ms[1].id, "relates_to", status="suggested"))  # not counted
    loaded = store.read(lambda conn: load_records(conn, format_time(day(1))))
    got = {r.id: r.centrality for r in loaded.records}
    assert got[ms[0].id] == centrality(4, 4) == 1.0
    assert got[ms[1].id] == centrality(1, 4) == 0.25
    assert got[ms[2].id] == 0.0


def test_dry_run_changes_nothing(ctx: Context):
    store = ctx.writable("project")
    store.add_memories([mem("old progress", created=0), mem("old context", "context", created=0),
                        mem("a decision", "decision")])  # fmt: skip
    run_lifecycle(ctx, day(40))  # archives the progress note
    before = dump(store.path)
    backups = store.list_backups()
    report = run_lifecycle(ctx, day(400), dry_run=True)
    assert report.dry_run and report.pruned and report.decayed and report.archived
    assert dump(store.path) == before and store.list_backups() == backups
    real = run_lifecycle(ctx, day(400))
    assert real.counts() == report.counts()


def test_running_twice_at_the_same_moment_changes_nothing_the_second_time(ctx: Context):
    store = ctx.writable("project")
    store.add_memories([mem(f"note {i} on {t}", t, created=i * 3) for i, t in
                        enumerate(MEMORY_TYPES * 3)])  # fmt: skip
    for n in (5, 30, 31.5, 90):
        run_lifecycle(ctx, day(n))
        before = dump(store.path)
        again = run_lifecycle(ctx, day(n))
        assert not again.changed
        after = dump(store.path)
        # only the log of passes grew
        assert [t for t in before if t[0] != "lifecycle_runs"] == [
            t for t in after if t[0] != "lifecycle_runs"
        ]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kinds=st.lists(
        st.tuples(st.sampled_from(MEMORY_TYPES), st.booleans(), st.floats(0.05, 1),
                  st.integers(0, 100)),
        min_size=1, max_size=10,
    ),
    nows=st.lists(st.floats(0, 300), min_size=1, max_size=6),
    recalled=st.lists(st.integers(0, 9), max_size=4),
)  # fmt: skip
def test_on_a_real_store_immortal_memories_are_never_touched(kinds, nows, recalled):
    with tempfile.TemporaryDirectory() as tmp, Context.for_cwd(Path(tmp)) as ctx:
        store = ctx.writable("project")
        ms = [mem(f"memory {i} about {t}", t, created=c, pinned=p, confidence=conf)
              for i, (t, p, conf, c) in enumerate(kinds)]  # fmt: skip
        store.add_memories(ms)
        immortal = {m.id for m in ms if m.pinned or m.memory_type == "decision"}

        def rows():
            return {r[0]: r for r in store._conn.execute("SELECT * FROM memories ORDER BY id")}

        original = {k: v for k, v in rows().items() if k in immortal}
        mortal = [m.id for m in ms if m.id not in immortal]
        for step, now in enumerate(nows):
            run_lifecycle(ctx, day(now))
            assert not run_lifecycle(ctx, day(now)).changed  # idempotent at the same moment
            if step < len(recalled) and mortal:
                picked = mortal[recalled[step] % len(mortal)]
                store.record_access([picked], format_time(day(now)))
                recall(ctx, "memory", all_branches=True, statuses=("active", "archived"))
            current = rows()
            for mid, row in original.items():
                assert current.get(mid) == row  # never deleted, not one column changed


def test_maybe_run_runs_at_most_once_a_day(ctx: Context):
    ctx.writable("project").add_memory(mem("a progress note"))
    first = maybe_run(ctx, day(10))
    assert first is not None and first.scopes == ["project"]
    assert maybe_run(ctx, day(10.9)) is None
    again = maybe_run(ctx, day(11))
    assert again is not None and again.decayed


# ============================================================================ CLI and hook


@pytest.fixture
def cortex(repo: Path):
    runner = CliRunner()

    def invoke(*args: str, code: int = 0):
        result = runner.invoke(cli, ["-C", str(repo), *args])
        assert result.exit_code == code, (result.output, result.stderr, result.exception)
        assert "Traceback" not in result.output
        return result

    return invoke


def test_cli_lifecycle_dry_run_then_run_then_recall_restores(cortex, repo: Path):
    assert "nothing to do" in cortex("lifecycle").stdout
    with Context.for_cwd(repo) as ctx:
        store = ctx.writable("project")
        stale = mem("half done: port the importer to the new API", created=-400)
        fresh = mem("today: reviewing the importer tests", created=(datetime.now(UTC) - T0).days)
        store.add_memories([stale, fresh, mem("use the new API everywhere", "decision")])
    dry = json.loads(cortex("lifecycle", "--dry-run", "--json").stdout)
    assert dry["dry_run"] and dry["counts"]["archived"] == 1
    assert dry["archived"] == [{"scope": "project", "id": stale.id}]
    assert dry["examples"]["archived"][0]["text"].startswith("half done")
    text = cortex("lifecycle", "--dry-run").stdout
    assert "Dry run" in text and "would be archived" in text and stale.id in text
    text = cortex("lifecycle").stdout
    assert "Lifecycle pass done" in text and stale.id in text
    assert json.loads(cortex("lifecycle", "--json").stdout)["counts"]["archived"] == 0
    found = json.loads(cortex("recall", "--json", "--all-branches", "importer API").stdout)
    assert fresh.id in [r["memory"]["id"] for r in found]
    assert stale.id not in [r["memory"]["id"] for r in found]
    out = json.loads(cortex("recall", "--json", "--archived", "--all-branches", "port importer")
                     .stdout)  # fmt: skip
    assert stale.id in [r["memory"]["id"] for r in out]
    with Context.for_cwd(repo) as ctx:
        assert ctx.require("project").get_memory(stale.id).status == "active"
    assert "lifecycle" in cortex("--help").stdout


def test_stop_hook_runs_the_daily_pass_and_never_fails(repo: Path, monkeypatch):
    from cortexmem.hosts.claude_code import handlers

    with Context.for_cwd(repo) as ctx:
        old = mem("stale progress note", created=-400)
        ctx.writable("project").add_memory(old)
    payload = {"session_id": "s-life", "cwd": str(repo)}
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(repo))
    handlers.handle("Stop", payload, started=time.monotonic())
    with Context.for_cwd(repo) as ctx:
        store = ctx.require("project")
        assert store.get_memory(old.id).status == "archived"
        runs = store._conn.execute("SELECT count(*) FROM lifecycle_runs").fetchone()[0]
    handlers.handle("Stop", payload, started=time.monotonic())  # same day: not again
    with Context.for_cwd(repo) as ctx:
        store = ctx.require("project")
        assert store._conn.execute("SELECT count(*) FROM lifecycle_runs").fetchone()[0] == runs
    log = (repo / ".cortex" / "cortex.log").read_text()
    assert "lifecycle pass (project)" in log

    def broken(_ctx):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr("cortexmem.services.lifecycle.maybe_run", broken)
    handlers.handle("Stop", payload, started=time.monotonic())
    assert "lifecycle pass failed: RuntimeError" in (repo / ".cortex" / "cortex.log").read_text()
    # no time left: no pass at all
    monkeypatch.setattr("cortexmem.services.lifecycle.maybe_run", lambda _c: 1 / 0)
    handlers.handle("Stop", payload, started=time.monotonic() - handlers.STOP_BUDGET + 1)
    assert "ZeroDivisionError" not in (repo / ".cortex" / "cortex.log").read_text()


# ----------------------------------------------------------------- backfilled history

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "sessions"


def test_learned_clock_starts_knowledge_decay_when_cortex_learned_it():
    from cortexmem.core.decay import learned_clock

    old, now = "2026-01-01T00:00:00.000000Z", "2026-06-01T00:00:00.000000Z"
    assert learned_clock("gotcha", old, now) == now
    assert learned_clock("pattern", old, now) == now
    assert learned_clock("context", old, now) == now
    assert learned_clock("progress", old, now) is None  # work state ages with the work
    assert learned_clock("decision", old, now) is None  # immortal: no clock at all
    assert learned_clock("gotcha", now, now) is None  # learned live: created_at is the clock


def test_ingesting_months_old_sessions_keeps_their_knowledge_through_the_lifecycle(repo: Path):
    from cortexmem.hosts.claude_code.reader import READER
    from cortexmem.services.brief import make_briefing
    from cortexmem.services.ingest import ingest

    ingest([EXAMPLES], reader=READER, into=repo)
    later = datetime.now(UTC) + timedelta(days=1)
    with Context.for_cwd(repo) as ctx:
        report = run_lifecycle(ctx, later)
        store = ctx.require("project")
        rows = store.read(
            lambda conn: conn.execute(
                "SELECT memory_type, status, tags, content FROM memories"
            ).fetchall()
        )
        briefing = make_briefing(ctx, branch="main").markdown
    knowledge = [r for r in rows if r[0] != "progress"]
    assert len(knowledge) >= 9
    assert all(status == "active" for _, status, _, _ in knowledge), report.archived
    # Months-old progress logs may fade at once: that is the event clock.
    assert all(r[0] == "progress" for r in rows if r[1] == "archived")
    assert "uv run" in briefing  # the preference / how-to of the first session
    assert "APScheduler" in briefing  # a decision
    assert "Gotchas" in briefing
