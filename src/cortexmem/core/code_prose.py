"""Prose-code pairing: find the units of a source file and describe each in words, offline.

Questions are asked in prose ("how do webhook retries back off?") while code is written in
identifiers; embedding the code itself matches poorly. So each unit (function, class, method)
becomes two memories: the code, stored raw, and a prose description built from what the author
already wrote in words: the name split into words, the signature, the docstring and the
comments. Recall finds the prose and returns the code with it (a ``source_of`` edge).

Python is read with ``ast`` (exact units, signatures and docstrings); other languages fall back
to one unit per file described by its leading comment block and the names it defines. Pure:
text in, units out.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass
from typing import Final

MAX_UNIT_CHARS: Final = 20_000
MAX_DESCRIPTION: Final = 1_200

_CAMEL: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|_+")
_DEFINITION: Final = re.compile(
    r"^\s*(?:export\s+)?(?:pub(?:\(\w+\))?\s+)?(?:async\s+)?"
    r"(?:function|func|fn|def|class|interface|struct|enum|trait|type|impl)\s+([A-Za-z_]\w*)",
    re.MULTILINE,
)
# ``\*+/?``: the `` */`` closing a block comment is a comment line with no words.
_LINE_COMMENT: Final = re.compile(r"^\s*(?://+|#+|--|;+|\*+/?|/\*+)\s?(.*?)\s*(?:\*/)?$")


@dataclass(frozen=True)
class CodeUnit:
    """One indexable piece of code and its description."""

    path: str
    symbol: str  # qualified name ("Retrier.backoff"), or "" for a whole file
    kind: str  # "function", "method", "class", "file"
    code: str
    description: str
    line: int

    @property
    def key(self) -> str:
        return f"{self.path}::{self.symbol}" if self.symbol else self.path


def name_words(name: str) -> str:
    """``drain_due`` → "drain due"; ``HTTPRetryPolicy`` → "http retry policy"."""
    parts = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    return " ".join(p.lower() for p in _CAMEL.split(parts) if p)


def _comments(source: str) -> list[str]:
    """``#`` comments of a Python snippet, in order (tokenize: never a ``#`` inside a string)."""
    found: list[str] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                text = tok.string.lstrip("#").strip()
                if text and not text.startswith(("noqa", "type:", "pragma", "fmt:")):
                    found.append(text)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return found


def _first_paragraph(doc: str | None) -> str:
    if not doc:
        return ""
    return " ".join(doc.strip().split("\n\n")[0].split())


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    args = ast.unparse(node.args)
    returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
    prefix = "async " if isinstance(node, ast.AsyncFunctionDef) else ""
    return f"{prefix}{node.name}({args}){returns}"


def _describe(kind: str, qualname: str, path: str, signature: str, doc: str,
              comments: list[str], extra: str = "") -> str:  # fmt: skip
    words = name_words(qualname.split(".")[-1])
    parts = [f"{kind.capitalize()} `{signature}` in {path} ({words})."]
    if doc:
        parts.append(doc if doc.endswith(".") else doc + ".")
    if extra:
        parts.append(extra)
    if comments:
        parts.append("Notes: " + "; ".join(dict.fromkeys(comments)) + ".")
    text = " ".join(parts)
    return text if len(text) <= MAX_DESCRIPTION else text[: MAX_DESCRIPTION - 1] + "…"


def _python_units(path: str, source: str) -> list[CodeUnit]:
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    units: list[CodeUnit] = []

    def segment(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> str:
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        return "".join(lines[start - 1 : node.end_lineno])[:MAX_UNIT_CHARS]

    def visit(body: list[ast.stmt], owner: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                qual = f"{owner}.{node.name}" if owner else node.name
                code = segment(node)
                kind = "method" if owner else "function"
                units.append(
                    CodeUnit(
                        path, qual, kind, code,
                        _describe(kind, qual, path, _signature(node),
                                  _first_paragraph(ast.get_docstring(node)), _comments(code)),
                        node.lineno,
                    )
                )  # fmt: skip
            elif isinstance(node, ast.ClassDef):
                qual = f"{owner}.{node.name}" if owner else node.name
                code = segment(node)
                methods = [
                    n.name for n in node.body
                    if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
                ]  # fmt: skip
                bases = ", ".join(ast.unparse(b) for b in node.bases)
                extra = f"Methods: {', '.join(methods)}." if methods else ""
                own_comments = _comments("".join(lines[node.lineno - 1 : node.body[0].lineno]))
                units.append(
                    CodeUnit(
                        path, qual, "class", code,
                        _describe("class", qual, path, f"{node.name}({bases})" if bases else
                                  node.name, _first_paragraph(ast.get_docstring(node)),
                                  own_comments, extra),
                        node.lineno,
                    )
                )  # fmt: skip
                visit(node.body, qual)

    visit(tree.body, "")
    return units


def _generic_unit(path: str, source: str) -> list[CodeUnit]:
    head: list[str] = []
    for line in source.splitlines()[:60]:
        if not line.strip():
            if head:
                break
            continue
        match = _LINE_COMMENT.match(line)
        if not match:
            break
        if match.group(1):
            head.append(match.group(1))
    names = list(dict.fromkeys(_DEFINITION.findall(source)))[:30]
    extra = f"Defines: {', '.join(names)}." if names else ""
    description = _describe("file", path.rsplit("/", 1)[-1].split(".")[0], path,
                            path, " ".join(head), [], extra)  # fmt: skip
    return [CodeUnit(path, "", "file", source[:MAX_UNIT_CHARS], description, 1)]


def code_units(path: str, source: str) -> list[CodeUnit]:
    """The units of one file: Python functions, classes and methods; else the whole file.
    A Python file that does not parse is treated like any other language."""
    if path.endswith((".py", ".pyi")):
        try:
            units = _python_units(path, source)
        except (SyntaxError, ValueError, RecursionError):
            return _generic_unit(path, source)
        return units
    return _generic_unit(path, source)
