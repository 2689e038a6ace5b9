"""Recall end to end on real SQLite files: the project and global stores, ranked together."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cortexmem.core.filters import MemoryFilter, visible
from cortexmem.model import Memory, SourceContext
from cortexmem.services.context import Context
from cortexmem.services.memories import remember
from cortexmem.services.recall import recall

from conftest import git

FIXTURE_OK = [HealthCheck.function_scoped_fixture]  # the store is meant to persist across examples

KNOWLEDGE = [
    ("decision", "We chose SQLite in WAL mode over a JSON file per session.", 9),
    ("gotcha", "Settings are read from config.json at the repository root, not ~/.config.", 7),
    ("pattern", "The transcript parser is src/cortexmem/hosts/parser.py; it streams lines.", 6),
    ("architecture", "Ranking, decay and briefing are pure functions in the core package.", 6),
    ("context", "The team prefers small pull requests reviewed the same day.", 4),
]


def load(ctx: Context) -> dict[str, str]:
    ids = {}
    for memory_type, text, priority in KNOWLEDGE:
        m, _ = remember(ctx, text, memory_type=memory_type, priority=priority)
        ids[memory_type] = m.id
    return ids


def ids(results) -> list[str]:
    return [r.memory.id for r in results]


def test_natural_questions_and_punctuation_find_memories(ctx: Context):
    known = load(ctx)
    assert ids(recall(ctx, "why did we pick sqlite instead of json?"))[0] == known["decision"]
    assert ids(recall(ctx, "config.json"))[0] == known["gotcha"]
    assert ids(recall(ctx, "src/cortexmem/hosts/parser.py"))[0] == known["pattern"]
    assert ids(recall(ctx, "where does the parser live?"))[0] == known["pattern"]
    assert recall(ctx, "kubernetes helm charts") == []


def test_project_and_global_are_merged(ctx: Context):
    project, _ = remember(ctx, "retry flaky network calls with backoff", memory_type="pattern")
    shared, _ = remember(
        ctx, "retry with jittered exponential backoff", memory_type="pattern", scope="global"
    )
    results = recall(ctx, "retry backoff")
    assert {(r.memory.id, r.scope) for r in results} == {
        (project.id, "project"),
        (shared.id, "global"),
    }
    assert ids(recall(ctx, "retry backoff", scopes=("global",))) == [shared.id]


def test_serving_a_memory_counts_an_access(ctx: Context):
    known = load(ctx)
    recall(ctx, "sqlite json")
    recall(ctx, "sqlite json")
    stored = ctx.require("project").get_memory(known["decision"])
    assert stored is not None and stored.access_count == 2 and stored.last_accessed_at
    untouched = ctx.require("project").get_memory(known["context"])
    assert untouched is not None and untouched.access_count == 0


def test_type_filter(ctx: Context):
    known = load(ctx)
    assert ids(recall(ctx, "sqlite parser config", types=("gotcha",))) == [known["gotcha"]]


def test_branch_filter_hides_other_branches_progress_only(repo: Path):
    with Context.for_cwd(repo) as ctx:
        decision, _ = remember(ctx, "login uses OAuth device flow", memory_type="decision")
        main_progress, _ = remember(ctx, "login page half done", memory_type="progress")
    git(repo, "checkout", "-q", "-b", "feature")
    with Context.for_cwd(repo) as ctx:
        feature_progress, _ = remember(ctx, "login tests written", memory_type="progress")
        assert set(ids(recall(ctx, "login"))) == {decision.id, feature_progress.id}
        assert set(ids(recall(ctx, "login", branch="main"))) == {decision.id, main_progress.id}
        assert len(recall(ctx, "login", all_branches=True)) == 3


def test_same_query_same_order_and_prefix_property(ctx: Context):
    store = ctx.writable("project")
    store.add_memories(
        [Memory(f"cache invalidation note {i} about cache keys", priority=1 + i % 10)
         for i in range(60)]
    )  # fmt: skip
    top10 = ids(recall(ctx, "cache keys", limit=10, count_access=False))
    top5 = ids(recall(ctx, "cache keys", limit=5, count_access=False))
    top40 = ids(recall(ctx, "cache keys", limit=40, count_access=False))
    assert top5 == top10[:5] and top10 == top40[:10]


def test_with_more_equal_matches_than_the_pool_the_newest_win(ctx: Context):
    """300 identical-looking notes: the candidate pool (200) keeps the newest, consistently."""
    store = ctx.writable("project")
    notes = [Memory("identical retry budget note", id=f"m-n{i:04d}") for i in range(300)]
    for i, m in enumerate(notes):
        object.__setattr__(m, "created_at", f"2025-01-01T00:{i // 60:02d}:{i % 60:02d}.000000Z")
    store.add_memories(notes)
    top = ids(recall(ctx, "retry budget", limit=20, count_access=False))
    assert top == [f"m-n{i:04d}" for i in range(299, 279, -1)]
    assert ids(recall(ctx, "retry budget", limit=5, count_access=False)) == top[:5]


def test_no_store_yet_means_no_results_and_no_files(tmp_path: Path):
    empty = tmp_path / "nothing-here"
    empty.mkdir()
    with Context.for_cwd(empty) as ctx:
        assert recall(ctx, "anything") == []
    assert not (empty / ".cortex").exists()


@settings(max_examples=150, deadline=None, suppress_health_check=FIXTURE_OK)
@given(st.text(max_size=120))
def test_any_text_a_person_types_is_a_valid_query(ctx: Context, text: str):
    if not ctx.exists("project"):
        load(ctx)
    results = recall(ctx, text, count_access=False)
    assert len(results) <= 10


memories_strategy = st.lists(
    st.builds(
        lambda t, b, s: Memory(
            "shared word " + t,
            memory_type=t,
            status=s,
            source_context=SourceContext(branch=b),
        ),
        st.sampled_from(["decision", "progress", "context", "gotcha"]),
        st.sampled_from([None, "main", "feature"]),
        st.sampled_from(["active", "archived"]),
    ),
    max_size=25,
)


@settings(max_examples=40, deadline=None, suppress_health_check=FIXTURE_OK)
@given(
    memories_strategy,
    st.sampled_from([None, "main", "feature", "other"]),
    st.sampled_from([(), ("progress",), ("decision", "context")]),
)
def test_sql_filter_matches_the_pure_rule(tmp_path: Path, memories, branch, types):
    with Context.for_cwd(tmp_path) as ctx:
        store = ctx.writable("project")
        store.clear()
        store.add_memories(memories)
        flt = MemoryFilter(types=types, branch=branch)
        found = {c.memory.id for c in store.search_text("shared", flt, 1000, "project")}
        assert found == {m.id for m in memories if visible(m, flt)}
        listed = {m.id for m in store.iter_memories(flt)}
        assert listed == found
