"""Hybrid recall on a real SQLite store with the real local embedding model (offline, no mocks).

Thirty memories on unrelated topics are embedded with ``sync_context``; questions that share no
word with the memory they are about must be found by meaning, and only by meaning.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np
import pytest

from cortexmem.core.fts_query import to_fts_query
from cortexmem.model import Memory, SourceContext, utc_now
from cortexmem.services.context import Context
from cortexmem.services.embedding import Embedder, sync, sync_context
from cortexmem.services.memories import forget, remember
from cortexmem.services.recall import recall
from cortexmem.services.vectors import index_for

from conftest import cortex, imported

MEMORIES = [
    (
        "decision",
        "Webhook deliveries that fail are retried with exponential backoff, capped at one hour.",
    ),
    (
        "decision",
        "We chose PostgreSQL 16 over MySQL for the billing database because of its JSONB indexes.",
    ),
    (
        "gotcha",
        "The CI runner has no access to the internet; vendor test fixtures into the repository.",
    ),
    (
        "pattern",
        "Every HTTP handler validates its input with pydantic models before touching the database.",
    ),
    ("architecture", "The frontend is a React single-page app served by nginx from a CDN bucket."),
    ("context", "The design team prefers Figma files shared in the #design channel."),
    ("progress", "Migrating the invoice PDF renderer from wkhtmltopdf to WeasyPrint, half done."),
    ("gotcha", "Timestamps in the legacy orders table are stored in local Paris time, not UTC."),
    ("decision", "Feature flags live in LaunchDarkly; never hard-code a rollout percentage."),
    ("pattern", "Background jobs are idempotent: each one checks a dedup key in Redis first."),
    (
        "architecture",
        "Search is served by an Elasticsearch cluster of three nodes, reindexed nightly.",
    ),
    (
        "gotcha",
        "The mobile app caches the API base URL for a week; changing it needs a forced update.",
    ),
    ("decision", "Passwords are hashed with argon2id; bcrypt hashes are upgraded at next login."),
    ("context", "Release trains leave every second Tuesday; hotfixes can ship any day."),
    ("pattern", "Database migrations are written with Alembic and must be reversible."),
    (
        "gotcha",
        "Stripe test mode webhooks arrive out of order; sort events by their created field.",
    ),
    ("architecture", "Uploaded images go to S3 and a Lambda function makes thumbnails."),
    ("decision", "Logs are shipped as JSON lines to Loki, with the request id on every line."),
    ("progress", "Rewriting the onboarding email sequence, three of five templates done."),
    ("pattern", "Money amounts are integers in cents, never floats."),
    ("gotcha", "The staging database is reset every Sunday night; do not keep data there."),
    ("context", "Customer support escalations go to the on-call engineer through PagerDuty."),
    ("decision", "The public API is versioned in the URL path, like /v2/orders."),
    (
        "architecture",
        "Authentication uses OAuth2 with short-lived JWT access tokens and refresh tokens.",
    ),
    ("pattern", "Tests that touch the network are marked slow and skipped in pre-commit."),
    ("gotcha", "Docker builds on Apple silicon need --platform linux/amd64 for the PDF tools."),
    ("context", "The product manager writes acceptance criteria in the Jira ticket description."),
    ("decision", "Rate limiting is 100 requests per minute per API key, enforced in the gateway."),
    ("architecture", "Analytics events flow through Kafka into a ClickHouse warehouse."),
    ("pattern", "Translations are stored in gettext .po files and compiled at build time."),
]

# Questions that share no word (after stemming and stop words) with the memory they mean.
PARAPHRASES = [
    ("how are monetary values represented", "Money amounts are integers"),
    ("how is throttling of clients configured", "Rate limiting is 100"),
    ("what happens to stuff on the preproduction environment weekly", "The staging database"),
]


@pytest.fixture(autouse=True)
def default_alpha(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CORTEX_RECALL_ALPHA", raising=False)


@pytest.fixture
def embedder(ctx: Context) -> Embedder:
    return Embedder.for_context(ctx)


@pytest.fixture
def known(ctx: Context) -> dict[str, Memory]:
    """The thirty memories by the start of their text."""
    stored = {}
    for memory_type, text in MEMORIES:
        memory, created = remember(ctx, text, memory_type=memory_type)
        assert created
        stored[text] = memory
    return stored


@pytest.fixture
def embedded(ctx: Context, known: dict[str, Memory], embedder: Embedder) -> dict[str, Memory]:
    report = sync_context(ctx, embedder)
    assert (report.embedded, report.remaining) == (len(MEMORIES), 0)
    return known


def find(known: dict[str, Memory], start: str) -> Memory:
    [memory] = [m for text, m in known.items() if text.startswith(start)]
    return memory


def ids(results) -> list[str]:
    return [r.memory.id for r in results]


def test_sync_embeds_every_memory_once(ctx: Context, known, embedder: Embedder):
    store = ctx.require("project")
    assert store.embedding_state(embedder.model) == (0, 0)
    assert store.embedding_backlog_size(embedder.model) == len(MEMORIES)
    first = sync_context(ctx, embedder)
    assert (first.embedded, first.remaining, first.finished) == (len(MEMORIES), 0, True)
    count, version = store.embedding_state(embedder.model)
    assert count == len(MEMORIES) and version >= 1
    assert store.embedding_backlog(embedder.model, 100) == []
    rows = store.load_embeddings(embedder.model)
    assert len(rows) == len(MEMORIES)
    vectors = np.frombuffer(b"".join(r[3] for r in rows), dtype="<f4").reshape(len(rows), -1)
    assert vectors.shape[1] == 384
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)
    # Unchanged content is never embedded twice.
    second = sync_context(ctx, embedder)
    assert (second.embedded, second.remaining) == (0, 0)
    assert store.embedding_state(embedder.model) == (count, version)


@pytest.mark.parametrize("question, target", PARAPHRASES)
def test_a_paraphrase_is_found_by_meaning_not_by_words(ctx: Context, embedded, question, target):
    memory = find(embedded, target)
    stems = set(to_fts_query(question).replace('"', "").split(" OR "))
    assert not stems & set(to_fts_query(memory.content).replace('"', "").split(" OR "))
    hybrid = recall(ctx, question, count_access=False)  # the default alpha, the default model
    assert memory.id in ids(hybrid)[:3], [r.memory.content for r in hybrid[:3]]
    assert memory.id not in ids(recall(ctx, question, alpha=0.0, count_access=False))
    assert memory.id in ids(recall(ctx, question, alpha=1.0, count_access=False))[:3]


def test_words_still_count_in_the_hybrid(ctx: Context, embedded):
    # A rare exact word (a product name) is found by the lexical leg and stays on top.
    target = find(embedded, "Feature flags live in LaunchDarkly")
    assert ids(recall(ctx, "LaunchDarkly", alpha=0.0, count_access=False))[0] == target.id
    assert ids(recall(ctx, "LaunchDarkly", count_access=False))[0] == target.id


def test_without_vectors_recall_is_lexical(ctx: Context, known):
    target = find(known, "Money amounts")
    assert ids(recall(ctx, "how are monetary values represented", count_access=False)) == []
    assert ids(recall(ctx, "money in cents", count_access=False))[0] == target.id
    assert recall(ctx, "money in cents", alpha=1.0, count_access=False) == []


def test_editing_content_puts_a_memory_back_in_the_backlog(ctx: Context, embedded, embedder):
    store = ctx.require("project")
    model = embedder.model
    old = find(embedded, "Money amounts")
    seq = store.seq_of([old.id])[old.id]
    # An edit in place (an import of a newer copy of the same id keeps its row and seq).
    edited = old.with_changes(
        content="Money amounts are Decimal values with two places, never floats.",
        updated_at=utc_now(),
    )
    assert store.import_records([edited], [], []).updated == 1
    backlog = store.embedding_backlog(model, 100)
    assert [(s, m.id, m.content) for s, m in backlog] == [(seq, old.id, edited.content)]
    # A new memory replacing an archived one: the new one is in the backlog, the archived one
    # keeps its vector (it is not embedded again).
    new, _ = remember(ctx, "Release trains now leave every Monday.", memory_type="context")
    forget(ctx, find(embedded, "Release trains leave").id)
    assert {m.id for _, m in store.embedding_backlog(model, 100)} == {old.id, new.id}
    assert sync_context(ctx, embedder).embedded == 2
    assert store.embedding_backlog_size(model) == 0
    assert store.embedding_state(model)[0] == len(MEMORIES) + 1
    hits = recall(ctx, "decimal values with two places", alpha=1.0, count_access=False)
    assert ids(hits)[0] == old.id and hits[0].memory.content == edited.content


def test_a_changed_summary_is_embedded_again(ctx: Context, embedded, embedder):
    """The summary is part of the embedding text: changing it alone (content and type as they
    were) puts the memory back in the backlog, and recall then finds it by the new words'
    meaning."""
    store = ctx.require("project")
    old = find(embedded, "Money amounts")
    newer = old.with_changes(summary="Currency handling: cents rounding", updated_at=utc_now())
    assert newer.content_hash == old.content_hash
    assert store.import_records([newer], [], []).updated == 1
    assert [m.id for _, m in store.embedding_backlog(embedder.model, 100)] == [old.id]
    assert sync_context(ctx, embedder).embedded == 1
    assert store.embedding_backlog_size(embedder.model) == 0


def test_a_renamed_project_is_embedded_again(ctx: Context, embedded, embedder):
    """The project's name prefixes every embedded text: vectors made under another name are
    all stale, and once re-embedded nothing is left in the backlog."""
    store = ctx.require("project")
    renamed = Embedder(embedder.routing, "a-new-name")
    assert store.embedding_backlog_size(embedder.model) == 0
    report = sync(store, renamed, project="a-new-name")
    assert report.embedded == len(MEMORIES) and report.remaining == 0
    # The same name again changes nothing.
    assert sync(store, renamed, project="a-new-name").embedded == 0


class Loads:
    """Records which versions a store's vectors are read after (0 = a full reload)."""

    def __init__(self, store, monkeypatch: pytest.MonkeyPatch) -> None:
        self.after: list[int] = []
        real = store.load_embeddings

        def load(model: str, after_version: int = 0):
            self.after.append(after_version)
            return real(model, after_version)

        monkeypatch.setattr(store, "load_embeddings", load)

    def take(self) -> list[int]:
        taken, self.after = self.after, []
        return taken


