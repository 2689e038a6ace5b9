-- Lessons: what was learned from a failure and its fix, a correction, a refusal, a gotcha or a
-- success worth repeating (kind, trigger, the lesson, evidence, tier, judge counters, scope).
-- One row per lesson key: learning the same lesson again confirms it. The record itself is
-- JSON in ``data``; the columns beside it are what is filtered, ordered or searched on.

CREATE TABLE lessons (
    seq         INTEGER PRIMARY KEY,            -- stable rowid for the FTS5 index and vectors
    id          TEXT    NOT NULL UNIQUE,
    key         TEXT    NOT NULL UNIQUE,
    kind        TEXT    NOT NULL CHECK (kind IN ('failure', 'victory', 'correction')),
    tier        TEXT    NOT NULL CHECK (tier IN ('T3', 'T2', 'T1', 'T0')),
    status      TEXT    NOT NULL CHECK (status IN ('active', 'pending', 'superseded',
                    'archived')),
    text        TEXT    NOT NULL,
    search      TEXT    NOT NULL,                -- the lesson and its trigger's words
    data        TEXT    NOT NULL,
    created_at  TEXT    NOT NULL,
    updated_at  TEXT    NOT NULL
);
CREATE INDEX lessons_status_tier ON lessons (status, tier);

CREATE VIRTUAL TABLE lessons_fts USING fts5 (
    search,
    content = 'lessons', content_rowid = 'seq',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER lessons_fts_insert AFTER INSERT ON lessons BEGIN
    INSERT INTO lessons_fts (rowid, search) VALUES (new.seq, new.search);
END;
CREATE TRIGGER lessons_fts_delete AFTER DELETE ON lessons BEGIN
    INSERT INTO lessons_fts (lessons_fts, rowid, search) VALUES ('delete', old.seq, old.search);
END;
CREATE TRIGGER lessons_fts_update AFTER UPDATE OF search ON lessons BEGIN
    INSERT INTO lessons_fts (lessons_fts, rowid, search) VALUES ('delete', old.seq, old.search);
    INSERT INTO lessons_fts (rowid, search) VALUES (new.seq, new.search);
END;

-- One vector per lesson and model; a lesson whose text changes loses its vector.
CREATE TABLE lesson_embeddings (
    lesson_seq   INTEGER PRIMARY KEY REFERENCES lessons (seq) ON DELETE CASCADE,
    model        TEXT    NOT NULL,
    dim          INTEGER NOT NULL CHECK (dim > 0),
    vector       BLOB    NOT NULL CHECK (length(vector) = dim * 4),
    version      INTEGER NOT NULL,
    embedded_at  TEXT    NOT NULL
);
CREATE INDEX lesson_embeddings_model_version ON lesson_embeddings (model, version);
CREATE TRIGGER lessons_text_changed AFTER UPDATE OF search ON lessons BEGIN
    DELETE FROM lesson_embeddings WHERE lesson_seq = new.seq;
END;

-- How each lesson evolved: learned, confirmed, shown, judged, promoted, demoted, superseded.
CREATE TABLE lesson_history (
    id         INTEGER PRIMARY KEY,
    lesson_id  TEXT    NOT NULL REFERENCES lessons (id) ON DELETE CASCADE,
    at         TEXT    NOT NULL,
    what       TEXT    NOT NULL,
    detail     TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX lesson_history_lesson ON lesson_history (lesson_id, id);

-- The experience graph: generalizes, relates_to, supersedes.
CREATE TABLE lesson_edges (
    source_id  TEXT NOT NULL REFERENCES lessons (id) ON DELETE CASCADE,
    target_id  TEXT NOT NULL REFERENCES lessons (id) ON DELETE CASCADE,
    type       TEXT NOT NULL CHECK (type IN ('generalizes', 'relates_to', 'supersedes')),
    created_at TEXT NOT NULL,
    PRIMARY KEY (source_id, target_id, type)
);
CREATE INDEX lesson_edges_target ON lesson_edges (target_id);

-- Every warning shown before a tool call: never the same lesson twice in a session, at most a
-- budget per session; the judge's verdict on the call that followed is written here.
CREATE TABLE lesson_warnings (
    id          INTEGER PRIMARY KEY,
    session_id  TEXT    NOT NULL,
    lesson_id   TEXT    NOT NULL REFERENCES lessons (id) ON DELETE CASCADE,
    at          TEXT    NOT NULL,
    tool        TEXT    NOT NULL,
    action      TEXT    NOT NULL DEFAULT '',
    tool_use_id TEXT,
    outcome     TEXT,                             -- the call's result, when it is known
    verdict     TEXT CHECK (verdict IN ('FOLLOWED', 'IGNORED', 'IRRELEVANT', 'UNCLEAR')),
    reason      TEXT,
    judged_at   TEXT,
    UNIQUE (session_id, lesson_id)
);
CREATE INDEX lesson_warnings_unjudged ON lesson_warnings (verdict, id);
