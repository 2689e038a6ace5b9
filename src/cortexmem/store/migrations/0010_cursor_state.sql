-- What the extractor carries between entries (calls awaiting results, failures awaiting their
-- fix, tasks awaiting updates), saved with the cursor so the next pass goes on from it.
ALTER TABLE extraction_cursors ADD COLUMN extractor_state TEXT NOT NULL DEFAULT '';
