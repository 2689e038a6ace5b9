"""`cortex mcp-server` as Claude Code drives it: a fresh process on stdio.

1. Start-up: time from spawn to the answer of the first `tools/list` (after `initialize` and
   `notifications/initialized`), median of --runs, against the SDK's own import time
   (`python -c "import mcp.server.mcpserver"`) and the bare interpreter.
2. `search` at 10,000 memories: round-trip time of `tools/call search` on one running server
   (lexical, as a project has it before the recall server embedded it; --embed embeds the
   store first with the local model, which takes minutes, and times the hybrid search).

Speaks raw newline-delimited JSON-RPC, so no client library's import cost is counted.

Run:  .venv/bin/python bench/mcp_server.py [--runs 5] [--size 10000] [--embed]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from cortexmem.services.context import Context

from corpus import Corpus

CORTEX = str(Path(sys.executable).parent / "cortex")
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"},
    },
}


class Server:
    """One `cortex mcp-server` process and a JSON-RPC line exchange with it."""

    def __init__(self, project: Path, env: dict[str, str]) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [CORTEX, "mcp-server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**env, "CLAUDE_PROJECT_DIR": str(project)},
            text=True,
            bufsize=1,
        )
        self.next_id = 1

    def send(self, message: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict | None = None) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}})
        assert self.proc.stdout is not None
        while True:
            reply = json.loads(self.proc.stdout.readline())
            if reply.get("id") == self.next_id:
                return reply

    def handshake(self) -> float:
        """Seconds from spawn to the `tools/list` answer."""
        self.send(INIT)
        assert self.proc.stdout is not None
        json.loads(self.proc.stdout.readline())
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools = self.request("tools/list")["result"]["tools"]
        assert len(tools) == 9, tools
        return time.perf_counter() - self.started

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


def process_time(argv: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, stdin=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--embed", action="store_true", help="embed the store (minutes)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="cortex-bench-mcp-"))
    env = {
        **os.environ,
        "CORTEX_HOME": str(work / "home"),
        "XDG_RUNTIME_DIR": tempfile.mkdtemp(prefix="cx-", dir="/tmp"),
    }
    os.environ.update(env)
    project = work / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(project)], check=True)
    with Context.for_cwd(project) as ctx:
        ctx.writable("project").add_memories(Corpus(seed=5).memories(args.size))
    if args.embed:
        subprocess.run([CORTEX, "-C", str(project), "reindex"], check=True, env=env)

    Server(project, env).close()  # warm the page cache once
    # Interleaved, so a noisy neighbour on this 2-core machine weighs on all three alike.
    startups, bare, sdk = [], [], []
    for _ in range(args.runs):
        server = Server(project, env)
        startups.append(server.handshake())
        server.close()
        bare.append(process_time([sys.executable, "-c", "pass"]))
        sdk.append(process_time([sys.executable, "-c", "import mcp.server.mcpserver"]))
    bare, sdk = statistics.median(bare), statistics.median(sdk)
    print(f"start-up, spawn to tools/list answer ({args.runs} runs, {args.size:,} memories):")
    print(f"  python -c pass                     {bare * 1000:8.1f} ms")
    print(f"  python -c 'import mcp...mcpserver' {sdk * 1000:8.1f} ms  (the SDK's import alone)")
    print(f"  cortex mcp-server                  {statistics.median(startups) * 1000:8.1f} ms"
          f"  (min {min(startups) * 1000:.1f}, max {max(startups) * 1000:.1f})")  # fmt: skip

    server = Server(project, env)
    server.handshake()
    queries = Corpus(seed=11).queries(20)
    first = time.perf_counter()
    reply = server.request("tools/call", {"name": "search", "arguments": {"query": queries[0]}})
    first = time.perf_counter() - first
    assert not reply["result"].get("isError"), reply
    times = []
    for query in queries[1:]:
        t0 = time.perf_counter()
        reply = server.request("tools/call", {"name": "search", "arguments": {"query": query}})
        times.append(time.perf_counter() - t0)
        assert not reply["result"].get("isError"), reply
    server.close()
    mode = "hybrid" if args.embed else "lexical"
    median = statistics.median(times) * 1000
    print(f"search round trip at {args.size:,} memories ({mode}): first {first * 1000:.1f} ms, "
          f"then median {median:.1f} ms over {len(times)} queries")  # fmt: skip


if __name__ == "__main__":
    main()
