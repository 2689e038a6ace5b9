"""``cortex mcp-server``: the project's memory as an MCP server on stdio, for the assistant to
query and add to mid-session.

Built on the official Python SDK, major version 2 (``mcp>=2.3,<3``: 2.x renamed ``FastMCP`` to
``MCPServer``; 1.x code does not import under 2.x, so the major version is pinned on purpose).
Only this module imports ``mcp``; the CLI imports it when ``cortex mcp-server`` runs.

* The project is ``$CLAUDE_PROJECT_DIR`` (Claude Code sets it for the servers it starts), else
  the working directory. Every call opens the stores afresh (the current branch is re-read, and
  SQLite connections stay in the thread that made them) and closes them after.
* Tools do their work in ``services.mcp_tools``; an argument that breaks a rule or a memory
  that is not there comes back as a tool result with ``isError`` and one readable line. What
  the JSON Schema already forbids the SDK rejects the same way, but with pydantic's report of
  several lines (and a link); ``CortexServer.call_tool`` turns that into one line naming the
  argument and what it allows, for every tool at once. An unknown resource is a JSON-RPC
  error. Nothing a call does can stop the server.
* stdout carries protocol messages only (the SDK points fd 1 at stderr while it serves, so a
  stray print cannot corrupt the stream); logs go to stderr.
* Start-up imports the SDK and Cortex's store layer, nothing heavier: the embedding model is
  loaded by the first search that has vectors to compare (``services.recall``).
"""

from __future__ import annotations

import inspect
import io
import json
import logging
import os
import sqlite3
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, cast

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.context import Context as CallContext
from mcp.server.mcpserver.exceptions import ResourceError, ToolError, UnexpectedToolError
from mcp.types import CallToolResult, InputRequiredResult, ToolAnnotations
from pydantic import Field, ValidationError
from pydantic_core import ErrorDetails

from cortexmem import __version__
from cortexmem.core.text import clean_text
from cortexmem.errors import CortexError
from cortexmem.model import MEMORY_TYPES, RELATION_TYPES
from cortexmem.services import mcp_tools

log = logging.getLogger("cortexmem.mcp")

SERVER_NAME = "cortex"
CALL_TIMEOUT = 10.0  # seconds a call waits for a store another process holds

INSTRUCTIONS = """\
Cortex is this project's long-term memory: decisions and the alternatives rejected, \
architecture, patterns, gotchas, progress and context from earlier sessions, plus indexed code. \
Use it as a reflex, without being asked:
- Before answering a question about this codebase, changing code you have not touched in this \
session, or repeating a decision, call `search` (or `search_decisions`) with the subject in a \
few words; earlier sessions may already hold the answer, a gotcha or a rejected approach.
- After a compaction or at the start of a task, call `get_plan` and `get_recent` to pick up \
where the work stands.
- When a decision is made, a gotcha or fix is found, or the person states a preference, call \
`remember` with one self-contained sentence and the right type. No secrets.
- When a memory proves wrong or outdated, `forget` it (it is archived, not deleted).
Results carry ids: `get` shows one memory in full, `traverse` follows its links. Progress and \
context are per git branch (the current one unless you pass `branch` or `all_branches`)."""

MemoryType = Literal[MEMORY_TYPES]  # type: ignore[valid-type]
EdgeTypes = Annotated[
    list[Annotated[str, Field(max_length=40)]] | None,
    Field(description=f"Follow only these edge types: {', '.join(RELATION_TYPES)}. Aliases are "
                      "accepted (derives, Related, derived-from...), as on the command line.",
          max_length=20),
]  # fmt: skip
Branch = Annotated[
    str | None,
    Field(
        description="Git branch whose progress and context to use; default: the current one.",
        max_length=250,
    ),
]
AllBranches = Annotated[
    bool,
    Field(description="Include progress and context recorded on every branch."),
]
MemoryId = Annotated[
    str,
    Field(description="A memory id (m-...) or a unique prefix of one; for `get`, also an "
                      "episode id (ep-...) as `search` lists what was said.",
          min_length=1, max_length=64),
]  # fmt: skip

T = TypeVar("T")

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)


