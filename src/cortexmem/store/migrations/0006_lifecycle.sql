-- The memory lifecycle (core.decay, core.lifecycle): how far decay has been applied to each
-- memory's confidence, since when it has been below the archive threshold, when the lifecycle
-- archived it, and a log of lifecycle passes (the Stop hook runs one at most once a day).

ALTER TABLE memories ADD COLUMN decayed_at TEXT;   -- NULL: never decayed (decay from created_at)
ALTER TABLE memories ADD COLUMN below_since TEXT;  -- NULL: confidence not below the threshold
ALTER TABLE memories ADD COLUMN archived_at TEXT;  -- NULL: not archived by the lifecycle

CREATE INDEX memories_lifecycle_archived ON memories (archived_at) WHERE archived_at IS NOT NULL;

-- A status change made by anything but the lifecycle (which always sets or clears archived_at
-- with it: `cortex forget`, re-indexing, an import) makes the memory no longer the lifecycle's
-- to restore or prune, and restarts its below-threshold clock.
CREATE TRIGGER memories_status_by_hand AFTER UPDATE OF status ON memories
    WHEN old.status IS NOT new.status AND new.archived_at IS old.archived_at
        AND (new.archived_at IS NOT NULL OR new.below_since IS NOT NULL)
BEGIN
    UPDATE memories SET archived_at = NULL, below_since = NULL WHERE seq = new.seq;
END;

CREATE TABLE lifecycle_runs (
    seq         INTEGER PRIMARY KEY,
    ran_at      TEXT    NOT NULL,   -- the pass's "now"
    finished_at TEXT    NOT NULL,   -- wall clock
    duration_ms INTEGER NOT NULL CHECK (duration_ms >= 0),
    decayed     INTEGER NOT NULL DEFAULT 0,
    archived    INTEGER NOT NULL DEFAULT 0,
    restored    INTEGER NOT NULL DEFAULT 0,
    pruned      INTEGER NOT NULL DEFAULT 0,
    backup      TEXT                -- the backup taken before pruning, if any
);
CREATE INDEX lifecycle_runs_ran_at ON lifecycle_runs (ran_at);
