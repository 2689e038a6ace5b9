-- What each document of the project lists: per document and decision, when a version of the
-- document last listed the decision and when a whole version last left it out ('' for never).
-- A decision stays withdrawn while every document that listed it left it out since; which came
-- later is a matter of these times, not of the order sessions were captured in.
CREATE TABLE document_listings (
    document   TEXT NOT NULL,
    decision   TEXT NOT NULL,
    listed_at  TEXT NOT NULL DEFAULT '',
    dropped_at TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (document, decision)
);
CREATE INDEX document_listings_decision ON document_listings (decision);
