"""The type checker's proof that ``SQLiteStore`` implements every store protocol.

Nothing here runs: under ``TYPE_CHECKING`` each assignment below makes mypy (run on ``src/`` in
CI) check ``SQLiteStore`` against one protocol, signatures included, so a method that drifts
from the contract fails the build rather than a service at run time. A new backend adds the
same lines for its own class. ``tests/contract`` checks the behaviour.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from cortexmem.store.protocols import (
        AIStore,
        BackupStore,
        EpisodeStore,
        EventStore,
        GraphStore,
        LearningStore,
        LessonStore,
        LifecycleStore,
        MemoryStore,
        Store,
        StoreInfo,
        UpkeepStore,
        VectorStore,
    )
    from cortexmem.store.sqlite.store import SQLiteStore

    _sqlite = cast(SQLiteStore, None)
    _info: StoreInfo = _sqlite
    _memories: MemoryStore = _sqlite
    _vectors: VectorStore = _sqlite
    _graph: GraphStore = _sqlite
    _upkeep: UpkeepStore = _sqlite
    _events: EventStore = _sqlite
    _episodes: EpisodeStore = _sqlite
    _lifecycle: LifecycleStore = _sqlite
    _backups: BackupStore = _sqlite
    _ai: AIStore = _sqlite
    _learning: LearningStore = _sqlite
    _lessons: LessonStore = _sqlite
    _store: Store = _sqlite