def project_dir() -> Path:
    """``$CLAUDE_PROJECT_DIR`` when it names a folder, else the working directory (the one rule
    of ``hosts.claude_code.payload.project_dir``), with a warning when it names none."""
    from cortexmem.hosts.claude_code.payload import launched_for
    from cortexmem.hosts.claude_code.payload import project_dir as claude_project_dir

    env = launched_for()
    if env and not Path(env).is_dir():
        log.warning("CLAUDE_PROJECT_DIR=%s is not a folder; using %s", env, Path.cwd())
    return claude_project_dir()


def _dump(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=1)


def _failure(exc: BaseException) -> str | None:
    """The one line a caller gets for an expected failure; None for a bug."""
    if isinstance(exc, CortexError):
        return str(exc)
    if isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc)):
        return f"the memory store stayed busy for {CALL_TIMEOUT:.0f} s; try again"
    if isinstance(exc, sqlite3.Error):
        return f"database error: {exc}"
    if isinstance(exc, OSError):
        where = f": {exc.filename}" if exc.filename else ""
        return f"{exc.strerror or exc}{where}"
    return None


def _shown(value: Any) -> str:
    """A rejected value as the message quotes it: short scalars as they are, anything long
    or nested by its kind (a 3,000-character query is not echoed back)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    shown = repr(value)
    if len(shown) <= 42:
        return shown
    return f"a text of {len(value)} characters" if isinstance(value, str) else "a long number"


def _where(loc: tuple[int | str, ...]) -> str:
    """``("types", 0)`` → ``types[0]``: the argument, and the item of a list when it is one."""
    head, *rest = loc
    return str(head) + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in rest)


_MUST: dict[str, str] = {
    "string_type": "must be text",
    "list_type": "must be a list",
    "int_type": "must be a whole number",
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "dict_type": "must be an object",
}
_BOUNDS: dict[str, tuple[str, str]] = {
    "greater_than_equal": ("at least", "ge"),
    "less_than_equal": ("at most", "le"),
    "greater_than": ("more than", "gt"),
    "less_than": ("less than", "lt"),
}


def _argument_problem(error: ErrorDetails) -> str:
    """One rejected argument in words: which one, what it allows, what it got."""
    where, kind, got = _where(error["loc"]), error["type"], error["input"]
    ctx = error.get("ctx", {})
    if kind == "missing":
        return f"{where} is required"
    if kind == "string_too_short" and ctx.get("min_length") == 1:
        return f"{where} must not be empty"
    if kind == "string_too_long":
        return f"{where} must be at most {ctx['max_length']} characters (got {len(got)})"
    if kind == "too_long":
        return f"{where} must have at most {ctx['max_length']} items (got {ctx['actual_length']})"
    if kind in _BOUNDS:
        words, key = _BOUNDS[kind]
        return f"{where} must be {words} {ctx[key]} (got {_shown(got)})"
    if kind == "literal_error":
        return f"{where} must be one of {ctx['expected']} (got {_shown(got)})"
    if kind in _MUST:
        return f"{where} {_MUST[kind]} (got {_shown(got)})"
    return f"{where}: {error['msg']}"  # pydantic's own words, one line, without the link


def argument_errors(exc: ValidationError) -> str:
    """The arguments a schema rejected, in one line: ``limit must be at most 50 (got 51)``."""
    return "; ".join(_argument_problem(error) for error in exc.errors(include_url=False))


class CortexServer(MCPServer):
    """``MCPServer`` whose argument errors read as one line each, for every tool.

    The SDK validates a call's arguments with the tool's pydantic model and, when they do not
    fit, raises ``ToolError`` from the ``ValidationError`` with pydantic's full report: a
    header, the field on a line of its own, the input repeated, a documentation link. That
    is the one case rewritten here, around the SDK's ``call_tool`` (its documented place to
    catch a tool's failures); the cause is kept, so the SDK still logs the fields only."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: CallContext[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(exc, UnexpectedToolError) or not isinstance(cause, ValidationError):
                raise
            raise ToolError(f"Error executing tool {name}: {argument_errors(cause)}") from cause


