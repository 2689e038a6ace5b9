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

-- What the events already say (stores written before this table kept a listing's document in
-- the event): the latest listing and the latest drop of each.
INSERT INTO document_listings (document, decision, listed_at, dropped_at)
    SELECT json_extract(payload, '$.document'), content,
           max(CASE WHEN kind = 'decision' THEN created_at ELSE '' END),
           max(CASE WHEN kind = 'withdrawn' THEN created_at ELSE '' END)
    FROM events
    WHERE kind IN ('decision', 'withdrawn') AND json_extract(payload, '$.document') IS NOT NULL
    GROUP BY json_extract(payload, '$.document'), content;
