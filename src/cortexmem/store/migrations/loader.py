"""Numbered schema migrations: ``NNNN_name.sql``, applied in order, each exactly once.

The version a store is at is SQLite's ``PRAGMA user_version``. A migration file is never edited
after it ships; a change is a new file with the next number.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from functools import cache
from importlib import resources

_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str

    def statements(self) -> list[str]:
        """Split the script into complete statements (trigger bodies stay whole)."""
        out: list[str] = []
        buf = ""
        for line in self.sql.splitlines(keepends=True):
            if not buf and (not line.strip() or line.lstrip().startswith("--")):
                continue
            buf += line
            if sqlite3.complete_statement(buf):
                out.append(buf.strip())
                buf = ""
        if buf.strip():
            raise ValueError(f"migration {self.version:04d} ends with an incomplete statement")
        return out


@cache
def all_migrations() -> tuple[Migration, ...]:
    found = []
    for entry in resources.files("cortexmem.store.migrations").iterdir():
        match = _NAME.match(entry.name)
        if match:
            found.append(Migration(int(match[1]), match[2], entry.read_text(encoding="utf-8")))
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    if versions != list(range(1, len(found) + 1)):
        raise RuntimeError(f"migrations must be numbered 1..n without gaps; found {versions}")
    return tuple(found)


def head_version() -> int:
    return len(all_migrations())