def assert_index_matches_store(index, store, model: str) -> None:
    rows = type(store).load_embeddings(store, model)  # past the spy of `Loads`
    assert sorted(int(s) for s in index.seqs) == sorted(r[0] for r in rows)
    position = {int(s): i for i, s in enumerate(index.seqs)}
    for seq, _, memory_type, blob in rows:
        assert np.array_equal(index.matrix[position[seq]], np.frombuffer(blob, dtype="<f4"))
        assert index.types[position[seq]] == memory_type
    assert (index.count, index.version) == store.embedding_state(model)


def test_a_vectors_similarity_is_read_from_its_own_row_after_a_reload(
    ctx: Context, embedded, embedder
):
    """``similarity_of`` finds a memory's row by its seq, in the arrays the index holds now:
    a full reload (a row deleted, one added: the same length) moves every row."""
    store = ctx.require("project")
    index = index_for(store, embedder.model)
    probe = np.asarray(embedder.query("weekly reset of the staging database"), dtype=np.float32)
    staging = find(embedded, "The staging database")
    seq = store.seq_of([staging.id])[staging.id]

    def direct() -> float:
        row = [int(s) for s in index.seqs].index(seq)
        return float(index.matrix[row] @ probe)

    assert index.similarity_of(probe, [seq, -1])[0] == pytest.approx(direct())
    assert np.isnan(index.similarity_of(probe, [seq, -1])[1])
    money = find(embedded, "Money amounts")
    with store._conn:  # no public API deletes one memory: through the store's connection
        store._conn.execute("DELETE FROM memories WHERE id = ?", (money.id,))
    remember(ctx, "Invoices are numbered per merchant, without gaps.", memory_type="decision")
    sync_context(ctx, embedder)
    assert index_for(store, embedder.model) is index
    assert index.similarity_of(probe, [seq])[0] == pytest.approx(direct())


