-- 0019 kept every tag with a colon out of the word search; a person's own tags can have one
-- (`--tag area:auth`). Only Cortex's markers are kept out now, by their prefixes
-- (`model.TAG_MARKERS`): event:, layer:, doc:, code:, lang:, role:, kind:, digest:. The index
-- holds less than the column on purpose: FTS5's content check ('integrity-check' with rank 1)
-- reports that difference; its structural check (rank 0) and PRAGMA integrity_check pass.

DROP TRIGGER memories_fts_insert;
DROP TRIGGER memories_fts_delete;
DROP TRIGGER memories_fts_update;

CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, content, summary, tags)
    VALUES (new.seq, new.content, new.summary,
            (SELECT coalesce(group_concat(value, ' '), '') FROM json_each(new.tags)
             WHERE substr(value, 1, instr(value, ':')) NOT IN
                   ('event:', 'layer:', 'doc:', 'code:', 'lang:', 'role:', 'kind:', 'digest:')));
END;
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, content, summary, tags)
    VALUES ('delete', old.seq, old.content, old.summary,
            (SELECT coalesce(group_concat(value, ' '), '') FROM json_each(old.tags)
             WHERE substr(value, 1, instr(value, ':')) NOT IN
                   ('event:', 'layer:', 'doc:', 'code:', 'lang:', 'role:', 'kind:', 'digest:')));
END;
CREATE TRIGGER memories_fts_update AFTER UPDATE OF content, summary, tags ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, content, summary, tags)
    VALUES ('delete', old.seq, old.content, old.summary,
            (SELECT coalesce(group_concat(value, ' '), '') FROM json_each(old.tags)
             WHERE substr(value, 1, instr(value, ':')) NOT IN
                   ('event:', 'layer:', 'doc:', 'code:', 'lang:', 'role:', 'kind:', 'digest:')));
    INSERT INTO memories_fts (rowid, content, summary, tags)
    VALUES (new.seq, new.content, new.summary,
            (SELECT coalesce(group_concat(value, ' '), '') FROM json_each(new.tags)
             WHERE substr(value, 1, instr(value, ':')) NOT IN
                   ('event:', 'layer:', 'doc:', 'code:', 'lang:', 'role:', 'kind:', 'digest:')));
END;

INSERT INTO memories_fts (memories_fts) VALUES ('delete-all');
INSERT INTO memories_fts (rowid, content, summary, tags)
    SELECT seq, content, summary,
           (SELECT coalesce(group_concat(value, ' '), '') FROM json_each(memories.tags)
            WHERE substr(value, 1, instr(value, ':')) NOT IN
                  ('event:', 'layer:', 'doc:', 'code:', 'lang:', 'role:', 'kind:', 'digest:'))
    FROM memories;
