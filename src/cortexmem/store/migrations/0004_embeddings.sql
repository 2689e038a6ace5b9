-- One vector per memory, with the model that made it. A memory whose content hash differs
-- from the one embedded (or whose vector came from another model) is in the backlog and gets
-- embedded again; `version` grows with every write so a cached matrix reloads only what changed.

CREATE TABLE embeddings (
    memory_seq   INTEGER PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
    model        TEXT    NOT NULL,
    dim          INTEGER NOT NULL CHECK (dim > 0),
    source_hash  TEXT    NOT NULL,
    vector       BLOB    NOT NULL CHECK (length(vector) = dim * 4),
    version      INTEGER NOT NULL,
    embedded_at  TEXT    NOT NULL
);
CREATE INDEX embeddings_model_version ON embeddings (model, version);
