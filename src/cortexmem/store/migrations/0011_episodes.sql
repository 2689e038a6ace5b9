-- Episodes: what was said in a session (prompts, assistant text, compaction summaries,
-- subagent reports, failing tool output), redacted and chunked, with where it was read.
-- Deduplicated by content hash (role, text, session). Episodes are not memories: they never
-- decay, are never consolidated or linked as memories, and are not in the briefing.

CREATE TABLE episodes (
    seq             INTEGER PRIMARY KEY,            -- stable rowid for the FTS5 index
    id              TEXT    NOT NULL UNIQUE,
    role            TEXT    NOT NULL CHECK (role IN ('user', 'assistant', 'summary',
                        'subagent', 'tool_error')),
    text            TEXT    NOT NULL,
    session_id      TEXT,
    transcript_path TEXT,
    line            INTEGER,
    chunk           INTEGER NOT NULL DEFAULT 0,
    branch          TEXT,
    created_at      TEXT    NOT NULL,
    content_hash    TEXT    NOT NULL UNIQUE
);
CREATE INDEX episodes_session ON episodes (session_id);
CREATE INDEX episodes_line ON episodes (transcript_path, line);

CREATE VIRTUAL TABLE episodes_fts USING fts5 (
    text,
    content = 'episodes', content_rowid = 'seq',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER episodes_fts_insert AFTER INSERT ON episodes BEGIN
    INSERT INTO episodes_fts (rowid, text) VALUES (new.seq, new.text);
END;
CREATE TRIGGER episodes_fts_delete AFTER DELETE ON episodes BEGIN
    INSERT INTO episodes_fts (episodes_fts, rowid, text) VALUES ('delete', old.seq, old.text);
END;
CREATE TRIGGER episodes_fts_update AFTER UPDATE OF text ON episodes BEGIN
    INSERT INTO episodes_fts (episodes_fts, rowid, text) VALUES ('delete', old.seq, old.text);
    INSERT INTO episodes_fts (rowid, text) VALUES (new.seq, new.text);
END;

-- One vector per episode and model (the same embedding sync as memories, its own seq space).
CREATE TABLE episode_embeddings (
    episode_seq  INTEGER PRIMARY KEY REFERENCES episodes (seq) ON DELETE CASCADE,
    model        TEXT    NOT NULL,
    dim          INTEGER NOT NULL CHECK (dim > 0),
    vector       BLOB    NOT NULL CHECK (length(vector) = dim * 4),
    version      INTEGER NOT NULL,
    embedded_at  TEXT    NOT NULL
);
CREATE INDEX episode_embeddings_model_version ON episode_embeddings (model, version);

-- A memory extracted from a transcript line is derived from the episodes of that line.
CREATE TABLE memory_episodes (
    memory_id   TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    episode_id  TEXT NOT NULL REFERENCES episodes (id) ON DELETE CASCADE,
    PRIMARY KEY (memory_id, episode_id)
);
CREATE INDEX memory_episodes_episode ON memory_episodes (episode_id);
