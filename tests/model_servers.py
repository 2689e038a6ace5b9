"""Stand-ins for the model providers, speaking their real wire formats, for tests and the soak.

* ``ProviderServer``: a stdlib HTTP server on 127.0.0.1 that answers Anthropic's
  ``POST /v1/messages`` (Server-Sent Events: message_start, content_block_start,
  content_block_delta…, content_block_stop, message_delta, message_stop), OpenAI's
  ``POST /v1/chat/completions`` (``data: {chunk}`` lines, usage in the last chunk,
  ``data: [DONE]``) and Ollama's ``POST /api/chat`` (newline-delimited JSON, the last line
  ``done: true`` with ``prompt_eval_count``/``eval_count``). Each answer is scripted: a text,
  an HTTP error (with ``Retry-After``), a slow answer, a body that is not what it should be.
  Every request is recorded (path, headers, JSON body).
* ``fake_claude``: writes an executable ``claude`` that prints Claude Code's
  ``--output-format json`` result object (or fails, or hangs, or spawns a child that would
  outlive it) and records its argv, stdin and ``CORTEX_INSIDE``.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


@dataclass
class Reply:
    """One scripted answer: ``text`` as the model's words; or ``status`` with ``error``;
    ``delay`` seconds before each streamed piece; ``raw`` a body sent as it is."""

    text: str = ""
    status: int = 200
    error: str = "something went wrong"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    raw: str | None = None
    stream: bool = True
    input_tokens: int = 120
    output_tokens: int = 30


class ProviderServer:
    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.default = Reply(text='{"memories": []}')
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                server.requests.append(
                    {
                        "path": self.path,
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                        "body": body,
                    }
                )
                reply = server.replies.popleft() if server.replies else server.default
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    server.answer(self, reply, body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def script(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    # ------------------------------------------------------------- answers

    def answer(self, h: BaseHTTPRequestHandler, reply: Reply, body: dict[str, Any]) -> None:
        path = h.path
        if reply.status != 200:
            error: Any
            if path.endswith("/v1/messages"):
                error = {"type": "error", "error": {"type": "api_error", "message": reply.error}}
            elif path.endswith("/api/chat"):
                error = {"error": reply.error}
            else:
                error = {"error": {"message": reply.error, "type": "server_error"}}
            self._send(h, reply.status, "application/json", json.dumps(error), reply.headers)
            return
        if reply.raw is not None:
            self._send(h, 200, "application/json", reply.raw, reply.headers)
            return
        streamed = body.get("stream") and reply.stream
        if path.endswith("/v1/messages"):
            pieces = self._anthropic(reply, body) if streamed else None
            whole = {
                "id": "msg_01", "type": "message", "role": "assistant", "model": body["model"],
                "content": [{"type": "text", "text": reply.text}], "stop_reason": "end_turn",
                "usage": {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens},
            }  # fmt: skip
            kind = "text/event-stream"
        elif path.endswith("/api/chat"):
            pieces = self._ollama(reply, body) if streamed else None
            whole = {
                "model": body["model"], "created_at": "2026-01-01T00:00:00Z",
                "message": {"role": "assistant", "content": reply.text}, "done": True,
                "prompt_eval_count": reply.input_tokens, "eval_count": reply.output_tokens,
            }  # fmt: skip
            kind = "application/x-ndjson"
        else:
            pieces = self._openai(reply, body) if streamed else None
            whole = {
                "id": "chatcmpl-1", "object": "chat.completion", "model": body["model"],
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": reply.text}}],
                "usage": {"prompt_tokens": reply.input_tokens,
                          "completion_tokens": reply.output_tokens},
            }  # fmt: skip
            kind = "text/event-stream"
        if pieces is None:
            time.sleep(reply.delay)
            self._send(h, 200, "application/json", json.dumps(whole), reply.headers)
            return
        h.send_response(200)
        h.send_header("Content-Type", kind)
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        for piece in pieces:
            time.sleep(reply.delay)
            data = piece.encode()
            h.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            h.wfile.flush()
        h.wfile.write(b"0\r\n\r\n")

    @staticmethod
    def _send(h: Any, status: int, kind: str, text: str, headers: dict[str, str]) -> None:
        data = text.encode()
        h.send_response(status)
        h.send_header("Content-Type", kind)
        h.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            h.send_header(name, value)
        h.end_headers()
        h.wfile.write(data)

    @staticmethod
    def _words(text: str) -> list[str]:
        step = max(1, len(text) // 4)
        return [text[i : i + step] for i in range(0, len(text), step)] or [""]

    def _anthropic(self, reply: Reply, body: dict[str, Any]) -> list[str]:
        def event(name: str, data: dict[str, Any]) -> str:
            return f"event: {name}\ndata: {json.dumps(data)}\n\n"

        out = [
            event("message_start", {"type": "message_start", "message": {
                "id": "msg_01", "type": "message", "role": "assistant", "model": body["model"],
                "content": [], "stop_reason": None,
                "usage": {"input_tokens": reply.input_tokens, "output_tokens": 1}}}),
            event("content_block_start", {"type": "content_block_start", "index": 0,
                                          "content_block": {"type": "text", "text": ""}}),
            event("ping", {"type": "ping"}),
        ]  # fmt: skip
        out += [
            event("content_block_delta", {"type": "content_block_delta", "index": 0,
                                          "delta": {"type": "text_delta", "text": w}})
            for w in self._words(reply.text)
        ]  # fmt: skip
        out += [
            event("content_block_stop", {"type": "content_block_stop", "index": 0}),
            event("message_delta", {"type": "message_delta",
                                    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                                    "usage": {"output_tokens": reply.output_tokens}}),
            event("message_stop", {"type": "message_stop"}),
        ]  # fmt: skip
        return out

    def _openai(self, reply: Reply, body: dict[str, Any]) -> list[str]:
        def chunk(data: dict[str, Any]) -> str:
            return f"data: {json.dumps(data)}\n\n"

        base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": body["model"]}
        out = [chunk({**base, "choices": [{"index": 0, "delta": {"role": "assistant",
                                                                  "content": ""}}]})]  # fmt: skip
        out += [
            chunk({**base, "choices": [{"index": 0, "delta": {"content": w}}]})
            for w in self._words(reply.text)
        ]
        out.append(chunk({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
        if (body.get("stream_options") or {}).get("include_usage"):
            usage = {"prompt_tokens": reply.input_tokens, "completion_tokens": reply.output_tokens,
                     "total_tokens": reply.input_tokens + reply.output_tokens}  # fmt: skip
            out.append(chunk({**base, "choices": [], "usage": usage}))
        out.append("data: [DONE]\n\n")
        return out

    def _ollama(self, reply: Reply, body: dict[str, Any]) -> list[str]:
        base = {"model": body["model"], "created_at": "2026-01-01T00:00:00Z"}
        out = [
            json.dumps({**base, "message": {"role": "assistant", "content": w}, "done": False})
            + "\n"
            for w in self._words(reply.text)
        ]
        out.append(
            json.dumps({**base, "message": {"role": "assistant", "content": ""}, "done": True,
                        "done_reason": "stop", "prompt_eval_count": reply.input_tokens,
                        "eval_count": reply.output_tokens}) + "\n"
        )  # fmt: skip
        return out


CLAUDE_SCRIPT = """#!{python}
# A stand-in for Claude Code's `claude -p --output-format json`.
import json, os, subprocess, sys, time
mode = os.environ.get("FAKE_CLAUDE_MODE", "ok")
record = os.environ.get("FAKE_CLAUDE_RECORD")
prompt = sys.stdin.read()
if record:
    with open(record, "a") as f:
        f.write(json.dumps({{"argv": sys.argv[1:], "prompt": prompt, "cwd": os.getcwd(),
                            "inside": os.environ.get("CORTEX_INSIDE")}}) + "\\n")
