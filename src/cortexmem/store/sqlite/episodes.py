"""Episodes in SQLite: what was said, its full-text index, its vectors and its links to the
memories drawn from it (``EpisodeStore``). Mixed into ``SQLiteStore``."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from typing import Any, Final

from cortexmem.core.fts_query import to_fts_query
from cortexmem.core.redact import redact, redact_source
from cortexmem.model import DocumentVersion, Episode, Event, Memory
from cortexmem.store.protocols import EpisodeCounts, ImportResult
from cortexmem.store.sqlite.tx import Transactions
from cortexmem.store.sqlite.vector_rows import load_vectors, put_vectors, vector_state

# Storage per session stays bounded: past this many chunks a session's episodes are dropped.
SESSION_CAP: Final = 2_000
# Documents looked up at once (a recall's candidates hold a few).
MAX_DOCUMENTS: Final = 400

EPISODE_COLUMNS: Final = (
    "id, role, text, session_id, transcript_path, line, chunk, branch, created_at, document"
)
INSERT_EPISODE: Final = (
    f"INSERT OR IGNORE INTO episodes ({EPISODE_COLUMNS}, content_hash) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def episode_row(e: Episode) -> tuple[Any, ...]:
    return (
        e.id, e.role, e.text, e.session_id, e.transcript_path, e.line, e.chunk, e.branch,
        e.created_at, e.document, e.content_hash,
    )  # fmt: skip


def row_to_episode(r: Sequence[Any]) -> Episode:
    return Episode(
        id=r[0], role=r[1], text=r[2], session_id=r[3], transcript_path=r[4], line=r[5],
        chunk=int(r[6]), branch=r[7], created_at=r[8], document=r[9],
    )  # fmt: skip


def insert_episodes(
    conn: sqlite3.Connection, episodes: Sequence[Episode], cap: int = SESSION_CAP
) -> int:
    """Insert ``episodes`` not stored yet (by content hash), at most ``cap`` per session."""
    room: dict[str | None, int] = {}
    added = 0
    for episode in episodes:
        episode = redact_source(episode)
        session = episode.session_id
        if session not in room:
            had = conn.execute(
                "SELECT count(*) FROM episodes WHERE session_id IS ?", (session,)
            ).fetchone()[0]
            room[session] = cap - int(had)
        if room[session] <= 0:
            continue
        if adopt_unversioned(conn, episode):
            continue
        if conn.execute(INSERT_EPISODE, episode_row(episode)).rowcount:
            added += 1
            room[session] -= 1
    return added


def adopt_unversioned(conn: sqlite3.Connection, episode: Episode) -> bool:
    """A chunk of a whole read stored before reads named their document (a transcript read
    again from its start, an export imported) is this episode: it gets the document's name
    rather than a twin that names it (each read's chunks hash with where they were read)."""
    if not episode.document:
        return False
    return bool(
        conn.execute(
            "UPDATE episodes SET document = ?, content_hash = ? WHERE content_hash = ? "
            "AND document IS NULL AND transcript_path IS ? AND line IS ?",
            (episode.document, episode.content_hash, replace(episode, document=None).content_hash,
             episode.transcript_path, episode.line),
        ).rowcount
    )  # fmt: skip


def link_memories(
    conn: sqlite3.Connection, memories: Sequence[Memory], events: Sequence[Event]
) -> int:
    """Link each memory to the episodes of the transcript lines its events came from (a memory
    is made from an event of the same session at the same moment: the entry's time)."""
    lines: dict[tuple[str | None, str], set[tuple[str, int]]] = {}
    for e in events:
        p = e.provenance
        if p.transcript_path and p.line is not None:
            lines.setdefault((p.session_id, e.created_at), set()).add((p.transcript_path, p.line))
    linked = 0
    for m in memories:
        for path, line in sorted(lines.get((m.source_session, m.created_at), ())):
            linked += conn.execute(
                "INSERT OR IGNORE INTO memory_episodes (memory_id, episode_id) "
                "SELECT ?, id FROM episodes WHERE transcript_path = ? AND line = ?",
                (m.id, path, line),
            ).rowcount
    return linked


def import_episodes(
    conn: sqlite3.Connection,
    episodes: Sequence[Episode],
    links: Sequence[tuple[str, str]],
    result: ImportResult,
) -> None:
    """Episodes and their memory links from an export, idempotently: an episode already stored
    (same content hash, whatever its id) is the one its links are moved onto; a link to a memory
    or an episode this store does not hold is skipped and said."""
    stored_as: dict[str, str] = {}
    for episode in episodes:
        episode = redact_source(replace(episode, text=redact(episode.text)))
        adopt_unversioned(conn, episode)
        result.episodes_added += conn.execute(INSERT_EPISODE, episode_row(episode)).rowcount
        row = conn.execute(
            "SELECT id FROM episodes WHERE content_hash = ?", (episode.content_hash,)
        ).fetchone()
        if row is not None:
            stored_as[episode.id] = str(row[0])
    for memory_id, episode_id in links:
        target = stored_as.get(episode_id, episode_id)
        added = conn.execute(
            "INSERT OR IGNORE INTO memory_episodes (memory_id, episode_id) "
            "SELECT ?, ? WHERE EXISTS (SELECT 1 FROM memories WHERE id = ?) "
            "AND EXISTS (SELECT 1 FROM episodes WHERE id = ?)",
            (memory_id, target, memory_id, target),
        ).rowcount
        if added:
            result.episode_links_added += 1
        elif not conn.execute(
            "SELECT 1 FROM memory_episodes WHERE memory_id = ? AND episode_id = ?",
            (memory_id, target),
        ).fetchone():
            result.skipped.append(f"link {memory_id} ↔ {episode_id}: an end is not in this store")


def stale_episode_vectors(conn: sqlite3.Connection, model: str) -> int:
    """Mark ``model``'s episode vectors stale (the project's name in their embedding text
    changed): a blank ``embedded_at`` puts them in the backlog, as a blank ``source_hash`` does
    a memory's, while recall keeps reading them until the new vector replaces each one."""
    return conn.execute(
        "UPDATE episode_embeddings SET embedded_at = '' WHERE model = ? AND embedded_at != ''",
        (model,),
    ).rowcount


class EpisodeRooms(Transactions):
    """The ``EpisodeStore`` half of ``SQLiteStore``."""

    def add_episodes(self, episodes: Sequence[Episode]) -> int:
        episodes = list(episodes)
        return self.write(lambda conn: insert_episodes(conn, episodes)) if episodes else 0

    def get_episode(self, episode_id: str) -> Episode | None:
        row = self.read(
            lambda conn: conn.execute(
                f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE id = ?", (episode_id,)
            ).fetchone()
        )
        return None if row is None else row_to_episode(row)

    def iter_episodes(self, session_id: str | None = None) -> Iterator[Episode]:
        sql = f"SELECT {EPISODE_COLUMNS} FROM episodes"
        params: tuple[Any, ...] = ()
        if session_id is not None:
            sql, params = sql + " WHERE session_id = ?", (session_id,)
        rows = self.read(lambda conn: conn.execute(sql + " ORDER BY seq", params).fetchall())
        for row in rows:
            yield row_to_episode(row)

    def episode_counts(self) -> EpisodeCounts:
        def op(conn: sqlite3.Connection) -> EpisodeCounts:
            n, sessions, size = conn.execute(
                "SELECT count(*), count(DISTINCT session_id), coalesce(sum(length(text)), 0) "
                "FROM episodes"
            ).fetchone()
            by_role = dict(
                conn.execute("SELECT role, count(*) FROM episodes GROUP BY role").fetchall()
            )
            return EpisodeCounts(int(n), int(sessions), int(size), by_role)

        return self.read(op)

    def search_episodes(self, query: str, limit: int) -> list[tuple[int, Episode, float]]:
        """``(seq, episode, relevance)`` best first by BM25 (relevance is higher-is-better)."""
        match = to_fts_query(query)
        if match is None or limit <= 0:
            return []
        sql = (
            f"SELECT e.seq, {', '.join('e.' + c.strip() for c in EPISODE_COLUMNS.split(','))}, "
            "bm25(episodes_fts) AS score FROM episodes_fts "
            "JOIN episodes e ON e.seq = episodes_fts.rowid WHERE episodes_fts MATCH ? "
            "ORDER BY score, e.seq DESC LIMIT ?"
        )
        rows = self.read(lambda conn: conn.execute(sql, (match, limit)).fetchall())
        return [(int(r[0]), row_to_episode(r[1:11]), -float(r[11])) for r in rows]

    def newest_versions(
        self, documents: Iterable[str]
    ) -> dict[tuple[str, str | None], DocumentVersion]:
        """The newest whole read of each of ``documents`` on each branch (by time, then by
        the order stored)."""
        wanted = list(dict.fromkeys(documents))[:MAX_DOCUMENTS]
        if not wanted:
            return {}
        marks = ", ".join("?" * len(wanted))
        rows = self.read(
            lambda conn: conn.execute(
                "SELECT document, branch, created_at, transcript_path, line FROM episodes "
                f"WHERE document IN ({marks}) ORDER BY created_at, seq",
                wanted,
            ).fetchall()
        )
        # ordered oldest first: the last row of a document and branch stays
        return {(str(r[0]), r[1]): DocumentVersion(str(r[2]), r[3], r[4]) for r in rows}

    def episodes_by_seq(self, seqs: Iterable[int]) -> dict[int, Episode]:
        wanted = list(dict.fromkeys(int(s) for s in seqs))
        if not wanted:
            return {}
        marks = ", ".join("?" * len(wanted))
        rows = self.read(
            lambda conn: conn.execute(
                f"SELECT seq, {EPISODE_COLUMNS} FROM episodes WHERE seq IN ({marks})", wanted
            ).fetchall()
        )
        return {int(r[0]): row_to_episode(r[1:]) for r in rows}

    def episodes_of_memory(self, memory_id: str) -> list[Episode]:
        rows = self.read(
            lambda conn: conn.execute(
                f"SELECT {', '.join('e.' + c.strip() for c in EPISODE_COLUMNS.split(','))} "
                "FROM memory_episodes l JOIN episodes e ON e.id = l.episode_id "
                "WHERE l.memory_id = ? ORDER BY e.seq",
                (memory_id,),
            ).fetchall()
        )
        return [row_to_episode(r) for r in rows]

    def link_episodes(self, memories: Sequence[Memory], events: Sequence[Event]) -> int:
        memories, events = list(memories), list(events)
        if not memories or not events:
            return 0
        return self.write(lambda conn: link_memories(conn, memories, events))

    def memories_of_session(self, session_id: str) -> list[str]:
        rows = self.read(
            lambda conn: conn.execute(
                "SELECT id FROM memories WHERE source_session = ? AND status = 'active' "
                "ORDER BY id",
                (session_id,),
            ).fetchall()
        )
        return [str(r[0]) for r in rows]

    def iter_episode_links(self) -> Iterator[tuple[str, str]]:
        rows = self.read(
            lambda conn: conn.execute(
                "SELECT memory_id, episode_id FROM memory_episodes ORDER BY memory_id, episode_id"
            ).fetchall()
        )
        for memory_id, episode_id in rows:
            yield str(memory_id), str(episode_id)

    def memories_of_episode(self, episode_id: str) -> list[str]:
        rows = self.read(
            lambda conn: conn.execute(
                "SELECT memory_id FROM memory_episodes WHERE episode_id = ? ORDER BY memory_id",
                (episode_id,),
            ).fetchall()
        )
        return [str(r[0]) for r in rows]

    # ----------------------------------------------------------------- vectors

    # A vector whose ``embedded_at`` is blank was made under another project name (see
    # ``stale_episode_vectors``): it is in the backlog, and recall keeps using it meanwhile.
    _EP_BACKLOG: Final = (
        "FROM episodes e LEFT JOIN episode_embeddings v ON v.episode_seq = e.seq "
        "WHERE v.episode_seq IS NULL OR v.model != ? OR v.embedded_at = ''"
    )

    def episode_embedding_backlog(self, model: str, limit: int) -> list[tuple[int, Episode]]:
        sql = (
            f"SELECT e.seq, {', '.join('e.' + c.strip() for c in EPISODE_COLUMNS.split(','))} "
            f"{self._EP_BACKLOG} ORDER BY e.seq LIMIT ?"
        )
        rows = self.read(lambda conn: conn.execute(sql, (model, limit)).fetchall())
        return [(int(r[0]), row_to_episode(r[1:])) for r in rows]

    def episode_embedding_backlog_size(self, model: str) -> int:
        sql = f"SELECT count(*) {self._EP_BACKLOG}"
        return int(self.read(lambda conn: conn.execute(sql, (model,)).fetchone()[0]))

    def put_episode_embeddings(
        self, model: str, dim: int, items: Sequence[tuple[int, bytes]]
    ) -> int:
        if not items:
            return 0
        return self.write(
            lambda conn: put_vectors(
                conn, "episode_embeddings", "episode_seq", "episodes", model, dim, items
            )
        )

    def episode_embedding_state(self, model: str) -> tuple[int, int]:
        return self.read(lambda conn: vector_state(conn, "episode_embeddings", model))

    def load_episode_embeddings(
        self, model: str, after_version: int = 0
    ) -> list[tuple[int, int, str, bytes]]:
        """``(seq, version, role, vector bytes)`` of ``model`` written after ``after_version``."""
        return self.read(
            lambda conn: load_vectors(
                conn, "episode_embeddings", "episode_seq", "episodes", "role", model, after_version
            )
        )
