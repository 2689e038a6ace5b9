"""Turn anything a person types into a safe, useful SQLite FTS5 query.

Two failure modes seen in earlier systems shape this: raw user text passed to MATCH raises on
FTS5 syntax (``config.json``, ``a-b``, ``"``, ``?``, ``AND``), and an implicit AND of every word
makes natural-language questions match nothing. So every word becomes a quoted term (quotes make
FTS5 treat it as plain text), terms are OR-ed and left to BM25 to rank, common function words are
dropped when anything else remains, and a chunk that punctuation splits into several words
(``src/a/b.py``) is also searched as a phrase so an exact path ranks first.
"""

from __future__ import annotations

import re

from cortexmem.core.text import clean_text

MAX_TERMS = 32

_WORD = re.compile(r"[^\W_]+", re.UNICODE)

STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    """.split()
)


def query_terms(text: str) -> tuple[list[str], list[list[str]]]:
    """Split text into lower-case terms (stopwords dropped unless nothing else is left) and
    the multi-word phrases that punctuation-joined chunks form."""
    terms: list[str] = []
    phrases: list[list[str]] = []
    for chunk in clean_text(text).split():
        words = [w.lower() for w in _WORD.findall(chunk)]
        if len(words) > 1:
            phrases.append(words)
        terms.extend(words)
    content = [t for t in terms if t not in STOPWORDS] or terms
    return _unique(content)[:MAX_TERMS], phrases[:MAX_TERMS]


def to_fts_query(text: str) -> str | None:
    """The FTS5 MATCH expression for ``text``, or None when it holds no searchable word."""
    terms, phrases = query_terms(text)
    parts = [f'"{t}"' for t in terms]
    parts += ['"' + " ".join(p) + '"' for p in phrases]
    return " OR ".join(_unique(parts)) or None


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))
