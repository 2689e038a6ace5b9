-- Episodes also keep what a shell command that acted printed ('ran': an install's warning, the
-- version a tool reported, what a push did, under the command). The table is rebuilt as in 0016
-- (a CHECK constraint cannot change in place), every row, seq and id kept, the tables that
-- reference episodes set aside first.

CREATE TABLE episodes_next (
    seq             INTEGER PRIMARY KEY,
    id              TEXT    NOT NULL UNIQUE,
    role            TEXT    NOT NULL CHECK (role IN ('user', 'assistant', 'summary',
                        'subagent', 'tool_error', 'plan', 'written', 'read', 'ran')),
    text            TEXT    NOT NULL,
    session_id      TEXT,
    transcript_path TEXT,
    line            INTEGER,
    chunk           INTEGER NOT NULL DEFAULT 0,
    branch          TEXT,
    created_at      TEXT    NOT NULL,
    content_hash    TEXT    NOT NULL UNIQUE
);
INSERT INTO episodes_next (seq, id, role, text, session_id, transcript_path, line, chunk, branch,
                           created_at, content_hash)
    SELECT seq, id, role, text, session_id, transcript_path, line, chunk, branch, created_at,
           content_hash
    FROM episodes;

CREATE TABLE episode_embeddings_kept AS SELECT * FROM episode_embeddings;
CREATE TABLE memory_episodes_kept AS SELECT * FROM memory_episodes;
DROP TABLE memory_episodes;
DROP TABLE episode_embeddings;
DROP TABLE episodes;
ALTER TABLE episodes_next RENAME TO episodes;

CREATE INDEX episodes_session ON episodes (session_id);
CREATE INDEX episodes_line ON episodes (transcript_path, line);

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

CREATE TABLE episode_embeddings (
    episode_seq  INTEGER PRIMARY KEY REFERENCES episodes (seq) ON DELETE CASCADE,
    model        TEXT    NOT NULL,
    dim          INTEGER NOT NULL CHECK (dim > 0),
    vector       BLOB    NOT NULL CHECK (length(vector) = dim * 4),
    version      INTEGER NOT NULL,
    embedded_at  TEXT    NOT NULL
);
CREATE INDEX episode_embeddings_model_version ON episode_embeddings (model, version);
INSERT INTO episode_embeddings SELECT * FROM episode_embeddings_kept;
DROP TABLE episode_embeddings_kept;

CREATE TABLE memory_episodes (
    memory_id   TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    episode_id  TEXT NOT NULL REFERENCES episodes (id) ON DELETE CASCADE,
    PRIMARY KEY (memory_id, episode_id)
);
CREATE INDEX memory_episodes_episode ON memory_episodes (episode_id);
INSERT INTO memory_episodes SELECT * FROM memory_episodes_kept;
DROP TABLE memory_episodes_kept;
