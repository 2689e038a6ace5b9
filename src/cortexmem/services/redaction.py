"""``cortex redact``: today's secret redaction over what a store already holds.

The rules in ``core.redact`` grow as leaks are found; what an older Cortex stored under the
rules of its day stays as it was written. This pass takes one store (the project's or the
global one) to today's rules: the store itself (``redact_stored``), each of its backups (a
backup that kept the secret would defeat the purpose) and the text files Cortex writes beside
it (the log and its rotated copy, the learning loop's files, dream reports, the capture's
quarantine, cached projections). It leaves alone what a person wrote (``ai.yaml``,
``learning.yaml``) and the copies of a person's own files that ``cortex review`` keeps before
editing them (``backups/review/``): those are theirs, not Cortex's record.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from cortexmem.core.redact import MARK, redact, redact_json_text
from cortexmem.errors import CortexError
from cortexmem.project.files import write_atomic
from cortexmem.project.log import lock_file, still_named, unlock_file
from cortexmem.store.protocols import BackupStore, Redacted

# The text files Cortex itself writes in a data folder, by suffix; ``cortex.log.1`` is the
# rotated log.
TEXT_SUFFIXES: Final = frozenset({".log", ".md", ".json", ".jsonl", ".txt", ".1"})
# Folders of a data folder whose files are not Cortex's record: store backups (redacted as
# stores), copies of the person's own files, the model's files; and hand-offs other processes
# append to or consume while this runs, which hold no free text (the tool hooks' spool keeps a
# command's form, never its arguments; the capture queue names transcripts).
SKIPPED_FOLDERS: Final = frozenset({"backups", "models", "observations", "queue"})
MAX_FILE_BYTES: Final = 64 * 1024 * 1024
MARK_START: Final = MARK.split("{")[0]


@dataclass(frozen=True)
class RedactionReport:
    """What ``redact_scope`` changed (or would): the store, each backup by path (or why it
    could not be read), each text file with the number of secrets found in it, and each text
    file left as it was, with why."""

    store: Redacted
    backups: tuple[tuple[Path, Redacted], ...] = ()
    unreadable: tuple[tuple[Path, str], ...] = ()
    files: tuple[tuple[Path, int], ...] = ()
    # Cortex's text files this could not check, and why: a secret in one is still there.
    left: tuple[tuple[Path, str], ...] = ()

    @property
    def changed(self) -> int:
        return (
            self.store.total + sum(r.total for _, r in self.backups) + sum(n for _, n in self.files)
        )


def redact_scope(store: BackupStore, data_dir: Path, *, apply: bool) -> RedactionReport:
    """Redact ``store``, its backups and Cortex's text files in ``data_dir`` (its folder);
    with ``apply`` false nothing is written and the report says what would change."""
    done = store.redact_stored(apply=apply)
    backups: list[tuple[Path, Redacted]] = []
    unreadable: list[tuple[Path, str]] = []
    for backup in store.list_backups():
        try:
            backups.append((backup, store.redact_backup(backup, apply=apply)))
        except CortexError as exc:  # damaged, or not a store: left as it is, and said
            unreadable.append((backup, str(exc)))
    # twice over: a log rotated while this ran leaves a file the first listing did not have
    found: dict[Path, int] = {}
    left: dict[Path, str] = {}
    for _ in range(2):
        for path in text_files(data_dir):
            if path in found:
                continue
            try:
                found[path] = redact_file(path, apply=apply)
                left.pop(path, None)
            except FileLeft as exc:
                left[path] = exc.why
    files = [(path, n) for path, n in found.items() if n]
    return RedactionReport(
        done, tuple(backups), tuple(unreadable), tuple(files), tuple(left.items())
    )


def text_files(data_dir: Path) -> list[Path]:
    """Cortex's own text files under ``data_dir``, outside the folders it does not own."""
    if not data_dir.is_dir():
        return []
    found = []
    for path in sorted(data_dir.rglob("*")):
        parts = path.relative_to(data_dir).parts
        if any(p in SKIPPED_FOLDERS or p.startswith(".") for p in parts[:-1]):
            continue
        if path.suffix in TEXT_SUFFIXES and not path.name.startswith(".") and path.is_file():
            found.append(path)
    return found


