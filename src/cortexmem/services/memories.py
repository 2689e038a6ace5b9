"""Remember, get and forget: single-memory operations across the two scopes."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from cortexmem.core.redact import redact_tag
from cortexmem.core.text import summarise
from cortexmem.errors import CortexError, NotFound
from cortexmem.model import TAG_MARKERS, Edge, Memory, SourceContext
from cortexmem.services.context import SCOPES, Context, Scope

_ID_CHARS = re.compile(r"^[0-9a-z-]+$")


@dataclass(frozen=True)
class Found:
    memory: Memory
    scope: Scope


def remember(
    ctx: Context,
    text: str,
    *,
    memory_type: str = "context",
    priority: int = 5,
    scope: Scope = "project",
    pinned: bool = False,
    tags: Sequence[str] = (),
    summary: str | None = None,
    confidence: float = 1.0,
    source_type: str = "manual",
    session: str | None = None,
    branch: str | None = None,
    embed: bool = False,
) -> tuple[Memory, bool]:
    """Store a memory (or find the identical one already stored). Returns (memory, created).

    ``embed`` embeds it at once with the local model (an explicit remember: findable by
    meaning straight away; never from a hook), fail-soft (``services.embedding.embed_now``).

    ``branch`` is the branch recorded with it: the current one unless another is named (then
    no commit is recorded: HEAD is not on that branch)."""
    content = text.strip()
    if not content:
        raise CortexError("nothing to remember: the text is empty")
    reserved = [t for t in tags if t.strip().lower().startswith(TAG_MARKERS)]
    if reserved:
        # the word search leaves Cortex's markers out: such a tag would never be found
        raise CortexError(
            f"tag {reserved[0].strip()!r} starts like one of Cortex's own markers "
            f"({', '.join(TAG_MARKERS)}), which word search leaves out; name it otherwise "
            f"(e.g. {reserved[0].strip().replace(':', '-', 1)!r})"
        )
    current, commit = ctx.paths.branch_and_commit()
    if branch is None or branch == current:
        branch = current
    else:
        commit = None
    try:
        memory = Memory(
            content=content,
            summary=summary if summary is not None else _auto_summary(content),
            memory_type=memory_type,
            category=scope,
            priority=priority,
            pinned=pinned,
            tags=tuple(redact_tag(t) for t in tags),  # before Memory lower-cases them
            confidence=confidence,
            source_type=source_type,
            source_session=session,
            source_context=SourceContext(branch=branch, cwd=str(ctx.paths.worktree), commit=commit),
        )
    except ValueError as exc:
        raise CortexError(str(exc)) from exc
    stored, created = ctx.writable(scope).add_memory(memory)
    if embed:
        from cortexmem.services.embedding import embed_now

        embed_now(ctx, stored, scope)
    return stored, created


def _auto_summary(content: str) -> str:
    gist = summarise(content)
    return "" if gist == " ".join(content.split()) else gist


def get(ctx: Context, memory_id: str) -> Found:
    """Find a memory by id or unique id prefix in either scope."""
    memory_id = memory_id.strip().lower()
    if not memory_id or not _ID_CHARS.match(memory_id):
        raise CortexError(f"{memory_id!r} is not a memory id (ids look like m-01jd3x5k9q-7f3k2p)")
    matches: list[Found] = []
    for scope, store in ctx.existing():
        exact = store.get_memory(memory_id)
        if exact is not None:
            return Found(exact, scope)
        matches += [Found(m, scope) for m in store.find_by_prefix(memory_id, limit=5)]
    if not matches:
        raise NotFound(f"no memory with id {memory_id}")
    if len(matches) > 1:
        listed = ", ".join(f.memory.id for f in matches[:5])
        raise CortexError(f"id prefix {memory_id!r} is ambiguous: {listed}")
    return matches[0]


def edges_of(ctx: Context, found: Found) -> list[Edge]:
    store = ctx.require(found.scope)
    return store.edges_touching([found.memory.id])


def forget(ctx: Context, memory_id: str) -> Found:
    """Archive a memory (it stays in the store and in backups; recall no longer serves it).
    One the lifecycle or a document's later version archived becomes the person's archive:
    nothing brings it back on its own."""
    found = get(ctx, memory_id)
    memory = ctx.require(found.scope).set_status(found.memory.id, "archived")
    return Found(memory, found.scope)


def scopes_for(option: str) -> tuple[Scope, ...]:
    if option == "all":
        return SCOPES
    for scope in SCOPES:
        if option == scope:
            return (scope,)
    raise CortexError(f"unknown scope {option!r} (project, global or all)")
