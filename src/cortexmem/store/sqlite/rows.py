"""Rows <-> records for the SQLite store: the column lists, the INSERT statements and the
mappings every SQL module of the backend shares (public within ``store.sqlite``)."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from cortexmem.core.filters import MemoryFilter
from cortexmem.model import (
    BRANCH_SCOPED_TYPES,
    Edge,
    Event,
    ExtractionCursor,
    Memory,
    Observation,
    Provenance,
    SourceContext,
)

# Column weights for bm25(): content, summary, tags. Content weighs double: a summary repeats
# part of it, and on LoCoMo this lifts lexical recall@10 from 0.782 to 0.808 (bench/locomo.py).
BM25_WEIGHTS = (2.0, 1.0, 0.5)

MEMORY_COLUMNS = (
    "id, content, summary, memory_type, category, confidence, priority, pinned, source_type, "
    "source_session, source_branch, source_cwd, source_commit, tags, access_count, "
    "last_accessed_at, created_at, updated_at, status, content_hash"
)
MEMORY_SELECT = MEMORY_COLUMNS.replace("content_hash", "content_hash AS _hash")
INSERT_MEMORY = f"INSERT INTO memories ({MEMORY_COLUMNS}) VALUES ({', '.join('?' * 20)})"

# The memory columns qualified by the alias ``m`` (for joins).
MEMORY_SELECT_M = ", ".join("m." + c.strip() for c in MEMORY_SELECT.split(","))


def memory_to_row(m: Memory) -> tuple[Any, ...]:
    ctx = m.source_context
    return (
        m.id,
        m.content,
        m.summary,
        m.memory_type,
        m.category,
        m.confidence,
        m.priority,
        int(m.pinned),
        m.source_type,
        m.source_session,
        ctx.branch,
        ctx.cwd,
        ctx.commit,
        json.dumps(list(m.tags)),
        m.access_count,
        m.last_accessed_at,
        m.created_at,
        m.updated_at,
        m.status,
        m.content_hash,
    )


def row_to_memory(row: sqlite3.Row | tuple[Any, ...]) -> Memory:
    return Memory(
        id=row[0],
        content=row[1],
        summary=row[2],
        memory_type=row[3],
        category=row[4],
        confidence=row[5],
        priority=row[6],
        pinned=bool(row[7]),
        source_type=row[8],
        source_session=row[9],
        source_context=SourceContext(branch=row[10], cwd=row[11], commit=row[12]),
        tags=tuple(json.loads(row[13])),
        access_count=row[14],
        last_accessed_at=row[15],
        created_at=row[16],
        updated_at=row[17],
        status=row[18],
    )


def filter_sql(flt: MemoryFilter, alias: str = "m") -> tuple[str, list[Any]]:
    """SQL for ``core.filters.visible`` (a test checks the two agree)."""
    clauses: list[str] = []
    params: list[Any] = []
    if flt.statuses:
        clauses.append(f"{alias}.status IN ({', '.join('?' * len(flt.statuses))})")
        params += flt.statuses
    if flt.types:
        clauses.append(f"{alias}.memory_type IN ({', '.join('?' * len(flt.types))})")
        params += flt.types
    if flt.branch is not None:
        scoped = sorted(BRANCH_SCOPED_TYPES)
        clauses.append(
            f"({alias}.memory_type NOT IN ({', '.join('?' * len(scoped))}) "
            f"OR {alias}.source_branch IS NULL OR {alias}.source_branch = ?)"
        )
        params += [*scoped, flt.branch]
    return (" AND ".join(clauses) or "1"), params


EDGE_COLUMNS = (
    "id, source_id, target_id, relation_type, strength, bidirectional, status, created_at"
)
INSERT_EDGE = f"INSERT OR IGNORE INTO edges ({EDGE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
EVENT_COLUMNS = (
    "id, kind, content, payload, confidence, salience, session_id, transcript_path, line, "
    "branch, commit_sha, created_at"
)

INSERT_EVENT = (
    "INSERT OR IGNORE INTO events (id, kind, content, payload, confidence, salience, session_id, "
    "transcript_path, line, branch, commit_sha, created_at, content_hash) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def upsert_cursor(conn: sqlite3.Connection, cursor: ExtractionCursor) -> None:
    conn.execute(
        "INSERT INTO extraction_cursors (transcript_path, byte_offset, line, head_hash, "
        "session_id, updated_at, extractor_state) VALUES (?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (transcript_path) DO UPDATE SET byte_offset = excluded.byte_offset, "
        "line = excluded.line, head_hash = excluded.head_hash, "
        "session_id = excluded.session_id, updated_at = excluded.updated_at, "
        "extractor_state = excluded.extractor_state",
        (
            cursor.transcript_path,
            cursor.offset,
            cursor.line,
            cursor.head_hash,
            cursor.session_id,
            cursor.updated_at,
            cursor.state,
        ),
    )


OBSERVATION_COLUMNS = (
    "session_id, tool, detail, ok, duration_ms, prev_tool, prev2_tool, tool_use_id, at, branch, "
    "command"
)
INSERT_OBSERVATION = (
    f"INSERT OR IGNORE INTO observations ({OBSERVATION_COLUMNS}) VALUES ({', '.join('?' * 11)})"
)


def observation_row(o: Observation) -> tuple[Any, ...]:
    return (
        o.session_id, o.tool, o.detail, int(o.ok), o.duration_ms, o.prev_tool, o.prev2_tool,
        o.tool_use_id, o.at, o.branch, o.command,
    )  # fmt: skip


def event_row(e: Event) -> tuple[Any, ...]:
    p = e.provenance
    return (
        e.id,
        e.kind,
        e.content,
        json.dumps(e.payload, sort_keys=True),
        e.confidence,
        e.salience,
        p.session_id,
        p.transcript_path,
        p.line,
        p.branch,
        p.commit,
        e.created_at,
        e.content_hash,
    )


def row_to_event(row: tuple[Any, ...]) -> Event:
    return Event(
        id=row[0],
        kind=row[1],
        content=row[2],
        payload=json.loads(row[3]),
        confidence=row[4],
        salience=row[5],
        provenance=Provenance(
            session_id=row[6], transcript_path=row[7], line=row[8], branch=row[9], commit=row[10]
        ),
        created_at=row[11],
    )


def edge_row(e: Edge) -> tuple[Any, ...]:
    return (
        e.id,
        e.source_id,
        e.target_id,
        e.relation_type,
        e.strength,
        int(e.bidirectional),
        e.status,
        e.created_at,
    )


def row_to_edge(row: tuple[Any, ...]) -> Edge:
    return Edge(
        id=row[0],
        source_id=row[1],
        target_id=row[2],
        relation_type=row[3],
        strength=row[4],
        bidirectional=bool(row[5]),
        status=row[6],
        created_at=row[7],
    )


def row_to_observation(row: tuple[Any, ...]) -> Observation:
    return Observation(
        session_id=row[0], tool=row[1], detail=row[2], ok=bool(row[3]), duration_ms=row[4],
        prev_tool=row[5], prev2_tool=row[6], tool_use_id=row[7], at=row[8], branch=row[9],
        command=row[10],
    )  # fmt: skip


def row_to_cursor(row: tuple[Any, ...]) -> ExtractionCursor:
    return ExtractionCursor(
        transcript_path=row[0],
        offset=row[1],
        line=row[2],
        head_hash=row[3],
        session_id=row[4],
        updated_at=row[5],
        state=row[6] if len(row) > 6 else "",
    )
