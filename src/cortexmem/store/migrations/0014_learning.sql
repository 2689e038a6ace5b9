-- The learning loop (stages 2-5) and the human review: a shell command's form on each
-- observation, the sessions the loop must not learn from, the instincts and the generated
-- rules they became, the suggestions waiting for a person, and the audit log of what a person
-- applied. Self-contained: it only adds.

ALTER TABLE observations ADD COLUMN command TEXT;
CREATE INDEX observations_session ON observations (session_id, at);

-- Each session as the loop sees it: whether a program started it (Cortex's own, scripted
-- `claude -p` / SDK runs are not learned from; entrypoint NULL: not looked at yet) and the
-- tokens its answers cost (a lesson's actual effort).
CREATE TABLE learning_sessions (
    session_id   TEXT    PRIMARY KEY,
    automated    INTEGER NOT NULL CHECK (automated IN (0, 1)),
    entrypoint   TEXT,
    seen_at      TEXT    NOT NULL,
    tokens       INTEGER NOT NULL DEFAULT 0 CHECK (tokens >= 0)
);

CREATE TABLE instincts (
    key             TEXT    PRIMARY KEY,
    kind            TEXT    NOT NULL CHECK (kind IN ('chain', 'retry', 'fix')),
    label           TEXT    NOT NULL,
    rule            TEXT    NOT NULL,
    confidence      REAL    NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
    score           REAL    NOT NULL CHECK (score >= 0 AND score <= 1),
    observations    INTEGER NOT NULL CHECK (observations >= 0),
    sessions        INTEGER NOT NULL CHECK (sessions >= 0),
    total_sessions  INTEGER NOT NULL CHECK (total_sessions >= 0),
    first_seen      TEXT    NOT NULL,
    last_seen       TEXT    NOT NULL,
    status          TEXT    NOT NULL CHECK (status IN ('active', 'promoted', 'archived')),
    updated_at      TEXT    NOT NULL,
    promoted_at     TEXT
);
CREATE INDEX instincts_status ON instincts (status, confidence);

-- Small facts the loop keeps between runs (when it last ran, how far it had read).
CREATE TABLE learning_state (
    key    TEXT PRIMARY KEY,
    value  TEXT NOT NULL
);

CREATE TABLE suggestions (
    id           TEXT    PRIMARY KEY,
    destination  TEXT    NOT NULL CHECK (destination IN
                   ('claude_md', 'settings_json', 'memory', 'brain_inbox', 'skill', 'tool')),
    target       TEXT    NOT NULL,
    title        TEXT    NOT NULL,
    text         TEXT    NOT NULL,
    rationale    TEXT    NOT NULL,
    source       TEXT    NOT NULL,
    key          TEXT    NOT NULL,
    before       TEXT    NOT NULL DEFAULT '',
    after        TEXT    NOT NULL DEFAULT '',
    evidence     TEXT    NOT NULL DEFAULT '[]',
    recurrence   INTEGER NOT NULL DEFAULT 1 CHECK (recurrence >= 0),
    status       TEXT    NOT NULL DEFAULT 'pending'
                   CHECK (status IN ('pending', 'applied', 'refused', 'modified')),
    created_at   TEXT    NOT NULL,
    decided_at   TEXT,
    drafted_by   TEXT    NOT NULL DEFAULT 'template'
);
-- One suggestion per proposed change: the same key is never queued twice.
CREATE UNIQUE INDEX suggestions_key ON suggestions (key);
CREATE INDEX suggestions_pending ON suggestions (status, recurrence);

-- Who applied what, when, where, with the diff (append-only).
CREATE TABLE audit_log (
    id             INTEGER PRIMARY KEY,
    at             TEXT    NOT NULL,
    who            TEXT    NOT NULL,
    action         TEXT    NOT NULL,
    suggestion_id  TEXT,
    target         TEXT,
    diff           TEXT    NOT NULL DEFAULT '',
    backup         TEXT
);
