-- One cheap record per tool call (learning loop, stage 1): which tool, when, whether it worked,
-- how long it took and the two tools before it in the same session.

CREATE TABLE observations (
    seq          INTEGER PRIMARY KEY,
    session_id   TEXT    NOT NULL,
    tool         TEXT    NOT NULL,
    detail       TEXT,
    ok           INTEGER NOT NULL CHECK (ok IN (0, 1)),
    duration_ms  INTEGER CHECK (duration_ms IS NULL OR duration_ms >= 0),
    prev_tool    TEXT,
    prev2_tool   TEXT,
    tool_use_id  TEXT,
    at           TEXT    NOT NULL,
    branch       TEXT
);
CREATE UNIQUE INDEX observations_call ON observations (session_id, tool_use_id)
    WHERE tool_use_id IS NOT NULL;
CREATE INDEX observations_at ON observations (at);
CREATE INDEX observations_tool ON observations (tool, at);