if mode == "hang":
    # a child that would outlive us if only we were killed
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    time.sleep(600)
if mode == "orphan":  # detached from our pipes: we exit, it stays in our process group
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL)
if mode == "crash":
    sys.stderr.write("Error: something broke\\n")
    sys.exit(1)
text = os.environ.get("FAKE_CLAUDE_TEXT", "hello from claude")
result = {{
    "type": "result", "subtype": "success", "is_error": mode == "error",
    "duration_ms": 2311, "duration_api_ms": 2105, "num_turns": 1,
    "result": "Invalid API key · Please run /login" if mode == "error" else text,
    "session_id": "0f0e0d0c-0000-4000-8000-000000000000", "total_cost_usd": 0.0123,
    "usage": {{"input_tokens": 1500, "cache_creation_input_tokens": 0,
               "cache_read_input_tokens": 500, "output_tokens": 42,
               "server_tool_use": {{"web_search_requests": 0}}, "service_tier": "standard"}},
}}
print(json.dumps(result))
"""


def fake_claude(folder: Path) -> Path:
    """An executable ``claude`` in ``folder`` (put ``folder`` first on PATH)."""
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / "claude"
    exe.write_text(CLAUDE_SCRIPT.format(python=sys.executable))
    exe.chmod(0o755)
    return exe


# ----------------------------------------------------------------------------- processes


def children_of(pid: int) -> set[int]:
    """Every live descendant of ``pid`` (from /proc: psutil is not installed)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] == "Z":  # a zombie is dead, only not reaped yet
            continue
        parents.setdefault(int(fields[1]), []).append(int(entry.name))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def descendants_alive(before: set[int]) -> set[int]:
    """Processes started since ``before`` that are still alive, anywhere (orphans re-parented
    to init included): anything whose command line names the stand-in's sleeper."""
    alive = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in before:
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if b"time.sleep(600)" in cmd and state != "Z":
            alive.add(int(entry.name))
    return alive
