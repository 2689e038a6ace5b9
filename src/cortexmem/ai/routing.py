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
    models:                        # complete(): which model answers each use (none by default)
      default:                     # every use not named below
        provider: claude-code      # none | anthropic | openai | ollama | claude-code
      distill:                     # a session's transcript → typed memories
        provider: anthropic
        model: claude-haiku-4-5
        api_key_env: ANTHROPIC_API_KEY
        timeout: 120               # seconds, the whole call (each use has its own default)
        send_code: false           # true: code blocks may be sent to this model
    budget:                        # for every model call, per rolling hour and day
      calls_per_hour: 30
      tokens_per_day: 2000000

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
from cortexmem.core.budget import Budget, parse_budget

log = logging.getLogger("cortexmem.ai")

PROVIDERS = ("local", "voyage", "openai")
USES = ("memory", "code")  # what embed() serves
# What complete() serves, each with its own time limit for a whole call (seconds).
COMPLETE_USES = ("distill", "judge", "classify")
COMPLETE_TIMEOUTS = {"distill": 120.0, "judge": 30.0, "classify": 60.0}
COMPLETE_PROVIDERS = ("none", "anthropic", "openai", "ollama", "claude-code")
COMPLETE_MODELS = {
    "anthropic": "claude-haiku-4-5",
    "openai": "gpt-4o-mini",
    "ollama": "llama3.1",
    "claude-code": "",  # the CLI's own default
    "none": "",
}
COMPLETE_BASE_URLS = {
    "anthropic": "https://api.anthropic.com",
    "openai": "https://api.openai.com/v1",
    "ollama": "http://127.0.0.1:11434",
}
COMPLETE_KEY_ENVS = {"anthropic": "ANTHROPIC_API_KEY"}
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
COMPLETE_SETTINGS = frozenset(
    {"provider", "model", "base_url", "api_key_env", "timeout", "max_tokens", "send_code"}
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
    max_tokens: int = 4096  # complete(): the longest answer asked for
    send_code: bool = False  # complete(): code blocks may be sent (only when the user says so)

    @property
    def remote(self) -> bool:
        return self.provider != "local"

    @property
    def configured(self) -> bool:
        """A completion use routed to a model (``none``: every caller takes its offline path)."""
        return self.provider not in ("none", "local")

    @property
    def name(self) -> str:
        """The model's name as stored with its vectors: ``provider/model`` (``claude-code``
        alone when the CLI's own default model is used)."""
        return f"{self.provider}/{self.model}" if self.model else self.provider


def no_model(use: str) -> Route:
    """The default route of a completion use: no model."""
    return Route(provider="none", model="", timeout=COMPLETE_TIMEOUTS.get(use, 60.0))


def default_routes() -> dict[str, Route]:
    return {u: Route() for u in USES} | {u: no_model(u) for u in COMPLETE_USES}


@dataclass(frozen=True)
class Routing:
    routes: dict[str, Route] = field(default_factory=default_routes)
    problems: tuple[str, ...] = ()
    budget: Budget = field(default_factory=Budget)

    def route(self, use: str) -> Route:
        found = self.routes.get(use)
        if found is not None:
            return found
        return no_model(use) if use in COMPLETE_USES else Route()


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
    base_url, key_env = _endpoint(
        f"embeddings.{use}", data, DEFAULT_BASE_URLS.get(provider), DEFAULT_KEY_ENVS.get(provider)
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


def _endpoint(
    where: str, data: dict[str, Any], base_url: str | None, key_env: str | None
) -> tuple[str | None, str | None]:
    """The route's ``base_url`` and ``api_key_env``, checked (defaults as given)."""
    if data.get("base_url"):
        base_url = str(data["base_url"]).strip().rstrip("/")
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"{where}.base_url must start with http:// or https://")
    if data.get("api_key_env"):
        key_env = str(data["api_key_env"]).strip()
        if not _ENV_NAME.match(key_env):
            # Most likely the key itself was pasted here: say so without repeating it.
            raise ConfigError(
                f"{where}.api_key_env must be the NAME of an environment variable "
                "(like OPENAI_API_KEY), not the key: keys are read from environment variables only"
            )
    return base_url, key_env


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


def parse_complete_route(use: str, data: Any) -> Route:
    """The route of a completion use (``models.<use>`` in the file)."""
    where = f"models.{use}"
    if not isinstance(data, dict):
        raise ConfigError(f"{where} must be a mapping")
    _refuse_secrets(data, where)
    unknown = set(data) - COMPLETE_SETTINGS
    if unknown:
        raise ConfigError(f"{where}: unknown setting(s) {', '.join(sorted(map(str, unknown)))}")
    provider = str(data.get("provider", "none")).lower().replace("_", "-")
    if provider not in COMPLETE_PROVIDERS:
        raise ConfigError(f"{where}.provider must be one of {', '.join(COMPLETE_PROVIDERS)}")
    if data.get("base_url") and provider in ("none", "claude-code"):
        raise ConfigError(f"{where}: the {provider} provider takes no base_url")
    base_url, key_env = _endpoint(
        where, data, COMPLETE_BASE_URLS.get(provider), COMPLETE_KEY_ENVS.get(provider)
    )
    route = Route(
        provider=provider,
        model=str(data.get("model") or COMPLETE_MODELS[provider]),
        base_url=base_url,
        api_key_env=key_env,
        timeout=COMPLETE_TIMEOUTS.get(use, 60.0),
    )
    if data.get("timeout") is not None:
        timeout = data["timeout"]
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise ConfigError(f"{where}.timeout must be a positive number of seconds")
        route = replace(route, timeout=float(timeout))
    if data.get("max_tokens") is not None:
        route = replace(route, max_tokens=_positive_int(use, "max_tokens", data["max_tokens"]))
    if "send_code" in data:
        if not isinstance(data["send_code"], bool):
            raise ConfigError(f"{where}.send_code must be true or false")
        route = replace(route, send_code=data["send_code"])
    return route


def _complete_routes(path: Path, section: Any, trusted: bool) -> dict[str, Route]:
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: `models` must be a mapping of uses")
    unknown = set(section) - {"default", *COMPLETE_USES}
    if unknown:
        raise ConfigError(
            f"{path}: unknown use(s) {', '.join(sorted(map(str, unknown)))} under models "
            f"(uses: default, {', '.join(COMPLETE_USES)})"
        )
    routes: dict[str, Route] = {}
    for use in COMPLETE_USES:
        value = section.get(use, section.get("default"))
        if value is None:
            continue
        if (
            not trusted
            and isinstance(value, dict)
            and (any(k in value for k in ENDPOINT_SETTINGS) or value.get("send_code"))
        ):
            raise ConfigError(
                f"{path}: a project's file cannot set {', '.join(ENDPOINT_SETTINGS)} or "
                "send_code (they decide where your work and your key are sent); set them "
                "in $CORTEX_HOME/ai.yaml"
            )
        try:
            routes[use] = parse_complete_route(use, value)
        except (ConfigError, ValueError, TypeError) as exc:
            raise ConfigError(f"{path}: {exc}") from None
    return routes


# Settings that decide where memories and the user's key are sent: only the user's own file
# ($CORTEX_HOME/ai.yaml) may set them, never a file that arrives with a cloned repository.
ENDPOINT_SETTINGS = ("base_url", "api_key_env")


def _read(path: Path, trusted: bool = True) -> tuple[dict[str, Route], Budget | None]:
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{path}: not valid YAML{where} ({exc.__class__.__name__})") from None
    if data is None:
        return {}, None
    try:
        _refuse_secrets(data, "")
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("embeddings", {}), dict):
        raise ConfigError(f"{path}: expected a mapping with an `embeddings` section")
    sections = set(data) - {"embeddings", "models", "budget"}
    if sections:
        raise ConfigError(
            f"{path}: unknown section(s) {', '.join(sorted(map(str, sections)))} "
            "(sections: embeddings, models, budget)"
        )
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
    if data.get("models") is not None:
        routes |= _complete_routes(path, data["models"], trusted)
    budget = None
    if data.get("budget") is not None:
        try:
            budget = parse_budget(data["budget"])
        except ValueError as exc:
            raise ConfigError(f"{path}: {exc}") from None
    return routes, budget


