"""Small text helpers shared by the CLI and the services. Pure."""

from __future__ import annotations

import posixpath
import re
from typing import Final

_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def summarise(content: str, width: int = 120) -> str:
    """A one-line gist: the first sentence or line, cut at a word boundary to ``width``."""
    text = " ".join(content.split())
    first = _SENTENCE_END.split(text, maxsplit=1)[0]
    return shorten(first, width)


def shorten(text: str, width: int) -> str:
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    cut = text[: width - 1].rsplit(" ", 1)[0] or text[: width - 1]
    return cut.rstrip(",;:") + "…"


# C0 controls and DEL, except tab and newline (a carriage return becomes a newline first)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def clean_text(text: str) -> str:
    """Text that is safe to tokenise, embed, search, store and print: lone surrogates (bytes
    that were not UTF-8, smuggled in by ``surrogateescape`` from argv or stdin, or ``\\ud83d``
    in JSON) become U+FFFD; NUL and the other control characters but tab and newline go."""
    if not isinstance(text, str):
        text = str(text)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # through UTF-16 so a split pair (\ud83d\ude00) joins and each lone one is one U+FFFD
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROLS.sub("", text)


def clip_redacted(text: str, limit: int) -> str:
    """``text`` with its secrets redacted, THEN cut to ``limit`` characters (with "…"): a
    secret straddling the cut would otherwise keep its first characters."""
    # Leading blanks go first: stripped after, they shifted the window's margin into what is
    # kept (a progress bar's redraws are thousands of blank characters).
    text = redacted_head(text.lstrip(), limit).rstrip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def redacted_head(text: str, keep: int, start: int = 0) -> str:
    """``text[start:]`` redacted through at least ``REDACT_MARGIN`` characters past where
    its first ``keep - start`` redacted characters end, so that cutting the result there
    keeps no part of a secret the cut goes through.

    Only what can reach the cut is redacted (redacting a 50 kB tool output to keep 300
    characters was most of a Stop's time): a window ``REDACT_MARGIN`` past the cut holds any
    secret that straddles it (most keys and tokens are far shorter; a private key block is
    matched to the window's end). A secret redacted inside the window shortens it (a private key of
    3,000 characters becomes a mark of 23): then the window grows until the margin past the
    cut is whole again, or the text ends. The window ends at a blank: a token longer than the
    margin (an access token with its claims runs to 5 kB) is read whole, as far as
    ``MAX_TOKEN`` characters without a blank."""
    from cortexmem.core.redact import redact

    wanted = keep - start + REDACT_MARGIN
    end = _at_blank(text, start + wanted)
    while True:
        clean = redact(text[start:end])
        if len(clean) >= wanted or end >= len(text):
            return clean
        end = _at_blank(text, end + wanted - len(clean) + REDACT_MARGIN)


def _at_blank(text: str, end: int) -> int:
    """``end`` moved on to the next blank of ``text`` (not past ``MAX_TOKEN`` characters)."""
    if end >= len(text):
        return len(text)
    found = _BLANK.search(text, end, end + MAX_TOKEN)
    return found.start() if found else min(len(text), end + MAX_TOKEN)


REDACT_MARGIN = 2_000
MAX_TOKEN = 16_384
_BLANK = re.compile(r"\s")


# Files that are prose for people (notes, status, design), not code: what an assistant writes
# into one or reads from one is what the project says about itself.
# (Not ``.txt``: requirements.txt, CMakeLists.txt and LICENSE.txt are not notes.)
DOCUMENT_SUFFIXES = (".md", ".markdown", ".mdx", ".rst", ".adoc")


def is_document(path: str) -> bool:
    return path.lower().endswith(DOCUMENT_SUFFIXES)


def _windows(path: str) -> bool:
    return (len(path) > 2 and path[1] == ":" and path[0].isalpha()) or "\\" in path


def relative_path(path: str, cwd: str | None) -> str:
    """``path`` relative to the project folder ``cwd`` when inside it; Windows paths
    (``C:\\Users\\me\\proj\\src\\a.py``, either slash, any drive-letter case) become POSIX ones."""
    if not path:
        return path
    if _windows(path) or (cwd and _windows(cwd)):
        norm = path.replace("\\", "/")
        root = (cwd or "").replace("\\", "/").rstrip("/")
        if root and norm.lower().startswith(root.lower() + "/"):
            return norm[len(root) + 1 :]
        return norm
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    return path


def path_inside(path: str | None, folder: str | None) -> str | None:
    """``path`` relative to ``folder`` when it lies inside it ("" for the folder itself), else
    None; Windows paths as ``relative_path`` reads them."""
    if not path or not folder:
        return None
    if path == folder:
        return ""
    inside = relative_path(path, folder)
    return None if inside in (path, path.replace("\\", "/")) else inside


# A list item in markdown or plain text ("- …", "* …", "• …", "1. …"), at its indentation.
LIST_ITEM: Final = re.compile(r"^(?P<indent>[ \t]*)(?:[-*+•]|\d{1,2}[.)])[ \t]+(?P<text>\S.*)$")
# Markdown's bold and italic marks: not words.
EMPHASIS: Final = re.compile(r"\*\*|__")
# Claude Code numbers the lines a read shows ("   12→text", since 2.1.101 "   12\ttext"); the
# numbers are not the document's.
_LINE_NUMBER: Final = re.compile(r"^ *\d+(?:\u2192|\t)", re.MULTILINE)


def shows_lines(shown: str) -> bool:
    """Whether a read's text is the file's own lines as the host numbers them (not a note in
    their place: "File unchanged since last read", an empty file's warning)."""
    return _LINE_NUMBER.match(shown) is not None


# Folders inside a project that hold other projects' files (dependencies, environments).
_VENDORED: Final = frozenset(
    {"node_modules", ".venv", "venv", "site-packages", "vendor", ".git", ".tox", "bower_components"}
)


def project_document(path: str, shown: str, home: str | None) -> tuple[str, str] | None:
    """A document of the project as a read showed it: its path relative to the project
    ``home`` and its text without the host's line numbers. ``None`` for a file that is not a
    document, one outside the project (a person's global instructions, a plugin's notes are
    not the project's state), after ``..`` is resolved, or one of a dependency inside it
    (``node_modules/left-pad/README.md``)."""
    if not is_document(path):
        return None
    normal = posixpath.normpath(path) if path.startswith("/") else path
    inside = path_inside(normal, home) if home else None
    if not inside or _VENDORED & set(inside.replace("\\", "/").split("/")):
        return None
    return inside, _LINE_NUMBER.sub("", shown)


def base_folder(home: str | None, cwd: str | None) -> str | None:
    """The folder a session's paths are relative to: ``home`` (where the session started: the
    project) while the shell's folder ``cwd`` is inside it (a `cd test` does not make
    `test/a.py` into `a.py`), else ``cwd``. A git worktree Claude Code made inside the project
    (``.claude/worktrees/NAME``) is a checkout of its own: its root is the base there."""
    inside = path_inside(cwd, home)
    if inside is None or home is None:
        return cwd  # nothing known, or not inside the project
    worktree = _WORKTREE.match(inside)
    if worktree:
        return home.rstrip("/\\") + "/" + worktree.group(1)
    return home


_WORKTREE: Final = re.compile(r"(\.claude/worktrees/[^/]+)(?:/|$)")
