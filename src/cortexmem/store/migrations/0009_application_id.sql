-- Mark the file as a Cortex store (PRAGMA application_id, 'CRTX'), so a SQLite file that is
-- someone else's is never taken for one of ours.
PRAGMA application_id = 1129469016;