def test_the_cached_index_follows_the_store(ctx: Context, embedded, embedder, monkeypatch):
    store = ctx.require("project")
    model = embedder.model
    loads = Loads(store, monkeypatch)
    index = index_for(store, model)
    assert len(index) == len(MEMORIES) and loads.take() == [0]
    assert index_for(store, model) is index and loads.take() == []  # current: nothing read
    version = index.version

    # New vectors: appended incrementally.
    remember(ctx, "Invoices are numbered per merchant, without gaps.", memory_type="decision")
    sync_context(ctx, embedder)
    assert index_for(store, model) is index
    assert loads.take() == [version]
    assert len(index) == len(MEMORIES) + 1
    assert_index_matches_store(index, store, model)

    # Archived: the vector stays (recall filters by status), nothing is reloaded.
    staging = find(embedded, "The staging database")
    forget(ctx, staging.id)
    index_for(store, model)
    assert loads.take() == [] and len(index) == len(MEMORIES) + 1
    question = "what happens to stuff on the preproduction environment weekly"
    assert staging.id not in ids(recall(ctx, question, alpha=1.0, count_access=False))

    # A memory row deleted: its vector goes with it and the matrix is reloaded in full. No
    # public API deletes one memory (only `clear` and `restore` replace whole stores), so the
    # row is deleted through the store's connection.
    money = find(embedded, "Money amounts")
    money_seq = store.seq_of([money.id])[money.id]
    with store._conn:
        store._conn.execute("DELETE FROM memories WHERE id = ?", (money.id,))
    index_for(store, model)
    assert loads.take()[0] == 0
    assert money_seq not in {int(s) for s in index.seqs}
    assert len(index) == len(MEMORIES)
    assert_index_matches_store(index, store, model)
    hits = recall(ctx, "how are monetary values represented", alpha=1.0, count_access=False)
    assert money.id not in ids(hits) and len(hits) == 10

    # Deleted and added between two searches (the count is unchanged): still exact.
    rate = find(embedded, "Rate limiting is 100")
    with store._conn:
        store._conn.execute("DELETE FROM memories WHERE id = ?", (rate.id,))
    remember(
        ctx, "Throttled clients get HTTP 429 with a Retry-After header.", memory_type="pattern"
    )
    sync_context(ctx, embedder)
    assert store.embedding_state(model)[0] == len(MEMORIES)
    index_for(store, model)
    assert 0 in loads.take()
    assert_index_matches_store(index, store, model)


