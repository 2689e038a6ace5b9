"""What the project's documents list: the decisions each says, and when it last said each.

A decision a document of the project lists (``STATUS.md``, ``docs/decisions.md``) is the
project's record while the document says it. A later *whole* version of the document (read
whole, written whole) that no longer says it drops it (a ``withdrawn`` event); one listing it
again brings it back. Which is later is a matter of when each was said, not of the order
sessions are captured in: the store keeps, per document and decision, when a version last
listed it and when a whole one last dropped it (``memories.listings``), and a decision stays
withdrawn while every document that listed it dropped it since. Here, a whole version only
drops decisions listed before it (a subagent read captured after its parent's later read drops
nothing the parent listed since), and only those known when it is captured: a version captured
before the session that first listed a decision it leaves out does not drop it (the store keeps
no text of past versions to weigh later listings against).

``Documents`` holds what the store knew when the pass began (``known``: handed in, never saved
with the pass, so a cursor's state never overrides what other sessions told the store since)
and what this session read or wrote (``touched``: saved with the cursor). Pure: no store, no
clock but the times it is given.
"""

from __future__ import annotations

import posixpath
import re
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from cortexmem.core.extraction.keywords import still_says
from cortexmem.core.redact import redact

# A session reading more documents that list decisions than this forgets the oldest it read
# (then read at once and in pieces may differ; none of the real sessions comes near).
MAX_DOCUMENTS: Final = 512
MAX_PER_DOCUMENT: Final = 256
_DRIVE: Final = re.compile(r"^[A-Za-z]:/")


def document_key(path: str, cwd: str | None) -> str:
    """The document ``path`` names, as one key whichever folder a session started in: its
    absolute path, POSIX slashes, ``..`` resolved, lower-cased (``C:\\Proj\\STATUS.md`` and
    ``c:/proj/status.md`` are one document; so are ``/repo/pkg/../STATUS.md`` and a session's
    in ``/repo/pkg`` reading ``../STATUS.md``)."""
    norm = path.replace("\\", "/")
    if not norm.startswith("/") and not _DRIVE.match(norm):
        norm = (cwd or "").replace("\\", "/").rstrip("/") + "/" + norm
    return posixpath.normpath(norm).lower()


@dataclass(frozen=True)
class _Seen:
    """One document as this session saw it: the decisions it listed (text -> when last listed)
    and when the session last saw it whole ("" if never)."""

    listed: dict[str, str] = field(default_factory=dict)
    whole_at: str = ""


class Documents:
    """What the project's documents list, as far as this pass knows: the store's view when it
    began (``known``) under this session's own reads and writes (``touched``)."""

    def __init__(self, known: Iterable[tuple[str, Iterable[tuple[str, str]]]]) -> None:
        self.known: dict[str, dict[str, str]] = {
            document: dict(decisions) for document, decisions in known
        }
        self.touched: OrderedDict[str, _Seen] = OrderedDict()

    # ------------------------------------------------------------- state between passes

    def to_state(self) -> dict[str, Any]:
        return {
            "touched": [[d, s.whole_at, list(s.listed.items())] for d, s in self.touched.items()]
        }

    def load_state(self, state: dict[str, Any]) -> None:
        for document, whole_at, listed in state.get("touched", []):
            self.touched[str(document)] = _Seen({str(t): str(w) for t, w in listed}, str(whole_at))

    # ------------------------------------------------------------- reading

    def listing(self, document: str) -> dict[str, str]:
        """What ``document`` lists as far as is known: this session's view of it, and what
        the store knew that this session has not seen a whole version since."""
        seen = self.touched.get(document, _Seen())
        merged = {t: w for t, w in self.known.get(document, {}).items() if w > seen.whole_at}
        for text, when in seen.listed.items():
            merged[text] = max(when, merged.get(text, when))
        return merged

    def gone(self, document: str, text: str, now: str) -> list[str]:
        """The decisions ``document`` listed before ``now`` that its whole new ``text`` no
        longer says (another document may still list one: the store weighs them all).
        ``text`` is redacted first: what is kept of a decision is."""
        said = redact(text)
        return [
            t for t, when in self.listing(document).items()
            if when < now and not still_says(said, t)
        ]  # fmt: skip

    # ------------------------------------------------------------- recording

    def record(self, document: str, listed: list[str], gone: list[str] | None, now: str) -> None:
        """A version of ``document`` at ``now`` lists ``listed``; a whole one (``gone`` not
        ``None``) replaces what was listed before it."""
        before = self.listing(document)
        whole = gone is not None
        kept = {t: w for t, w in before.items() if not whole or w > now}
        for text in listed:
            kept[text] = max(now, kept.get(text, now))
        seen = self.touched.pop(document, _Seen())
        self.touched[document] = _Seen(
            dict(list(kept.items())[-MAX_PER_DOCUMENT:]), max(seen.whole_at, now if whole else "")
        )
        while len(self.touched) > MAX_DOCUMENTS:
            self.touched.popitem(last=False)
