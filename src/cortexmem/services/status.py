"""What `cortex status` reports, gathered into one plain dict (rendered by the CLI)."""

from __future__ import annotations

from typing import Any

from cortexmem import __version__
from cortexmem.services.context import SCOPES, Context
from cortexmem.store.migrations.loader import head_version
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
            }
        report["stores"][scope] = entry
    queue = paths.data_dir / "queue"
    report["queued_transcripts"] = len(list(queue.glob("*.json"))) if queue.is_dir() else 0
    from cortexmem.services import models
    from cortexmem.services.learn import review_status

    report["ai"] = models.status(ctx)
    report["learning"] = review_status(ctx)
    return report
