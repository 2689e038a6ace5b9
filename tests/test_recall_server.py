"""The recall server and the UserPromptSubmit hook that relays to it, as whole processes.

The pure half of anticipatory retrieval (``core.anticipation``) is tested first; then the real
server (``python -m cortexmem.recall.server``) is started on a real store embedded with the real
model, and the real hook program talks to it over its Unix socket. Every process a test starts is
stopped in a ``finally``; sockets live in a short temporary runtime folder under /tmp.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cortexmem.core.anticipation import (
    HEADER,
    TOKEN_CAP,
    Pick,
    coverage,
    estimate_tokens,
    excerpt,
    informative,
    rarity,
    render,
    select,
    worth_asking,
)
from cortexmem.model import Lesson, Memory, SourceContext, Trigger
from cortexmem.recall import client as recall_client
from cortexmem.services.context import Context
from cortexmem.services.embedding import Embedder, sync_context
from cortexmem.services.memories import remember

# ----------------------------------------------------------------------------- pure


@pytest.mark.parametrize(
    "prompt",
    ["ok", "OK.", "/clear", "/compact keep the plan", "thanks!", "thank you", "continue", "lgtm",
     "yes", "go ahead", "fix it", "", "   "],
)  # fmt: skip
def test_prompts_without_a_question_are_not_worth_asking(prompt):
    assert not worth_asking(prompt)


@pytest.mark.parametrize(
    "prompt",
    ["why do webhook retries back off?", "ok so how do we store money", "thanks, now add tests"],
)
def test_prompts_with_a_question_are_worth_asking(prompt):
    assert worth_asking(prompt)


def pick(similarity: float, text: str = "a memory about something", **fields) -> Pick:
    return Pick(Memory(text, "decision", **fields), similarity)


def test_select_needs_meaning_and_information_to_reach_the_gate():
    def p(similarity: float, information: float = 0.0, words: float = 0.0, generic=None) -> Pick:
        return Pick(Memory("m", "decision"), similarity, words=words, information=information,
                    generic=generic)  # fmt: skip

    sims = lambda picks: [x.similarity for x in picks]  # noqa: E731
    # Meaning alone must be very close (0.79); holding the prompt's rare words lowers the bar.
    assert select([p(0.78)]) == [] and sims(select([p(0.80)])) == [0.80]
    assert select([p(0.55, information=0.5)]) == []  # 0.55 + 0.4 × 0.5 = 0.75
    assert len(select([p(0.55, information=0.7)])) == 1  # 0.55 + 0.4 × 0.7 = 0.83
    assert select([p(0.3, information=1.0)]) == []  # rare words, meaning far off: 0.70
    # Once one qualifies, the candidates close in meaning or found by words come along, in the
    # ranking's order, at most 5.
    ranked = [p(0.2, words=0.2), p(0.3), p(0.6, information=0.5), p(0.5), p(0.1), p(0.4)]
    assert sims(select(ranked)) == [0.2, 0.6, 0.5, 0.4]
    assert sims(select(ranked, max_items=2)) == [0.2, 0.6]
    assert select(ranked, gate=0.95) == [] and select([]) == []
    assert sims(select([p(0.3), p(0.8)], weight=0.0, gate=0.8)) == [0.8]


def test_meaning_counts_for_what_it_has_beyond_closeness_to_no_text_at_all():
    """A short, generic line ("Let me run the tests:") is close to every question; a passage
    about the question's subject is much closer to it than to no text at all."""

    def p(generic: float | None) -> Pick:
        return Pick(Memory("m", "context"), 0.66, information=0.1, generic=generic)

    assert p(0.62).lift == pytest.approx(0.04) and p(None).lift == 0.0
    assert select([p(0.62)]) == []  # 0.66 + 0.4 × 0.1 + 0.5 × 0.04 = 0.72
    assert select([p(None)]) == []  # not known: meaning and information alone, 0.70
    assert len(select([p(0.40)])) == 1  # 0.66 + 0.04 + 0.5 × 0.26 = 0.83
    assert select([p(0.40)], lift=0.0) == []


def test_information_is_the_share_of_the_prompts_rare_words_held():
    # 1,000 documents: "test" in 600, "webhook" in 12, "backoff" in none.
    weights = rarity(1000, {"test": 600, "webhook": 12, "backoff": 0})
    assert weights["backoff"] > weights["webhook"] > weights["test"] > 0
    assert rarity(10, {"x": 50})["x"] > 0  # a count above the total (two stores) stays sane
    assert informative(weights, "Webhook retries back off") == pytest.approx(
        weights["webhook"] / sum(weights.values())
    )
    assert informative(weights, "run the test") < 0.1  # a word every document has says little
    assert informative(weights, "") == 0.0 and informative({}, "test") == 0.0
    # A prompt of one rare word and nothing else is not all information: the share is out of
    # at least INFORMATION_FLOOR.
    (alone,) = rarity(1000, {"webhook": 12}).values()
    assert informative({"webhook": alone}, "webhook") == pytest.approx(alone / 12.0)


def test_coverage_is_the_share_of_the_prompts_words_held():
    assert coverage(["ci", "locally", "act"], "Run the CI job locally.") == 2 / 3
    assert coverage([], "anything") == 0.0
    assert coverage(["user", "count"], "the user_count field") == 1.0


