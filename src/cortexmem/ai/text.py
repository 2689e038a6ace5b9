"""The exact text that gets embedded, and the hash that says whether it changed.

Format: the parts that are present, joined by one space::

    [<memory type>] [project:<project name>] <text>

    embedding_text("decision", "api", "Use WAL mode")   -> "[decision] [project:api] Use WAL mode"
    embedding_text(None, "api", "why WAL?")             -> "[project:api] why WAL?"   (a query)
    embedding_text("gotcha", None, "x")                 -> "[gotcha] x"               (global)
    embedding_text(None, None, "x")                     -> "x"

A query carries the project prefix but no type (the type is what is being searched for), so a
query and the memories of its project share a prefix. Runs of whitespace in the text become one
space (the model never sees whitespace, and the hash then ignores re-wrapping); ``[``, ``]`` and
line breaks in the type or project name are replaced so the prefix always reads the same.

A vector is therefore stale when any part of its embedding text changes: the memory's content
or type (its content hash changes), its summary (a store trigger marks the vector stale) or the
project's name (``relabel_embeddings`` marks every vector of the store stale). A memory whose
embedding text is unchanged is never embedded twice.
"""

from __future__ import annotations


def _label(value: str) -> str:
    return " ".join(value.replace("[", "(").replace("]", ")").split())


def embedding_text(memory_type: str | None, project: str | None, text: str) -> str:
    """``"[decision] [project:api] text"``; a query has no type: ``"[project:api] text"``."""
    parts = []
    if memory_type and _label(memory_type):
        parts.append(f"[{_label(memory_type)}]")
    if project and _label(project):
        parts.append(f"[project:{_label(project)}]")
    body = " ".join(text.split())
    if body:
        parts.append(body)
    return " ".join(parts)
