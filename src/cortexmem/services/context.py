"""One object that knows where the project and global stores are and opens them on demand.

This is the composition point: the only place that names a backend (``SQLiteStore``); every
other service sees the ``store.protocols`` contract. Read paths never create a store: asking
an un-initialised folder for memories returns nothing rather than leaving a ``.cortex/``
behind. Write paths create it (with its .gitignore).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from cortexmem import settings
from cortexmem.errors import CortexError
from cortexmem.project.paths import ProjectPaths, ensure_data_dir, private_dir, resolve
from cortexmem.store.protocols import Store
from cortexmem.store.sqlite.store import SQLiteStore, backups_of, replace_damaged

Scope = Literal["project", "global"]
SCOPES: tuple[Scope, ...] = ("project", "global")


def default_timeout() -> float:
    """How long to wait for a busy store: 30 s, or ``$CORTEX_DB_TIMEOUT`` seconds."""
    return settings.db_timeout()


@dataclass
class Context:
    paths: ProjectPaths
    timeout: float = field(default_factory=default_timeout)
    _open: dict[str, Store] = field(default_factory=dict)

    @classmethod
    def for_cwd(cls, cwd: Path | None = None, *, timeout: float | None = None) -> Context:
        """``timeout`` caps how long a busy store is waited for (a hook passes its budget)."""
        ctx = cls(resolve(cwd))
        if timeout is not None:
            ctx.timeout = min(ctx.timeout, timeout)
        return ctx

    def db_path(self, scope: Scope) -> Path:
        return self.paths.db if scope == "project" else self.paths.global_db

    def exists(self, scope: Scope) -> bool:
        return self.db_path(scope).is_file()

    def store(self, scope: Scope, *, create: bool = False) -> Store | None:
        """The store of ``scope``; None when it does not exist and ``create`` is False."""
        if scope in self._open:
            return self._open[scope]
        path = self.db_path(scope)
        if not path.is_file():
            if not create:
                return None
            if scope == "project":
                ensure_data_dir(path.parent)
            else:
                settings.make_home(str(path.parent))
                private_dir(path.parent)  # one an older Cortex left open
        store = SQLiteStore.open(path, timeout=self.timeout)
        self._open[scope] = store
        return store

    def backups(self, scope: Scope) -> list[Path]:
        """The backups of a store, oldest first, found without opening it (it may be damaged)."""
        return backups_of(self.db_path(scope))

    def replace_damaged(self, scope: Scope, backup: Path) -> Path:
        """Put ``backup`` in place of a store that cannot be opened; where the damaged file
        was moved to (nothing is deleted)."""
        self._open.pop(scope, None)
        return replace_damaged(self.db_path(scope), backup, self.timeout)

    def require(self, scope: Scope) -> Store:
        store = self.store(scope)
        if store is None:
            where = self.db_path(scope)
            raise CortexError(
                f"no {scope} store at {where} (run `cortex init` or remember something)"
            )
        return store

    def writable(self, scope: Scope) -> Store:
        store = self.store(scope, create=True)
        assert store is not None
        return store

    def existing(self, scopes: tuple[Scope, ...] = SCOPES) -> list[tuple[Scope, Store]]:
        out = []
        for scope in scopes:
            store = self.store(scope)
            if store is not None:
                out.append((scope, store))
        return out

    def close(self) -> None:
        for store in self._open.values():
            store.close()
        self._open.clear()

    def __enter__(self) -> Context:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
