"""One way a briefing reaches a session: ``publish``. Served from the cache while nothing it
was made from changed; built (``services.brief``) and cached otherwise; then handed to the
host's writer. Its own module so the cached path — every SessionStart — imports only this,
``briefing_cache`` and the stdlib: the builder, its regexes and the store load on a miss."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from cortexmem.services import briefing_cache

if TYPE_CHECKING:
    from cortexmem.core.briefing import Briefing
    from cortexmem.project.paths import ProjectPaths
    from cortexmem.services.context import Context


class Published(NamedTuple):
    """What ``publish`` did: the markdown, whether it came from the cache, whether the host's
    file changed, the ``Briefing`` when one was built, and why the file could not be written.
    (Immutable; a ``NamedTuple`` because ``dataclasses`` would cost the cached SessionStart
    path ~10 ms of imports.)"""

    markdown: str
    cached: bool
    written: bool = False
    briefing: Briefing | None = None
    error: str | None = None


def publish(
    paths: ProjectPaths,
    *,
    write: Callable[[str], bool] | None,
    ctx: Context | None = None,
    cwd: Path | None = None,
    branch: str | None = None,
    fresh: bool = False,
    timeout: float = 2.0,
) -> Published:
    """The briefing for ``branch`` (default: the current one) and ``cwd``, served from the cache
    while nothing it was made from changed (else built and cached; ``fresh``: built, cache left
    alone), then handed to the host's ``write`` (its rules file; ``None``: not written).

    ``paths`` are the project's, resolved once by the caller; ``ctx`` is an open context if the
    caller has one, else one is opened only on a cache miss (waiting at most ``timeout`` for a
    busy store). The store's token is computed once. A file that cannot be written is reported
    in ``error``, never raised: the briefing still reaches the session.
    """
    if branch is None:
        branch, _ = paths.branch_and_commit()
    markdown: str | None = None
    token: str | None = None
    cache = ""
    if not fresh:
        where = str(cwd or paths.worktree or paths.root)
        cache = briefing_cache.cache_path(str(paths.data_dir), branch, where)
        if paths.db.is_file():
            token = briefing_cache.combined_token(str(paths.db), str(paths.global_db))
        markdown = briefing_cache.read_cached(cache, token) if token else None
    cached = markdown is not None
    briefing = None
    if markdown is None:
        from cortexmem.services.brief import make_briefing

        if ctx is None:
            from cortexmem.services.context import Context, default_timeout

            with Context(paths, timeout=min(default_timeout(), timeout)) as own:
                briefing = make_briefing(own, branch=branch)
        else:
            briefing = make_briefing(ctx, branch=branch)
        markdown = briefing.markdown
        if token is not None:
            # A read-only .cortex: the briefing is still returned, only not cached.
            with contextlib.suppress(Exception):  # a cache is never worth losing the briefing
                briefing_cache.write_cached(cache, token, markdown)
    written, error = False, None
    if write is not None:
        try:
            written = write(markdown)
        except Exception as exc:  # the briefing still reaches the session
            error = f"{type(exc).__name__}: {exc}"
    return Published(markdown, cached, written, briefing, error)
