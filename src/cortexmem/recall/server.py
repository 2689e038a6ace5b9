"""One project's recall server: keeps the embedding model and the vector matrix warm.

Run by ``recall_client.start`` as ``python -m cortexmem.recall.server --root DIR`` (or by hand,
``cortex serve``). It listens on a Unix socket in a private folder (mode 0700), answers one
JSON request per connection, and between requests embeds memories that have no vector yet, a
batch at a time, so captures never wait for the model. It holds an exclusive lock for its
lifetime, in the project's data folder (a second server of the same project exits at once,
even one started under another ``$XDG_RUNTIME_DIR``: hooks there find this one through the
project's ``recall-server-<key>`` pointer) and exits by itself after
``--idle`` seconds without a request, or when its project's store is gone.

It is also the project's one model worker: every ``MODEL_EVERY`` seconds, when a model is
configured and sessions queued for distillation have settled, one background thread drains
the queue (``services.distill.drain``: the worker lock, the budget, the circuit breaker and
every call's time limit apply) within ``MODEL_WORK`` seconds, then asks the model for the
judge's verdicts its heuristic left UNCLEAR (``services.judge.judge_with_model``) and the
lessons drawn offline that the model may put in better words (``services.lessons``); the server
waits for that thread before it exits, so nothing outlives it.

Requests (``{"op": ...}``): ``ping``; ``anticipate`` (``prompt``, optional ``branch``,
``session_id`` and ``deadline``): the context to inject for a prompt, possibly empty (with the
lessons a request to fix a check calls up, recorded as shown in the session, unless the
asker's ``deadline``, wall-clock seconds, has passed); ``recall`` (``query``,
``limit``, ``branch``, ``alpha``); ``warn`` (``action``, ``session_id``, ``tool_use_id``,
``dry_run``): the warnings before a tool call (``services.warn``); ``sync``: embed the backlog
now; ``upkeep`` (``cwd``, ``label``, ``memories_added``): what a turn's end left to do
(projections, briefing, lifecycle, consolidation, ``services.session.upkeep_steps``), done
between requests, once for every capture that asked
meanwhile, and before the server exits; ``capture`` (``cwd``, ``label``, ``transcript``,
``session_id``, ``agent_transcript``): a turn's end handed over whole, so the Stop hook is a
thin client: the server captures what is new (``services.session.after_capture``, exactly once
like any capture: the transcript's cursor decides) and then does the upkeep; only a server that
was given a transcript reader (its host's launcher, e.g. ``cortexmem.hosts.claude_code.serve``)
takes it; ``stop``.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import functools
import json
import os
import socket
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from cortexmem import settings
from cortexmem.model import utc_now
from cortexmem.project.files import write_atomic
from cortexmem.recall.client import IDLE_SECONDS, pointer_path, private, runtime_dir, socket_path

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from cortexmem.project.paths import ProjectPaths
    from cortexmem.services.capture import TranscriptReader
    from cortexmem.services.embedding import Embedder

    # A host's writers of its rule files for one project, by name ("lessons").
    Writers = Callable[[ProjectPaths], dict[str, Callable[[str], bool]]]

SYNC_EVERY = 2.0
ACCEPT_TIMEOUT = 0.5
READ_TIMEOUT = 0.5
BUSY_WAIT = 5.0
CAPTURE_RETRY = 2.0
RETRY_BUSY_WAIT = 0.25
CAPTURE_TRIES = 5
# Distinct problems logged by one server at most (a client sending garbage in a loop must not
# fill the log).
MAX_LOGGED = 100
# Upkeep waits for a pause between requests, but never longer than this.
UPKEEP_WAIT = 2.0
MODEL_EVERY = 10.0
MODEL_WORK = 300.0
LESSON_BATCH = 64
# In the project's data folder, one per project key, held by its one server (the client's
# ``pointer_path`` says where it listens).
PROJECT_LOCK = "recall-server"


# A turn's end handed over is captured within this many seconds of work.
CAPTURE_BUDGET = 10.0


class RecallServer:
    def __init__(
        self,
        root: Path,
        idle: float,
        reader: TranscriptReader | None = None,
        writers: Writers | None = None,
    ) -> None:
        from cortexmem.services.context import Context

        # A store another process keeps busy (a long ingest) holds a write here up to this
        # long, not SQLite's default 30 s: every session's prompts wait for the server meanwhile.
        # What a write gave up on is done again (a capture resumes at its cursor).
        self.ctx = Context.for_cwd(root, timeout=BUSY_WAIT)
        self.idle = idle
        self.last_request = time.monotonic()
        self.last_sync = 0.0
        self.backlog_left = True
        self.logged: set[str] = set()
        self.tokens: tuple[str | None, ...] = ()
        self.running = True
        self.embedder: Embedder | None = None
        # Upkeep asked for and not done yet: working folder -> (label, memories per capture).
        self.upkeep_due: dict[str, tuple[str, list[int]]] = {}
        self.upkeep_since = 0.0
        # The upkeep under way, a step at a time (``upkeep_step``).
        self.upkeep_steps: Iterator[str] | None = None
        self.root = root
        # The host's transcript reader (None: this server does not take captures) and the
        # turns' ends handed over and not captured yet.
        self.reader = reader
        self.writers = writers
        self.captures_due: list[dict[str, str | None]] = []
        # A capture the store was too busy for waits ``CAPTURE_RETRY`` and is tried again, up
        # to ``CAPTURE_TRIES`` times (by the turn's identity).
        self.capture_tries: dict[int, int] = {}
        self.capture_after = 0.0
        self.last_model_look = 0.0
        self.model_thread: threading.Thread | None = None
        # Each store file as first seen (device, inode): one deleted or replaced since
        # (``git clean -X``, ``rm``, a restore) must not be served or written any more.
        self.files: dict[str, tuple[int, int]] = {}
        self.warm = False  # the embedding model loaded (``warm_up``)
        # Memories injections and recalls served, to count while nobody asks (``flush_access``).
        self.access_due: list[tuple[str, list[str], str]] = []

    # ------------------------------------------------------------- requests

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request.get("op")
        if op == "ping":
            return {"ok": True, "pid": os.getpid(), "root": str(self.ctx.paths.root)}
        if op == "stop":
            self.running = False
            return {"ok": True}
        if op == "sync":
            return {"ok": True, "embedded": self.sync(deadline=None)}
        if op == "upkeep":
            cwd, label = request.get("cwd"), request.get("label")
            added = request.get("memories_added")
            if not isinstance(cwd, str) or not isinstance(added, int):
                return {"ok": False, "error": "upkeep needs a cwd and memories_added"}
            self._queue_upkeep(cwd, str(label or "Stop"), added)
            return {"ok": True, "queued": sum(len(c) for _, c in self.upkeep_due.values())}
        if op == "capture":
            return self._take_capture(request)
        if op == "anticipate":
            from cortexmem.services.anticipate import anticipate

            prompt = request.get("prompt")
            if not isinstance(prompt, str):
                return {"ok": False, "error": "anticipate needs a prompt"}
            session, deadline = request.get("session_id"), request.get("deadline")
            found = anticipate(
                self.ctx, prompt, branch=request.get("branch"), embedder=self._embedder(),
                session_id=session if isinstance(session, str) else None,
                deadline=float(deadline) if isinstance(deadline, int | float) else None,
                record=self._note_access,
            )  # fmt: skip
            return {"ok": True, "context": found.text, "ids": found.ids}
        if op == "warn":
            from cortexmem.services.warn import serve

            deadline = request.get("deadline")
            if isinstance(deadline, (int, float)) and time.time() > deadline:
                # the hook stopped waiting and looks it up itself: nothing to record (a warning
                # recorded here would be held back there) nor to ask a model
                return {"ok": True, "context": "", "ids": []}
            try:
                return {"ok": True, **serve(self.ctx, request, embedder=self._embedder())}
            except ValueError as exc:  # not an action
                return {"ok": False, "error": str(exc)}
        if op == "recall":
            from cortexmem.services.recall import recall

            query = request.get("query")
            if not isinstance(query, str) or not query.strip():
                return {"ok": False, "error": "recall needs a query"}
            results = recall(
                self.ctx,
                query,
                limit=int(request.get("limit") or 10),
                branch=request.get("branch"),
                alpha=request.get("alpha"),
                embedder=self._embedder(),
                count_access=False,  # counted while nobody asks, like an injection's
            )
            when = utc_now()
            for scope in {r.scope for r in results}:
                self._note_access(
                    scope, [r.memory.id for r in results if r.scope == scope and r.episode is None],
                    when,
                )  # fmt: skip
            return {
                "ok": True,
                "results": [
                    {"score": r.score, "scope": r.scope, "memory": r.memory.to_dict()}
                    for r in results
                ],
            }
        return {"ok": False, "error": f"unknown op {op!r}"}

    def _note_access(self, scope: str, ids: list[str], when: str) -> None:
        """Memories an injection or a recall served: counted later, while nobody asks (a write
        on the request path waits for any other writer of the store)."""
        if ids:
            self.access_due.append((scope, ids, when))

    def flush_access(self) -> None:
        """Count the memories served since the last flush (their rank feeds on it)."""
        due, self.access_due = self.access_due, []
        for scope, ids, when in due:
            try:
                store = self.ctx.store(scope)  # type: ignore[arg-type]
                if store is not None:
                    store.record_access(ids, when)
            except Exception as exc:  # a count lost is not worth a failed server
                self.log_once(f"recall server: access counts not written: {exc}")

    def warm_up(self) -> None:
        """Load the embedding model while nobody asks, right after the server starts: the first
        prompt of a session would otherwise wait for the load, past the hook's patience (it
        would get nothing and start a second server)."""
        self.warm = True
        store = self.ctx.store("project")
        if store is None:
            return
        try:
            embedder = self._embedder()
            # the local model only (a remote provider needs no loading and would be paid for a
            # query nobody asked), and only where there are vectors to search
            if embedder.route.remote or not (
                store.embedding_state(embedder.model)[0]
                or store.episode_embedding_state(embedder.model)[0]
            ):
                return
            embedder.query("warm up")
        except Exception as exc:  # no model here: recall answers by words
            self.log_once(f"recall server: the embedding model did not load: {exc}")

    def _embedder(self) -> Embedder:
        if self.embedder is None:
            from cortexmem.services.embedding import Embedder

            self.embedder = Embedder.for_context(self.ctx)
        return self.embedder

    def sync(self, deadline: float | None) -> int:
        """Embed memories that have no vector yet (until ``deadline``)."""
        from cortexmem.services.embedding import sync_context

        self.last_sync = time.monotonic()
        report = sync_context(self.ctx, self._embedder(), deadline=deadline)
        lessons = self.embed_lessons()
        self.backlog_left = report.remaining > 0 or lessons >= LESSON_BATCH
        return report.embedded + lessons

    def embed_lessons(self) -> int:
        """Lessons are searchable by meaning within seconds of their making."""
        from cortexmem.services.lesson_vectors import embed_lessons

        store = self.ctx.store("project")
        return embed_lessons(store, self._embedder(), LESSON_BATCH) if store else 0

    def _take_capture(self, request: dict[str, Any]) -> dict[str, Any]:
        if self.reader is None:
            return {"ok": False, "error": "this server reads no transcripts"}
        fields = ("cwd", "label", "transcript", "session_id", "agent_transcript")
        due = {k: request.get(k) for k in fields}
        if not isinstance(due["cwd"], str) or not all(
            v is None or isinstance(v, str) for v in due.values()
        ):
            return {"ok": False, "error": "capture needs a cwd; the other fields are text"}
        if due not in self.captures_due:  # the same turn's end asked twice is one capture
            self.captures_due.append(due)
        return {"ok": True, "queued": len(self.captures_due)}

    def capture(self, limit: int | None = None, *, exiting: bool = False) -> None:
        """Capture the turns' ends handed over (the first ``limit`` of them: between two, the
        loop answers the requests waiting); their upkeep is queued, done once for several. A
        turn the store was too busy for is tried again later, on a connection that waits
        ``RETRY_BUSY_WAIT`` only (the server answers nobody while it waits), unless the server
        is ``exiting``."""
        from cortexmem.project.log import log_line
        from cortexmem.project.paths import resolve
        from cortexmem.services.context import Context
        from cortexmem.services.session import after_capture

        cut = len(self.captures_due) if limit is None else max(0, limit)
        due, self.captures_due = self.captures_due[:cut], self.captures_due[cut:]
        for turn in due:
            cwd, label = str(turn["cwd"]), str(turn["label"] or "Stop")
            retry = id(turn) in self.capture_tries
            try:
                paths = resolve(Path(cwd))
                if paths.db != self.ctx.paths.db or self.reader is None:
                    continue  # not this server's project: never its business
                ctx = (
                    Context(paths, timeout=RETRY_BUSY_WAIT)
                    if retry
                    else Context(paths, timeout=self.ctx.timeout, _open=self.ctx._open)
                )
                transcript, agent = turn["transcript"], turn["agent_transcript"]
                write = self.writers(paths) if self.writers is not None else {}
                with ctx if retry else contextlib.nullcontext(ctx):
                    after_capture(
                        ctx,
                        label=f"{label} (recall server)",
                        transcript=Path(transcript) if transcript else None,
                        session_id=turn["session_id"],
                        agent_transcript=Path(agent) if agent else None,
                        reader=self.reader,
                        deadline=time.monotonic() + CAPTURE_BUDGET,
                        log=functools.partial(log_line, paths.log),
                        full=True,
                        hand_off=functools.partial(self._queue_upkeep, cwd, label),
                        queue_model_work=True,
                        write_lessons=write.get("lessons"),
                    )
            except Exception as exc:  # keep serving; the next capture reads from the cursor
                busy = "locked" in str(exc) or "busy" in str(exc)
                tries = self.capture_tries.get(id(turn), 0) + 1
                if busy and tries < CAPTURE_TRIES and not exiting:
                    # another process holds the store: this turn's end again in a moment (a
                    # session killed before its next Stop would lose it otherwise)
                    self.capture_tries[id(turn)] = tries
                    self.captures_due.append(turn)
                    self.capture_after = time.monotonic() + CAPTURE_RETRY
                    continue
                self.capture_tries.pop(id(turn), None)
                self.log_once(f"recall server: capture failed: {type(exc).__name__}: {exc}")
                continue
            self.capture_tries.pop(id(turn), None)

    def _queue_upkeep(self, cwd: str, label: str, added: int) -> bool:
        if not self.upkeep_due:
            self.upkeep_since = time.monotonic()
        _, captures = self.upkeep_due.setdefault(cwd, (label, []))
        captures.append(added)
        return True

    def upkeep(self) -> None:
        """Do the upkeep turns' ends asked for, all of it, including what was asked while it
        ran (the server stopping)."""
        while self.upkeep_due or self.upkeep_steps is not None:
            self.upkeep_step()

    def upkeep_step(self) -> bool:
        """One step of the upkeep turns' ends asked for (per working folder of this project: the
        projections, the lifecycle, the learning loop, the consolidation); False when none is
        left. Between two steps the loop answers the requests waiting."""
        if self.upkeep_steps is None:
            self.upkeep_steps = self._upkeep_steps()
        try:
            next(self.upkeep_steps)
        except StopIteration:
            self.upkeep_steps = None
            return False
        return True

    def _upkeep_steps(self) -> Iterator[str]:
        from cortexmem.project.log import log_line
        from cortexmem.project.paths import resolve
        from cortexmem.services.context import Context
        from cortexmem.services.session import upkeep_steps

        due, self.upkeep_due = self.upkeep_due, {}
        for cwd, (label, captures) in due.items():
            try:
                paths = resolve(Path(cwd))
                if paths.db != self.ctx.paths.db:
                    continue  # not this server's project: never its business
                # That working folder's branch, over the server's own open stores: a second
                # connection opened and closed in this process would take SQLite's locks of
                # the server's one with it.
                ctx = Context(paths, timeout=self.ctx.timeout, _open=self.ctx._open)
                edits = self.reader.dialect.edit_tools if self.reader is not None else frozenset()
                yield from upkeep_steps(ctx, f"{label} (upkeep)",
                                        functools.partial(log_line, paths.log), captures,
                                        edit_tools=edits)  # fmt: skip
            except Exception as exc:  # keep serving; the next turn's end asks again
                self.log_once(f"recall server: upkeep failed: {type(exc).__name__}: {exc}")

    def log_once(self, message: str) -> None:
        """One line in the project's cortex.log per distinct problem (not one every 2 s)."""
        if message in self.logged or len(self.logged) >= MAX_LOGGED:
            return
        self.logged.add(message)
        from cortexmem.project.log import log_line

        log_line(self.ctx.paths.log, message)

    def _store_replaced(self) -> bool:
        """Whether a store file this server may hold open was deleted or replaced: SQLite
        would go on reading and writing the deleted file, and every turn captured into it
        would be lost."""
        replaced = False
        for scope in ("project", "global"):
            try:
                st = os.stat(self.ctx.db_path(scope))
                now: tuple[int, int] | None = (st.st_dev, st.st_ino)
            except OSError:
                now = None
            seen = self.files.get(scope)
            if seen is None:
                if now is not None:
                    self.files[scope] = now
            elif now != seen:
                self.log_once(f"recall server: the {scope} store was deleted or replaced; exiting")
                replaced = True
        return replaced

    def _stores_changed(self) -> bool:
        """Whether a store changed since the last look (one cheap query per store), so an
        idle server does not scan for a backlog when nothing was written."""
        from cortexmem.services import briefing_cache

        tokens = tuple(
            briefing_cache.store_token(str(self.ctx.db_path(scope)))
            for scope in ("project", "global")
        )
        changed = tokens != self.tokens
        self.tokens = tokens
        return changed

    # ------------------------------------------------------------- loop

    def serve(self, sock: socket.socket) -> None:
        """Answer requests first; between them, one piece of work at a time: a turn's end
        captured, or the upkeep once ``UPKEEP_WAIT`` has gathered several (so eight sessions
        ending turns at once wait for one capture at most, never for all of them and the
        upkeep); when nothing asks, the upkeep, the model's work and the embedding backlog."""
        sock.settimeout(ACCEPT_TIMEOUT)
        while self.running:
            if time.monotonic() - self.last_request > self.idle:
                break
            if not self.ctx.paths.data_dir.exists():
                break
            if self._store_replaced():
                # what is still handed over goes to the store now at the path, then a fresh
                # server (the next hook starts one) opens it
                self.ctx.close()
                break
            if self._work_due() and not _waiting(sock):
                if self.captures_due and time.monotonic() >= self.capture_after:
                    self.capture(limit=1)
                else:
                    self.upkeep_step()
                continue
            try:
                conn, _ = sock.accept()
            except TimeoutError:
                if not self.warm:
                    self.warm_up()
                    continue
                self.flush_access()
                self.model_work()
                if self.upkeep_due or self.upkeep_steps is not None:
                    # nobody asked for half a second: the upkeep, a step at a time while
                    # nobody asks
                    while (self.upkeep_due or self.upkeep_steps) and not _waiting(sock):
                        self.upkeep_step()
                elif time.monotonic() - self.last_sync > SYNC_EVERY and (
                    self.backlog_left or self._stores_changed()
                ):
                    try:
                        self.sync(deadline=time.monotonic() + 0.5)
                    except Exception as exc:  # keep serving; say why vectors stay missing
                        self.log_once(f"recall server: embedding failed: {exc}")
                continue
            self.last_request = time.monotonic()
            with conn:
                self._answer(conn)
        self.flush_access()
        if self.captures_due:  # handed over before the server stopped: done, not dropped
            self.capture(exiting=True)
        self.upkeep()

    def _work_due(self) -> bool:
        """A turn's end to capture, an upkeep under way, or upkeep gathered for
        ``UPKEEP_WAIT``."""
        return (
            (bool(self.captures_due) and time.monotonic() >= self.capture_after)
            or self.upkeep_steps is not None
            or (bool(self.upkeep_due) and time.monotonic() - self.upkeep_since > UPKEEP_WAIT)
        )

    def model_work(self) -> None:
        """Start the background model worker when there is settled work and none runs."""
        if time.monotonic() - self.last_model_look < MODEL_EVERY:
            return
        self.last_model_look = time.monotonic()
        if self.model_thread is not None and self.model_thread.is_alive():
            return
        try:
            from cortexmem.services import distill, judge, lessons
            from cortexmem.services.models import routing_of

            # warnings the heuristic left to the model, lessons it may put in better words
            other = judge.due(self.ctx) or lessons.drafts_due(self.ctx)
            if not distill.due(self.ctx, settle=0.0) and not other:
                return
            configured = routing_of(self.ctx).route(distill.KIND).configured
            if configured and not distill.due(self.ctx, settle=distill.SETTLE) and not other:
                return  # queued, not settled yet
        except Exception as exc:
            self.log_once(f"recall server: model queue unreadable: {exc}")
            return
        self.model_thread = threading.Thread(
            target=self._drain, name="cortex-model-worker", daemon=False
        )
        self.model_thread.start()

    def _drain(self) -> None:
        """The worker thread: its own store connections, a hard time limit."""
        from cortexmem.services import distill
        from cortexmem.services.context import Context

        try:
            with Context.for_cwd(self.root) as ctx:
                report = distill.drain(
                    ctx, deadline=time.monotonic() + MODEL_WORK, settle=distill.SETTLE
                )
                judged = self._judge(ctx)
                drafted = self._draft_lessons(ctx)
            from cortexmem.project.log import log_line

            if judged:
                log_line(self.ctx.paths.log, f"judge: {judged} verdicts by the model")
            if drafted:
                log_line(self.ctx.paths.log, f"lessons: {drafted} drafted by the model")

            for failure in report.failed:
                log_line(self.ctx.paths.log, f"distill failed: {failure}")
            if report.sessions or report.stopped:
                added = sum(r.added for r in report.sessions)
                log_line(
                    self.ctx.paths.log,
                    f"distill: {len(report.sessions)} sessions, {added} memories added"
                    + (f"; stopped: {report.stopped}" if report.stopped else ""),
                )
        except Exception as exc:  # the worker must never take the server down
            self.log_once(f"recall server: model worker failed: {type(exc).__name__}: {exc}")

    def _judge(self, ctx: Any) -> int:
        """The warnings left UNCLEAR at Stop, judged by the model in one batch (worker
        thread: its lock, budget and breaker are ``services.models.ask``'s)."""
        from cortexmem.services import judge

        try:
            return judge.judge_with_model(ctx) if judge.due(ctx) else 0
        except Exception as exc:  # no model, over budget, a failing provider: next time
            self.log_once(f"recall server: judge: {type(exc).__name__}: {exc}")
            return 0

    def _draft_lessons(self, ctx: Any) -> int:
        """The newest lessons drawn offline, put in better words by the model in one batch
        (worker thread; ``services.models.ask`` keeps the budget and the breaker)."""
        from cortexmem.services import lessons

        try:
            return lessons.draft_with_model(ctx) if lessons.drafts_due(ctx) else 0
        except Exception as exc:  # no model, over budget, a failing provider: next time
            self.log_once(f"recall server: lesson drafts: {type(exc).__name__}: {exc}")
            return 0

    def join_model_worker(self) -> None:
        thread = self.model_thread
        if thread is not None and thread.is_alive():
            thread.join(MODEL_WORK + 60.0)

    def _answer(self, conn: socket.socket) -> None:
        # A client sends its request at once; one that does not (a hook suspended by ^Z) must
        # not hold up every other session's prompts for long.
        conn.settimeout(READ_TIMEOUT)
        data = b""
        with contextlib.suppress(OSError):
            while not data.endswith(b"\n") and len(data) < 1 << 20:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
        try:
            request = json.loads(data.decode("utf-8"))
            if not isinstance(request, dict):
                raise ValueError("a request is a JSON object")
            reply = self.handle(request)
        except Exception as exc:  # a bad request must not stop the server
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
            self.log_once(f"recall server: {reply['error']}")
        with contextlib.suppress(OSError):
            conn.sendall(json.dumps(reply).encode("utf-8") + b"\n")


