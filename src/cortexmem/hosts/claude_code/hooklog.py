"""One line per hook outcome in the project's ``.cortex/cortex.log`` (rotated at 1 MB)."""

from __future__ import annotations

import os
import time
from pathlib import Path

MAX_LOG_BYTES = 1_000_000


def project_dir(payload: dict[str, object]) -> Path:
    """The folder a hook acts for: the payload's ``cwd``, else Claude Code's project dir,
    else the hook's own working directory."""
    for candidate in (payload.get("cwd"), os.environ.get("CLAUDE_PROJECT_DIR")):
        if isinstance(candidate, str) and candidate and os.path.isdir(candidate):
            return Path(candidate)
    return Path.cwd()


def log_path(payload: dict[str, object]) -> Path:
    from cortexmem.project.paths import ensure_data_dir, resolve

    paths = resolve(project_dir(payload))
    ensure_data_dir(paths.data_dir)  # with its .gitignore, like every other writer
    return paths.log


def log_line(payload: dict[str, object], message: str, path: Path | None = None) -> None:
    """Append one line; never raises (a hook must not fail because its log cannot be written)."""
    try:
        path = path or log_path(payload)
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size > MAX_LOG_BYTES:
            os.replace(path, path.with_name(path.name + ".1"))
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        session = payload.get("session_id")
        tag = f" [{session[:8]}]" if isinstance(session, str) else ""
        text = " ".join(message.split())[:2000]
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)  # memory: private
        with os.fdopen(fd, "a", encoding="utf-8") as fh:
            fh.write(f"{stamp}{tag} {text}\n")
    except Exception:
        pass