def test_excerpt_shows_the_text_around_the_prompts_words():
    text = "filler words here. " * 40 + "Run the CI job locally with act -j test. " + "end. " * 40
    shown = excerpt(text, "how do I run the CI job locally?", 120)
    assert "act -j test" in shown and shown.startswith("…") and len(shown) <= 120
    assert excerpt("short text", "anything", 120) == "short text"
    assert excerpt(text, "nothing matches", 60) == excerpt(text, "", 60)


def test_excerpt_keeps_a_list_items_number_with_it():
    # The clause that matches brings the next one along: the item, not a bare "1."
    item = "Simplify the checkpoint summary by: 1. Removing the session_count field. "
    text = "padding. " * 30 + item + "more padding. " * 30
    shown = excerpt(text, "what happened to the checkpoint summary?", 100)
    assert "1. Removing the session_count field." in shown


def test_excerpt_shows_what_a_colon_announces():
    # The matching clause's neighbour ends in a colon; what it announces is the answer.
    item = (
        "Simplify the checkpoint summary by: 1. Removing redundant fields: "
        "`session_ids`, `session_count`, `created_at`. "
    )
    text = "padding. " * 30 + item + "more padding. " * 30
    shown = excerpt(text, "what does the checkpoint summary hold after the cleanup?", 140)
    assert "`session_count`" in shown


def test_excerpt_roots_match_the_start_of_a_word_only():
    # "testing" is found as "test…", not inside "latest"
    filler = "Unrelated remarks follow here. " * 10
    text = (
        filler + "We bumped the thread pool to the latest version. " + filler
        + "Testing is not ready: two flaky suites remain. " + filler
    )  # fmt: skip
    assert "flaky suites" in excerpt(text, "Is testing ready yet?", 60)


def test_excerpt_follows_only_the_colons_of_the_clause_that_matches():
    # The matching clause's neighbour ends in a colon: what that announces is not brought
    # along at the expense of the other clause that matches.
    filler = "More filler text here. " * 10
    text = (
        filler + "The cache key includes the branch name. Separately, the deploy checklist: "
        "- bump the version, tag the release, push the tag and wait for CI to go green. "
        + filler + "The cache is flushed on every schema migration. " + filler
    )  # fmt: skip
    shown = excerpt(text, "when is the cache key flushed?", 200)
    assert "schema migration" in shown and "bump the version" not in shown


def test_excerpt_finds_the_prompts_words_in_other_forms():
    # "installed" finds "install", "dependency" finds "dependencies".
    fix = (
        "Run these commands to fix it. First remove the broken package. "
        "Then install the missing dependencies first: sudo apt install net-tools iw -y. "
    )
    text = fix + "Unrelated remarks follow here. " * 20
    shown = excerpt(text, "How was WiFiMan installed despite the dependency error?", 120)
    assert "net-tools iw" in shown


def test_render_lists_the_picks_under_a_header():
    picks = [
        pick(0.8, "Money amounts are integers in cents, never floats.", id="m-money"),
        pick(0.7, "Progress on the ledger.", id="m-ledger",
             source_context=SourceContext(branch="feature/x")),
    ]  # fmt: skip
    assert render(picks).splitlines() == [
        HEADER,
        "- [decision, m-money] Money amounts are integers in cents, never floats.",
        "- [decision, feature/x, m-ledger] Progress on the ledger.",
    ]
    assert render([]) == ""
    assert render(picks, token_cap=estimate_tokens(HEADER) + 5) == ""  # no room for any line


def test_render_says_who_said_a_passage():
    """What was said comes with who said it: the person, the assistant, a command's output."""
    from cortexmem.core.episodes import as_memory
    from cortexmem.model import Episode

    said = [
        Episode(text="use pnpm, not npm", role="user", id="ep-1"),
        Episode(text="$ pnpm install\nRun pnpm approve-builds", role="ran", id="ep-2"),
    ]
    lines = render([Pick(as_memory(e), 0.8, episode=True) for e in said]).splitlines()
    assert lines[1] == "- [said: user, ep-1] use pnpm, not npm"
    assert lines[2].startswith("- [said: ran, ep-2] $ pnpm install")


words = st.text(alphabet="abcxyz019 ,.;=é日本", min_size=1, max_size=12)
contents = st.lists(words, min_size=1, max_size=400).map(" ".join).filter(str.strip)


@given(st.lists(contents, max_size=5), st.integers(40, 400))
def test_render_never_exceeds_the_token_cap(texts, cap):
    picks = [pick(0.9, text, id=f"m-{i}") for i, text in enumerate(texts)]
    text = render(picks, token_cap=cap)
    assert estimate_tokens(text) <= cap
    assert text == "" or text.startswith(HEADER + "\n- [decision, m-0] ")
    assert len(text.splitlines()) <= 1 + len(picks)
    default = render(picks)
    assert estimate_tokens(default) <= TOKEN_CAP
    assert bool(default) == bool(texts)  # the first memory always gets a line at the default cap


def test_render_cuts_long_memories_and_stops_at_the_cap():
    long = "Retry failed webhook deliveries with exponential backoff. " * 30
    text = render([pick(0.9, long, id=f"m-{i}") for i in range(6)])
    assert estimate_tokens(text) <= TOKEN_CAP
    lines = text.splitlines()
    assert 2 <= len(lines) < 1 + 6 and lines[1].endswith("…")  # the cap stops it, not the picks
    # Many one-letter words cost more tokens than their characters suggest.
    dense = " ".join(["a = 1, b = 2;"] * 60)
    assert estimate_tokens(render([pick(0.9, dense, id=f"m-{i}") for i in range(3)])) <= TOKEN_CAP


