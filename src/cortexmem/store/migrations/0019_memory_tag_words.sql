-- The word search reads a memory's own tags (`--tag python`), not the markers Cortex files it
-- under (`doc:/home/me/app/status.md`, `event:decision`, `layer:keyword`, `code:src/a.py::f`):
-- a document's path put "home" into every decision it listed, and a question about the home
-- machine ranked them first. A marker has a colon; a person's tag does not. The same filter
-- runs when a row is indexed and when it is taken out (FTS5 removes exactly what was added),
-- and the index is made again from the rows (never with 'rebuild', which reads the column
-- whole).

DROP TRIGGER memories_fts_insert;
DROP TRIGGER memories_fts_delete;
DROP TRIGGER memories_fts_update;

CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, content, summary, tags)
    VALUES (new.seq, new.content, new.summary,
            (SELECT coalesce(group_concat(value, ' '), '') FROM json_each(new.tags)
             WHERE value NOT LIKE '%:%'));
END;
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, content, summary, tags)
    VALUES ('delete', old.seq, old.content, old.summary,
            (SELECT coalesce(group_concat(value, ' '), '') FROM json_each(old.tags)
             WHERE value NOT LIKE '%:%'));
END;
CREATE TRIGGER memories_fts_update AFTER UPDATE OF content, summary, tags ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, content, summary, tags)
    VALUES ('delete', old.seq, old.content, old.summary,
            (SELECT coalesce(group_concat(value, ' '), '') FROM json_each(old.tags)
             WHERE value NOT LIKE '%:%'));
    INSERT INTO memories_fts (rowid, content, summary, tags)
    VALUES (new.seq, new.content, new.summary,
            (SELECT coalesce(group_concat(value, ' '), '') FROM json_each(new.tags)
             WHERE value NOT LIKE '%:%'));
END;

INSERT INTO memories_fts (memories_fts) VALUES ('delete-all');
INSERT INTO memories_fts (rowid, content, summary, tags)
    SELECT seq, content, summary,
           (SELECT coalesce(group_concat(value, ' '), '') FROM json_each(memories.tags)
            WHERE value NOT LIKE '%:%')
    FROM memories;
