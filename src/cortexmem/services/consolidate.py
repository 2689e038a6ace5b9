"""Consolidation: automatic upkeep after captures, a person's review, checkpoints and rollback.

Automatic runs (``maybe_consolidate``, called by the capture hooks) only link: they add
``relates_to`` edges (active, or suggested for review) and queue merge candidates. Merging
changes what recall serves and makes a ``supersedes`` edge, so it waits for a person (DESIGN.md:
"Nightly consolidation is dry-run unless told otherwise"): ``cortex consolidate`` walks them
through the candidates and the suggested edges, or ``--yes`` accepts them for a script.

Every run that changes anything first takes a CHECKPOINT, a backup named ``…-pre-consolidate.db``
in the store's ``backups/``; ``cortex consolidate --rollback`` restores the newest one. Only the
newest ``KEEP_CHECKPOINTS`` are kept, so automatic runs never crowd other backups (pre-reset,
pre-migrate, pre-prune) out of the store's backup folder.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cortexmem.core.consolidation import (
    choose_keeper,
    consolidation_due,
    fuller,
    merged,
    restates,
)
from cortexmem.errors import CortexError, NotFound
from cortexmem.model import Edge, Memory
from cortexmem.services.context import Context, Scope
from cortexmem.services.links import AUTO_LIMIT, LinkReport, link_new
from cortexmem.store.protocols import BackupStore, CandidatePair, Store, UpkeepState

CHECKPOINT_REASON = "pre-consolidate"
KEEP_CHECKPOINTS = 3
# An automatic run starts only with this much of the hook's budget left, and stops linking
# this long before the deadline (the checkpoint and the final transaction must still fit).
MIN_AUTO_SECONDS = 1.5
AUTO_MARGIN = 0.5
# An automatic run links for at most this long; what is left waits for the next run.
AUTO_SECONDS = 2.0
# `--yes` merges without a person only above this similarity. The seed's 0.5 makes a pair a
# merge *candidate*; measured with the local model, related-but-distinct memories reach
# 0.50-0.78 while true duplicates score 0.91-0.97, so unattended merging waits for 0.85
# (between 0.5 and 0.85 a person decides in `cortex consolidate`).
ACCEPT_ABOVE = 0.85

_STAMP = re.compile(r"-(\d{8}T\d{6})\d{9}-" + re.escape(CHECKPOINT_REASON) + r"\.db$")


# ----------------------------------------------------------------------------- checkpoints


def checkpoints(store: BackupStore) -> list[Path]:
    """The store's consolidation checkpoints, oldest first."""
    return [p for p in store.list_backups() if p.name.endswith(f"-{CHECKPOINT_REASON}.db")]


def checkpoint(store: BackupStore) -> Path:
    """Back the store up before consolidation changes it; older checkpoints beyond
    ``KEEP_CHECKPOINTS`` are removed."""
    path = store.backup(CHECKPOINT_REASON)
    for old in checkpoints(store)[:-KEEP_CHECKPOINTS]:
        old.unlink(missing_ok=True)
    return path