def test_fewer_picks_share_the_room_of_five():
    """The room of the items not shown goes to those that are: one long passage says more."""
    passage = " ".join(f"Step {i}: the reset test helper mirrors clean_test.go." for i in range(40))
    (one,) = render([pick(0.9, passage, id="m-one")]).splitlines()[1:]
    assert len(one) > 1_000
    five = render([pick(0.9, passage, id=f"m-{i}") for i in range(5)]).splitlines()[1:]
    assert len(five) == 5 and all(len(line) <= 440 for line in five)


# ----------------------------------------------------------------------------- processes

MEMORIES = [
    ("decision", "Webhook deliveries that fail are retried with exponential backoff, capped at "
                 "one hour."),
    ("pattern", "Money amounts are integers in cents, never floats."),
    ("gotcha", "Timestamps in the legacy orders table are stored in local Paris time, not UTC."),
    ("decision", "We chose PostgreSQL 16 over MySQL for the billing database."),
    ("gotcha", "The CI runner has no access to the internet; vendor test fixtures."),
    ("architecture", "The frontend is a React single-page app served by nginx from a CDN bucket."),
    ("context", "The design team prefers Figma files shared in the #design channel."),
    ("decision", "Feature flags live in LaunchDarkly; never hard-code a rollout percentage."),
    ("pattern", "Background jobs are idempotent: each one checks a dedup key in Redis first."),
    ("architecture", "Search is served by an Elasticsearch cluster of three nodes."),
    ("decision", "Passwords are hashed with argon2id; bcrypt hashes are upgraded at next login."),
    ("context", "Release trains leave every second Tuesday; hotfixes can ship any day."),
    ("pattern", "Database migrations are written with Alembic and must be reversible."),
    ("architecture", "Uploaded images go to S3 and a Lambda function makes thumbnails."),
    ("decision", "Logs are shipped as JSON lines to Loki, with the request id on every line."),
    ("gotcha", "The staging database is reset every Sunday night; do not keep data there."),
    ("context", "Customer support escalations go to the on-call engineer through PagerDuty."),
    ("decision", "Rate limiting is 100 requests per minute per API key, in the gateway."),
    ("architecture", "Analytics events flow through Kafka into a ClickHouse warehouse."),
    ("pattern", "Translations are stored in gettext .po files and compiled at build time."),
]  # fmt: skip
RELATED = "the webhook retries are not firing, can you check the backoff schedule?"
UNRELATED = "write a haiku about autumn leaves"
HOOK = [
    sys.executable,
    "-c",
    "from cortexmem.hosts.claude_code.hook import run; run()",
    "UserPromptSubmit",
]


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch):
    """A short private runtime folder: a Unix socket path must stay under ~100 characters."""
    folder = tempfile.mkdtemp(prefix="cx-", dir="/tmp")
    monkeypatch.setenv("XDG_RUNTIME_DIR", folder)
    # A server a hook starts in the background must not outlive the test for long either.
    monkeypatch.setenv("CORTEX_SERVER_IDLE", "20")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def project(ctx: Context, runtime: str) -> dict:
    """A store with twenty memories, all embedded; returns ids by text and the project key."""
    ids = {text: remember(ctx, text, memory_type=kind)[0].id for kind, text in MEMORIES}
    assert sync_context(ctx, Embedder.for_context(ctx)).remaining == 0
    key = ctx.paths.project_hash
    assert len(recall_client.socket_path(key)) < 100
    return {"ids": ids, "key": key, "root": ctx.paths.root}


def webhook_id(project: dict) -> str:
    return next(i for text, i in project["ids"].items() if text.startswith("Webhook deliveries"))


