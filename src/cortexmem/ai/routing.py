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

Keys come from environment variables only: a file holding ``api_key`` is refused.
"""

from __future__ import annotations

import logging
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
    if "api_key" in data or "key" in data:
        raise ConfigError(
            f"embeddings.{use} holds a key: keys are read from environment variables only "
            "(name the variable with api_key_env)"
        )
    unknown = set(data) - {"provider", "model", "base_url", "api_key_env", "dimensions",
                           "timeout", "threads"}  # fmt: skip
    if unknown:
        raise ConfigError(f"embeddings.{use}: unknown setting(s) {', '.join(sorted(unknown))}")
    provider = str(data.get("provider", "local")).lower()
    if provider not in PROVIDERS:
        raise ConfigError(f"embeddings.{use}.provider must be one of {', '.join(PROVIDERS)}")
    route = Route(
        provider=provider,
        model=str(data.get("model") or DEFAULT_MODELS[provider]),
        base_url=str(data["base_url"]).rstrip("/") if data.get("base_url") else
        DEFAULT_BASE_URLS.get(provider),
        api_key_env=str(data["api_key_env"]) if data.get("api_key_env") else
        DEFAULT_KEY_ENVS.get(provider),
    )  # fmt: skip
    if provider == "local" and route.model != LOCAL_MODEL:
        raise ConfigError(f"embeddings.{use}: the local provider has one model, {LOCAL_MODEL}")
    if data.get("dimensions") is not None:
        route = replace(route, dimensions=_positive_int(use, "dimensions", data["dimensions"]))
    if data.get("timeout") is not None:
        route = replace(route, timeout=float(data["timeout"]))
    if data.get("threads") is not None:
        route = replace(route, threads=_positive_int(use, "threads", data["threads"]))
    return route


def _positive_int(use: str, name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"embeddings.{use}.{name} must be a positive whole number")
    return value


def _read(path: Path) -> dict[str, Route]:
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({exc.__class__.__name__})") from None
    if data is None:
        return {}
    if not isinstance(data, dict) or not isinstance(data.get("embeddings", {}), dict):
        raise ConfigError(f"{path}: expected a mapping with an `embeddings` section")
    section = data.get("embeddings") or {}
    routes = {}
    for use, value in section.items():
        if use not in USES:
            raise ConfigError(f"{path}: unknown use {use!r} (uses: {', '.join(USES)})")
        try:
            routes[use] = parse_route(use, value)
        except (ConfigError, ValueError, TypeError) as exc:
            raise ConfigError(f"{path}: {exc}") from None
    return routes


def load_routing(paths: list[Path]) -> Routing:
    """Routing from ``paths`` in order (later files override earlier ones, use by use). A file
    that cannot be used is skipped with a logged warning and listed in ``problems``."""
    routes = {u: Route() for u in USES}
    problems: list[str] = []
    for path in paths:
        try:
            if not path.is_file():
                continue
            routes.update(_read(path))
        except ConfigError as exc:
            message = f"{exc}: ignored, the defaults apply"
        except OSError as exc:
            message = f"{path}: cannot be read ({exc.strerror or exc}): ignored, the defaults apply"
        else:
            continue
        log.warning(message)
        problems.append(message)
    return Routing(routes, tuple(problems))
