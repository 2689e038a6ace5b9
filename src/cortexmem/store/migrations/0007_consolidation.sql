-- Graph upkeep and consolidation (services.links, services.consolidate): pairs of memories
-- proposed for a merge and what a person decided about them, suggested edges a person
-- rejected (so they are not suggested again), and where automatic linking has got to.

-- One row per unordered pair (a_id < b_id). 'pending' pairs wait for a person; 'rejected'
-- pairs are never proposed again; 'merged' pairs are history.
CREATE TABLE merge_candidates (
    a_id       TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    b_id       TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    jaccard    REAL NOT NULL CHECK (jaccard BETWEEN 0 AND 1),
    cosine     REAL CHECK (cosine IS NULL OR cosine BETWEEN -1 AND 1),
    status     TEXT NOT NULL DEFAULT 'pending'
                   CHECK (status IN ('pending', 'merged', 'rejected')),
    created_at TEXT NOT NULL,
    decided_at TEXT,
    PRIMARY KEY (a_id, b_id),
    CHECK (a_id < b_id)
);
CREATE INDEX merge_candidates_status ON merge_candidates (status);
CREATE INDEX merge_candidates_b ON merge_candidates (b_id);

-- A suggested edge a person rejected (deleted); auto-linking does not suggest it again.
CREATE TABLE rejected_links (
    a_id          TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    b_id          TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    relation_type TEXT NOT NULL,
    rejected_at   TEXT NOT NULL,
    PRIMARY KEY (a_id, b_id, relation_type),
    CHECK (a_id < b_id)
);
CREATE INDEX rejected_links_b ON rejected_links (b_id);

-- A single row: memories up to `linked_seq` have been linked to their neighbours;
-- `extractions` counts captures that added memories since the last automatic run;
-- `active_at_last_run` is what the "more than 80 active" trigger compares with.
CREATE TABLE upkeep_state (
    id                 INTEGER PRIMARY KEY CHECK (id = 1),
    linked_seq         INTEGER NOT NULL DEFAULT 0 CHECK (linked_seq >= 0),
    extractions        INTEGER NOT NULL DEFAULT 0 CHECK (extractions >= 0),
    active_at_last_run INTEGER NOT NULL DEFAULT 0 CHECK (active_at_last_run >= 0),
    last_run_at        TEXT
);
INSERT INTO upkeep_state (id) VALUES (1);
