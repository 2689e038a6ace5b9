"""Distillation by a model: a session's new transcript lines → typed memories, merged with
what the offline extraction already made. Off the hook path, always.

* A Stop or SessionEnd hook only queues the session (``services.session.queue_distill``: one
  row, no model, no import of the AI façade). The project's recall server drains the queue
  in a background thread once the session has been quiet for ``SETTLE`` seconds (``drain``);
  ``cortex distill`` does it by hand.
* One pass sends the episodes (what was said, already redacted) read since the session's last
  pass, at most ``MAX_CHARS`` of them, through ``services.models.ask`` (budget, circuit
  breaker, ledger), with the fixed prompt and schema of ``core.distill``.
* Only items whose citations hold are kept (``core.distill.accept``); their text is filtered
  again (secrets, personal data) before it is stored; an item the store already has (same
  content) or one that says what a memory of the store already says (word overlap above
  ``DUPLICATE``, the consolidation's merge line) is not added twice. Kept memories have
  ``source_type="distill"``, the tags ``distilled`` and ``kind:<kind>``; the ledger and the
  session's distill state record the model and the tokens.
* No model configured: nothing is sent, the queue is emptied, the offline memories stand.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from cortexmem.ai import AIError, ConfigError, NoModelConfigured, NotAllowed, Routing
from cortexmem.core.distill import (
    JOB_KIND,
    SCHEMA,
    SYSTEM,
    Candidate,
    Line,
    accept,
    build_prompt,
)
from cortexmem.core.filters import MemoryFilter
from cortexmem.core.privacy import for_model, strip_personal
from cortexmem.core.redact import redact
from cortexmem.core.similarity import jaccard, word_set
from cortexmem.errors import CortexError
from cortexmem.model import Edge, Memory, SourceContext, format_time, utc_now
from cortexmem.services.context import Context, Scope
from cortexmem.services.models import ask, now_utc, routing_of, worker_lock
from cortexmem.store.protocols import DistillState

KIND = JOB_KIND
SETTLE = 300.0  # seconds a session must be quiet before the background worker distills it
MAX_CHARS = 60_000  # of transcript text per call
MAX_ATTEMPTS = 3  # a job that failed this often is dropped (the breaker guards the rest)
MAX_AGE = timedelta(days=3)  # a job waiting longer (a long outage) is left to the extraction
DUPLICATE = 0.6
CONFIDENCE = 0.8


@dataclass
class DistillReport:
    session_id: str
    lines: int = 0
    model: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    proposed: int = 0
    kept: list[dict[str, Any]] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    added: int = 0
    duplicates: int = 0
    edges: int = 0
    last_line: int = 0
    dry_run: bool = False

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _lines(ctx: Context, session_id: str, after: int, send_code: bool) -> list[Line]:
    store = ctx.require("project")
    by_line: dict[int, tuple[str, list[tuple[int, str]]]] = {}
    for episode in store.iter_episodes(session_id):
        if episode.line is None or episode.line <= after:
            continue
        _, parts = by_line.setdefault(episode.line, (episode.role, []))
        parts.append((episode.chunk, episode.text))
    lines: list[Line] = []
    size = 0
    for number in sorted(by_line):
        role, parts = by_line[number]
        text = for_model(" ".join(t for _, t in sorted(parts)), send_code=send_code)
        if lines and size + len(text) > MAX_CHARS:
            break
        lines.append(Line(number, role, text[:MAX_CHARS]))
        size += len(text)
    return lines


def distill_session(
    ctx: Context,
    session_id: str,
    *,
    dry_run: bool = False,
    routing: Routing | None = None,
    env: Mapping[str, str] | None = None,
    sleep: Callable[[float], None] | None = None,
    transport: Any = None,
    now: Callable[[], datetime] = now_utc,
) -> DistillReport:
    """One pass over a session's lines not distilled yet. Raises ``NoModelConfigured`` (the
    offline path), ``NotAllowed`` (budget, circuit, recursion) and ``AIError`` (the call
    failed); ``CortexError`` when the project has no store."""
    routing = routing or routing_of(ctx)
    route = routing.route(KIND)
    if not route.configured:
        raise NoModelConfigured(
            "no model is configured for distill (set models.distill in ai.yaml)"
        )
    store = ctx.require("project")
    state = store.distill_state(session_id)
    report = DistillReport(session_id, dry_run=dry_run)
    lines = _lines(ctx, session_id, state.last_line if state else 0, route.send_code)
    report.lines = len(lines)
    if not lines:
        return report
    report.last_line = lines[-1].number
    options: dict[str, Any] = {"env": env, "transport": transport, "now": now}
    if sleep is not None:
        options["sleep"] = sleep
    done = ask(
        ctx, build_prompt(lines, ctx.paths.name), use=KIND, schema=SCHEMA, system=SYSTEM,
        session_id=session_id, routing=routing, **options,
    )  # fmt: skip
    report.model = done.model
    report.input_tokens, report.output_tokens = done.input_tokens, done.output_tokens
    checked = accept(done.data, lines)
    report.proposed = len(checked.kept) + sum(1 for d in checked.dropped if ": link" not in d)
    report.dropped = checked.dropped
    memories = [_memory(ctx, c, session_id) for c in checked.kept]
    report.kept = [
        {"kind": c.kind, "type": m.memory_type, "scope": c.category, "content": m.content,
         "lines": list(c.lines)}
        for c, m in zip(checked.kept, memories, strict=True)
    ]  # fmt: skip
    if dry_run:
        return report
    stored = _merge(ctx, checked.kept, memories, report)
    report.edges = _link(ctx, checked.kept, stored)
    store.set_distill_state(
        DistillState(session_id, report.last_line, utc_now(), report.added, done.model,
                     done.input_tokens, done.output_tokens)
    )  # fmt: skip
    return report


def _memory(ctx: Context, c: Candidate, session_id: str) -> Memory:
    branch, commit = ctx.paths.branch_and_commit()
    content = strip_personal(redact(c.content))  # the answer is filtered again
    return Memory(
        content=content,
        memory_type=c.memory_type,
        category=c.category,
        confidence=CONFIDENCE,
        priority=c.priority,
        source_type=KIND,
        source_session=session_id,
        source_context=SourceContext(branch=branch, cwd=str(ctx.paths.worktree), commit=commit),
        tags=("distilled", f"kind:{c.kind}"),
    )


def _duplicate(ctx: Context, memory: Memory, gist: str) -> Memory | None:
    """A memory of the same scope that already says this: the same content, or the same
    words as the model's sentence (its reason and alternatives aside)."""
    store = ctx.store("project" if memory.category == "project" else "global")
    if store is None:
        return None
    words = word_set(gist or memory.content)
    for hit in store.search_text(gist or memory.content, MemoryFilter(), 5, memory.category):
        if hit.memory.content_hash == memory.content_hash:
            return hit.memory
        if jaccard(words, word_set(hit.memory.content)) > DUPLICATE:
            return hit.memory
    return None


