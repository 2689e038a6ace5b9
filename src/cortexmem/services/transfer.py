"""Export and import of whole stores (JSONL, lossless; Markdown, for reading)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from cortexmem import __version__
from cortexmem.core.export_format import export_jsonl, export_markdown, parse_jsonl
from cortexmem.model import LESSON_STATUSES, utc_now
from cortexmem.services.context import Context, Scope
from cortexmem.store.protocols import ImportResult

# Lesson ids asked for their edges at a time (each is a query parameter, twice).
EDGE_BATCH = 500


def export_lines(ctx: Context, scope: Scope) -> Iterator[str]:
    store = ctx.require(scope)
    header = {
        "cortex_version": __version__,
        "schema_version": store.schema_version(),
        "scope": scope,
        "project": str(ctx.paths.root) if scope == "project" else None,
        "exported_at": utc_now(),
    }
    memories, edges, events = store.snapshot()
    episodes, links = list(store.iter_episodes()), list(store.iter_episode_links())
    lessons = list(store.iter_lessons(statuses=LESSON_STATUSES))
    timelines = [(lesson, store.lesson_history(lesson.id)) for lesson in lessons]
    ids = [lesson.id for lesson in lessons]
    lesson_edges = sorted({
        edge for at in range(0, len(ids), EDGE_BATCH)
        for edge in store.lesson_edges(ids[at : at + EDGE_BATCH])
    })  # fmt: skip
    return export_jsonl(header, memories, edges, events, episodes, links, timelines, lesson_edges,
                        lifecycle=store.lifecycle_marks(),
                        observations=store.iter_observations(),
                        sessions=store.learning_sessions())  # fmt: skip


def export_md(ctx: Context, scope: Scope) -> str:
    store = ctx.require(scope)
    title = f"Cortex memory — {ctx.paths.name}" if scope == "project" else "Cortex global memory"
    memories, edges, _ = store.snapshot()
    return export_markdown(title, memories, edges)


def exported_from(header: Mapping[str, Any]) -> Scope:
    """The store an export was taken from, as its header names it: ``global``, else (a project
    export, or one too old or hand-made to say) ``project``."""
    return "global" if header.get("scope") == "global" else "project"


def import_lines(
    ctx: Context, lines: Iterable[str], scope: Scope | None = None
) -> tuple[Scope, ImportResult]:
    """Validate everything first (raises ExportFormatError), then write in one transaction into
    ``scope``; by default into the store the export came from: a global export imported into
    the project store would hold its memories twice under the same ids (recall showed both,
    ``get`` and ``forget`` reached the project's copy only)."""
    parsed = parse_jsonl(lines)
    scope = scope or exported_from(parsed.header)
    return scope, ctx.writable(scope).import_records(
        parsed.memories,
        parsed.edges,
        parsed.events,
        episodes=parsed.episodes,
        episode_links=parsed.episode_links,
        lessons=parsed.lessons,
        lesson_history=parsed.lesson_history,
        lesson_edges=parsed.lesson_edges,
        lifecycle=parsed.lifecycle,
        observations=parsed.observations,
        sessions=parsed.sessions,
    )
