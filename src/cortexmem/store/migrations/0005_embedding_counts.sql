-- How many vectors each model has and the highest version written, kept by triggers: recall
-- asks on every query whether its cached matrix is current, and counting 100k rows each time
-- cost more than the search itself.

CREATE TABLE embedding_counts (
    model    TEXT    NOT NULL PRIMARY KEY,
    count    INTEGER NOT NULL DEFAULT 0,
    version  INTEGER NOT NULL DEFAULT 0
);

INSERT INTO embedding_counts (model, count, version)
    SELECT model, count(*), max(version) FROM embeddings GROUP BY model;

CREATE TRIGGER embeddings_count_insert AFTER INSERT ON embeddings BEGIN
    INSERT INTO embedding_counts (model, count, version) VALUES (new.model, 1, new.version)
        ON CONFLICT (model) DO UPDATE SET count = count + 1,
            version = max(version, excluded.version);
END;

CREATE TRIGGER embeddings_count_delete AFTER DELETE ON embeddings BEGIN
    UPDATE embedding_counts SET count = count - 1 WHERE model = old.model;
END;

CREATE TRIGGER embeddings_count_update AFTER UPDATE ON embeddings BEGIN
    UPDATE embedding_counts SET count = count - 1 WHERE model = old.model;
    INSERT INTO embedding_counts (model, count, version) VALUES (new.model, 1, new.version)
        ON CONFLICT (model) DO UPDATE SET count = count + 1,
            version = max(version, excluded.version);
END;
