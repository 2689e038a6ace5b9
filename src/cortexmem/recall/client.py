"""Talking to a project's recall server from a hook: stdlib only, milliseconds.

Loading the embedding model costs ~0.5 s, far over the ~100 ms a UserPromptSubmit hook may
take. So the model lives in one small server per project (``cortexmem.recall.server``) that
keeps it and the vector matrix in memory; a hook connects to its Unix socket, asks, and gets
an answer in a few milliseconds. The server is started in the background by SessionStart (or
by the first hook that finds none) and exits by itself after ``IDLE_SECONDS`` without a
request, so nothing is left running once sessions end.

This module imports only ``os``, ``json`` and ``socket`` at the top: it is on the hook's path.
"""

from __future__ import annotations

import json
import os
import socket

from cortexmem import settings

IDLE_SECONDS = settings.DEFAULT_SERVER_IDLE
MAX_REPLY = 1 << 20
# In the project's data folder, one per project key (one store reached by two paths, a bind
# mount, has two): the socket its one server listens on. A hook run under another
# ``$XDG_RUNTIME_DIR`` (a terminal and an IDE) looks for the socket in another folder; it finds
# the server there instead of starting a second one.
POINTER = "recall-server"


def pointer_path(data_dir: str, project_hash: str) -> str:
    return os.path.join(data_dir, f"{POINTER}-{project_hash[:16]}")


def runtime_dir() -> str:
    """A private folder for sockets: ``$XDG_RUNTIME_DIR/cortex`` or ``/tmp/cortex-<uid>``."""
    base = settings.runtime_base()
    if base:
        return os.path.join(base, "cortex")
    return os.path.join("/tmp", f"cortex-{os.getuid()}")


def private(folder: str) -> bool:
    """Whether ``folder`` is a real directory of ours that nobody else can write into: a socket
    in a folder someone else made could answer for our server (and inject context)."""
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    import stat

    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077


def socket_path(project_hash: str) -> str:
    return os.path.join(runtime_dir(), f"{project_hash[:16]}.sock")


def _pointed(project_hash: str, data_dir: str) -> str | None:
    """Where the project's pointer says its server listens (a socket of this project's name),
    else None."""
    try:
        with open(pointer_path(data_dir, project_hash), encoding="utf-8") as handle:
            elsewhere = handle.read(4096).strip()
    except OSError:
        return None
    return elsewhere if os.path.basename(elsewhere) == f"{project_hash[:16]}.sock" else None


def _connect(path: str, request: dict, timeout: float) -> socket.socket | None:
    if not os.path.exists(path) or not private(os.path.dirname(path)):
        return None
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(timeout)
        conn.connect(path)
        conn.sendall(json.dumps(request).encode("utf-8") + b"\n")
    except OSError:
        conn.close()
        return None
    return conn


def _send(
    project_hash: str, request: dict, timeout: float, data_dir: str | None = None
) -> socket.socket | None:
    """A connection to the project's server with ``request`` sent on it; None when no server
    (of ours) is there to take it. ``data_dir``: the project's data folder, whose pointer says
    where its server listens when none answers in this runtime folder (it runs under another,
    or a server killed here left its socket file)."""
    path = socket_path(project_hash)
    conn = _connect(path, request, timeout)
    if conn is not None or data_dir is None:
        return conn
    elsewhere = _pointed(project_hash, data_dir)
    return None if elsewhere is None or elsewhere == path else _connect(elsewhere, request, timeout)


def ask(
    project_hash: str, request: dict, timeout: float, data_dir: str | None = None
) -> dict | None:
    """Send one request; the reply, or ``None`` when no server answers in time."""
    conn = _send(project_hash, request, timeout, data_dir)
    if conn is None:
        return None
    try:
        with conn:
            chunks: list[bytes] = []
            size = 0
            while True:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
                if chunk.endswith(b"\n") or size > MAX_REPLY:
                    break
        reply = json.loads(b"".join(chunks).decode("utf-8"))
        return reply if isinstance(reply, dict) else None
    except (OSError, ValueError):
        return None


def tell(
    project_hash: str, request: dict, timeout: float = 0.05, data_dir: str | None = None
) -> bool:
    """Hand one request to the server without waiting for its answer (the server does the work
    later, off the caller's path); True when a server took it."""
    conn = _send(project_hash, request, timeout, data_dir)
    if conn is None:
        return False
    conn.close()
    return True


def start(root: str, module: str = "cortexmem.recall.server") -> bool:
    """Start the recall server of the project at ``root`` in the background (detached: its
    own session, no terminal, output to nowhere). A second server of the same project exits at
    once, so calling this twice is harmless. ``module``: the launcher to run (a host's, to give
    the server its transcript reader)."""
    import subprocess
    import sys

    try:
        subprocess.Popen(
            [sys.executable, "-m", module, "--root", root],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
            cwd=root,
        )
        return True
    except OSError:
        return False
