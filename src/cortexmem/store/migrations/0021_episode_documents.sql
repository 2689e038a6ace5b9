-- A whole read of a project document (a status note, a design doc) is one version of it; the
-- document's path is kept beside its chunks so recall can tell the newest version from older
-- ones (``Episode.document``). Episodes stored before this have none: which of their reads
-- were of the whole file was not kept, so none is taken for a version.
ALTER TABLE episodes ADD COLUMN document TEXT;
CREATE INDEX episodes_document ON episodes (document, created_at) WHERE document IS NOT NULL;
