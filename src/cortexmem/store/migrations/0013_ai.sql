-- The AI façade's bookkeeping: every model call (the budget and the circuit breaker read it),
-- the work queued for the background worker, and how far each session has been distilled.

CREATE TABLE ai_calls (
    id             INTEGER PRIMARY KEY,
    at             TEXT    NOT NULL,
    use            TEXT    NOT NULL,
    provider       TEXT    NOT NULL,
    model          TEXT    NOT NULL,
    ok             INTEGER NOT NULL CHECK (ok IN (0, 1)),
    input_tokens   INTEGER NOT NULL DEFAULT 0 CHECK (input_tokens >= 0),
    output_tokens  INTEGER NOT NULL DEFAULT 0 CHECK (output_tokens >= 0),
    session_id     TEXT,
    error          TEXT
);
CREATE INDEX ai_calls_at ON ai_calls (at);

-- One job per (kind, session): a session that ends twice is queued once.
CREATE TABLE ai_jobs (
    id               INTEGER PRIMARY KEY,
    kind             TEXT    NOT NULL,
    session_id       TEXT    NOT NULL,
    transcript_path  TEXT,
    queued_at        TEXT    NOT NULL,
    attempts         INTEGER NOT NULL DEFAULT 0,
    last_error       TEXT,
    UNIQUE (kind, session_id)
);

-- The last transcript line of a session whose episodes were sent to the model.
CREATE TABLE distill_state (
    session_id     TEXT    PRIMARY KEY,
    last_line      INTEGER NOT NULL DEFAULT 0,
    distilled_at   TEXT    NOT NULL,
    memories       INTEGER NOT NULL DEFAULT 0,
    model          TEXT,
    input_tokens   INTEGER NOT NULL DEFAULT 0,
    output_tokens  INTEGER NOT NULL DEFAULT 0
);
