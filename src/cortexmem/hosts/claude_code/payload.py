"""A Claude Code hook payload, normalised once into a frozen ``HookInput``.

Claude Code sends one JSON object per hook; fields vary by event and release and may be
missing or of the wrong type. ``HookInput.parse`` checks each once, so handlers read typed
fields instead of ``payload.get(...)`` everywhere. The tool hooks never get here (``spool``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from cortexmem.hosts.claude_code.spool import clean_text
from cortexmem.project.log import log_line


def launched_for() -> str | None:
    """``$CLAUDE_PROJECT_DIR``: the project Claude Code started this process (a hook, an MCP
    server) for. The host's own variable, so it is read here and not in ``settings``."""
    return os.environ.get("CLAUDE_PROJECT_DIR") or None


def project_dir(cwd: object = None) -> Path:
    """The folder Claude Code acts for: a hook payload's ``cwd``, else ``$CLAUDE_PROJECT_DIR``
    (set for hooks and the MCP servers Claude Code starts), else the working directory; each
    only when it names a folder."""
    for candidate in (cwd, launched_for()):
        if (
            isinstance(candidate, str)
            and candidate
            and "\x00" not in candidate
            and _isdir(candidate)
        ):
            return Path(candidate)
    return Path.cwd()


def _isdir(path: str) -> bool:
    try:
        return os.path.isdir(path)
    except (ValueError, UnicodeError):
        return False


def _clean(value: object) -> str | None:
    """A string field as valid text: lone surrogates (a JSON ``"\\ud83d"``) and NULs, which no
    file name, log or store can hold, are replaced."""
    if not isinstance(value, str):
        return None
    return clean_text(value, len(value)).replace("\x00", "\ufffd")


def _text(value: object) -> str | None:
    return _clean(value) or None


def _path(value: object) -> Path | None:
    text = _clean(value)
    return Path(text) if text else None


class HookInput(NamedTuple):
    """What a hook event says, typed and immutable: ``project_dir`` is where it acts (see
    ``project_dir``); ``agent_transcript_path`` only for SubagentStop; ``prompt`` for
    UserPromptSubmit; ``source`` for SessionStart; ``trigger`` and ``compact_summary`` for the
    compaction events. A ``NamedTuple`` rather than a frozen dataclass: ``dataclasses`` costs
    SessionStart's cached path ~10 ms of imports, ``typing`` is loaded there anyway."""

    event: str
    project_dir: Path
    session_id: str | None = None
    transcript_path: Path | None = None
    agent_transcript_path: Path | None = None
    prompt: str | None = None
    source: str | None = None
    trigger: str | None = None
    compact_summary: str | None = None

    @classmethod
    def parse(cls, event: str, payload: Mapping[str, object]) -> HookInput:
        """Never raises: a field of the wrong type is read as absent."""
        prompt = _clean(payload.get("prompt"))
        summary = _clean(payload.get("compact_summary"))
        return cls(
            event=event,
            project_dir=project_dir(payload.get("cwd")),
            session_id=_text(payload.get("session_id")),
            transcript_path=_path(payload.get("transcript_path")),
            agent_transcript_path=_path(payload.get("agent_transcript_path"))
            if event == "SubagentStop"
            else None,
            prompt=prompt,
            source=_text(payload.get("source")),
            trigger=_text(payload.get("trigger")),
            compact_summary=summary,
        )

    def log(self, message: str, path: Path | None = None) -> None:
        """One line in the project's ``.cortex/cortex.log`` tagged with the session; never
        raises (``path``: the log, when the caller already resolved the project)."""
        try:
            if path is None:
                from cortexmem.project.paths import ensure_data_dir, resolve

                paths = resolve(self.project_dir)
                ensure_data_dir(paths.data_dir)  # with its .gitignore, like every other writer
                path = paths.log
            log_line(path, message, self.session_id[:8] if self.session_id else None)
        except Exception:
            pass