def test_branch_filter_applies_to_the_vector_leg(ctx: Context, embedded, embedder):
    store = ctx.require("project")
    elsewhere = Memory(
        "Halfway through moving the payment ledger to a sharded cluster.",
        "progress",
        source_context=SourceContext(branch="feature/ledger-sharding"),
    )
    here = Memory(
        "The payment ledger is sharded by merchant id.",
        "decision",
        source_context=SourceContext(branch="feature/ledger-sharding"),
    )
    store.add_memory(elsewhere)
    store.add_memory(here)
    sync_context(ctx, embedder)
    question = "splitting the accounting book across several database servers"
    for alpha in (None, 1.0):
        found = ids(recall(ctx, question, alpha=alpha, count_access=False))  # on main
        assert here.id in found and elsewhere.id not in found
        found = ids(
            recall(ctx, question, alpha=alpha, branch="feature/ledger-sharding", count_access=False)
        )
        assert here.id in found and elsewhere.id in found
        found = ids(recall(ctx, question, alpha=alpha, all_branches=True, count_access=False))
        assert elsewhere.id in found


def test_type_filter_applies_to_the_vector_leg(ctx: Context, embedded):
    question = "how are monetary values represented"
    money = find(embedded, "Money amounts")  # a pattern
    decisions = recall(ctx, question, types=("decision",), alpha=1.0, count_access=False)
    assert decisions and {r.memory.memory_type for r in decisions} == {"decision"}
    assert len(decisions) == sum(1 for t, _ in MEMORIES if t == "decision")
    patterns = recall(ctx, question, types=("pattern",), count_access=False)
    assert ids(patterns)[0] == money.id
    assert {r.memory.memory_type for r in patterns} == {"pattern"}
    # A type nothing embedded has: an empty answer, at once (this once spun forever).
    answers: list = []

    def ask() -> None:
        for alpha in (1.0, None):
            answers.append(recall(ctx, question, types=("code",), alpha=alpha, count_access=False))

    worker = threading.Thread(target=ask, daemon=True)
    worker.start()
    worker.join(timeout=10)
    assert not worker.is_alive(), "recall with a type no vector has did not return"
    assert answers == [[], []]


