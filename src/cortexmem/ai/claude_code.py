"""The user's own Claude Code as a model: ``claude -p --output-format json``, no API key.

The prompt goes on stdin; the answer is the CLI's JSON result (``{"type": "result",
"subtype": "success", "is_error": false, "result": "...", "usage": {"input_tokens": ...,
"output_tokens": ...}, "total_cost_usd": ...}``). Guards, because a peer left hundreds of
orphaned processes and two memory tools set each other's observers off:

* **recursion guard**: the child runs with ``CORTEX_INSIDE=1``; Cortex's hook checks that
  first and exits at once, so the session Cortex starts is never captured and never starts
  another one;
* it runs in a fresh private folder (no project of the user's: its transcript lands nowhere
  Cortex captures), ``--max-turns 1``;
* **hard time limit**: it is its own process group; past the use's timeout the whole group is
  killed and reaped, and after a normal exit the group is swept too, so nothing it spawned
  outlives the call.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Mapping
from typing import Any

from cortexmem import settings
from cortexmem.ai.chat import Answer
from cortexmem.ai.errors import (
    ConfigError,
    ProviderRejected,
    ProviderResponseError,
    ProviderUnavailable,
)
from cortexmem.ai.routing import Route

PROVIDER = "claude-code"
COMMAND = "claude"
MESSAGE_CHARS = 300


def run_claude(
    route: Route, prompt: str, *, system: str = "", env: Mapping[str, str] | None = None
) -> Answer:
    """One ``claude -p`` call; raises ``ConfigError`` (no ``claude`` on PATH),
    ``ProviderUnavailable`` (timed out, or the CLI failed) or ``ProviderResponseError``."""
    base = dict(os.environ if env is None else env)
    exe = shutil.which(COMMAND, path=base.get("PATH"))
    if exe is None:
        raise ConfigError(
            "the claude-code provider needs Claude Code's `claude` command on PATH "
            "(https://docs.anthropic.com/en/docs/claude-code)"
        )
    args = [exe, "-p", "--output-format", "json", "--max-turns", "1"]
    if route.model:
        args += ["--model", route.model]
    if system:
        args += ["--append-system-prompt", system]
    child_env = {**base, settings.INSIDE_VARIABLE: "1"}
    with tempfile.TemporaryDirectory(prefix="cortex-claude-") as folder:
        out, err, code = _run(args, prompt, child_env, folder, route.timeout)
    return _answer(route, out, err, code)


def _run(
    args: list[str], prompt: str, env: dict[str, str], cwd: str, timeout: float
) -> tuple[bytes, bytes, int]:
    try:
        proc = subprocess.Popen(
            args,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
            start_new_session=True,  # its own process group: killed whole
            close_fds=True,
        )
    except OSError as exc:
        raise ProviderUnavailable(
            f"claude could not be started: {exc.strerror or exc}", provider=PROVIDER
        ) from None
    try:
        out, err = proc.communicate(prompt.encode("utf-8"), timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid)
        proc.communicate()  # reap it (its pipes close with the group)
        raise ProviderUnavailable(
            f"claude -p took longer than {timeout:g} s and was stopped",
            retryable=True,
            provider=PROVIDER,
        ) from None
    except BaseException:
        _kill_group(proc.pid)
        proc.wait()
        raise
    _kill_group(proc.pid)  # whatever it started and left behind
    return out, err, proc.returncode


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _one_line(text: str) -> str:
    from cortexmem.core.redact import redact

    line = redact(" ".join(text.split()))
    return line if len(line) <= MESSAGE_CHARS else line[: MESSAGE_CHARS - 1] + "…"


def _answer(route: Route, out: bytes, err: bytes, code: int) -> Answer:
    text = out.decode("utf-8", "replace").strip()
    data: Any = None
    for line in reversed(text.splitlines()):  # the result object is the last JSON line
        with contextlib.suppress(ValueError):
            data = json.loads(line)
            break
    if not isinstance(data, dict) or data.get("type") != "result":
        why = _one_line(err.decode("utf-8", "replace")) or f"exit status {code}"
        if code != 0:
            raise ProviderUnavailable(f"claude -p failed: {why}", provider=PROVIDER)
        raise ProviderResponseError(
            "claude -p printed no JSON result (is it Claude Code?)", 200, provider=PROVIDER
        )
    if data.get("is_error") or data.get("subtype") != "success":
        why = _one_line(str(data.get("result") or data.get("subtype") or "an error"))
        if any(w in why.lower() for w in ("log in", "login", "api key", "credit", "/login")):
            raise ProviderRejected(f"claude -p refused: {why}", 401, provider=PROVIDER)
        raise ProviderUnavailable(f"claude -p failed: {why}", retryable=True, provider=PROVIDER)
    found = data.get("usage")
    usage: dict[str, Any] = found if isinstance(found, dict) else {}
    tokens_in = sum(
        int(usage.get(k) or 0)
        for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )
    return Answer(
        str(data.get("result") or ""),
        route.name,
        tokens_in,
        int(usage.get("output_tokens") or 0),
    )
