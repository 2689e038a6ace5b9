"""Model calls that cannot run away: every ``complete()`` a service makes goes through ``ask``.

* **Budget**: the ledger (``ai_calls`` in the global store: the quota is the user's, not a
  project's) is read before each call; past a call or token limit of the rolling hour or day,
  ``NotAllowed("budget")`` is raised and nothing is sent.
* **Circuit breaker**: after consecutive failures no call is made for a while, longer each
  time (``core.budget``); ``NotAllowed("circuit")``.
* **Ledger**: every call is recorded, failed or not, with its tokens (a malformed answer still
  cost them).
* **One worker per project**: ``worker_lock`` (an ``flock`` on ``.cortex/ai.lock``, never
  waited for) is held by whoever drains the project's queue: the recall server's background
  thread or ``cortex distill``.
* **No model configured**: ``NoModelConfigured`` from ``complete()`` goes straight through, no
  ledger row; the caller takes its offline path.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cortexmem.ai import (
    AIError,
    Completion,
    NotAllowed,
    ProviderError,
    Routing,
    complete,
    routing_for,
)
from cortexmem.core.budget import DAY, Call, Usage, usage, verdict
from cortexmem.model import format_time
from cortexmem.project.locks import flocked
from cortexmem.services.context import Context

LOCK_NAME = "ai.lock"


def now_utc() -> datetime:
    return datetime.now(UTC)


def routing_of(ctx: Context) -> Routing:
    """The project's routing (``$CORTEX_HOME/ai.yaml`` + ``.cortex/ai.yaml``)."""
    return routing_for(ctx.paths.data_dir)


def spent(ctx: Context, now: datetime | None = None) -> Usage:
    """What model calls spent in the last hour and day, and the failing streak (read-only:
    no global store yet means nothing spent)."""
    now = now or now_utc()
    ledger = ctx.store("global")
    if ledger is None:
        return Usage()
    return usage(ledger.ai_calls_since(format_time(now - DAY)), now)


def ask(
    ctx: Context,
    mission: str,
    *,
    use: str,
    schema: dict[str, Any] | None = None,
    system: str = "",
    session_id: str | None = None,
    routing: Routing | None = None,
    env: Mapping[str, str] | None = None,
    sleep: Callable[[float], None] | None = None,
    transport: Any = None,
    now: Callable[[], datetime] = now_utc,
) -> Completion:
    """``complete()`` under the budget and the circuit breaker, recorded in the ledger."""
    routing = routing or routing_of(ctx)
    route = routing.route(use)
    if not route.configured:  # complete() says so in its own words; nothing is counted
        return complete(mission, use=use, schema=schema, system=system, routing=routing)
    ledger = ctx.writable("global")
    moment = now()
    state = verdict(
        usage(ledger.ai_calls_since(format_time(moment - DAY)), moment), routing.budget, moment
    )
    if not state.allowed:
        raise NotAllowed(state.message, state.reason or "budget", state.until)
    options: dict[str, Any] = {"env": env, "transport": transport}
    if sleep is not None:
        options["sleep"] = sleep
    try:
        done = complete(mission, use=use, schema=schema, system=system, routing=routing, **options)
    except NotAllowed:
        raise
    except AIError as exc:
        tokens = (exc.input_tokens, exc.output_tokens) if isinstance(exc, ProviderError) else (0, 0)
        ledger.record_ai_call(
            Call(format_time(now()), use, route.provider, route.model, False, *tokens,
                 session_id=session_id, error=str(exc))
        )  # fmt: skip
        raise
    ledger.record_ai_call(
        Call(format_time(now()), use, route.provider, route.model, True, done.input_tokens,
             done.output_tokens, session_id=session_id)
    )  # fmt: skip
    return done


@contextlib.contextmanager
def worker_lock(data_dir: Path) -> Iterator[None]:
    """Hold this project's model-worker lock, or raise ``NotAllowed("busy")`` at once when
    another process (or thread) holds it. Released when the block ends or the holder dies."""
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    with flocked(data_dir / LOCK_NAME) as held:
        if not held:
            raise NotAllowed(
                "another Cortex worker is already working with the model for this project",
                "busy",
            )
        yield


def status(ctx: Context) -> dict[str, Any]:
    """What ``cortex status`` shows of the model side: which use goes where, the budget, what
    was spent, whether calls may be made now, and the work queued."""
    from cortexmem.ai.routing import COMPLETE_USES

    routing = routing_of(ctx)
    moment = now_utc()
    used = spent(ctx, moment)
    state = verdict(used, routing.budget, moment)
    store = ctx.store("project")
    routes = {u: routing.route(u) for u in COMPLETE_USES}
    return {
        "models": {u: r.name if r.configured else None for u, r in routes.items()},
        "budget": routing.budget.to_dict(),
        "spent": used.to_dict(),
        "allowed": state.allowed,
        "paused": None if state.allowed else state.message,
        "queued": len(store.ai_jobs()) if store is not None else 0,
        "problems": list(routing.problems),
    }
