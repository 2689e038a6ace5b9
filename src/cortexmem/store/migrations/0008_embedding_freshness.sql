-- A vector stands for the text that was embedded: the memory's type, content and summary, and
-- the project's name that labels every vector of a store (ai/text.py). The content hash covers
-- type and content; a changed summary marks the vector stale here (source_hash = ''), so the
-- embedding backlog takes the memory again while recall keeps using the old vector until the
-- new one is written. The label a model's vectors were made with is kept per model: when the
-- project's name changes, ``relabel_embeddings`` marks all of them stale.

CREATE TRIGGER memories_summary_stale AFTER UPDATE OF summary ON memories
WHEN old.summary IS NOT new.summary BEGIN
    UPDATE embeddings SET source_hash = '' WHERE memory_seq = new.seq;
END;

CREATE TABLE embedding_labels (
    model  TEXT NOT NULL PRIMARY KEY,
    label  TEXT NOT NULL
);