def test_recall_counts_what_it_serves(ctx: Context, embedded):
    store = ctx.require("project")
    question = "how are monetary values represented"
    recall(ctx, question, limit=3, count_access=False)
    assert all(m.access_count == 0 for m in store.iter_memories())
    served = ids(recall(ctx, question, limit=3))
    assert len(served) == 3
    counts = {m.id: m.access_count for m in store.iter_memories()}
    assert {i for i, n in counts.items() if n} == set(served)
    assert all(counts[i] == 1 for i in served)
    assert all(store.get_memory(i).last_accessed_at for i in served)


def test_a_new_model_re_embeds_what_the_old_one_made(ctx: Context, embedded, embedder):
    store = ctx.require("project")
    model = embedder.model
    switched = [find(embedded, start) for start in ("Money amounts", "Rate limiting is 100")]
    seqs = store.seq_of([m.id for m in switched])
    rng = np.random.default_rng(7)
    rows = []
    for memory in switched:
        vector = rng.standard_normal(384).astype("<f4")
        rows.append(
            (
                seqs[memory.id],
                memory.content_hash,
                (vector / np.linalg.norm(vector)).astype("<f4").tobytes(),
            )
        )
    assert store.put_embeddings("other/model", 384, rows) == 2
    assert store.embedding_state("other/model")[0] == 2
    assert store.embedding_state(model)[0] == len(MEMORIES) - 2
    # Same content hash, another model: in the real model's backlog.
    assert {m.id for _, m in store.embedding_backlog(model, 100)} == {m.id for m in switched}
    assert store.embedding_backlog("other/model", 100) != []
    index = index_for(store, model)
    assert len(index) == len(MEMORIES) - 2
    question = "how are monetary values represented"
    assert switched[0].id not in ids(recall(ctx, question, alpha=1.0, count_access=False))
    assert sync_context(ctx, embedder).embedded == 2
    assert store.embedding_state("other/model")[0] == 0
    assert store.embedding_state(model)[0] == len(MEMORIES)
    assert ids(recall(ctx, question, count_access=False))[0] == switched[0].id


def cortex_probe(repo: Path, *args: str) -> tuple[list, list[str]]:
    result = cortex("-C", str(repo), *args, cwd=repo)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout), imported(result)


@pytest.mark.slow
def test_a_store_without_vectors_never_loads_the_model(ctx: Context, repo: Path, known, embedder):
    results, heavy = cortex_probe(repo, "recall", "--json", "money", "in", "cents")
    assert results[0]["memory"]["content"].startswith("Money amounts")
    assert heavy == []
    # The probe does see the model once there are vectors to search.
    sync_context(ctx, embedder)
    results, heavy = cortex_probe(repo, "recall", "--json", "how are monetary values represented")
    assert results[0]["memory"]["content"].startswith("Money amounts")
    assert {"numpy", "onnxruntime"} <= set(heavy)
