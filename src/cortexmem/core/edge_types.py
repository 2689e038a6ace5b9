"""One alias table for edge types, for anything that comes from outside: a model's output, the
command line, the MCP ``traverse`` tool, an imported file.

A model asked for an edge type answers ``derives``, ``Related``, ``contradict`` or
``derived-from`` as often as the canonical name; an edge type that does not match is an edge
silently lost. Every such string goes through :func:`normalise_edge_type`: case, surrounding
space and ``-``/space separators are folded first, then the table maps the aliases. An unknown
type is an error, never a guess.

Only aliases that keep the direction of the relation are listed: ``superseded_by`` or
``refined_by`` would read the other way round, so they are unknown rather than mapped.
"""

from __future__ import annotations

import re
from typing import Final

from cortexmem.model import RELATION_TYPES

ALIASES: Final[dict[str, str]] = {
    # the seed's table
    "derives": "derived_from",
    "contradict": "contradicts",
    "related": "relates_to",
    "example": "exemplifies",
    "refine": "refines",
    "supersede": "supersedes",
    "source": "source_of",
    # the same words in their other common forms
    "derive": "derived_from",
    "derived": "derived_from",
    "derives_from": "derived_from",
    "contradiction": "contradicts",
    "relate": "relates_to",
    "relates": "relates_to",
    "related_to": "relates_to",
    "relate_to": "relates_to",
    "examples": "exemplifies",
    "example_of": "exemplifies",
    "exemplify": "exemplifies",
    "refinement": "refines",
    "generalize": "generalizes",
    "generalise": "generalizes",
    "generalises": "generalizes",
}

_SEPARATORS = re.compile(r"[\s\-]+")


class UnknownEdgeType(ValueError):
    """The text names no edge type (the message lists the known ones)."""


def _fold(text: str) -> str:
    return _SEPARATORS.sub("_", text.strip().lower()).strip("_")


def normalise_edge_type(text: str) -> str:
    """The canonical edge type for ``text`` (``"Derived-From "`` → ``"derived_from"``).

    Raises :class:`UnknownEdgeType` for anything that is neither a type nor a known alias.
    """
    if not isinstance(text, str):
        raise UnknownEdgeType(f"an edge type must be text; got {type(text).__name__}")
    key = _fold(text)
    if key in RELATION_TYPES:
        return key
    found = ALIASES.get(key)
    if found is None:
        raise UnknownEdgeType(f"unknown edge type {text!r}; use one of {', '.join(RELATION_TYPES)}")
    return found
