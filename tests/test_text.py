from __future__ import annotations

from cortexmem.core.text import shorten, summarise


def test_summarise_takes_the_first_sentence():
    assert summarise("Use WAL. It allows readers during writes.") == "Use WAL."
    assert summarise("no  full\nstop here") == "no full stop here"


def test_shorten_cuts_at_a_word_boundary():
    assert shorten("alpha beta gamma", 100) == "alpha beta gamma"
    assert shorten("alpha beta gamma", 12) == "alpha beta…"
    assert len(shorten("x" * 50, 10)) == 10