def checkpoint_time(path: Path) -> str | None:
    """When a checkpoint was taken, ``2025-01-31 12:00:00 UTC``, from its file name."""
    match = _STAMP.search(path.name)
    if match is None:
        return None
    moment = datetime.strptime(match[1], "%Y%m%dT%H%M%S").replace(tzinfo=UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def memory_counts(store: Store, checkpoint: Path | None = None) -> dict[str, int]:
    """Memories by status in the store, or in one of its checkpoints (read-only)."""
    if checkpoint is None:
        return dict(store.counts().by_status)
    return store.backup_status_counts(checkpoint)


def rollback_target(store: BackupStore) -> Path | None:
    found = checkpoints(store)
    return found[-1] if found else None


def rollback(store: BackupStore, target: Path) -> Path:
    """Restore ``target`` (a consolidation checkpoint); returns the safety backup of the state
    it replaced."""
    if not target.name.endswith(f"-{CHECKPOINT_REASON}.db"):
        raise CortexError(f"{target.name} is not a consolidation checkpoint")
    return store.restore(target)


# ----------------------------------------------------------------------------- automatic


@dataclass
class AutoReport:
    """What an automatic run did (or why it failed: automatic runs never raise)."""

    state: UpkeepState | None = None
    links: LinkReport | None = None
    error: str | None = None

    def describe(self) -> str:
        if self.error is not None:
            return f"consolidation failed: {self.error}"
        links = self.links or LinkReport()
        text = (
            f"consolidation: {links.examined} memories linked, {links.related} related, "
            f"{links.suggested} suggested, {links.candidates} merge candidates"
        )
        if links.waiting:
            text += f", {links.waiting} left for later"
        if links.checkpoint is not None:
            text += f"; checkpoint {links.checkpoint.name}"
        return text


def _due(state: UpkeepState) -> bool:
    return state.unlinked and consolidation_due(
        state.extractions, state.active, state.active_at_last_run
    )


def _model(ctx: Context) -> str | None:
    """The embedding model of the project, or None when its routing cannot be read (the run
    then links by words alone)."""
    try:
        from cortexmem.services.embedding import configured_model

        return configured_model(ctx)
    except Exception:
        return None


def maybe_consolidate(
    ctx: Context, *, memories_added: int, deadline: float | None = None
) -> AutoReport | None:
    """After a capture: count it when it added memories, and when a run is due (every 10
    such captures, or the store crossing 80 active memories) and the budget allows, link the
    new memories and queue merge candidates. Returns None when nothing ran. Never raises.

    Cheap when not due: one read, or one small write when the capture added memories.
    """
    try:
        store = ctx.store("project")
        if store is None:
            return None
        if memories_added <= 0 and not _due(store.upkeep_state()):
            return None
        may_run = deadline is None or deadline - time.monotonic() >= MIN_AUTO_SECONDS
        state, claimed = store.claim_upkeep_run(
            add_extraction=memories_added > 0, may_run=may_run, due=_due
        )
        if not claimed:
            return None
        stop = time.monotonic() + AUTO_SECONDS
        links = link_new(
            store,
            model=_model(ctx),
            limit=AUTO_LIMIT,
            deadline=stop if deadline is None else min(stop, deadline - AUTO_MARGIN),
            wait_for_vectors=True,
            stream_vectors=True,
            checkpoint=lambda: checkpoint(store),
        )
        return AutoReport(state=state, links=links)
    except Exception as exc:  # a hook must never fail because of upkeep
        return AutoReport(error=f"{type(exc).__name__}: {exc}")


# ----------------------------------------------------------------------------- review


@dataclass(frozen=True)
class CandidateView:
    pair: CandidatePair
    keep: Memory
    other: Memory

    @property
    def similarity(self) -> float:
        return self.pair.similarity

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.pair.to_dict(),
            "keep": self.keep.to_dict(),
            "other": self.other.to_dict(),
        }


@dataclass(frozen=True)
class SuggestionView:
    edge: Edge
    source: Memory
    target: Memory

    def to_dict(self) -> dict[str, Any]:
        return {
            "edge": self.edge.to_dict(),
            "source": self.source.to_dict(),
            "target": self.target.to_dict(),
        }


@dataclass
class ReviewTally:
    merged: int = 0
    rejected: int = 0
    skipped: int = 0
    edges_accepted: int = 0
    edges_rejected: int = 0
    edges_skipped: int = 0

    def to_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass
