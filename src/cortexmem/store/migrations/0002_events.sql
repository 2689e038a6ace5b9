-- The append-only event log that capture writes, extraction cursors, and a small key/value table.

CREATE TABLE events (
    seq             INTEGER PRIMARY KEY,
    id              TEXT    NOT NULL UNIQUE,
    kind            TEXT    NOT NULL,
    content         TEXT    NOT NULL,
    payload         TEXT    NOT NULL DEFAULT '{}',
    confidence      REAL    NOT NULL CHECK (confidence BETWEEN 0 AND 1),
    salience        REAL    NOT NULL CHECK (salience BETWEEN 0 AND 1),
    session_id      TEXT,
    transcript_path TEXT,
    line            INTEGER,
    branch          TEXT,
    commit_sha      TEXT,
    created_at      TEXT    NOT NULL,
    content_hash    TEXT    NOT NULL UNIQUE
);
CREATE INDEX events_kind ON events (kind, created_at);
CREATE INDEX events_session ON events (session_id);

CREATE TRIGGER events_append_only BEFORE UPDATE ON events BEGIN
    SELECT RAISE (ABORT, 'events are append-only');
END;

CREATE TABLE extraction_cursors (
    transcript_path TEXT    NOT NULL PRIMARY KEY,
    byte_offset     INTEGER NOT NULL CHECK (byte_offset >= 0),
    line            INTEGER NOT NULL CHECK (line >= 0),
    head_hash       TEXT    NOT NULL DEFAULT '',
    session_id      TEXT,
    updated_at      TEXT    NOT NULL
);

CREATE TABLE meta (
    key   TEXT NOT NULL PRIMARY KEY,
    value TEXT NOT NULL
);
