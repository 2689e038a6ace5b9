"""What `cortex status` reports, gathered into one plain dict (rendered by the CLI)."""

from __future__ import annotations

from typing import Any

from cortexmem import __version__
from cortexmem.ai import routing_for
from cortexmem.services.context import SCOPES, Context, Scope
from cortexmem.services.embedding import Embedder
from cortexmem.store.migrations.loader import head_version
from cortexmem.store.protocols import Store
from cortexmem.store.sqlite.tx import fts5_available


def status(ctx: Context) -> dict[str, Any]:
    paths = ctx.paths
    branch, commit = paths.branch_and_commit()
    report: dict[str, Any] = {
        "version": __version__,
        "project": str(paths.root),
        "hash": paths.project_hash,
        "git": paths.repo is not None,
        "branch": branch,
        "commit": commit,
        "fts5_available": fts5_available(),
        "schema_head": head_version(),
        "log": str(paths.log),
        "stores": {},
    }
    for scope in SCOPES:
        store = ctx.store(scope)
        entry: dict[str, Any] = {"path": str(ctx.db_path(scope)), "exists": store is not None}
        if store is not None:
            counts = store.counts()
            entry |= {
                "schema_version": store.schema_version(),
                "memories": counts.memories,
                "by_type": counts.by_type,
                "by_status": counts.by_status,
                "edges": counts.edges,
                "events": counts.events,
                "observations": counts.observations,
                "episodes": store.episode_counts().episodes,
                "transcripts": counts.transcripts,
                "last_capture": counts.last_capture,
                "size_bytes": store.size_bytes(),
                "backups": len(store.list_backups()),
                "integrity": store.integrity_check() or ["ok"],
                "embedded": embedded(store, _embedder(ctx, scope)),
            }
        report["stores"][scope] = entry
    queue = paths.data_dir / "queue"
    report["queued_transcripts"] = len(list(queue.glob("*.json"))) if queue.is_dir() else 0
    from cortexmem.services import models
    from cortexmem.services.learn import review_status

    report["ai"] = models.status(ctx)
    report["learning"] = review_status(ctx)
    return report


def _embedder(ctx: Context, scope: Scope) -> Embedder:
    """The model each store is embedded with, as ``sync_context`` chooses it: the global store
    by the user's own routing only (no model is loaded)."""
    return Embedder.for_context(ctx) if scope == "project" else Embedder(routing_for(None), None)


def embedded(store: Store, embedder: Embedder) -> dict[str, Any]:
    """How much of a store has a vector for what it says now, as ``{"embedded", "total"}`` for
    memories and episodes (None: episodes hold pasted code, never sent to a remote model).

    Recall weighs what has none by its words alone, so whether a query's meaning was judged
    depends on it. What capture stores has none (a hook never loads the model) until
    ``cortex reindex`` embeds it, or the recall server a session starts, between requests."""
    done, total = store.embedding_coverage(embedder.model, embedder.skip_types)
    report: dict[str, Any] = {
        "model": embedder.model,
        "memories": {"embedded": done, "total": total},
        "episodes": None,
    }
    if embedder.embeds_episodes:
        said = store.episode_counts().episodes
        missing = store.episode_embedding_backlog_size(embedder.model)
        report["episodes"] = {"embedded": said - missing, "total": said}
    return report
