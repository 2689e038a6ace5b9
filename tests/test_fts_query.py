from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cortexmem.core.fts_query import MAX_TERMS, query_terms, to_fts_query


@pytest.fixture(scope="module")
def fts():
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='porter unicode61')")
    conn.executemany(
        "INSERT INTO t (body) VALUES (?)",
        [
            ("settings live in config.json at the repository root",),
            ("the parser is src/a/b.py and it streams lines",),
            ("we decided to use SQLite WAL because of concurrent hooks",),
        ],
    )
    yield conn
    conn.close()


def hits(conn, text):
    query = to_fts_query(text)
    if query is None:
        return []
    return [r[0] for r in conn.execute("SELECT body FROM t WHERE t MATCH ?", (query,))]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("config.json", "config.json"),
        ("src/a/b.py", "src/a/b.py"),
        ("why did we choose sqlite?", "SQLite WAL"),
        ("what about the hooks???", "concurrent hooks"),
        ("deciding", "decided"),  # stemming: the porter tokenizer is on
        ('"unbalanced quote', None),
        ("NEAR(a b) AND OR NOT *", None),
    ],
)
def test_punctuation_and_questions_find_what_they_should(fts, text, expected):
    found = hits(fts, text)
    if expected is None:
        assert isinstance(found, list)
    else:
        assert any(expected in body for body in found), found


def test_terms_are_or_ed_and_stopwords_dropped():
    assert to_fts_query("what is the parser") == '"parser"'
    assert to_fts_query("the") == '"the"'  # only stopwords: keep them rather than nothing
    assert to_fts_query("x.y z") == '"x" OR "y" OR "z" OR "x y"'
    assert to_fts_query("   ") is None
    assert to_fts_query("?!/") is None


def test_term_count_is_bounded():
    terms, _ = query_terms(" ".join(f"word{i}" for i in range(500)))
    assert len(terms) == MAX_TERMS


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=200))
def test_any_text_is_a_valid_query(text):
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(a, b, tokenize='porter unicode61')")
    conn.execute("INSERT INTO t VALUES ('alpha beta', 'gamma')")
    query = to_fts_query(text)
    if query is not None:
        conn.execute("SELECT * FROM t WHERE t MATCH ?", (query,)).fetchall()