def _waiting(sock: socket.socket) -> bool:
    """Whether a connection waits to be accepted."""
    import select

    readable, _, _ = select.select([sock], [], [], 0)
    return bool(readable)


def run(
    root: Path,
    idle: float = IDLE_SECONDS,
    reader: TranscriptReader | None = None,
    writers: Writers | None = None,
) -> int:
    """Serve until idle; 0 when another server already serves this project. ``reader``: the
    host's transcript reader, when the server is to take turns' ends (``capture``);
    ``writers``: the host's writers of its rule files for a project (``"lessons"``)."""
    from cortexmem.project.paths import resolve

    paths = resolve(root)
    folder = runtime_dir()
    os.makedirs(folder, mode=0o700, exist_ok=True)
    if not private(folder):  # someone else's folder, or open to others: never serve from it
        from cortexmem.project.log import log_line, log_tail

        why = (
            f"recall server: not started: {folder} is not a private folder of this user "
            "(mode 0700, owned by you); fix it or set XDG_RUNTIME_DIR"
        )
        if why not in log_tail(paths.log):  # every hook tries again: said once, not each time
            log_line(paths.log, why)
        return 1
    path = socket_path(paths.project_hash)
    # One server per project, whatever runtime folder it was started under (a terminal's and
    # an IDE's differ): the project's own lock first, then this folder's.
    locked = str(paths.data_dir / f"{PROJECT_LOCK}-{paths.project_hash[:16]}.lock")
    project_lock = _lock(locked) if paths.data_dir.is_dir() else None
    if paths.data_dir.is_dir() and project_lock is None:
        return 0
    lock_path = path[: -len(".sock")] + ".lock"
    lock = _lock(lock_path)
    if lock is None:
        if project_lock is not None:
            project_lock.close()
        return 0
    # The worktree given: resolving paths.root again may differ.
    server = RecallServer(root, idle, reader, writers)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    pointer = Path(pointer_path(str(paths.data_dir), paths.project_hash))
    try:
        sock.bind(path)
        os.chmod(path, 0o600)
        sock.listen(16)
        if project_lock is not None:
            with contextlib.suppress(OSError):
                write_atomic(pointer, path + "\n", private=True)
        server.serve(sock)
    finally:
        server.join_model_worker()
        sock.close()
        with contextlib.suppress(OSError):
            if pointer.read_text(encoding="utf-8").strip() == path:
                pointer.unlink()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        server.ctx.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(lock_path)  # one lock file per running server, not per project ever served
        lock.close()
        if project_lock is not None:
            project_lock.close()
    return 0


def _lock(lock_path: str) -> TextIO | None:
    """``lock_path`` locked for this process's lifetime; None when another holds it. A server
    that exits removes its runtime folder's lock file: one opened just before that is no
    longer the lock (another start may hold a new one), so that start leaves serving to it."""
    fd = os.open(lock_path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    lock = os.fdopen(fd, "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if os.fstat(fd).st_ino != os.stat(lock_path).st_ino:
            raise OSError("lock file replaced")
    except OSError:
        lock.close()
        return None
    return lock


def main(
    argv: list[str] | None = None,
    reader: TranscriptReader | None = None,
    writers: Writers | None = None,
) -> int:
    """The server's command line; a host's launcher passes its transcript ``reader`` and the
    ``writers`` of its rule files."""
    parser = argparse.ArgumentParser(prog="cortexmem.recall.server", description=__doc__)
    parser.add_argument("--root", type=Path, default=Path.cwd())
    parser.add_argument("--idle", type=float, default=settings.server_idle_seconds())
    args = parser.parse_args(argv)
    return run(args.root, args.idle, reader, writers)


if __name__ == "__main__":
    raise SystemExit(main())