class Servers:
    """Servers started by a test, by process id; all of them are stopped at the end."""

    def __init__(self, key: str, root: Path) -> None:
        self.key = key
        self.root = root
        self.procs: list[subprocess.Popen] = []
        self.pids: set[int] = set()

    def start(self, idle: float = 20, module: str = "cortexmem.recall.server") -> subprocess.Popen:
        proc = subprocess.Popen(
            [sys.executable, "-m", module, "--root", str(self.root), "--idle", str(idle)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        self.procs.append(proc)
        return proc

    def wait_ready(self, proc: subprocess.Popen | None = None, timeout: float = 20) -> dict:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if proc is not None and proc.poll() is not None:
                pytest.fail(f"the server exited with {proc.returncode}: {proc.stderr.read()}")
            reply = recall_client.ask(self.key, {"op": "ping"}, 1.0)
            if reply is not None:
                self.pids.add(reply["pid"])
                return reply
            time.sleep(0.05)
        pytest.fail("no recall server answered")

    def ask(self, request: dict, timeout: float = 30) -> dict:
        reply = recall_client.ask(self.key, request, timeout)
        assert reply is not None, request
        return reply

    def stop_all(self) -> None:
        with contextlib.suppress(Exception):
            recall_client.ask(self.key, {"op": "stop"}, 2.0)
        for proc in self.procs:
            if proc.poll() is None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=5)
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=5)
            if proc.stderr is not None:
                proc.stderr.close()
        # Servers a hook started in the background (not our children, possibly still starting
        # when the test ended): found by the pid they reported or by their command line, which
        # names this test's own repository; stopped through their socket, else killed.
        own = {p.pid for p in self.procs}
        for pid in (self.pids | set(servers_of(self.root))) - own:
            end = time.monotonic() + 5
            while alive(pid) and time.monotonic() < end:
                with contextlib.suppress(Exception):
                    recall_client.ask(self.key, {"op": "stop"}, 0.5)
                time.sleep(0.1)
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def servers_of(root: Path) -> list[int]:
    """Process ids of recall servers running for the project at ``root``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"cortexmem.recall.server" in argv and str(root).encode() in argv:
            found.append(int(entry.name))
    return [pid for pid in found if alive(pid)]


def alive(pid: int) -> bool:
    """Whether ``pid`` still runs (an exited process not yet reaped by its parent does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in ("Z", "X")


@pytest.fixture
def servers(project: dict):
    started = Servers(project["key"], project["root"])
    try:
        yield started
    finally:
        started.stop_all()


def raw(key: str, data: bytes) -> dict:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(10)
        conn.connect(recall_client.socket_path(key))
        conn.sendall(data)
        conn.shutdown(socket.SHUT_WR)
        reply = b""
        while chunk := conn.recv(65536):
            reply += chunk
    return json.loads(reply)


@pytest.mark.slow
def test_the_server_answers_and_survives_bad_requests(servers: Servers, project: dict):
    proc = servers.start()
    ping = servers.wait_ready(proc)
    assert ping == {"ok": True, "pid": proc.pid, "root": str(project["root"])}
    path = recall_client.socket_path(project["key"])
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert os.stat(os.path.dirname(path)).st_mode & 0o777 == 0o700

    related = servers.ask({"op": "anticipate", "prompt": RELATED})
    assert related["ok"] and related["context"].startswith(HEADER)
    assert "Webhook deliveries that fail are retried" in related["context"]
    assert webhook_id(project) in related["ids"] and webhook_id(project) in related["context"]
    assert servers.ask({"op": "anticipate", "prompt": UNRELATED}) == {
        "ok": True, "context": "", "ids": []}  # fmt: skip
    assert servers.ask({"op": "anticipate", "prompt": "ok"})["context"] == ""

    found = servers.ask({"op": "recall", "query": "how are monetary values represented"})
    assert found["ok"]
    assert found["results"][0]["memory"]["content"].startswith("Money amounts")
    assert found["results"][0]["scope"] == "project"
    assert len(servers.ask({"op": "recall", "query": "database", "limit": 2})["results"]) == 2

    for bad in (b"not json\n", b"[1, 2]\n", b"\xff\xfe\n", b'{"op": "recall", "limit": "x"}\n'):
        reply = raw(project["key"], bad)
        assert reply["ok"] is False and reply["error"], bad
    assert servers.ask({"op": "bogus"}) == {"ok": False, "error": "unknown op 'bogus'"}
    assert servers.ask({"op": "anticipate"})["ok"] is False
    assert servers.ask({"op": "recall", "query": "  "})["ok"] is False
    assert servers.ask({"op": "ping"})["pid"] == proc.pid  # still serving

    # A second server of the same project leaves at once; the first one keeps serving.
    began = time.monotonic()
    second = subprocess.run(
        [sys.executable, "-m", "cortexmem.recall.server", "--root", str(project["root"]),
         "--idle", "20"],
        capture_output=True, text=True, timeout=20,
    )  # fmt: skip
    assert second.returncode == 0, second.stderr
    assert time.monotonic() - began < 5  # not after an idle period: at once
    assert servers.ask({"op": "ping"})["pid"] == proc.pid

    assert servers.ask({"op": "stop"}) == {"ok": True}
    assert proc.wait(timeout=5) == 0
    assert not os.path.exists(path)
    assert recall_client.ask(project["key"], {"op": "ping"}, 1.0) is None


def test_one_server_serves_a_project_whatever_runtime_folder_a_hook_runs_under(
    servers: Servers, project: dict, ctx: Context, runtime: str, monkeypatch: pytest.MonkeyPatch
):
    """A terminal and an IDE can give their hooks different $XDG_RUNTIME_DIRs: the second
    environment finds the project's server through the project's pointer, and a server
    started there leaves at once instead of loading a second model for the same store."""
    first = servers.start()
    servers.wait_ready(first)
    data_dir = str(ctx.paths.data_dir)
    pointer = Path(recall_client.pointer_path(data_dir, project["key"]))
    assert pointer.read_text().strip() == recall_client.socket_path(project["key"])
    other = tempfile.mkdtemp(prefix="cx-", dir="/tmp")
    monkeypatch.setenv("XDG_RUNTIME_DIR", other)
    try:
        second = servers.start()
        assert second.wait(timeout=30) == 0  # left at once: the project has its server
        assert recall_client.ask(project["key"], {"op": "ping"}, 1.0) is None  # none here
        found = recall_client.ask(project["key"], {"op": "ping"}, 2.0, data_dir)
        assert found is not None and found["pid"] == first.pid
        assert servers_of(project["root"]) == [first.pid]
        # a Stop there hands its upkeep to that server too
        assert recall_client.tell(project["key"], {"op": "ping"}, 1.0, data_dir)
        # a socket file a server killed there left behind does not hide the live one
        dead = recall_client.socket_path(project["key"])
        os.makedirs(os.path.dirname(dead), mode=0o700, exist_ok=True)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as gone:
            gone.bind(dead)
        assert os.path.exists(dead)
        found = recall_client.ask(project["key"], {"op": "ping"}, 2.0, data_dir)
        assert found is not None and found["pid"] == first.pid
    finally:
        monkeypatch.setenv("XDG_RUNTIME_DIR", runtime)
        shutil.rmtree(other, ignore_errors=True)
    assert servers.ask({"op": "stop"})["ok"]
    assert first.wait(timeout=30) == 0
    assert not pointer.exists()  # the pointer leaves with its server


@pytest.mark.slow
def test_the_server_embeds_new_memories_between_requests(
    servers: Servers, project: dict, ctx: Context
):
    proc = servers.start()
    servers.wait_ready(proc)
    memory, _ = remember(
        ctx, "Refunds over 500 euros need a second approver.", memory_type="decision"
    )
    assert servers.ask({"op": "sync"}) == {"ok": True, "embedded": 1}
    found = servers.ask({"op": "recall", "query": "who must sign off on large reimbursements",
                         "alpha": 1.0})  # fmt: skip
    assert found["results"][0]["memory"]["id"] == memory.id


@pytest.mark.slow
def test_a_new_server_loads_the_model_before_the_first_prompt(servers: Servers, project: dict):
    """The first prompt of a session must not wait for the model to load (the hook would give
    up on the server): it is loaded while nobody asks, right after the server starts."""
    proc = servers.start()
    servers.wait_ready(proc)
    maps = Path(f"/proc/{proc.pid}/maps")
    end = time.monotonic() + 15
    while b"onnxruntime" not in maps.read_bytes() and time.monotonic() < end:
        time.sleep(0.1)
    assert b"onnxruntime" in maps.read_bytes()


def test_a_server_with_nothing_embedded_loads_no_model(repo: Path, runtime: str):
    with Context.for_cwd(repo) as ctx:
        ctx.writable("project")
        servers = Servers(ctx.paths.project_hash, ctx.paths.root)
    try:
        proc = servers.start()
        servers.wait_ready(proc)
        time.sleep(2.0)  # the warm-up comes at the first half second nobody asks
        assert b"onnxruntime" not in Path(f"/proc/{proc.pid}/maps").read_bytes()
    finally:
        servers.stop_all()


def test_an_injection_or_a_recall_counts_what_it_served_while_nobody_asks(
    project: dict, ctx: Context
):
    """Serving a memory feeds its rank; the count is written between requests, never on the
    request's path (a write there waits for any other writer of the store)."""
    from cortexmem.recall.server import RecallServer

    ctx.close()
    server = RecallServer(project["root"], idle=60)
    wanted = webhook_id(project)
    try:
        found = server.handle({"op": "anticipate", "prompt": RELATED})
        assert wanted in found["ids"]
        recalled = server.handle({"op": "recall", "query": RELATED})
        assert wanted in [r["memory"]["id"] for r in recalled["results"]]
        store = server.ctx.require("project")
        assert store.get_memories([wanted])[wanted].access_count == 0
        server.flush_access()
        assert store.get_memories([wanted])[wanted].access_count == 2
    finally:
        server.ctx.close()


@pytest.mark.slow
def test_an_idle_server_exits_by_itself(servers: Servers, project: dict):
    proc = servers.start(idle=2)
    servers.wait_ready(proc)
    started = time.monotonic()
    assert proc.wait(timeout=8) == 0
    assert time.monotonic() - started < 5
    assert not os.path.exists(recall_client.socket_path(project["key"]))
    assert servers_of(project["root"]) == []


@pytest.mark.slow
def test_a_server_whose_store_is_deleted_exits(servers: Servers, project: dict, ctx: Context):
    """``git clean -X`` or ``rm`` takes the store away under a running server: SQLite would go
    on serving (and capturing into) the deleted file."""
    proc = servers.start()
    servers.wait_ready(proc)
    ctx.close()
    for suffix in ("", "-wal", "-shm"):
        Path(str(ctx.paths.db) + suffix).unlink(missing_ok=True)
    assert proc.wait(timeout=10) == 0
    assert recall_client.ask(project["key"], {"op": "ping"}, 1.0) is None
    log = ctx.paths.log.read_text()
    assert "the project store was deleted or replaced" in log


def hook(root: Path, prompt: str, session: str = "s-1") -> subprocess.CompletedProcess[str]:
    payload = {
        "session_id": session,
        "transcript_path": str(root / "no-transcript.jsonl"),
        "cwd": str(root),
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    return subprocess.run(HOOK, input=json.dumps(payload), cwd=root, capture_output=True,
                          text=True, timeout=30)  # fmt: skip


@pytest.mark.slow
def test_the_prompt_hook_relays_what_the_server_anticipates(
    servers: Servers, project: dict, ctx: Context
):
    proc = servers.start()
    servers.wait_ready(proc)
    # Warm up: the first request loads the model and the vectors.
    assert servers.ask({"op": "anticipate", "prompt": RELATED})["context"]
    # The hook gives the server ~70 ms; a loaded machine may miss one deadline, not three.
    for _ in range(3):
        result = hook(project["root"], RELATED)
        assert result.returncode == 0 and result.stderr == ""
        if result.stdout:
            break
    answer = json.loads(result.stdout)
    specific = answer["hookSpecificOutput"]
    assert specific["hookEventName"] == "UserPromptSubmit"
    assert specific["additionalContext"].startswith(HEADER)
    assert "Webhook deliveries that fail are retried" in specific["additionalContext"]
    assert webhook_id(project) in specific["additionalContext"]

    # A client that connects and says nothing holds the others up for a moment only.
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as silent:
        silent.connect(recall_client.socket_path(project["key"]))
        began = time.monotonic()
        assert servers.ask({"op": "ping"}, timeout=10)["pid"] == proc.pid
        assert time.monotonic() - began < 2.0

    unrelated = hook(project["root"], UNRELATED)
    assert (unrelated.returncode, unrelated.stdout) == (0, "")
    trivial = hook(project["root"], "thanks!")
    assert (trivial.returncode, trivial.stdout) == (0, "")
    assert servers.ask({"op": "ping"})["pid"] == proc.pid

    # A request to fix a check that failed before is told what fixed it last time, once a
    # session: the hook sends its session, and the server records the warning shown in it.
    lesson, _ = ctx.writable("project").add_lesson(Lesson(
        text="When `make test` fails with “FAIL: test_refund”, look at billing/refunds.py: "
             "last time the refund rounded before converting", key="refunds",
        trigger=Trigger(program="make test", command="make test"),
    ))  # fmt: skip
    store = ctx.require("project")
    for attempt in range(3):  # a loaded machine may miss the hook's deadline, not three times
        told = hook(project["root"], "fix the tests please", session=f"fix-{attempt}")
        assert told.returncode == 0
        if told.stdout:
            break
    assert "the fix was in billing/refunds.py" in told.stdout
    (shown,) = store.warnings_of_session(f"fix-{attempt}")
    assert (shown.lesson_id, shown.tool) == (lesson.id, "prompt")
    again = servers.ask({"op": "anticipate", "prompt": "fix the tests",
                         "session_id": f"fix-{attempt}"})  # fmt: skip
    assert again["context"] == ""
    # Past the asker's deadline nothing is recorded: it would be held back, never seen.
    late = servers.ask({"op": "anticipate", "prompt": "fix the tests", "session_id": "late",
                        "deadline": time.time() - 1})  # fmt: skip
    assert late["context"] == "" and store.warnings_of_session("late") == []
    other = servers.ask({"op": "anticipate", "prompt": "fix the tests", "session_id": "other",
                         "deadline": time.time() + 30})  # fmt: skip
    assert other["ids"] == [lesson.id] and "[lesson " in other["context"]


@pytest.mark.slow
def test_without_a_server_the_hook_says_nothing_and_starts_one(servers: Servers, project: dict):
    key = project["key"]
    assert recall_client.ask(key, {"op": "ping"}, 0.5) is None
    started = time.monotonic()
    result = hook(project["root"], RELATED)
    assert (result.returncode, result.stdout) == (0, "")
    assert time.monotonic() - started < 10
    # The server it started in the background answers shortly after.
    reply = servers.wait_ready()
    assert reply["root"] == str(project["root"]) and alive(reply["pid"])
    log = (project["root"] / ".cortex" / "cortex.log").read_text()
    assert "UserPromptSubmit: no recall server answered; starting one" in log
    # The next prompt gets its context from it.
    assert servers.ask({"op": "anticipate", "prompt": RELATED})["context"]
    assert servers.ask({"op": "stop"}) == {"ok": True}
    end = time.monotonic() + 5
    while alive(reply["pid"]) and time.monotonic() < end:
        time.sleep(0.05)
    assert not alive(reply["pid"])
    assert not os.path.exists(recall_client.socket_path(key))
    assert servers_of(project["root"]) == []


def test_pretooluse_without_a_server_starts_the_hosts_server(servers: Servers, project: dict):
    """The host's server takes the turns' ends too; a generic one would leave every Stop to
    capture in its own process for as long as it runs."""
    root = project["root"]
    payload = {"session_id": "s-1", "transcript_path": str(root / "t.jsonl"), "cwd": str(root),
               "hook_event_name": "PreToolUse", "tool_name": "Edit", "tool_use_id": "t-1",
               "tool_input": {"file_path": str(root / "app.py"), "old_string": "a",
                              "new_string": "b"}}  # fmt: skip
    result = subprocess.run([*HOOK[:-1], "PreToolUse"], input=json.dumps(payload), cwd=root,
                            capture_output=True, text=True, timeout=30)  # fmt: skip
    assert result.returncode == 0
    reply = servers.wait_ready()
    argv = Path(f"/proc/{reply['pid']}/cmdline").read_bytes().split(b"\0")
    assert b"cortexmem.hosts.claude_code.serve" in argv


def test_pretooluse_waits_for_a_model_only_where_one_is_configured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """Without a model the server's warnings come in milliseconds: a server that does not
    answer (stopped, busy) must not cost every tool call 3.3 s."""
    from cortexmem import settings

    home, data = tmp_path / "home", tmp_path / "data"
    home.mkdir()
    data.mkdir()
    monkeypatch.setenv("CORTEX_HOME", str(home))
    monkeypatch.delenv("CORTEX_WARN_WAIT", raising=False)
    assert settings.warn_wait_without_model(str(data)) == settings.NO_MODEL_WARN_WAIT
    (data / "ai.yaml").write_text("models:\n  default: claude-cli\n")
    assert settings.warn_wait_without_model(str(data)) == float("inf")
    (data / "ai.yaml").unlink()
    (home / "ai.yaml").write_text("models:\n  default: claude-cli\n")
    assert settings.warn_wait_without_model(str(data)) == float("inf")
    (home / "ai.yaml").unlink()
    monkeypatch.setenv("CORTEX_WARN_WAIT", "2")  # the person's own setting wins
    assert settings.warn_wait_without_model(str(data)) == float("inf")


def test_a_server_that_will_not_start_says_why(repo: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch):  # fmt: skip
    runtime = tmp_path / "rt"
    (runtime / "cortex").mkdir(parents=True)
    (runtime / "cortex").chmod(0o755)  # others may read it: never serve from it
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    (repo / ".cortex").mkdir(exist_ok=True)
    done = subprocess.run([sys.executable, "-m", "cortexmem.recall.server", "--root", str(repo)],
                          capture_output=True, text=True, timeout=30)  # fmt: skip
    assert done.returncode == 1
    again = subprocess.run([sys.executable, "-m", "cortexmem.recall.server", "--root", str(repo)],
                           capture_output=True, text=True, timeout=30)  # fmt: skip
    assert again.returncode == 1
    assert (repo / ".cortex" / "cortex.log").read_text().count("is not a private folder") == 1


# ----------------------------------------------------------------------------- upkeep


def stop_hook(root: Path, transcript: Path) -> subprocess.CompletedProcess[str]:
    payload = {"session_id": "s-stop", "transcript_path": str(transcript), "cwd": str(root),
               "hook_event_name": "Stop"}  # fmt: skip
    return subprocess.run([*HOOK[:-1], "Stop"], input=json.dumps(payload), cwd=root,
                          capture_output=True, text=True, timeout=30)  # fmt: skip


def test_a_turn_the_store_was_too_busy_for_is_captured_once_it_is_free(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    import sqlite3

    from cortexmem.hosts.claude_code.reader import READER
    from cortexmem.recall import server as recall_server

    monkeypatch.setattr(recall_server, "BUSY_WAIT", 0.2)
    said = "We decided to keep the billing jobs on Redis streams, not RabbitMQ."
    transcript = tmp_path / "s-busy.jsonl"
    transcript.write_text(json.dumps({
        "type": "user", "sessionId": "s-busy", "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": said},
    }) + "\n")  # fmt: skip
    with Context.for_cwd(repo) as ctx:
        ctx.writable("project")
        db = ctx.paths.db
    server = recall_server.RecallServer(repo, idle=60, reader=READER)
    holder = sqlite3.connect(db, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")  # another process writes for a long while
        turn = {"cwd": str(repo), "label": "Stop", "transcript": str(transcript),
                "session_id": "s-busy"}  # fmt: skip
        assert server.handle({"op": "capture", **turn})["ok"]
        server.capture(limit=1)
        assert server.captures_due and server.capture_after > time.monotonic()  # kept
        holder.execute("ROLLBACK")
        server.capture_after = 0.0
        server.capture()
        assert not server.captures_due
        kept = [m.content for m in server.ctx.require("project").iter_memories()]
        assert said in kept
        # a server on its way out does not keep what it cannot capture: it says so
        holder.execute("BEGIN IMMEDIATE")
        transcript.write_text(transcript.read_text() + transcript.read_text().replace(
            "00:00:01", "00:00:02").replace("Redis streams", "Kafka"))  # fmt: skip
        server.handle({"op": "capture", **turn, "label": "SessionEnd"})
        server.capture(exiting=True)
        assert not server.captures_due
        assert "capture failed" in (repo / ".cortex" / "cortex.log").read_text()
    finally:
        holder.close()
        server.ctx.close()


@pytest.mark.slow
def test_stop_hands_the_turn_to_the_hosts_server_which_captures_it(
    servers: Servers, project: dict, tmp_path: Path
):
    """With Claude Code's server running (its launcher gives it the transcript reader), the
    Stop hook only hands the turn's end over; the server captures it, exactly once."""
    from cortexmem.hosts.claude_code.serve import SERVER_MODULE

    root = project["root"]
    transcript = tmp_path / "s-stop.jsonl"
    said = "We decided to keep the billing jobs on Redis streams, not RabbitMQ."
    transcript.write_text(json.dumps({
        "type": "user", "sessionId": "s-stop", "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": said},
    }) + "\n")  # fmt: skip
    servers.wait_ready(servers.start(module=SERVER_MODULE))
    result = stop_hook(root, transcript)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    log = root / ".cortex" / "cortex.log"
    assert "Stop: handed to the recall server" in log.read_text()

    def captured() -> list[str]:
        with Context.for_cwd(root) as ctx:
            memories = ctx.require("project").iter_memories()
            return [m.memory_type for m in memories if m.content == said]

    end = time.monotonic() + 20
    while not captured() and time.monotonic() < end:
        time.sleep(0.1)
    assert captured() == ["decision"]
    assert "Stop (recall server):" in log.read_text()
    # the same turn's end again (a second Stop) adds nothing: the cursor has read it
    assert stop_hook(root, transcript).returncode == 0
    servers.ask({"op": "ping"})  # answered after it took the capture
    assert captured() == ["decision"]


def test_a_server_without_a_reader_declines_a_capture(repo: Path):
    from cortexmem.recall.server import RecallServer

    server = RecallServer(repo, idle=60)
    try:
        reply = server.handle({"op": "capture", "cwd": str(repo), "label": "Stop"})
        assert reply == {"ok": False, "error": "this server reads no transcripts"}
    finally:
        server.ctx.close()


def test_the_server_works_a_piece_at_a_time_so_requests_never_wait_for_all_of_it(
    repo: Path, tmp_path: Path
):
    """Eight sessions ending turns at once: the server captures one turn's end, then answers
    whoever waits, then the next; the upkeep they ask for waits a moment to be done once for
    all, and is done a step at a time too."""
    from cortexmem.hosts.claude_code.reader import READER
    from cortexmem.recall.server import RecallServer

    server = RecallServer(repo, idle=60, reader=READER)
    try:
        for n in range(3):
            transcript = tmp_path / f"s{n}.jsonl"
            transcript.write_text(json.dumps({
                "type": "user", "sessionId": f"s{n}", "timestamp": f"2026-01-0{n + 1}T00:00:01Z",
                "message": {"role": "user", "content": f"We decided to use queue {n} for jobs."},
            }) + "\n")  # fmt: skip
            turn = {"transcript": str(transcript), "session_id": f"s{n}"}
            reply = server.handle({"op": "capture", "cwd": str(repo), "label": "Stop", **turn})
            assert reply == {"ok": True, "queued": n + 1}
        assert server._work_due()
        server.capture(limit=1)
        assert [c["session_id"] for c in server.captures_due] == ["s1", "s2"]
        decided = [m.content for m in server.ctx.require("project").iter_memories()
                   if m.memory_type == "decision"]  # fmt: skip
        assert decided == ["We decided to use queue 0 for jobs."]
        server.capture()
        assert server.captures_due == [] and len(server.upkeep_due[str(repo)][1]) == 3
        assert not server._work_due()  # the upkeep waits for more turns' ends to join it
        server.upkeep_since -= 60
        assert server._work_due()
        steps = 0
        while server.upkeep_step():
            steps += 1
            assert server.upkeep_due == {}  # taken at the first step; new asks wait their turn
        assert steps == 3 + 3  # projections, lifecycle, learning, a consolidation per capture
        assert not server._work_due()
        # Stopping in the middle of an upkeep, with more asked meanwhile: all of it is done.
        server.handle({"op": "upkeep", "cwd": str(repo), "label": "Stop", "memories_added": 0})
        assert server.upkeep_step() and server.upkeep_steps is not None
        server.handle({"op": "upkeep", "cwd": str(repo), "label": "Stop", "memories_added": 0})
        server.upkeep()
        assert server.upkeep_due == {} and server.upkeep_steps is None
        assert "Stop (upkeep): projections updated" in server.ctx.paths.log.read_text()
    finally:
        server.ctx.close()


def test_stop_leaves_its_upkeep_to_the_server_which_does_it_once(repo: Path, tmp_path: Path):
    """A turn's end handed to the server does only the capture; the server then builds the
    briefing (and the rest of the upkeep) once for every capture that asked meanwhile."""
    from cortexmem.hosts.claude_code.reader import READER
    from cortexmem.recall.server import RecallServer
    from cortexmem.services.session import after_capture, open_context

    transcript = tmp_path / "s.jsonl"
    line = {
        "type": "user",
        "sessionId": "s-up",
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": "We decided to keep Redis for the job queue."},
    }
    transcript.write_text(json.dumps(line) + "\n")  # fmt: skip
    remember_in(repo)
    with Context.for_cwd(repo) as ctx:
        handed: list[int] = []
        done = after_capture(
            ctx, label="Stop", transcript=transcript, session_id="s-up", reader=READER,
            deadline=time.monotonic() + 8, log=lambda _: None, full=True,
            hand_off=lambda added: handed.append(added) is None,
        )  # fmt: skip
        paths = ctx.paths
    assert done.steps == ["handed off"] and len(handed) == 1
    assert not (paths.data_dir / "decisions.md").exists()  # no upkeep on the hook's path

    server = RecallServer(repo, idle=60)
    try:
        for added in (handed[0], 0):
            reply = server.handle({"op": "upkeep", "cwd": str(repo), "label": "Stop",
                                   "memories_added": added})  # fmt: skip
            assert reply["ok"]
        assert reply["queued"] == 2
        assert server.handle({"op": "upkeep"})["ok"] is False
        server.upkeep()
        assert server.upkeep_due == {} and not server.logged
        assert (paths.data_dir / "decisions.md").exists()
        assert "Stop (upkeep): projections updated" in paths.log.read_text()
    finally:
        server.ctx.close()
    # without a server to take it, the upkeep runs on the hook's path as before
    with open_context(paths, 8) as ctx:
        inline = after_capture(
            ctx, label="Stop", transcript=transcript, session_id="s-up", reader=READER,
            deadline=time.monotonic() + 8, log=lambda _: None, full=True,
            hand_off=lambda added: False,
        )  # fmt: skip
    assert "projections" in inline.steps


def remember_in(repo: Path) -> None:
    with Context.for_cwd(repo) as ctx:
        remember(ctx, "Deploys go through the staging cluster first", memory_type="decision")
