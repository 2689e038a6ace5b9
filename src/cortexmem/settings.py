"""Every environment variable Cortex reads, in one place, with its default and its meaning.

A knob read in two places drifts (two defaults, two spellings); a knob read here is documented
once and found by grep. Each value is read when asked for, never cached at import: tests and the
demo set ``CORTEX_HOME`` for a moment, and a long-running server sees the value it started with
because it asks once. Only ``os`` is imported: the tool hooks import this module.

- ``CORTEX_HOME`` (``~/.cortex``): the global store, the observation spool, the user's ai.yaml.
- ``CORTEX_DB_TIMEOUT`` (30 s): how long a busy store is waited for.
- ``CORTEX_RECALL_ALPHA`` (``core.fusion.DEFAULT_ALPHA``): the vector leg's weight in recall.
- ``CORTEX_SERVER_IDLE`` (900 s): the recall server exits after this long without a request.
- ``XDG_RUNTIME_DIR`` (else ``/tmp/cortex-<uid>``): where the recall server's socket lives.
- ``CORTEX_INSIDE`` (unset): set to 1 in the environment of a session Cortex itself starts
  (``claude -p`` for a model call); Cortex's hooks then exit at once (the recursion guard) and
  ``complete()`` refuses to call a model.

The host's own variables (Claude Code's ``CLAUDE_PROJECT_DIR``) belong to its adapter under
``hosts/``, not here.
"""

from __future__ import annotations

import os

HOME_DIR_NAME = ".cortex"
DEFAULT_DB_TIMEOUT = 30.0
DEFAULT_SERVER_IDLE = 900.0
INSIDE_VARIABLE = "CORTEX_INSIDE"


def inside_cortex() -> bool:
    """Whether this process runs inside a session Cortex itself started (the recursion
    guard): nothing is captured there and no model is called from there."""
    return os.environ.get(INSIDE_VARIABLE, "") not in ("", "0")


def cortex_home() -> str:
    """``$CORTEX_HOME`` (``~`` expanded) or ``~/.cortex``: the global store, the observation
    spool and the user's ``ai.yaml`` live here."""
    value = os.environ.get("CORTEX_HOME")
    return (
        os.path.expanduser(value) if value else os.path.join(os.path.expanduser("~"), HOME_DIR_NAME)
    )


def make_home(home: str | None = None) -> str:
    """Create ``home`` (default: ``cortex_home()``) private, 0700, unless it exists; return it.

    It holds every project's memory (the global store, the tool hooks' spool), so whoever
    creates it first closes it, a tool hook as much as the CLI: ``os.makedirs`` of a folder
    inside it gives the mode asked for to that folder only, and would leave this one 0755."""
    home = home or cortex_home()
    os.makedirs(home, mode=0o700, exist_ok=True)
    return home


def _float(name: str) -> float | None:
    try:
        return float(os.environ[name])
    except (KeyError, ValueError):
        return None


def db_timeout() -> float:
    """Seconds to wait for a busy store: ``$CORTEX_DB_TIMEOUT`` (≥ 0) or 30."""
    value = _float("CORTEX_DB_TIMEOUT")
    return DEFAULT_DB_TIMEOUT if value is None else max(0.0, value)


def recall_alpha(default: float) -> float:
    """The vector leg's weight in hybrid recall: ``$CORTEX_RECALL_ALPHA`` in [0, 1], else
    ``default`` (the recall service owns the tuned value)."""
    value = _float("CORTEX_RECALL_ALPHA")
    return default if value is None else min(1.0, max(0.0, value))


def server_idle_seconds() -> float:
    """How long the recall server waits without a request before it exits."""
    value = _float("CORTEX_SERVER_IDLE")
    return DEFAULT_SERVER_IDLE if value is None else max(0.0, value)


def runtime_base() -> str | None:
    """``$XDG_RUNTIME_DIR`` when it names an existing folder (the recall server's sockets go
    into a private folder inside it), else None."""
    value = os.environ.get("XDG_RUNTIME_DIR")
    return value if value and os.path.isdir(value) else None


DEFAULT_WARN_WAIT = 3.3


# Without a model configured, the server's warnings come in milliseconds: a server that does
# not answer in half a second is busy or stopped, and the tool call should not wait 3 s for it.
NO_MODEL_WARN_WAIT = 0.5


def warn_wait_without_model(data_dir: str) -> float:
    """The most PreToolUse waits when no model may judge relevance: ``NO_MODEL_WARN_WAIT``
    when no ``ai.yaml`` configures one (the user's or the project's), else no limit beyond
    ``warn_wait_seconds``; ``$CORTEX_WARN_WAIT`` set by the user always wins."""
    if _float("CORTEX_WARN_WAIT") is not None:
        return float("inf")
    configured = any(
        os.path.exists(os.path.join(folder, "ai.yaml")) for folder in (cortex_home(), data_dir)
    )
    return float("inf") if configured else NO_MODEL_WARN_WAIT


def warn_wait_seconds() -> float:
    """How long PreToolUse waits for the recall server's warnings on a mutating call:
    ``$CORTEX_WARN_WAIT`` or 3.3 s (a configured relevance model may take its 3 s; without one
    the answer comes in milliseconds). 0 turns warnings off."""
    value = _float("CORTEX_WARN_WAIT")
    return DEFAULT_WARN_WAIT if value is None else max(0.0, value)