def redact_file(path: Path, *, apply: bool) -> int:
    """How many secrets today's rules find in ``path`` (at least 1 when anything changes);
    with ``apply``, the file is rewritten in one rename, keeping its mode. A JSON file, and
    each line of a JSON Lines file or log, is redacted as JSON (each string in it) when it is
    JSON, so it stays readable; other text is redacted whole (a key block spans lines). Bytes
    that are not UTF-8 are kept as they were around what is redacted. ``FileLeft`` says why a
    file could not be checked (unreadable, too big to be one of Cortex's, or replaced by
    another process each time it was read): a secret in it is still there.

    Hooks append to the log while this runs (``project.log.append_line``): they wait while it
    holds the file, then append to the new one; what a writer that takes no lock appended to
    the old file until it is quiet is carried over (redacted), so no line is lost."""
    for _ in range(3):
        try:
            return _redact_file(path, apply)
        except _Replaced:  # rotated or rewritten while this waited for it: read it again
            continue
        except FileNotFoundError:  # rotated away (its new name is listed on the next look)
            return 0
        except OSError as exc:
            raise FileLeft(exc.strerror or str(exc)) from exc
        except ValueError as exc:  # text that cannot be written back as it was read
            raise FileLeft(f"could not be written back: {exc}") from exc
    raise FileLeft("another process replaced it each time it was read; run cortex redact again")


class FileLeft(Exception):
    """A text file ``redact_file`` could not check; ``why`` says why, for the person."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


class _Replaced(Exception):
    pass


def _redact_file(path: Path, apply: bool) -> int:
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise FileLeft(f"{size // (1024 * 1024)} MB, more than any file Cortex writes")
    with path.open("rb") as old:
        # appenders wait, then append to the new file; a rotation waits too
        if lock_file(old.fileno(), exclusive=True) and not still_named(old.fileno(), path):
            raise _Replaced
        text = old.read().decode("utf-8", "surrogateescape")
        clean = _redacted_text(path, text)
        if clean == text:
            return 0
        found = max(1, _marks(clean) - _marks(text))
        if not apply:
            return found
        write_atomic(path, clean, errors="surrogateescape")
        unlock_file(old.fileno())  # the waiting appenders find the new file
        # What a hook appends to the old file, having opened it before the rename took its
        # place; such a writer is done within microseconds: two quiet looks end it.
        quiet = 0
        while quiet < LATE_LOOKS:
            late = old.read()
            if not late:
                quiet += 1
                time.sleep(LATE_WAIT)
                continue
            quiet = 0
            with path.open("a", encoding="utf-8", errors="surrogateescape") as new:
                new.write(_redacted_text(path, late.decode("utf-8", "surrogateescape")))
        return found


LATE_LOOKS: Final = 2
LATE_WAIT: Final = 0.002

# Files written a line at a time (a line is a record); the rotated log is ``cortex.log.1``.
LINE_FILES: Final = frozenset({".log", ".jsonl", ".1"})


# A byte that was not UTF-8, as read (``surrogateescape``): a text holding one is redacted
# as text, not as JSON, so the byte is written back as it was (JSON would escape it).
_RAW_BYTE: Final = re.compile("[\udc80-\udcff]")


def _redacted_text(path: Path, text: str) -> str:
    if path.suffix == ".json":
        clean = None if _RAW_BYTE.search(text) else redact_json_text(text)
        return redact(text) if clean is None else clean
    if path.suffix in LINE_FILES:
        return "".join(_line(line) for line in text.splitlines(keepends=True))
    return redact(text)


def _marks(text: str) -> int:
    return text.count(MARK_START)


def _line(line: str) -> str:
    body = line.rstrip("\r\n")
    as_json = body.startswith(("{", "[")) and not _RAW_BYTE.search(body)
    clean = redact_json_text(body) if as_json else None
    return (redact(body) if clean is None else clean) + line[len(body) :]
