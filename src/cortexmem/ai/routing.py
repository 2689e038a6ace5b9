"""Which provider and model embed what: a small YAML routing file, with safe defaults.

``$CORTEX_HOME/ai.yaml`` applies to every project; ``<project>/.cortex/ai.yaml`` overrides it
use by use. A missing file means the defaults; a broken one (bad YAML, unknown provider, a
literal key) is reported once in the log and the defaults are used, so recall keeps working::

    embeddings:
      memory:                      # memories and recall queries
        provider: openai           # local | voyage | openai (any OpenAI-compatible API)
        model: text-embedding-3-small
        base_url: https://api.openai.com/v1
        api_key_env: OPENAI_API_KEY    # the NAME of an environment variable, never the key
      code:                        # code bodies: always embedded locally (never sent out)
        provider: local

Keys come from environment variables only: a file holding a literal key (``api_key``, ``key``,
``token``, ``secret``, ``password`` anywhere in it, or an ``api_key_env`` that is not a variable
name) is refused as a whole, with a message that names the setting and never repeats its value.

Each problem is logged once per process (routing is read on every recall; the log must not fill
up with the same line), and kept in ``Routing.problems`` for ``cortex`` commands to show. A
missing file is the normal case and is not a problem.

Which files: ``routing_for(data_dir)`` in ``cortexmem.ai`` reads ``$CORTEX_HOME/ai.yaml`` then
``<data_dir>/ai.yaml``; ``load_routing(paths)`` reads exactly the files a caller names.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from cortexmem.ai.errors import ConfigError

log = logging.getLogger("cortexmem.ai")

PROVIDERS = ("local", "voyage", "openai")
USES = ("memory", "code")
LOCAL_MODEL = "all-MiniLM-L6-v2-int8"
DEFAULT_MODELS = {
    "local": LOCAL_MODEL,
    "voyage": "voyage-3.5",
    "openai": "text-embedding-3-small",
}
DEFAULT_BASE_URLS = {
    "voyage": "https://api.voyageai.com/v1",
    "openai": "https://api.openai.com/v1",
}
DEFAULT_KEY_ENVS = {"voyage": "VOYAGE_API_KEY"}
FILE_NAME = "ai.yaml"
SETTINGS = frozenset(
    {"provider", "model", "base_url", "api_key_env", "dimensions", "timeout", "threads"}
)
# Setting names that can only mean "the secret itself is in this file".
SECRET_NAMES = frozenset(
    {"api_key", "apikey", "api-key", "key", "token", "access_token", "secret", "password"}
)
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")

_WARNED: set[tuple[str, str]] = set()
_WARNED_LOCK = threading.Lock()


@dataclass(frozen=True)
class Route:
    """How one use is embedded."""

    provider: str = "local"
    model: str = LOCAL_MODEL
    base_url: str | None = None
    api_key_env: str | None = None
    dimensions: int | None = None
    timeout: float = 30.0
    threads: int = 1

    @property
    def remote(self) -> bool:
        return self.provider != "local"

    @property
    def name(self) -> str:
        """The model's name as stored with its vectors: ``provider/model``."""
        return f"{self.provider}/{self.model}"


@dataclass(frozen=True)
class Routing:
    routes: dict[str, Route] = field(default_factory=lambda: {u: Route() for u in USES})
    problems: tuple[str, ...] = ()

    def route(self, use: str) -> Route:
        return self.routes.get(use) or Route()