def _no_new_models(path: Path, routes: dict[str, Route], found: dict[str, Route]) -> None:
    """A project's file may pick another model for a use the user's own file routes to one,
    never turn a model on: a cloned repository must not start spending the user's quota."""
    for use in COMPLETE_USES:
        if use in found and found[use].configured and not routes[use].configured:
            raise ConfigError(
                f"{path}: a project's file cannot turn on a model for {use} (it would spend "
                "your quota); route it in $CORTEX_HOME/ai.yaml first"
            )


def load_routing(paths: list[Path], untrusted: Sequence[Path] = ()) -> Routing:
    """Routing from ``paths`` in order (later files override earlier ones, use by use). A file
    that cannot be used is skipped with a logged warning and listed in ``problems``; files in
    ``untrusted`` (a project's) may not set ``ENDPOINT_SETTINGS``."""
    from cortexmem.core.redact import redact

    routes = default_routes()
    budget = Budget()
    problems: list[str] = []
    for path in paths:
        try:
            if not path.is_file():
                continue
            found, limits = _read(path, trusted=path not in untrusted)
            if path in untrusted:
                _no_new_models(path, routes, found)
            routes.update(found)
            if limits is not None:
                # The user's own file sets the budget; a project's may only lower it.
                budget = budget.lowered_by(limits) if path in untrusted else limits
        except ConfigError as exc:
            message = f"{exc}: ignored, the defaults apply"
        except OSError as exc:
            message = f"{path}: cannot be read ({exc.strerror or exc}): ignored, the defaults apply"
        else:
            continue
        message = redact(message)  # a setting's name could itself be a pasted secret
        _warn_once(path, message)
        problems.append(message)
    return Routing(routes, tuple(problems), budget)


def _warn_once(path: Path, message: str) -> None:
    with _WARNED_LOCK:
        if (str(path), message) in _WARNED:
            return
        _WARNED.add((str(path), message))
    log.warning(message)