def build_server(project: Path | None = None) -> MCPServer:
    """The server with its tools and resources, serving the project at ``project``."""
    from cortexmem.services.context import Context

    root = (project or project_dir()).resolve()

    def call(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        try:
            with Context.for_cwd(root, timeout=CALL_TIMEOUT) as ctx:
                return fn(ctx, *args, **kwargs)
        except Exception as exc:
            message = _failure(exc)
            if message is None:
                raise  # the SDK logs the traceback and answers with a generic error
            raise ToolError(message) from None

    def read(fn: Callable[..., str]) -> str:
        try:
            with Context.for_cwd(root, timeout=CALL_TIMEOUT) as ctx:
                return fn(ctx)
        except Exception as exc:
            message = _failure(exc)
            if message is None:
                raise
            raise ResourceError(message) from None

    server = CortexServer(
        SERVER_NAME,
        title="Cortex memory",
        description="Long-term memory of this project for AI coding assistants.",
        instructions=INSTRUCTIONS,
        version=__version__,
    )

    def tool(annotations: ToolAnnotations = READ_ONLY) -> Callable[[Callable[..., str]], Any]:
        """Register a tool that answers with one JSON text block; its docstring, dedented, is
        the description the model reads."""

        def register(fn: Callable[..., str]) -> Callable[..., str]:
            description = inspect.cleandoc(fn.__doc__ or "")
            server.add_tool(fn, description=description, annotations=annotations,
                            structured_output=False)  # fmt: skip
            return fn

        return register

    @tool()
    def search(
        query: Annotated[str, Field(description="What to look for: words, a path, a question.",
                                    min_length=1, max_length=mcp_tools.MAX_QUERY_CHARS)],
        types: Annotated[list[MemoryType] | None,
                         Field(description="Only these memory types.")] = None,
        scope: Annotated[Literal["all", "project", "global"],
                         Field(description="Which stores to search.")] = "all",
        branch: Branch = None,
        all_branches: AllBranches = False,
        limit: Annotated[int, Field(ge=1, le=mcp_tools.SEARCH_LIMIT[1])] = 10,
    ) -> str:  # fmt: skip
        """Search the project's memory (and the person's global memory) by words and meaning.

        Use it as a reflex before answering about this codebase, touching code you have not
        read this session, or re-deciding something: earlier sessions may hold the answer, a
        gotcha, or an approach already rejected. Best first; each result has an id for `get`
        and `traverse`. A code description comes with its code.
        """
        return _dump(call(mcp_tools.search, query, types=types or (), scope=scope,
                          branch=branch, all_branches=all_branches, limit=limit))  # fmt: skip

    @tool()
    def search_decisions(
        query: Annotated[str | None, Field(description="Subject of the decision; omit for the "
                                           "most important decisions.",
                                           max_length=mcp_tools.MAX_QUERY_CHARS)] = None,
        branch: Branch = None,
        all_branches: AllBranches = False,
        limit: Annotated[int, Field(ge=1, le=mcp_tools.LIST_LIMIT[1])] = 20,
    ) -> str:  # fmt: skip
        """Decisions made in this project and the alternatives rejected (tagged `rejected`),
        with their reasons. Check before proposing a design or a library: it may have been
        decided, or turned down, already. Decisions never decay."""
        return _dump(call(mcp_tools.search_decisions, query, branch=branch,
                          all_branches=all_branches, limit=limit))  # fmt: skip

    @tool()
    def get_plan(branch: Branch = None) -> str:
        """The unfinished plan (TodoWrite list) of the branch, with each step's status:
        where the work stands after a compaction or in a new session."""
        return _dump(call(mcp_tools.get_plan, branch=branch))

    @tool()
    def get_recent(
        branch: Branch = None,
        all_branches: AllBranches = False,
        limit: Annotated[int, Field(ge=1, le=mcp_tools.LIST_LIMIT[1])] = 20,
        min_salience: Annotated[float, Field(ge=0.0, le=1.0, description="Leave out events "
                                             "less salient than this (0-1).")] = 0.3,
        kinds: Annotated[list[str] | None, Field(description="Only these event kinds, e.g. "
                         "commit, error_resolved, decision, test_run, plan_step.")] = None,
    ) -> str:  # fmt: skip
        """What happened lately in this project's sessions, newest first: decisions, errors
        and their fixes, commits, test runs, files changed, plan steps."""
        return _dump(call(mcp_tools.get_recent, branch=branch, all_branches=all_branches,
                          limit=limit, min_salience=min_salience, kinds=kinds or ()))  # fmt: skip

    @tool()
    def get_status(branch: Branch = None) -> str:
        """Where this project's memory lives and what it holds (counts by type and status,
        last capture, schema), and whether the branch has an unfinished plan."""
        return _dump(call(mcp_tools.get_status, branch=branch))

    @tool(ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                          open_world_hint=False))  # fmt: skip
    def remember(
        text: Annotated[str, Field(description="One self-contained statement (a decision with "
                                   "its reason, a gotcha and its fix, a convention...). No "
                                   "secrets.", min_length=1,
                                   max_length=mcp_tools.MAX_TEXT_CHARS)],
        type: Annotated[MemoryType, Field(description="What kind of knowledge it is.")] = (
            "context"),
        priority: Annotated[int, Field(ge=1, le=10, description="How much it matters.")] = 5,
        scope: Annotated[Literal["project", "global"], Field(
            description="global: knowledge that holds across projects.")] = "project",
        tags: Annotated[list[Annotated[str, Field(max_length=64)]] | None,
                        Field(max_length=20)] = None,
        summary: Annotated[str | None, Field(max_length=300)] = None,
        pinned: Annotated[bool, Field(description="Pinned memories never decay.")] = False,
        branch: Branch = None,
    ) -> str:  # fmt: skip
        """Store something worth knowing in later sessions, without being asked, as soon as
        it emerges: a decision and the alternatives rejected (type decision), a gotcha or an
        error's fix (gotcha), a convention or preference (pattern), how the code is organised
        (architecture), where unfinished work stands (progress). Storing the same text twice
        keeps one memory."""
        return _dump(call(mcp_tools.remember, text, memory_type=type, priority=priority,
                          scope=scope, tags=tags or (), summary=summary, pinned=pinned,
                          branch=branch))  # fmt: skip

    @tool()
    def get(id: MemoryId, branch: Branch = None) -> str:
        """One memory in full, with the edges that link it to others; or one episode (what
        was said, ep-...) with where it was said and the memories drawn from it."""
        return _dump(call(mcp_tools.get, id, branch=branch))

    @tool()
    def traverse(
        id: MemoryId,
        depth: Annotated[int, Field(ge=1, le=mcp_tools.DEPTH[1])] = 2,
        edge_types: EdgeTypes = None,
        direction: Literal["out", "in", "both"] = "both",
        min_strength: Annotated[float, Field(ge=0.0, le=1.0)] = 0.0,
        branch: Branch = None,
        all_branches: AllBranches = False,
    ) -> str:  # fmt: skip
        """Follow the links from a memory (what it derives from, refines, contradicts,
        supersedes; the code a description is the source of), breadth-first, by depth.
        `edge_types` takes the types' names or their aliases (derives, Related...)."""
        return _dump(call(mcp_tools.traverse, id, depth=depth, edge_types=edge_types or (),
                          direction=direction, min_strength=min_strength, branch=branch,
                          all_branches=all_branches))  # fmt: skip

    @tool()
    def lessons_for_action(
        tool: Annotated[str, Field(description="The tool about to be called: Bash, Edit, "
                                   "Write...", min_length=1, max_length=100)],
        command: Annotated[str, Field(description="For a shell tool: the command.",
                                      max_length=mcp_tools.MAX_QUERY_CHARS)] = "",
        path: Annotated[str, Field(description="For a file tool: the file.",
                                   max_length=1_000)] = "",
        text: Annotated[str, Field(description="What it will write, in a few words.",
                                   max_length=mcp_tools.MAX_QUERY_CHARS)] = "",
        scope: Annotated[Literal["lessons", "scars", "victories"], Field(
            description="scars: failures and corrections; victories: what worked.")] = "scars",
        limit: Annotated[int, Field(ge=1, le=mcp_tools.SEARCH_LIMIT[1])] = 5,
    ) -> str:  # fmt: skip
        """Before a risky action (a migration, a deploy, a command that failed before, an edit
        of a touchy file): what earlier sessions learned about it. The warnings the hook would
        give (with why each fired or not) and the lessons recalled, each with its id and tier
        (T0 principle … T3 raw)."""
        return _dump(call(mcp_tools.lessons_for_action, tool, command=command, path=path,
                          text=text, scope=scope, limit=limit))  # fmt: skip

    @tool(ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                          open_world_hint=False))  # fmt: skip
    def lesson_feedback(
        id: Annotated[str, Field(description="The lesson's id, or the part a warning shows.",
                                 min_length=1, max_length=64)],
        signal: Literal["followed", "ignored", "noise"],
        reason: Annotated[Literal["wrong_language", "wrong_repo", "wrong_task", "stale_rule"]
                          | None, Field(description="Why it was noise (needed for noise).")] = None,
        language: Annotated[str | None, Field(description="For wrong_language: the language it "
                                              "was wrong for.", max_length=40)] = None,
    ) -> str:  # fmt: skip
        """Say whether a warning helped: followed, ignored, or noise with its reason
        (wrong_language and wrong_repo narrow where it applies; wrong_task and stale_rule
        count toward retiring it). Stronger than the automatic judge."""
        return _dump(call(mcp_tools.lesson_feedback, id, signal, reason=reason,
                          language=language))  # fmt: skip

    @tool(ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True,
                          open_world_hint=False))  # fmt: skip
    def forget(id: MemoryId, branch: Branch = None) -> str:
        """Archive a memory that proved wrong or outdated: it is no longer recalled, but stays
        in the store and its backups. Progress or context of another branch needs that
        branch named."""
        return _dump(call(mcp_tools.forget, id, branch=branch))

    @server.resource("cortex://status", name="status", mime_type="application/json",
                     description="Project, stores and counts (as `get_status`).")  # fmt: skip
    def status_resource() -> str:
        return read(lambda ctx: _dump(mcp_tools.get_status(ctx)))

    @server.resource("cortex://decisions", name="decisions", mime_type="text/markdown",
                     description="Every active decision, oldest first.")  # fmt: skip
    def decisions_resource() -> str:
        return read(mcp_tools.decisions_markdown)

    @server.resource("cortex://plan", name="plan", mime_type="text/markdown",
                     description="The current branch's unfinished plan.")  # fmt: skip
    def plan_resource() -> str:
        return read(mcp_tools.plan_markdown)

    return server


