"""`cortex mcp-server` as Claude Code runs it: a real process on stdio, driven by the MCP SDK's
own client (``stdio_client`` + ``ClientSession``) against a real project store in a temporary
git repository. Every tool and resource is called; bad arguments must come back as MCP errors
and leave the server running.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

import cortexmem
from cortexmem.errors import CortexError
from cortexmem.model import Edge, Event, Memory, Provenance, SourceContext
from cortexmem.services import mcp_tools
from cortexmem.services.context import Context
from cortexmem.services.memories import remember

from conftest import git

TOOLS = {
    "search",
    "lessons_for_action",
    "lesson_feedback",
    "search_decisions",
    "get_plan",
    "get_recent",
    "get_status",
    "remember",
    "get",
    "traverse",
    "forget",
}
RESOURCES = {"cortex://status", "cortex://decisions", "cortex://plan"}


def server_params(repo: Path, cwd: Path, *, project_env: bool = True) -> StdioServerParameters:
    """The server as Claude Code starts it, with a bare environment; it runs the code these
    tests import (a checkout's ``src``, not whichever one is installed)."""
    env = {
        "CORTEX_HOME": os.environ["CORTEX_HOME"],
        "XDG_RUNTIME_DIR": os.environ.get("XDG_RUNTIME_DIR", "/tmp"),
        "PYTHONPATH": str(Path(cortexmem.__file__).parents[1]),
    }
    if project_env:
        env["CLAUDE_PROJECT_DIR"] = str(repo)
    return StdioServerParameters(
        command=sys.executable, args=["-m", "cortexmem", "mcp-server"], env=env, cwd=str(cwd)
    )


class Client:
    """Thin helpers over one ``ClientSession``."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session

    async def call(self, name: str, **arguments: Any) -> dict:
        result = await self.session.call_tool(name, arguments)
        assert not result.is_error, result.content[0].text
        return json.loads(result.content[0].text)

    async def fails(self, name: str, **arguments: Any) -> str:
        result = await self.session.call_tool(name, arguments)
        assert result.is_error, (name, arguments, result.content)
        return result.content[0].text

    async def read(self, uri: str) -> str:
        result = await self.session.read_resource(uri)
        (content,) = result.contents
        return content.text


def run_client(params: StdioServerParameters, scenario) -> None:
    async def main() -> None:
        with anyio.fail_after(50):
            async with (
                stdio_client(params, errlog=sys.stderr) as (read, write),
                ClientSession(read, write) as session,
            ):
                init = await session.initialize()
                await scenario(Client(session), init)

    anyio.run(main)


@pytest.fixture
def seeded(ctx: Context) -> dict[str, str]:
    """A decision linked to a gotcha, a progress note on another branch, and a plan."""
    decision, _ = remember(ctx, "SQLite WAL for the local store; PostgreSQL was rejected: no "
                           "server to run", memory_type="decision", priority=8)  # fmt: skip
    gotcha, _ = remember(ctx, "WAL mode needs the -shm file writable next to the database",
                         memory_type="gotcha")  # fmt: skip
    store = ctx.writable("project")
    store.add_edge(Edge(gotcha.id, decision.id, "derived_from", 0.9))
    feature, _ = store.add_memory(
        Memory(
            content="Halfway through the parquet exporter on the feature branch",
            memory_type="progress",
            source_context=SourceContext(branch="feature"),
        )
    )
    where = Provenance(session_id="session-1", branch="main")
    steps = ["Write the exporter", "Document the exporter"]
    store.append_event(Event("plan", "Plan (2 steps)", {"tool": "TodoWrite", "steps": steps},
                             salience=0.6, provenance=where))  # fmt: skip
    store.append_event(Event("plan_step", "[completed] Write the exporter",
                             {"step": "Write the exporter", "status": "completed"},
                             salience=0.5, provenance=where))  # fmt: skip
    return {"decision": decision.id, "gotcha": gotcha.id, "feature": feature.id}


@pytest.mark.slow
def test_every_tool_and_resource_over_stdio(repo: Path, seeded: dict[str, str], tmp_path: Path):
    elsewhere = tmp_path / "elsewhere"  # the server finds the project from CLAUDE_PROJECT_DIR
    elsewhere.mkdir()

    async def scenario(c: Client, init) -> None:
        assert init.server_info.name == "cortex"
        assert "reflex" in init.instructions and "remember" in init.instructions
        tools = {t.name: t for t in (await c.session.list_tools()).tools}
        assert set(tools) == TOOLS
        for tool in tools.values():
            assert tool.description and tool.input_schema["type"] == "object"
            assert "\n    " not in tool.description  # dedented docstrings
            if not tool.name.startswith("lesson"):  # lessons are the project's, on every branch
                assert "branch" in tool.input_schema["properties"], tool.name
        assert tools["forget"].annotations.destructive_hint is True
        assert tools["search"].annotations.read_only_hint is True
        remember_schema = tools["remember"].input_schema["properties"]
        assert "decision" in json.dumps(remember_schema["type"])
        resources = {str(r.uri) for r in (await c.session.list_resources()).resources}
        assert resources == RESOURCES

        # remember, then search finds it; the same text twice is one memory
        stored = await c.call("remember", text="Ruff with line length 100 is the only linter",
                              type="pattern", priority=7, tags=["lint"])  # fmt: skip
        assert stored["created"] and stored["memory"]["type"] == "pattern"
        again = await c.call("remember", text="Ruff with line length 100 is the only linter",
                             type="pattern")  # fmt: skip
        assert not again["created"] and again["memory"]["id"] == stored["memory"]["id"]
        found = await c.call("search", query="which linter?")
        assert found["branch"] == "main"
        assert found["results"][0]["id"] == stored["memory"]["id"]
        only = await c.call("search", query="linter WAL", types=["decision"])
        assert {r["type"] for r in only["results"]} == {"decision"}

        # get: in full, with its edges
        full = await c.call("get", id=seeded["decision"])
        assert full["memory"]["content"].startswith("SQLite WAL")
        assert full["memory"]["priority"] == 8 and "source_type" in full["memory"]
        assert full["edges"] == [{"type": "derived_from", "direction": "in",
                                  "other": seeded["gotcha"], "strength": 0.9}]  # fmt: skip
        prefix = await c.call("get", id=seeded["decision"][:14])
        assert prefix["memory"]["id"] == seeded["decision"]

        # traverse
        walked = await c.call("traverse", id=seeded["gotcha"], depth=2, direction="out")
        assert walked["start"]["id"] == seeded["gotcha"]
        assert [[r["memory"]["id"] for r in level] for level in walked["depths"]] == [
            [seeded["decision"]]
        ]
        assert walked["depths"][0][0]["edge"] == "derived_from"
        none = await c.call("traverse", id=seeded["gotcha"], edge_types=["supersedes"])
        assert none["depths"] == []
        # edge types as a person or a model writes them: the CLI's alias table
        edge_types = tools["traverse"].input_schema["properties"]["edge_types"]
        assert "Aliases are accepted" in edge_types["description"]
        aliased = await c.call("traverse", id=seeded["gotcha"], edge_types=["Related", "derives"])
        assert aliased["depths"][0][0]["memory"]["id"] == seeded["decision"]
        hyphenated = await c.call("traverse", id=seeded["gotcha"], depth=2, direction="out",
                                  edge_types=["Derived-From"])  # fmt: skip
        assert hyphenated["depths"] == walked["depths"]

        # plan, recent, status, decisions
        plan = await c.call("get_plan")
        assert plan["plan"]["done"] == 1 and plan["plan"]["total"] == 2
        assert plan["plan"]["steps"][0] == {"text": "Write the exporter", "status": "completed"}
        assert (await c.call("get_plan", branch="feature"))["plan"] is None
        recent = await c.call("get_recent", limit=5)
        assert [e["kind"] for e in recent["events"]] == ["plan_step", "plan"]
        assert (await c.call("get_recent", min_salience=0.55))["events"][0]["kind"] == "plan"
        only = await c.call("get_recent", kinds=["plan"])
        assert [e["kind"] for e in only["events"]] == ["plan"]
        status = await c.call("get_status")
        assert Path(status["project"]) == repo.resolve()
        assert status["stores"]["project"]["memories"] == 4
        assert status["plan"] == {"branch": "main", "unfinished": "1/2 steps done"}
        decisions = await c.call("search_decisions")
        assert [d["id"] for d in decisions["decisions"]] == [seeded["decision"]]
        decisions = await c.call("search_decisions", query="PostgreSQL")
        assert decisions["decisions"][0]["id"] == seeded["decision"]

        # branches: another branch's progress only when asked
        query = "parquet exporter"
        assert (await c.call("search", query=query))["results"] == []
        on_feature = await c.call("search", query=query, branch="feature")
        assert [r["id"] for r in on_feature["results"]] == [seeded["feature"]]
        everywhere = await c.call("search", query=query, all_branches=True)
        assert everywhere["branch"] is None and len(everywhere["results"]) == 1
        assert "not both" in await c.fails("search", query=query, branch="feature",
                                           all_branches=True)  # fmt: skip
        note = (await c.call("get", id=seeded["feature"]))["note"]
        assert "branch feature" in note
        message = await c.fails("forget", id=seeded["feature"])
        assert "branch='feature'" in message
        assert (await c.call("forget", id=seeded["feature"], branch="feature"))["archived"]
        git(repo, "checkout", "-q", "-b", "feature")  # the server follows the current branch
        assert (await c.call("search", query="which linter?"))["branch"] == "feature"
        git(repo, "checkout", "-q", "main")

        # forget archives: no longer found, still there
        gone = await c.call("forget", id=stored["memory"]["id"])
        assert gone["archived"] and gone["memory"]["status"] == "archived"
        assert stored["memory"]["id"] not in json.dumps(await c.call("search", query="linter"))
        assert (await c.call("get", id=stored["memory"]["id"]))["memory"]["status"] == "archived"
        assert not (await c.call("forget", id=stored["memory"]["id"]))["archived"]

        # resources
        assert json.loads(await c.read("cortex://status"))["project"] == status["project"]
        decisions_md = await c.read("cortex://decisions")
        assert decisions_md.startswith("# Decisions") and "SQLite WAL" in decisions_md
        plan_md = await c.read("cortex://plan")
        assert "- [x] Write the exporter" in plan_md and "- [ ] Document the exporter" in plan_md

    run_client(server_params(repo, elsewhere), scenario)


@pytest.mark.slow
def test_bad_arguments_are_mcp_errors_and_the_server_lives_on(repo: Path, seeded):
    """Each bad argument is a tool error of one line naming the argument and what it allows,
    whether the schema rejected it (the SDK's pydantic report, rewritten) or a rule of
    ``services.mcp_tools`` did."""
    memory_types = "'architecture', 'decision', 'pattern', 'gotcha', 'context', 'progress'"

    async def scenario(c: Client, init) -> None:
        checks: list[tuple[str, dict[str, Any], str]] = [
            ("search", {"query": 42}, "query must be text (got 42)"),
            ("search", {"query": "x", "limit": "ten"}, "limit must be a whole number (got 'ten')"),
            ("search", {"query": "x", "types": "decision"},
             "types must be a list (got 'decision')"),
            ("search", {}, "query is required"),
            ("search", {"query": ""}, "query must not be empty"),
            ("search", {"query": "   "}, "query is empty"),
            ("search", {"query": "x", "limit": 0}, "limit must be at least 1 (got 0)"),
            ("search", {"query": "x", "limit": 51}, "limit must be at most 50 (got 51)"),
            ("search", {"query": "x", "types": ["opinion"]},
             f"types[0] must be one of {memory_types}"),
            ("search", {"query": "x", "branch": "a b"}, "not a git branch name"),
            ("search", {"query": "x" * 3000}, "query must be at most 2000 characters (got 3000)"),
            ("search", {"query": "x", "all_branches": "maybe"},
             "all_branches must be true or false (got 'maybe')"),
            ("remember", {"text": "x", "type": "opinion"}, f"type must be one of {memory_types}"),
            ("remember", {"text": "  \n "}, "text is empty"),
            ("remember", {"text": "x", "priority": 11}, "priority must be at most 10 (got 11)"),
            ("remember", {"text": "x", "scope": "team"},
             "scope must be one of 'project' or 'global' (got 'team')"),
            ("remember", {"text": "x", "tags": ["t"] * 21}, "tags must have at most 20 items"),
            ("get", {"id": "m-nothing-here"}, "no memory with id m-nothing-here"),
            ("get", {"id": "DROP TABLE"}, "is not a memory id"),
            ("get", {"id": "m-"}, "ambiguous"),
            ("traverse", {"id": seeded["gotcha"], "depth": 9}, "depth must be at most 5 (got 9)"),
            ("traverse", {"id": seeded["gotcha"], "edge_types": ["derives", "likes"]},
             "unknown edge type 'likes'; use one of relates_to, derived_from, contradicts"),
            ("traverse", {"id": seeded["gotcha"], "direction": "up"},
             "direction must be one of 'out', 'in' or 'both' (got 'up')"),
            ("forget", {"id": "m-nothing-here"}, "no memory with id"),
            ("get_recent", {"min_salience": 2}, "min_salience must be at most 1.0 (got 2)"),
            ("get_recent", {"kinds": ["gossip"]}, "unknown event kind"),
            ("get_plan", {"branch": "bad..name"}, "not a git branch name"),
            ("lesson_feedback", {"id": "l-1", "signal": "meh", "reason": "why"},
             "signal must be one of 'followed', 'ignored' or 'noise' (got 'meh'); "
             "reason must be one of 'wrong_language'"),
            ("no_such_tool", {}, "Unknown tool"),
        ]  # fmt: skip
        for name, arguments, expected in checks:
            message = await c.fails(name, **arguments)
            assert expected in message, (name, arguments, message)
            assert "\n" not in message and "pydantic" not in message, message
        limit = await c.fails("search", query="reset", limit=51)
        assert limit == "Error executing tool search: limit must be at most 50 (got 51)"
        with pytest.raises(MCPError) as raised:
            await c.session.read_resource("cortex://nothing")
        assert raised.value.error.code == -32602
        # still alive and answering
        assert (await c.call("get_status"))["stores"]["project"]["memories"] == 3
        assert (await c.session.send_ping()) is not None

    run_client(server_params(repo, repo), scenario)


@pytest.mark.slow
def test_stdout_carries_protocol_messages_only(repo: Path):
    """Raw JSON-RPC on the pipes, no CLAUDE_PROJECT_DIR (the working directory is the project):
    every stdout line is a JSON-RPC message, and closing stdin ends the server cleanly."""
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "remember", "arguments": {"text": "stdout stays clean"}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
         "params": {"name": "search", "arguments": {"query": ""}}},
        {"jsonrpc": "2.0", "id": 5, "method": "resources/read",
         "params": {"uri": "cortex://status"}},
    ]  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "cortexmem", "mcp-server"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=repo,
        env=env,
    )
    watchdog = threading.Timer(60, proc.kill)
    watchdog.start()
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
        proc.stdin.flush()
        by_id: dict[int, dict] = {}
        while len(by_id) < 5:  # requests run concurrently: answers come in any order
            line = proc.stdout.readline()
            assert line, proc.stderr.read() if proc.stderr else ""
            reply = json.loads(line)
            assert reply["jsonrpc"] == "2.0"
            by_id[reply["id"]] = reply
        proc.stdin.close()  # the client is done: the server exits
        assert proc.wait() == 0
        assert proc.stdout.read() == ""
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
    assert set(by_id) == {1, 2, 3, 4, 5}
    assert by_id[1]["result"]["protocolVersion"] == "2025-11-25"
    assert not by_id[3]["result"].get("isError")
    assert by_id[4]["result"]["isError"] is True
    status = json.loads(by_id[5]["result"]["contents"][0]["text"])
    assert Path(status["project"]) == repo.resolve()
    assert (repo / ".cortex" / "cortex.db").is_file()


PROBE = """
import sys
{body}
heavy = sorted(m for m in ("mcp", "numpy", "onnxruntime", "tokenizers", "torch")
               if m in sys.modules)
sys.stderr.write("IMPORTED:" + ",".join(heavy) + "\\n")
"""


def probe(body: str, cwd: Path) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(body=body)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    line = [x for x in result.stderr.splitlines() if x.startswith("IMPORTED:")][-1]
    return [m for m in line.removeprefix("IMPORTED:").split(",") if m]


def test_the_cli_does_not_import_the_sdk(repo: Path):
    body = (
        "sys.argv = ['cortex', 'status', '--json']\n"
        "from cortexmem.cli.app import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass"
    )
    assert probe(body, repo) == []
    listed = subprocess.run([sys.executable, "-m", "cortexmem", "--help"], capture_output=True,
                            text=True, check=True)  # fmt: skip
    assert "mcp-server" in listed.stdout


def test_the_server_starts_without_the_embedding_runtime(repo: Path):
    body = "from cortexmem.mcp.server import build_server\nbuild_server()"
    assert probe(body, repo) == ["mcp"]


# ----------------------------------------------------------------- the tool functions in-process


def test_branch_rules(ctx: Context):
    assert mcp_tools.branch_filter(ctx, None, False) == ("main", False)
    assert mcp_tools.branch_filter(ctx, " feature/x ", False) == ("feature/x", False)
    assert mcp_tools.branch_filter(ctx, None, True) == (None, True)
    with pytest.raises(CortexError, match="not both"):
        mcp_tools.branch_filter(ctx, "main", True)
    assert mcp_tools.check_branch("") is None and mcp_tools.check_branch("  ") is None
    for bad in ("a b", "x..y", "-x", "x.lock", "a~1", "x/", "@{u}", "a:b"):
        with pytest.raises(CortexError, match="not a git branch name"):
            mcp_tools.check_branch(bad)


def test_remember_on_a_named_branch(ctx: Context):
    out = mcp_tools.remember(ctx, "Exporter half done", memory_type="progress", branch="feature")
    memory = ctx.require("project").get_memory(out["memory"]["id"])
    assert memory.branch == "feature" and memory.source_context.commit is None
    here = mcp_tools.remember(ctx, "Importer started", memory_type="progress")
    memory = ctx.require("project").get_memory(here["memory"]["id"])
    assert memory.branch == "main" and memory.source_context.commit
    assert memory.source_type == "self_report"


def test_reads_of_an_uninitialised_folder_create_nothing(tmp_path: Path):
    folder = tmp_path / "plain"
    folder.mkdir()
    with Context.for_cwd(folder) as ctx:
        nothing = mcp_tools.search(ctx, "anything")
        assert nothing["results"] == [] and nothing["note"].startswith("nothing relevant")
        assert mcp_tools.get_recent(ctx)["events"] == []
        assert mcp_tools.get_plan(ctx)["plan"] is None
        assert mcp_tools.search_decisions(ctx)["decisions"] == []
        assert mcp_tools.decisions_markdown(ctx) == "# Decisions\n\nNo decisions recorded yet.\n"
    assert not (folder / ".cortex").exists()


def test_long_content_is_clipped_in_listings_but_not_in_get(ctx: Context):
    text = "retry budget " * 200
    stored = mcp_tools.remember(ctx, text, memory_type="gotcha")
    listed = stored["memory"]["content"]
    assert len(listed) < len(text.strip()) and listed.endswith("chars; get it]")
    full = mcp_tools.get(ctx, stored["memory"]["id"])
    assert full["memory"]["content"] == text.strip()


def test_what_the_tools_say_back_is_redacted(ctx: Context):
    """The query is echoed and a remembered memory is returned: both redacted (a client can
    log the replies), the branch a memory is kept under too."""
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    found = mcp_tools.search(ctx, f"deploy token {token}")
    kept = mcp_tools.remember(ctx, "rotate the deploy token", branch=f"rotate/{token}")
    assert token not in json.dumps(found) + json.dumps(kept)
    assert found["query"].startswith("deploy token [REDACTED")
