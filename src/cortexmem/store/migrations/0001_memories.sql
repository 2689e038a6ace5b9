-- Memories, the typed graph between them, and the full-text index kept in sync by triggers.

CREATE TABLE memories (
    seq              INTEGER PRIMARY KEY,            -- stable rowid for the FTS5 index
    id               TEXT    NOT NULL UNIQUE,
    content          TEXT    NOT NULL,
    summary          TEXT    NOT NULL DEFAULT '',
    memory_type      TEXT    NOT NULL CHECK (memory_type IN ('architecture', 'decision',
                         'pattern', 'gotcha', 'context', 'progress', 'code_description', 'code')),
    category         TEXT    NOT NULL CHECK (category IN ('project', 'global')),
    confidence       REAL    NOT NULL CHECK (confidence BETWEEN 0 AND 1),
    priority         INTEGER NOT NULL CHECK (priority BETWEEN 1 AND 10),
    pinned           INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
    source_type      TEXT    NOT NULL,
    source_session   TEXT,
    source_branch    TEXT,
    source_cwd       TEXT,
    source_commit    TEXT,
    tags             TEXT    NOT NULL DEFAULT '[]',   -- JSON array, also indexed as text
    access_count     INTEGER NOT NULL DEFAULT 0 CHECK (access_count >= 0),
    last_accessed_at TEXT,
    created_at       TEXT    NOT NULL,
    updated_at       TEXT    NOT NULL,
    status           TEXT    NOT NULL DEFAULT 'active'
                         CHECK (status IN ('active', 'superseded', 'archived', 'pruned')),
    content_hash     TEXT    NOT NULL
);
CREATE INDEX memories_status_type ON memories (status, memory_type);
CREATE INDEX memories_content_hash ON memories (content_hash);
CREATE INDEX memories_branch ON memories (source_branch);
CREATE INDEX memories_access ON memories (access_count);
CREATE INDEX memories_created ON memories (created_at);

CREATE VIRTUAL TABLE memories_fts USING fts5 (
    content, summary, tags,
    content = 'memories', content_rowid = 'seq',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, content, summary, tags)
    VALUES (new.seq, new.content, new.summary, new.tags);
END;
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, content, summary, tags)
    VALUES ('delete', old.seq, old.content, old.summary, old.tags);
END;
CREATE TRIGGER memories_fts_update AFTER UPDATE OF content, summary, tags ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, content, summary, tags)
    VALUES ('delete', old.seq, old.content, old.summary, old.tags);
    INSERT INTO memories_fts (rowid, content, summary, tags)
    VALUES (new.seq, new.content, new.summary, new.tags);
END;

CREATE TABLE edges (
    id            TEXT    NOT NULL PRIMARY KEY,
    source_id     TEXT    NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    target_id     TEXT    NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    relation_type TEXT    NOT NULL CHECK (relation_type IN ('relates_to', 'derived_from',
                      'contradicts', 'exemplifies', 'refines', 'supersedes', 'source_of',
                      'generalizes')),
    strength      REAL    NOT NULL CHECK (strength BETWEEN 0 AND 1),
    bidirectional INTEGER NOT NULL DEFAULT 0 CHECK (bidirectional IN (0, 1)),
    status        TEXT    NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suggested')),
    created_at    TEXT    NOT NULL,
    UNIQUE (source_id, target_id, relation_type),
    CHECK (source_id <> target_id)
);
CREATE INDEX edges_target ON edges (target_id, status);