def run(project: Path | None = None, log_level: str = "WARNING") -> None:
    """Serve on stdin/stdout until the client closes stdin."""
    logging.basicConfig(
        stream=sys.stderr,
        level=log_level,
        format="cortex mcp-server %(levelname)s %(name)s: %(message)s",
    )
    server = build_server(project)
    log.info("serving %s", (project or project_dir()).resolve())
    anyio.run(serve_stdio, server)


def clean_message(line: str) -> str:
    """One JSON-RPC line as the SDK can parse it. JSON allows ``"\\ud83d"`` (a lone surrogate)
    and ``"\\u0000"``, but the SDK's parser rejects the first and then never answers the
    request, so the client hangs: every string in the message goes through ``clean_text``."""
    if "\\u" not in line:
        return line  # raw bytes that were not UTF-8 were already replaced on reading
    try:
        data = json.loads(line)
    except ValueError:
        return line  # the SDK reports it
    cleaned = _clean_strings(data)
    return line if cleaned == data else json.dumps(cleaned, ensure_ascii=False)


def _clean_strings(value: Any) -> Any:
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_text(k): _clean_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean_strings(v) for v in value]
    return value


class _CleanLines:
    """The wire's lines, each through ``clean_message``."""

    def __init__(self, source: Any) -> None:
        self.source = source

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line in self.source:
            yield clean_message(line)


async def serve_stdio(server: MCPServer) -> None:
    """``server.run("stdio")`` with the incoming lines cleaned. Like the SDK, fd 0 points at the
    null device while serving (a child process cannot eat the protocol stream) and is put back
    after; stdout stays the SDK's (it diverts fd 1 to stderr itself)."""
    from mcp.server.stdio import stdio_server

    wire = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        reader = io.TextIOWrapper(
            os.fdopen(wire, "rb", closefd=False), encoding="utf-8", errors="replace"
        )
        stdin = cast(Any, _CleanLines(anyio.wrap_file(reader)))
        async with stdio_server(stdin=stdin) as (read_stream, write_stream):
            lowlevel = server._lowlevel_server
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
    finally:
        os.dup2(wire, 0)
        os.close(wire)
