"""Graph upkeep and consolidation.

Pure: the Jaccard pre-filter, the geometric classification and their boundaries, the edge-type
alias table, the trigger rule, which memory a merge keeps. Integration, on real SQLite files with
the real local embedding model (offline): near-duplicates become merge candidates, related
memories get ``relates_to``, unrelated ones nothing, and nothing automatic ever makes a
``supersedes`` edge; ``maybe_consolidate`` after captures; the ``cortex consolidate`` command
(``--json``, ``--yes``, the interactive walk, ``--rollback``).
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from cortexmem.cli import consolidate as cli_consolidate
from cortexmem.cli.app import cli
from cortexmem.core.consolidation import choose_keeper, consolidation_due, merged
from cortexmem.core.edge_types import ALIASES, UnknownEdgeType, normalise_edge_type
from cortexmem.core.export_format import ExportFormatError, parse_jsonl
from cortexmem.core.similarity import Verdict, classify, decide, jaccard, prefilter, word_set
from cortexmem.model import RELATION_TYPES, Edge, Memory
from cortexmem.services import consolidate as service
from cortexmem.services import links
from cortexmem.services.context import Context
from cortexmem.services.embedding import Embedder, sync_context
from cortexmem.services.links import Proposal, link_new
from cortexmem.services.memories import remember
from cortexmem.store.protocols import CandidatePair

# ============================================================================ pure: similarity


def test_word_sets_are_normalised():
    assert word_set("The Retries of the WEBHOOK deliveries!") == {"retry", "webhook", "delivery"}
    assert word_set("indexes, classes, policies, status") == {"index", "class", "policy", "status"}
    assert word_set("a of the") == {"a", "of", "the"}  # only stop words: keep them
    assert word_set("") == frozenset()


def test_jaccard():
    a, b = word_set("retry webhook deliveries"), word_set("webhook deliveries fail")
    assert jaccard(a, b) == pytest.approx(2 / 4)
    assert jaccard(a, b) == jaccard(b, a)
    assert jaccard(a, a) == 1.0
    assert jaccard(a, word_set("money in cents")) == 0.0
    assert jaccard(frozenset(), frozenset()) == 0.0


@pytest.mark.parametrize(
    "score, verdict",
    [
        (0.0, Verdict.NONE),
        (0.0999, Verdict.NONE),
        (0.1, None),  # the "maybe" band is closed at both ends
        (0.35, None),
        (0.6, None),
        (0.6001, Verdict.MERGE),
        (1.0, Verdict.MERGE),
    ],
)
def test_prefilter_bands(score, verdict):
    assert prefilter(score) is verdict


@pytest.mark.parametrize(
    "cosine, verdict",
    [
        (-1.0, Verdict.NONE),
        (0.0, Verdict.NONE),
        (0.0999, Verdict.NONE),
        (0.1, Verdict.RELATES),
        (0.3999, Verdict.RELATES),
        (0.4, Verdict.SUGGEST),
        (0.45, Verdict.SUGGEST),
        (0.5, Verdict.SUGGEST),
        (0.5001, Verdict.MERGE),
        (1.0, Verdict.MERGE),
        (math.nan, Verdict.NONE),
    ],
)
def test_classification_bands(cosine, verdict):
    assert classify(cosine) is verdict


def test_verdicts_map_onto_edges():
    assert Verdict.RELATES.edge_status == "active"
    assert Verdict.SUGGEST.edge_status == "suggested"
    assert Verdict.NONE.edge_status is None and Verdict.MERGE.edge_status is None
    related = Proposal("m-b", "m-a", 0.3, 0.2, Verdict.RELATES).edge()
    assert related is not None and (related.relation_type, related.status) == (
        "relates_to",
        "active",
    )
    assert related.bidirectional and related.strength == pytest.approx(0.2)
    suggested = Proposal("m-b", "m-a", 0.3, 0.45, Verdict.SUGGEST).edge()
    assert suggested is not None and suggested.status == "suggested"
    merge = Proposal("m-b", "m-a", 0.7, None, Verdict.MERGE)
    assert merge.edge() is None
    candidate = merge.candidate()
    assert candidate is not None and (candidate.a_id, candidate.b_id) == ("m-a", "m-b")


def test_decide_uses_the_cosine_only_in_the_maybe_band():
    assert decide(0.7, None) is Verdict.MERGE  # no embedding needed
    assert decide(0.7, 0.0) is Verdict.MERGE
    assert decide(0.05, 0.99) is Verdict.NONE  # definitely different, whatever the vectors say
    assert decide(0.3, None) is Verdict.NONE  # maybe, and no vectors: no guess
    assert decide(0.3, 0.2) is Verdict.RELATES
    assert decide(0.3, 0.45) is Verdict.SUGGEST
    assert decide(0.3, 0.8) is Verdict.MERGE


any_float = st.floats(allow_nan=True, allow_infinity=True)
unit = st.floats(min_value=0.0, max_value=1.0)
cosines = st.floats(min_value=-1.0, max_value=1.0)


@given(any_float)
def test_classification_is_total(cosine):
    assert isinstance(classify(cosine), Verdict)


@given(cosines, cosines)
def test_classification_is_monotone(a, b):
    low, high = sorted((a, b))
    assert classify(low) <= classify(high)


@given(unit, unit, st.one_of(st.none(), cosines))
def test_decide_is_monotone_in_the_words(j1, j2, cosine):
    low, high = sorted((j1, j2))
    assert decide(low, cosine) <= decide(high, cosine)


@given(unit, cosines, cosines)
def test_decide_is_monotone_in_the_meaning(j, c1, c2):
    low, high = sorted((c1, c2))
    assert decide(j, low) <= decide(j, high)


@given(unit, st.one_of(st.none(), cosines))
def test_no_verdict_ever_makes_supersedes(j, cosine):
    proposal = Proposal("m-b", "m-a", j, cosine, decide(j, cosine))
    edge = proposal.edge()
    assert edge is None or edge.relation_type == "relates_to"


# ============================================================================ pure: edge types

SEED_ALIASES = {
    "derives": "derived_from",
    "contradict": "contradicts",
    "related": "relates_to",
    "example": "exemplifies",
    "refine": "refines",
    "supersede": "supersedes",
    "source": "source_of",
}


@pytest.mark.parametrize("alias, canonical", sorted(SEED_ALIASES.items()))
def test_the_seed_aliases(alias, canonical):
    assert normalise_edge_type(alias) == canonical


@pytest.mark.parametrize("alias, canonical", sorted(ALIASES.items()))
def test_every_alias_and_its_variants(alias, canonical):
    assert canonical in RELATION_TYPES
    for variant in (alias, alias.upper(), f"  {alias.title()}\n", alias.replace("_", "-")):
        assert normalise_edge_type(variant) == canonical
    assert normalise_edge_type(alias.replace("_", " ")) == canonical


@pytest.mark.parametrize("name", RELATION_TYPES)
def test_canonical_names_and_their_variants(name):
    assert normalise_edge_type(name) == name
    assert normalise_edge_type(name.upper()) == name
    assert normalise_edge_type(name.replace("_", "-")) == name
    assert normalise_edge_type(" " + name.replace("_", "  ").title() + " ") == name


@pytest.mark.parametrize("text", ["", "   ", "banana", "superseded_by", "refined_by", "is_a", 3])
def test_unknown_edge_types_raise(text):
    with pytest.raises(UnknownEdgeType):
        normalise_edge_type(text)  # type: ignore[arg-type]
    assert issubclass(UnknownEdgeType, ValueError)


def test_imports_normalise_edge_types():
    header = json.dumps({"format": "cortex-export", "version": 1})
    a, b = Memory("first", id="m-aaa"), Memory("second", id="m-bbb")
    lines = [header, *(json.dumps({"record": "memory", **m.to_dict()}) for m in (a, b))]
    edge = {"record": "edge", **Edge("m-aaa", "m-bbb", "derived_from").to_dict()}
    parsed = parse_jsonl([*lines, json.dumps({**edge, "relation_type": "Derives"})])
    assert parsed.edges[0].relation_type == "derived_from"
    with pytest.raises(ExportFormatError, match="unknown edge type"):
        parse_jsonl([*lines, json.dumps({**edge, "relation_type": "kind-of"})])


def test_the_command_line_takes_aliases(ctx: Context):
    a, _ = remember(ctx, "The cache is keyed by tenant.")
    b, _ = remember(ctx, "Cache keys were global before the tenant split.")
    ctx.require("project").add_edge(Edge(a.id, b.id, "derived_from"))
    run = CliRunner().invoke(
        cli, ["-C", str(ctx.paths.root), "traverse", a.id, "--type", "Derives", "--json"]
    )
    assert run.exit_code == 0, run.output
    assert json.loads(run.output)["depths"][0][0]["memory"]["id"] == b.id
    bad = CliRunner().invoke(cli, ["-C", str(ctx.paths.root), "traverse", a.id, "-t", "kind-of"])
    assert bad.exit_code == 2 and "unknown edge type" in bad.output


# ============================================================================ pure: consolidation


def test_due_every_ten_extractions():
    assert not consolidation_due(9, 5, 0)
    assert consolidation_due(10, 5, 0)
    assert consolidation_due(11, 5, 0)


def test_due_when_crossing_eighty_active():
    assert not consolidation_due(0, 80, 0)
    assert consolidation_due(0, 81, 0)
    assert consolidation_due(0, 81, 80)
    assert not consolidation_due(0, 81, 81)  # already above at the last run: every 10 instead
    assert not consolidation_due(0, 500, 400)
    assert consolidation_due(10, 500, 400)


def test_the_keeper():
    old = Memory("x", id="m-a", created_at="2025-01-01T00:00:00.000000Z")
    new = Memory("y", id="m-b", created_at="2025-02-01T00:00:00.000000Z")
    assert choose_keeper(old, new) == (new, old)  # the newer wording
    assert choose_keeper(new, old) == (new, old)  # order of the arguments does not matter
    assert choose_keeper(old.with_changes(pinned=True), new)[0].id == "m-a"
    assert choose_keeper(old.with_changes(priority=9), new)[0].id == "m-a"
    assert choose_keeper(old.with_changes(memory_type="decision"), new)[0].id == "m-a"
    twin = old.with_changes(id="m-c")
    assert choose_keeper(old, twin)[0].id == choose_keeper(twin, old)[0].id == "m-a"


def test_the_merged_memory():
    keep = Memory("Use WAL.", tags=("db",), priority=4, access_count=2)
    other = Memory("WAL mode on.", tags=("sqlite",), priority=7, pinned=True, access_count=3)
    result = merged(keep, other)
    assert (result.id, result.content) == (keep.id, keep.content)
    assert result.tags == ("db", "sqlite") and result.priority == 7 and result.pinned
    assert result.access_count == 5
    edited = merged(keep, other, "Use WAL mode. Readers never block the writer; set it once.")
    assert edited.content.startswith("Use WAL mode.") and edited.summary == "Use WAL mode."
    with pytest.raises(ValueError):
        merged(keep, other, "   \n")


# ============================================================================ integration

NEAR_DUP_WORDS = (
    ("decision", "Webhook deliveries that fail are retried with exponential backoff, capped at "
                 "one hour."),
    ("decision", "Webhook deliveries that fail are retried with exponential backoff, capped at "
                 "one hour, so that a merchant's short outage is ridden out."),
)  # fmt: skip
NEAR_DUP_MEANING = (
    ("decision", "We chose PostgreSQL 16 over MySQL for the billing database because of its "
                 "JSONB indexes."),
    ("decision", "The billing database runs on PostgreSQL 16, chosen over MySQL for JSONB "
                 "indexing."),
)  # fmt: skip
RELATED = (  # a few words in common, not much meaning (measured: words 0.20, cosine 0.30)
    ("gotcha", "Docker builds on Apple silicon need --platform linux/amd64 for the PDF tools."),
    ("context", "Apple pie recipe: silicon baking mat, tools from the drawer."),
)
SUGGESTED = (  # measured: words 0.23, cosine 0.48
    ("context", "Release trains leave every second Tuesday; hotfixes can ship any day."),
    ("context", "The team lunch is every second Tuesday at the Italian place."),
)
UNRELATED = ("pattern", "Money amounts are integers in cents, never floats.")


def add(ctx: Context, items) -> list[Memory]:
    out = []
    for memory_type, text in items:
        memory, created = remember(ctx, text, memory_type=memory_type)
        assert created
        out.append(memory)
    return out


def embed(ctx: Context) -> str:
    embedder = Embedder.for_context(ctx)
    assert sync_context(ctx, embedder).remaining == 0
    return embedder.model


def edges_between(store, a: str, b: str) -> list[Edge]:
    return [e for e in store.edges_touching([a]) if {e.source_id, e.target_id} == {a, b}]


def pending_pairs(store) -> dict[frozenset[str], CandidatePair]:
    return {frozenset((c.a_id, c.b_id)): c for c in store.pending_candidates()}


@pytest.fixture
def fixture_memories(ctx: Context) -> dict[str, list[Memory]]:
    return {
        "words": add(ctx, NEAR_DUP_WORDS),
        "meaning": add(ctx, NEAR_DUP_MEANING),
        "related": add(ctx, RELATED),
        "suggested": add(ctx, SUGGESTED),
        "unrelated": add(ctx, [UNRELATED]),
    }


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "matrix"])
def test_linking_classifies_real_memories(ctx: Context, fixture_memories, stream, monkeypatch):
    store = ctx.require("project")
    model = embed(ctx)
    monkeypatch.setattr(links, "CHUNK", 2)  # streamed: many chunks, merged top-k across them
    monkeypatch.setattr(links, "BATCH", 3)
    report = link_new(store, model=model, limit=None, wait_for_vectors=False, stream_vectors=stream)
    assert report.examined == 9 and report.waiting == 0 and report.vectors
    pairs = pending_pairs(store)

    a, b = fixture_memories["words"]
    words = pairs[frozenset((a.id, b.id))]
    assert words.jaccard > 0.6  # decided by the words alone

    a, b = fixture_memories["meaning"]
    meaning = pairs[frozenset((a.id, b.id))]
    assert 0.1 <= meaning.jaccard <= 0.6 and meaning.cosine is not None and meaning.cosine > 0.5
    assert edges_between(store, a.id, b.id) == []  # a candidate, not an edge

    a, b = fixture_memories["related"]
    [edge] = edges_between(store, a.id, b.id)
    assert (edge.relation_type, edge.status, edge.source_id) == ("relates_to", "active", b.id)
    assert 0.1 <= edge.strength < 0.4 and edge.bidirectional

    a, b = fixture_memories["suggested"]
    [edge] = edges_between(store, a.id, b.id)
    assert (edge.relation_type, edge.status) == ("relates_to", "suggested")
    assert 0.4 <= edge.strength <= 0.5

    [money] = fixture_memories["unrelated"]
    assert store.edges_touching([money.id]) == []
    assert not any(money.id in pair for pair in pairs)

    assert not [e for e in store.iter_edges() if e.relation_type == "supersedes"]
    assert {m.status for m in store.iter_memories()} == {"active"}
    # Linking again finds nothing new: every memory was looked at once.
    again = link_new(store, model=model, limit=None, wait_for_vectors=False)
    assert (again.examined, again.changed) == (0, False)


def test_without_vectors_only_the_words_decide(ctx: Context, fixture_memories):
    store = ctx.require("project")
    report = link_new(store, model=Embedder.for_context(ctx).model, limit=None)
    assert report.examined == 9 and not report.vectors
    a, b = fixture_memories["words"]
    pair = pending_pairs(store)[frozenset((a.id, b.id))]
    assert pair.cosine is None and pair.jaccard > 0.6
    assert len(pending_pairs(store)) == 1  # the cosine near-duplicate needs vectors
    assert list(store.iter_edges()) == []  # "maybe" pairs get no edge on a guess


def test_a_run_is_bounded_and_resumes(ctx: Context, fixture_memories):
    store = ctx.require("project")
    model = embed(ctx)
    first = link_new(store, model=model, limit=3, wait_for_vectors=False)
    assert (first.examined, first.waiting) == (3, 6)
    second = link_new(store, model=model, limit=None, wait_for_vectors=False)
    assert (second.examined, second.waiting) == (6, 0)
    assert len(pending_pairs(store)) >= 2
    out_of_time = link_new(store, model=model, deadline=time.monotonic() - 1)
    assert out_of_time.examined == 0


def test_new_memories_wait_for_their_vectors(ctx: Context, fixture_memories):
    store = ctx.require("project")
    model = embed(ctx)
    assert link_new(store, model=model).examined == 9
    late = add(ctx, [("decision", "Failed webhook deliveries are retried with exponential "
                                  "backoff, capped at 1 hour.")])[0]  # fmt: skip
    waiting = link_new(store, model=model, wait_for_vectors=True)
    assert (waiting.examined, waiting.waiting) == (0, 1)  # the recall server has not embedded it
    embed(ctx)
    done = link_new(store, model=model, wait_for_vectors=True)
    assert (done.examined, done.waiting) == (1, 0)
    assert any(late.id in (c.a_id, c.b_id) for c in store.pending_candidates())


def test_streamed_and_matrix_neighbours_agree(ctx: Context, fixture_memories, monkeypatch):
    from test_hybrid_recall import MEMORIES

    known = {m.content for group in fixture_memories.values() for m in group}
    extra = add(ctx, [(t, text) for t, text in MEMORIES if text not in known])
    model = embed(ctx)
    store = ctx.require("project")
    store.set_status(fixture_memories["related"][0].id, "archived")
    monkeypatch.setattr(links, "CHUNK", 7)

    def verdicts(stream: bool) -> set[tuple[str, str, Verdict]]:
        plan = links.plan_links(store, model=model, limit=None, stream_vectors=stream)
        assert plan.examined == len(extra) + 8  # one of the nine is archived
        return {(p.new_id, p.old_id, p.verdict) for p in plan.proposals}

    streamed = verdicts(True)
    assert streamed == verdicts(False)
    assert {v for _, _, v in streamed} >= {Verdict.RELATES, Verdict.SUGGEST, Verdict.MERGE}


def test_a_stalled_embedder_is_not_waited_for(ctx: Context, fixture_memories):
    store = ctx.require("project")
    model = embed(ctx)
    assert link_new(store, model=model).examined == 9
    late = add(ctx, [("decision", "Failed webhook deliveries get retried with exponential "
                                  "backoff, capped at one hour.")])[0]  # fmt: skip
    store.write(lambda conn: conn.execute("UPDATE embeddings SET embedded_at = ?", (
        "2020-01-01T00:00:00.000000Z",)))  # fmt: skip
    report = link_new(store, model=model, wait_for_vectors=True)
    assert (report.examined, report.waiting) == (1, 0)  # linked by its words
    pairs = [c for c in store.pending_candidates() if late.id in (c.a_id, c.b_id)]
    assert pairs and all(c.cosine is None for c in pairs)


def test_code_and_inactive_memories_are_not_linked(ctx: Context):
    store = ctx.writable("project")
    remember(ctx, "def retry(): return backoff(retries) # webhook", memory_type="code")
    remember(ctx, "Webhook retries use exponential backoff and a cap.")
    b, _ = remember(ctx, "Webhook retries use exponential backoff, with a cap.")
    store.set_status(b.id, "archived")
    report = link_new(store, model=None)
    assert report.examined == 1  # only `a`: `code` is code, `b` is archived
    assert store.pending_candidates() == [] and list(store.iter_edges()) == []
    assert store.upkeep_state().linked_seq == store.seq_of([b.id])[b.id]


def test_automatic_code_never_makes_supersedes(ctx: Context, fixture_memories):
    store = ctx.require("project")
    a, b = fixture_memories["words"]
    with pytest.raises(ValueError, match="only by a person"):
        store.apply_links([Edge(a.id, b.id, "supersedes")], [], 0)
    assert list(store.iter_edges()) == []
    embed(ctx)
    for _ in range(10):
        service.maybe_consolidate(ctx, memories_added=1)
    assert store.pending_candidates()  # found and queued ...
    assert not [e for e in store.iter_edges() if e.relation_type == "supersedes"]
    assert {m.status for m in store.iter_memories()} == {"active"}  # ... and nothing merged


# ---------------------------------------------------------------- maybe_consolidate


def test_maybe_consolidate_runs_at_the_tenth_extraction(ctx: Context, fixture_memories):
    store = ctx.require("project")
    for n in range(1, 10):
        assert service.maybe_consolidate(ctx, memories_added=2) is None
        assert store.upkeep_state().extractions == n
    assert service.maybe_consolidate(ctx, memories_added=0) is None  # added nothing: not counted
    assert store.upkeep_state().extractions == 9
    report = service.maybe_consolidate(ctx, memories_added=1)
    assert report is not None and report.error is None and report.links is not None
    assert report.links.examined == 9 and report.links.candidates >= 1
    state = store.upkeep_state()
    assert state.extractions == 0 and state.linked_seq == state.newest_seq
    # The checkpoint was taken before anything changed.
    assert report.links.checkpoint is not None and report.links.checkpoint.is_file()
    assert service.checkpoints(store) == [report.links.checkpoint]
    assert "merge candidates" in report.describe()


def test_maybe_consolidate_runs_when_the_store_crosses_eighty(ctx: Context):
    store = ctx.writable("project")
    store.add_memories(Memory(f"Note number {i} about module {i}.") for i in range(80))
    assert service.maybe_consolidate(ctx, memories_added=1) is None  # 80 is not more than 80
    store.add_memories([Memory("Note number 80 about module 80.")])
    report = service.maybe_consolidate(ctx, memories_added=1)
    assert report is not None and report.error is None
    assert store.upkeep_state().active_at_last_run == 81
    store.add_memories([Memory("One more note.")])
    assert service.maybe_consolidate(ctx, memories_added=1) is None  # still above: every 10


def test_maybe_consolidate_respects_the_budget(ctx: Context, fixture_memories):
    store = ctx.require("project")
    for _ in range(9):
        service.maybe_consolidate(ctx, memories_added=1)
    short = time.monotonic() + service.MIN_AUTO_SECONDS / 3
    assert service.maybe_consolidate(ctx, memories_added=1, deadline=short) is None
    assert store.upkeep_state().extractions == 10  # still due
    report = service.maybe_consolidate(ctx, memories_added=0, deadline=time.monotonic() + 5)
    assert report is not None and report.links is not None and report.links.examined == 9


def test_maybe_consolidate_never_raises(ctx: Context, fixture_memories, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(service, "link_new", broken)
    for _ in range(9):
        service.maybe_consolidate(ctx, memories_added=1)
    report = service.maybe_consolidate(ctx, memories_added=1)
    assert report is not None and report.error == "RuntimeError: disk on fire"
    assert "failed" in report.describe()


def test_maybe_consolidate_without_a_store(tmp_path: Path):
    folder = tmp_path / "nothing-here"
    folder.mkdir()
    with Context.for_cwd(folder) as empty:
        assert service.maybe_consolidate(empty, memories_added=3) is None
        assert not empty.exists("project")


def test_checkpoints_are_capped(ctx: Context):
    store = ctx.writable("project")
    other = store.backup("pre-reset")
    made = [service.checkpoint(store) for _ in range(service.KEEP_CHECKPOINTS + 2)]
    assert service.checkpoints(store) == made[-service.KEEP_CHECKPOINTS :]
    assert other.is_file()  # other backups are left alone
    assert service.checkpoint_time(made[-1]) is not None


def test_the_stop_hook_consolidates_every_tenth_capture(repo: Path, tmp_path: Path):
    from cortexmem.hosts.claude_code import handlers

    transcript = tmp_path / "session.jsonl"
    lines: list[str] = []
    for n in range(10):
        text = f"We decided to keep the webhook retry cap at {n + 1} hours."
        message = {"role": "assistant", "content": [{"type": "text", "text": text}]}
        entry = {"type": "assistant", "uuid": f"u-{n}", "sessionId": "s-1", "gitBranch": "main"}
        entry.update(timestamp=f"2026-01-01T00:00:{n:02d}.000Z", message=message)
        lines.append(json.dumps(entry))
        transcript.write_text("\n".join(lines) + "\n")
        payload = {"session_id": "s-1", "transcript_path": str(transcript), "cwd": str(repo)}
        handlers.handle("Stop", payload, started=time.monotonic())
    log = (repo / ".cortex" / "cortex.log").read_text()
    assert log.count("consolidation:") == 1, log
    with Context.for_cwd(repo) as ctx:
        store = ctx.require("project")
        assert store.upkeep_state().extractions == 0
        assert store.pending_candidates()  # the ten near-identical decisions


# ---------------------------------------------------------------- the command


def cortex(repo: Path, *args: str, input: str | None = None, code: int = 0):
    result = CliRunner().invoke(cli, ["-C", str(repo), *args], input=input)
    assert result.exit_code == code, (result.output, result.exception)
    return result


@pytest.fixture
def review_store(ctx: Context) -> dict[str, list[Memory]]:
    memories = {
        "words": add(ctx, NEAR_DUP_WORDS),
        "meaning": add(ctx, NEAR_DUP_MEANING),
        "suggested": add(ctx, SUGGESTED),
    }
    embed(ctx)
    link_new(ctx.require("project"), model=Embedder.for_context(ctx).model)
    return memories


def statuses(store) -> dict[str, str]:
    return {m.id: m.status for m in store.iter_memories()}


def test_json_lists_and_changes_nothing(ctx: Context, review_store):
    store = ctx.require("project")
    before = (statuses(store), sorted(e.to_dict()["id"] for e in store.iter_edges()))
    out = json.loads(cortex(ctx.paths.root, "consolidate", "--json").output)
    assert len(out["candidates"]) == 2 and len(out["suggested_edges"]) == 1
    first = out["candidates"][0]
    assert first["similarity"] > 0.5 and {first["keep"]["id"], first["other"]["id"]} == {
        first["a_id"],
        first["b_id"],
    }
    assert out["suggested_edges"][0]["edge"]["status"] == "suggested"
    assert out["unlinked"] == 0 and out["checkpoints"] == []
    assert (statuses(store), sorted(e.id for e in store.iter_edges())) == before
    assert store.list_backups() == []
    cortex(ctx.paths.root, "consolidate", "--json", "--yes", code=2)


def test_without_a_terminal_it_refuses(ctx: Context, review_store):
    result = cortex(ctx.paths.root, "consolidate", code=1)
    assert "terminal" in result.output and "--yes" in result.output
    assert set(statuses(ctx.require("project")).values()) == {"active"}


def test_yes_merges_what_restates_and_leaves_paraphrases_to_a_person(ctx: Context, review_store):
    """--yes merges the pair that says the same words, the kept one with the longer text
    (nothing the other said is lost), and accepts the suggested links; the paraphrase (other
    words for the same decision) waits for a person, as any judgement does."""
    store = ctx.require("project")
    result = cortex(ctx.paths.root, "consolidate", "--yes")
    assert "Merged 1" in result.output and "1 accepted" in result.output
    a, b = review_store["words"]
    now = statuses(store)
    assert sorted((now[a.id], now[b.id])) == ["active", "superseded"]
    kept, gone = (a, b) if now[a.id] == "active" else (b, a)
    [edge] = [e for e in edges_between(store, a.id, b.id) if e.relation_type == "supersedes"]
    assert (edge.source_id, edge.target_id, edge.status) == (kept.id, gone.id, "active")
    survivor = store.get_memory(kept.id)
    assert survivor is not None and "ridden out" in survivor.content
    assert {now[m.id] for m in review_store["meaning"]} == {"active"}
    assert store.suggested_edges() == []
    assert "--rollback" in result.output and len(service.checkpoints(store)) == 1
    listed = json.loads(cortex(ctx.paths.root, "consolidate", "--json").output)["candidates"]
    assert {c["keep"]["id"] for c in listed} <= {m.id for m in review_store["meaning"]}


def test_yes_leaves_memories_stating_different_commands_to_a_person(ctx: Context):
    """Templated lines read alike to the model and to words ("How to lint: `uv run ruff check
    .`" and "… `uv run ruff format .`", 0.96): two facts, so --yes does not merge them; the
    person sees the pair in `cortex consolidate`."""
    pair = add(ctx, [("pattern", "How to lint / type-check: `uv run ruff check .`"),
                     ("pattern", "How to lint / type-check: `uv run ruff format .`")])  # fmt: skip
    embed(ctx)
    link_new(ctx.require("project"), model=Embedder.for_context(ctx).model)
    listed = json.loads(cortex(ctx.paths.root, "consolidate", "--json").output)["candidates"]
    assert [c["similarity"] > service.ACCEPT_ABOVE for c in listed] == [True]
    cortex(ctx.paths.root, "consolidate", "--yes")
    assert {statuses(ctx.require("project"))[m.id] for m in pair} == {"active"}


def test_restating_is_judged_on_what_a_memory_states():
    from cortexmem.core.consolidation import restates

    def m(text: str) -> Memory:
        return Memory(text, memory_type="pattern")

    assert restates(
        m("Use SQLite in WAL mode"), m("Use SQLite in WAL mode: sessions write at once")
    )
    assert not restates(m("Run `pnpm dev` to start"), m("Run `pnpm install` to start"))
    assert not restates(m("Timeout is 30 s"), m("Timeout is 60 s"))
    assert not restates(
        m("Config lives in src/app/config.py"), m("Config lives in app/settings.py")
    )
    # what is not quoted counts too, and so do the small words that turn a claim round
    assert not restates(m("How to lint: run uv run ruff check on the src folder"),
                        m("How to lint: run uv run ruff format on the src folder"))  # fmt: skip
    assert not restates(m("We always squash merge pull requests"),
                        m("We never squash merge pull requests"))  # fmt: skip
    assert not restates(m("Do not use npm here"), m("Use npm here"))
    assert restates(m("Use uv for envs"), m("Use uv for envs."))
    # a paraphrase waits for a person; a restatement that goes on is merged
    assert not restates(m("Failed webhook deliveries are retried with backoff"),
                        m("Webhook deliveries that fail are retried with backoff"))  # fmt: skip
    # what a second review saw merged: order, antonyms, a curly negation; and refused
    for a, b in (
        ("Prefer tabs over spaces in the Makefiles", "Prefer spaces over tabs in Makefiles"),
        ("Merge commits are allowed on main", "Merge commits are forbidden on main"),
        ("Don’t run the migrations on Fridays", "Run the migrations on Fridays"),
    ):
        assert not restates(m(a), m(b)), (a, b)
    assert restates(m("Run the unit tests before pushing"), m("Run the unit test before pushing"))
    assert restates(m("Never commit secrets"), m("Don't commit secrets"))
    # a third review: the small words that change a claim are not filler
    for a, b in (
        ("Copy the dump from staging to production", "Copy the dump to staging from production"),
        ("Merging requires a review and green CI", "Merging requires a review or green CI"),
        ("They use tabs in Makefiles", "We use tabs in Makefiles"),
    ):
        assert not restates(m(a), m(b)), (a, b)
    from cortexmem.core.consolidation import fuller

    nightly = m("Run tests in Docker container nightly")
    assert fuller(m("Run tests in Docker container"), nightly) is nightly


def test_interactive_accept_reject(ctx: Context, review_store, monkeypatch):
    monkeypatch.setattr(cli_consolidate, "_stdin_is_tty", lambda: True)
    store = ctx.require("project")
    first, second = service.Review(store, "project").candidates()
    # accept the first candidate keeping the other one, reject the second, reject the edge
    result = cortex(ctx.paths.root, "consolidate", input="o\nr\nr\n")
    assert "Merged 1, rejected 1" in result.output and "1 rejected" in result.output
    now = statuses(store)
    assert (now[first.other.id], now[first.keep.id]) == ("active", "superseded")
    assert now[second.keep.id] == now[second.other.id] == "active"
    [link] = edges_between(store, second.keep.id, second.other.id)
    assert (link.relation_type, link.status) == ("relates_to", "active")
    assert store.suggested_edges() == []
    # Rejected pairs and rejected suggestions are not proposed again, even by a relink.
    store.write(lambda conn: conn.execute("UPDATE upkeep_state SET linked_seq = 0"))
    link_new(store, model=Embedder.for_context(ctx).model, limit=None)
    assert store.pending_candidates() == [] and store.suggested_edges() == []


def test_interactive_edit_and_skip(ctx: Context, review_store, monkeypatch):
    monkeypatch.setattr(cli_consolidate, "_stdin_is_tty", lambda: True)
    monkeypatch.setattr(
        cli_consolidate.click, "edit", lambda text: "Webhook retries: exponential, 1 h cap.\n"
    )
    store = ctx.require("project")
    first, _ = service.Review(store, "project").candidates()
    result = cortex(ctx.paths.root, "consolidate", input="e\ns\ns\n")
    assert "edited text" in result.output and "skipped 1" in result.output
    kept = store.get_memory(first.keep.id)
    assert kept is not None and kept.content == "Webhook retries: exponential, 1 h cap."
    assert len(store.pending_candidates()) == 1 and len(store.suggested_edges()) == 1


def test_quit_stops_the_walk(ctx: Context, review_store, monkeypatch):
    monkeypatch.setattr(cli_consolidate, "_stdin_is_tty", lambda: True)
    result = cortex(ctx.paths.root, "consolidate", input="q\n")
    assert "Nothing changed." in result.output
    assert ctx.require("project").list_backups() == []


def test_rollback_restores_the_checkpoint(ctx: Context, review_store):
    store = ctx.require("project")
    before = statuses(store)
    edges_before = {e.id for e in store.iter_edges()}
    cortex(ctx.paths.root, "consolidate", "--yes")
    assert sorted(statuses(store).values()).count("superseded") == 1
    refused = cortex(ctx.paths.root, "consolidate", "--rollback", code=1)
    assert "terminal" in refused.output
    [point] = service.checkpoints(store)
    result = cortex(ctx.paths.root, "consolidate", "--rollback", "--yes")
    assert point.name in result.output and "5 active, 1 superseded" in result.output
    assert statuses(store) == before
    assert {e.id for e in store.iter_edges()} == edges_before
    assert store.suggested_edges() and len(store.pending_candidates()) == 2


def test_rollback_without_a_checkpoint(ctx: Context, review_store):
    store = ctx.require("project")
    store.backup("pre-reset")  # not a consolidation checkpoint
    result = cortex(ctx.paths.root, "consolidate", "--rollback", "--yes", code=1)
    assert "no consolidation checkpoint" in result.output
    with pytest.raises(Exception, match="not a consolidation checkpoint"):
        service.rollback(store, store.list_backups()[-1])