def parse_route(use: str, data: Any) -> Route:
    if not isinstance(data, dict):
        raise ConfigError(f"embeddings.{use} must be a mapping")
    _refuse_secrets(data, f"embeddings.{use}")
    unknown = set(data) - SETTINGS
    if unknown:
        raise ConfigError(f"embeddings.{use}: unknown setting(s) {', '.join(sorted(unknown))}")
    provider = str(data.get("provider", "local")).lower()
    if provider not in PROVIDERS:
        raise ConfigError(f"embeddings.{use}.provider must be one of {', '.join(PROVIDERS)}")
    base_url = DEFAULT_BASE_URLS.get(provider)
    if data.get("base_url"):
        base_url = str(data["base_url"]).strip().rstrip("/")
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"embeddings.{use}.base_url must start with http:// or https://")
    key_env = DEFAULT_KEY_ENVS.get(provider)
    if data.get("api_key_env"):
        key_env = str(data["api_key_env"]).strip()
        if not _ENV_NAME.match(key_env):
            # Most likely the key itself was pasted here: say so without repeating it.
            raise ConfigError(
                f"embeddings.{use}.api_key_env must be the NAME of an environment variable "
                "(like OPENAI_API_KEY), not the key: keys are read from environment variables only"
            )
    route = Route(
        provider=provider,
        model=str(data.get("model") or DEFAULT_MODELS[provider]),
        base_url=base_url,
        api_key_env=key_env,
    )
    if provider == "local" and route.model != LOCAL_MODEL:
        raise ConfigError(f"embeddings.{use}: the local provider has one model, {LOCAL_MODEL}")
    if data.get("dimensions") is not None:
        route = replace(route, dimensions=_positive_int(use, "dimensions", data["dimensions"]))
    if data.get("timeout") is not None:
        timeout = data["timeout"]
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise ConfigError(f"embeddings.{use}.timeout must be a positive number of seconds")
        route = replace(route, timeout=float(timeout))
    if data.get("threads") is not None:
        route = replace(route, threads=_positive_int(use, "threads", data["threads"]))
    return route


def _refuse_secrets(data: Any, where: str) -> None:
    """Raise if any mapping in ``data`` (at any depth) has a setting that holds a secret."""
    if isinstance(data, dict):
        for name, value in data.items():
            place = f"{where}.{name}" if where else str(name)
            if str(name).strip().lower() in SECRET_NAMES:
                raise ConfigError(
                    f"refused: {place} holds a literal key; keys are read from environment "
                    "variables only (name the variable with api_key_env instead, for example "
                    "OPENAI_API_KEY)"
                )
            _refuse_secrets(value, place)
    elif isinstance(data, list):
        for i, value in enumerate(data):
            _refuse_secrets(value, f"{where}[{i}]")


def _positive_int(use: str, name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"embeddings.{use}.{name} must be a positive whole number")
    return value


# Settings that decide where memories and the user's key are sent: only the user's own file
# ($CORTEX_HOME/ai.yaml) may set them, never a file that arrives with a cloned repository.
ENDPOINT_SETTINGS = ("base_url", "api_key_env")


def _read(path: Path, trusted: bool = True) -> dict[str, Route]:
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{path}: not valid YAML{where} ({exc.__class__.__name__})") from None
    if data is None:
        return {}
    try:
        _refuse_secrets(data, "")
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("embeddings", {}), dict):
        raise ConfigError(f"{path}: expected a mapping with an `embeddings` section")
    section = data.get("embeddings") or {}
    routes = {}
    for use, value in section.items():
        if use not in USES:
            raise ConfigError(f"{path}: unknown use {use!r} (uses: {', '.join(USES)})")
        if not trusted and isinstance(value, dict) and any(k in value for k in ENDPOINT_SETTINGS):
            raise ConfigError(
                f"{path}: a project's file cannot set {' or '.join(ENDPOINT_SETTINGS)} (they "
                "decide where memories and your key are sent); set them in $CORTEX_HOME/ai.yaml"
            )
        try:
            routes[use] = parse_route(use, value)
        except (ConfigError, ValueError, TypeError) as exc:
            raise ConfigError(f"{path}: {exc}") from None
    return routes


def load_routing(paths: list[Path], untrusted: Sequence[Path] = ()) -> Routing:
    """Routing from ``paths`` in order (later files override earlier ones, use by use). A file
    that cannot be used is skipped with a logged warning and listed in ``problems``; files in
    ``untrusted`` (a project's) may not set ``ENDPOINT_SETTINGS``."""
    from cortexmem.core.redact import redact

    routes = {u: Route() for u in USES}
    problems: list[str] = []
    for path in paths:
        try:
            if not path.is_file():
                continue
            routes.update(_read(path, trusted=path not in untrusted))
        except ConfigError as exc:
            message = f"{exc}: ignored, the defaults apply"
        except OSError as exc:
            message = f"{path}: cannot be read ({exc.strerror or exc}): ignored, the defaults apply"
        else:
            continue
        message = redact(message)  # a setting's name could itself be a pasted secret
        _warn_once(path, message)
        problems.append(message)
    return Routing(routes, tuple(problems))


def _warn_once(path: Path, message: str) -> None:
    with _WARNED_LOCK:
        if (str(path), message) in _WARNED:
            return
        _WARNED.add((str(path), message))
    log.warning(message)