class Review:
    """A person's pass over one store's merge candidates and suggested edges. The checkpoint
    is taken once, before the first change of the pass (or reused from its linking step)."""

    store: Store
    scope: Scope
    checkpoint: Path | None = None
    tally: ReviewTally = field(default_factory=ReviewTally)

    def ensure_checkpoint(self) -> Path:
        if self.checkpoint is None:
            self.checkpoint = checkpoint(self.store)
        return self.checkpoint

    def candidates(self) -> list[CandidateView]:
        pairs = self.store.pending_candidates()
        found = self.store.get_memories({i for p in pairs for i in (p.a_id, p.b_id)})
        views = []
        for p in pairs:
            if p.a_id in found and p.b_id in found:
                keep, other = choose_keeper(found[p.a_id], found[p.b_id])
                views.append(CandidateView(p, keep, other))
        return views

    def suggestions(self) -> list[SuggestionView]:
        edges = self.store.suggested_edges()
        found = self.store.get_memories({i for e in edges for i in (e.source_id, e.target_id)})
        return [
            SuggestionView(e, found[e.source_id], found[e.target_id])
            for e in edges
            if e.source_id in found and e.target_id in found
        ]

    def accept_merge(
        self, view: CandidateView, *, keep_other: bool = False, content: str | None = None
    ) -> Edge:
        """Merge: the kept memory (``view.keep``, or ``view.other`` when ``keep_other``)
        absorbs the other, which becomes ``superseded`` with a ``supersedes`` edge from the
        kept one. ``content`` is a person's edit of the merged text."""
        keep, other = (view.other, view.keep) if keep_other else (view.keep, view.other)
        current = self.store.get_memories([keep.id, other.id])
        if keep.id not in current or other.id not in current:
            raise NotFound("one of the two memories is gone")
        try:
            result = merged(current[keep.id], current[other.id], content)
        except ValueError as exc:
            raise CortexError(str(exc)) from exc
        self.ensure_checkpoint()
        edge = self.store.merge(result, other.id)
        self.tally.merged += 1
        return edge

    def reject_merge(self, view: CandidateView) -> None:
        """Not the same: never propose the pair again, and link the two as related (they are
        close, by the very scores that made them a candidate)."""
        self.ensure_checkpoint()
        newer, older = sorted((view.keep, view.other), key=lambda m: (m.created_at, m.id))[::-1]
        link = Edge(
            newer.id, older.id, "relates_to", strength=min(1.0, view.similarity),
            bidirectional=True,
        )  # fmt: skip
        self.store.reject_candidate(view.pair, link)
        self.tally.rejected += 1

    def accept_edge(self, view: SuggestionView) -> None:
        self.ensure_checkpoint()
        self.store.accept_edge(view.edge.id)
        self.tally.edges_accepted += 1

    def reject_edge(self, view: SuggestionView) -> None:
        self.ensure_checkpoint()
        self.store.reject_edge(view.edge)
        self.tally.edges_rejected += 1

    def accept_all(self) -> None:
        """``--yes``: every merge candidate above ``ACCEPT_ABOVE`` whose memories restate each
        other (most similar first; a pair whose memory an earlier merge superseded is passed
        over; two that state different commands, paths or numbers wait for a person), then
        every suggested edge."""
        while True:
            views = [
                v
                for v in self.candidates()
                if v.similarity > ACCEPT_ABOVE and restates(v.keep, v.other)
            ]
            if not views:
                break
            pick = views[0]
            # the kept one says all the other did: the longer words win (one restating
            # another may go on with why or where)
            self.accept_merge(pick, content=fuller(pick.keep, pick.other).content)
        for view in self.suggestions():
            self.accept_edge(view)


def _embed_backlog(ctx: Context, store: Store, scope: Scope) -> tuple[str | None, str | None]:
    """Embed what has no vector yet (loads the model). ``(model, warning)``."""
    try:
        from cortexmem.services.embedding import Embedder, sync

        embedder = Embedder.for_context(ctx)
        sync(store, embedder, project=ctx.paths.name if scope == "project" else None)
        return embedder.model, None
    except Exception as exc:
        return _model(ctx), f"could not embed new memories ({exc}); linking by words for those"


def prepare(
    ctx: Context, scope: Scope, *, embed: bool = True, note: Callable[[str], None] | None = None
) -> tuple[Review, LinkReport]:
    """Start a review: embed the backlog, link every memory not linked yet (checkpoint first
    when that changes anything), and return the review with that linking's report."""
    store = ctx.require(scope)
    model: str | None
    if embed:
        model, warning = _embed_backlog(ctx, store, scope)
        if warning and note is not None:
            note(warning)
    else:
        model = _model(ctx)
    review = Review(store, scope)
    links = link_new(
        store,
        model=model,
        limit=None,
        wait_for_vectors=False,
        stream_vectors=False,
        checkpoint=review.ensure_checkpoint,
    )
    return review, links


def listing(ctx: Context, scope: Scope) -> dict[str, Any]:
    """What a review would show, changing nothing (``--json``)."""
    store = ctx.require(scope)
    review = Review(store, scope)
    state = store.upkeep_state()
    return {
        "scope": scope,
        "store": store.location,
        "candidates": [v.to_dict() for v in review.candidates()],
        "suggested_edges": [v.to_dict() for v in review.suggestions()],
        "unlinked": store.count_after(state.linked_seq),
        "checkpoints": [p.name for p in checkpoints(store)],
    }
