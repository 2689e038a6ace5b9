"""Claude Code's side of capture: what ``services.capture`` and ``services.ingest`` are handed.

Capture knows nothing of Claude Code. It reads a session through a ``TranscriptReader``: this
one reads Claude Code's JSONL transcripts (``transcript``) into neutral entries, finds its
subagents' transcripts in both on-disk layouts, says what Claude Code writes into messages
(``DIALECT``), and reads the tool hooks' spool (``spool``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from cortexmem.core.session import Dialect, Entry, ParseStats, RawLine, SessionInfo
from cortexmem.hosts.claude_code import spool, transcript


@dataclass(frozen=True)
class ClaudeCodeReader:
    """Claude Code's transcripts and tool-hook spool, read for capture."""

    @property
    def dialect(self) -> Dialect:
        return transcript.DIALECT

    def iter_entries(
        self, path: Path, offset: int = 0, line: int = 0, stats: ParseStats | None = None
    ) -> Iterator[tuple[Entry | None, RawLine]]:
        return transcript.iter_entries(path, offset, line, stats)

    def subagent_transcripts(self, session_path: Path) -> list[Path]:
        return transcript.subagent_transcripts(session_path)

    def session_info(self, path: Path) -> SessionInfo:
        return transcript.session_info(path)

    def spool_path(self, session_id: str) -> str:
        return spool.spool_path(session_id)

    def read_spool(self, path: str, offset: int = 0) -> tuple[list[dict[str, object]], int]:
        return spool.read_spool(path, offset)


READER: Final = ClaudeCodeReader()
# Where Claude Code keeps every session's transcript (``cortex import-history``).
DEFAULT_HISTORY: Final = Path("~/.claude/projects")