def _merge(
    ctx: Context, kept: list[Candidate], memories: list[Memory], report: DistillReport
) -> dict[int, tuple[Scope, Memory]]:
    stored: dict[int, tuple[Scope, Memory]] = {}
    for candidate, memory in zip(kept, memories, strict=True):
        scope: Scope = "global" if memory.category == "global" else "project"
        same = _duplicate(ctx, memory, candidate.gist)
        if same is not None:
            report.duplicates += 1
            stored[candidate.index] = (scope, same)
            continue
        saved, created = ctx.writable(scope).add_memory(memory)
        report.added += int(created)
        report.duplicates += int(not created)
        stored[candidate.index] = (scope, saved)
    return stored


def _link(ctx: Context, kept: list[Candidate], stored: dict[int, tuple[Scope, Memory]]) -> int:
    added = 0
    for candidate in kept:
        scope, source = stored[candidate.index]
        for target_index, relation in candidate.links:
            if target_index not in stored:
                continue
            target_scope, target = stored[target_index]
            if target_scope != scope or target.id == source.id:
                continue  # edges live inside one store
            try:
                edge = Edge(source.id, target.id, relation, strength=CONFIDENCE)
                added += int(ctx.writable(scope).add_edge(edge)[1])
            except (CortexError, ValueError):
                continue
    return added


# ----------------------------------------------------------------- the background worker


@dataclass
class DrainReport:
    sessions: list[DistillReport] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    stopped: str | None = None  # why the queue was left (budget, circuit, busy, time)
    dropped_jobs: int = 0


def due(ctx: Context, now: datetime | None = None, settle: float = SETTLE) -> int:
    """How many queued sessions have been quiet long enough (a cheap query)."""
    store = ctx.store("project")
    if store is None:
        return 0
    limit = format_time((now or now_utc()) - timedelta(seconds=settle))
    return sum(1 for job in store.ai_jobs(KIND) if job.queued_at <= limit)


def drain(
    ctx: Context,
    *,
    deadline: float,
    settle: float = SETTLE,
    routing: Routing | None = None,
    env: Mapping[str, str] | None = None,
    sleep: Callable[[float], None] | None = None,
    transport: Any = None,
    now: Callable[[], datetime] = now_utc,
) -> DrainReport:
    """Distill the queued sessions that have settled, one worker per project at a time, until
    ``deadline`` (``time.monotonic()``), the budget or the circuit breaker says stop.
    ``now`` is the clock of the settle time, the budget and the breaker (a soak replays days)."""
    report = DrainReport()
    store = ctx.store("project")
    if store is None:
        return report
    routing = routing or routing_of(ctx)
    try:
        with worker_lock(ctx.paths.data_dir):
            moment = now()
            limit = format_time(moment - timedelta(seconds=settle))
            too_old = format_time(moment - MAX_AGE)
            for job in store.ai_jobs(KIND):
                if not routing.route(KIND).configured or job.queued_at < too_old:
                    store.finish_ai_job(job.id)  # offline: the extraction already ran
                    report.dropped_jobs += 1
                    continue
                if job.queued_at > limit:
                    continue
                if time.monotonic() >= deadline:
                    report.stopped = "time"
                    break
                try:
                    report.sessions.append(
                        distill_session(
                            ctx, job.session_id, routing=routing, env=env, sleep=sleep,
                            transport=transport, now=now,
                        )
                    )  # fmt: skip
                    store.finish_ai_job(job.id)
                except NotAllowed as exc:
                    report.stopped = exc.reason
                    break
                except (AIError, ConfigError) as exc:
                    report.failed.append(f"{job.session_id}: {exc}")
                    if store.fail_ai_job(job.id, str(exc)) >= MAX_ATTEMPTS:
                        store.finish_ai_job(job.id)
                        report.dropped_jobs += 1
    except NotAllowed as exc:
        report.stopped = exc.reason
    return report
