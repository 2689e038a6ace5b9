"""Code indexing: the units of a file in prose (``core.code_prose``) and ``cortex index-code``.

Real files in a temporary repository, the real CLI (click's runner, in-process), the real
embedding model for the last step: a question asked in other words than the code's finds the
prose description, and the code comes with it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cortexmem.cli.app import cli
from cortexmem.core.code_prose import code_units, name_words
from cortexmem.core.fts_query import query_terms
from cortexmem.services.context import Context

WEBHOOKS = '''"""Webhook delivery helpers."""

import asyncio
import functools


def retry_delay(attempt: int, cap: float = 3600.0) -> float:
    """Seconds to wait before the next delivery attempt: doubling, capped at an hour.

    A second paragraph that the description leaves out.
    """
    # exponential backoff
    return min(cap, 2.0**attempt)


async def deliver(url: str, body: bytes) -> int:
    """Post one webhook and return the HTTP status."""
    await asyncio.sleep(0)
    return 200


def traced(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


class Retrier(Base):
    """Schedules failed deliveries again."""

    def __init__(self, attempts: int = 5) -> None:
        self.attempts = attempts  # per worker process

    @traced
    def backoff(self, attempt: int) -> float:
        """Delay before attempt number ``attempt``."""
        return retry_delay(attempt)

    async def drain_due(self) -> list[str]:
        # the ids it sent; "# not a comment" inside a string is not one
        return ["# nor this"]
'''

STORE = '''"""Persistence of merchants."""


def save_merchant(conn, merchant) -> None:
    """Insert or update one merchant row in the database."""
    conn.execute("INSERT OR REPLACE INTO merchants VALUES (?, ?)", merchant)


def load_merchant(conn, merchant_id: str):
    """Read one merchant by id."""
    return conn.execute("SELECT * FROM merchants WHERE id = ?", (merchant_id,)).fetchone()
'''

TYPESCRIPT = """/**
 * Sends webhooks to merchants.
 * Retries with backoff.
 */

import { fetch } from "./http";

export async function sendWebhook(url: string): Promise<number> {
  return (await fetch(url)).status;
}
export class WebhookQueue {}
interface Delivery { id: string }
"""


# ----------------------------------------------------------------------------- code_units


def by_symbol(path: str, source: str) -> dict:
    return {u.symbol: u for u in code_units(path, source)}


def test_python_functions_classes_and_methods_are_units():
    units = code_units("app/webhooks.py", WEBHOOKS)
    assert [(u.symbol, u.kind) for u in units] == [
        ("retry_delay", "function"),
        ("deliver", "function"),
        ("traced", "function"),  # its nested wrapper is part of it, not a unit
        ("Retrier", "class"),
        ("Retrier.__init__", "method"),
        ("Retrier.backoff", "method"),
        ("Retrier.drain_due", "method"),
    ]
    unit = {u.symbol: u for u in units}
    assert unit["Retrier.backoff"].key == "app/webhooks.py::Retrier.backoff"
    lines = WEBHOOKS.splitlines()
    for u in units:
        assert lines[u.line - 1].lstrip().startswith(("def ", "async def ", "class "))
        assert u.code in WEBHOOKS and u.path == "app/webhooks.py"


def test_descriptions_are_built_from_what_the_author_wrote_in_words():
    unit = by_symbol("app/webhooks.py", WEBHOOKS)
    delay = unit["retry_delay"].description
    assert delay.startswith(
        "Function `retry_delay(attempt: int, cap: float=3600.0) -> float` in app/webhooks.py "
        "(retry delay)."
    )
    assert "Seconds to wait before the next delivery attempt: doubling, capped at an hour." in delay
    assert "second paragraph" not in delay
    assert delay.endswith("Notes: exponential backoff.")
    assert "async deliver(url: str, body: bytes) -> int" in unit["deliver"].description
    assert "Post one webhook and return the HTTP status." in unit["deliver"].description
    # Decorators belong to the code of what they decorate.
    assert unit["Retrier.backoff"].code.startswith("    @traced\n    def backoff(")
    def_line = WEBHOOKS.splitlines().index("    def backoff(self, attempt: int) -> float:")
    assert unit["Retrier.backoff"].line == def_line + 1  # the def, not its decorator
    retrier = unit["Retrier"].description
    assert retrier.startswith("Class `Retrier(Base)` in app/webhooks.py (retrier).")
    assert "Schedules failed deliveries again." in retrier
    assert "Methods: __init__, backoff, drain_due." in retrier
    assert "Notes: per worker process." in unit["Retrier.__init__"].description
    # Comments come from tokens: a "#" inside a string is not a comment.
    drain = unit["Retrier.drain_due"].description
    assert 'Notes: the ids it sent; "# not a comment" inside a string is not one.' in drain
    assert "nor this" not in drain


def test_name_words():
    assert name_words("drain_due") == "drain due"
    assert name_words("HTTPRetryPolicy") == "http retry policy"
    assert name_words("sendWebhook") == "send webhook"
    assert name_words("__init__") == "init"


def test_a_python_file_that_does_not_parse_is_one_file_unit():
    source = "# Half-written module.\ndef broken(:\n    pass\n"
    [unit] = code_units("app/broken.py", source)
    assert (unit.symbol, unit.kind, unit.line, unit.key) == ("", "file", 1, "app/broken.py")
    assert unit.code == source
    assert "Half-written module." in unit.description


def test_other_languages_are_one_unit_with_leading_comment_and_definitions():
    [unit] = code_units("web/send.ts", TYPESCRIPT)
    assert (unit.symbol, unit.kind, unit.key) == ("", "file", "web/send.ts")
    assert unit.code == TYPESCRIPT
    assert unit.description == (
        "File `web/send.ts` in web/send.ts (send). Sends webhooks to merchants. Retries with "
        "backoff. Defines: sendWebhook, WebhookQueue, Delivery."
    )
    [sql] = code_units("db/schema.sql", "-- Merchants and their keys.\nCREATE TABLE m (a int);\n")
    assert "Merchants and their keys." in sql.description


# ----------------------------------------------------------------------------- cortex index-code


@pytest.fixture
def project(repo: Path) -> Path:
    app = repo / "app"
    app.mkdir()
    (app / "webhooks.py").write_text(WEBHOOKS)
    (app / "store.py").write_text(STORE)
    (app / "send.ts").write_text(TYPESCRIPT)
    (app / "notes.txt").write_text("not code\n")
    (app / "big.py").write_text("x = 1\n" * 200_000)  # 1.2 MB
    (app / "latin.py").write_bytes(b"# caf\xe9 cr\xe8me\nx = 1\n")
    for vendored in (repo / ".venv" / "lib", app / "node_modules" / "pkg", app / "__pycache__"):
        vendored.mkdir(parents=True)
        (vendored / "index.py").write_text("def vendored():\n    pass\n")
    return repo


@pytest.fixture
def run(project: Path):
    runner = CliRunner()

    def invoke(*args: str, code: int = 0):
        result = runner.invoke(cli, ["-C", str(project), *args])
        assert result.exit_code == code, (result.output, result.stderr, result.exception)
        assert "Traceback" not in result.output
        return result

    return invoke


def index(run, *targets: str) -> dict:
    return json.loads(run("index-code", "--json", *targets).stdout)


def code_memories(repo: Path, status: str = "active") -> list:
    with Context.for_cwd(repo) as ctx:
        return [
            m
            for m in ctx.require("project").iter_memories()
            if m.source_type == "code_index" and m.status == status
        ]


def test_index_code_counts_and_skips(run, project: Path):
    report = index(run, "app")
    # webhooks.py: 7 units, store.py: 2, send.ts: 1; two memories per unit.
    assert (report["files"], report["units"]) == (3, 10)
    assert (report["memories_added"], report["unchanged"], report["archived"]) == (20, 0, 0)
    skipped = {Path(s["path"]).name: s["reason"] for s in report["skipped"]}
    assert skipped == {"big.py": "larger than 1 MB", "latin.py": "not UTF-8 text"}
    memories = code_memories(project)
    tags = {t for m in memories for t in m.tags if t.startswith("code:")}
    assert "code:app/webhooks.py::retrier.backoff" in tags  # tags are lower-cased
    assert "code:app/send.ts" in tags
    assert not any("vendored" in m.content or "index.py" in t for m in memories for t in m.tags)
    assert sorted(m.memory_type for m in memories) == ["code"] * 10 + ["code_description"] * 10
    # Every description is the source_of its code.
    with Context.for_cwd(project) as ctx:
        store = ctx.require("project")
        edges = [e for e in store.iter_edges() if e.relation_type == "source_of"]
        kinds = {m.id: m.memory_type for m in memories}
        assert len(edges) == 10
        assert all(
            (kinds[e.source_id], kinds[e.target_id]) == ("code_description", "code") for e in edges
        )
    human = run("index-code", "app").stdout
    assert "Indexed 10 units in 3 files: 0 memories added, 20 unchanged" in human


def test_index_code_is_idempotent(run, project: Path):
    first = index(run, "app")
    before = sorted(m.id for m in code_memories(project))
    again = index(run, "app")
    assert (again["files"], again["units"]) == (first["files"], first["units"])
    assert (again["memories_added"], again["unchanged"], again["archived"]) == (0, 20, 0)
    assert sorted(m.id for m in code_memories(project)) == before
    assert code_memories(project, "archived") == []


def test_code_no_longer_there_is_archived(run, project: Path):
    """A function removed from its file, a file deleted: indexing again archives their
    memories (recall served code that did not exist any more). A file that cannot be read
    now keeps its units; indexing one symbol archives nothing else."""
    index(run, "app")
    store_py = project / "app" / "store.py"
    store_py.write_text(STORE.split("def load_merchant")[0])
    assert index(run, "app/webhooks.py::Retrier.backoff")["gone"] == 0
    assert index(run, "app/store.py")["gone"] == 2  # load_merchant: its code and description
    (project / "app" / "send.ts").unlink()
    report = index(run, "app")
    assert report["gone"] == 2 and report["archived"] == 0
    active = {t for m in code_memories(project) for t in m.tags if t.startswith("code:")}
    assert "code:app/store.py::save_merchant" in active
    assert not {"code:app/store.py::load_merchant", "code:app/send.ts"} & active
    store_py.write_bytes(b"# caf\xe9\n")  # unreadable now: its units stay
    assert index(run, "app")["gone"] == 0
    assert "code:app/store.py::save_merchant" in {t for m in code_memories(project) for t in m.tags}


def test_code_whose_file_an_older_cortex_redacted_away_is_archived_once_gone(run, project: Path):
    """An older Cortex redacted a whole code marker it took for a secret: the memory could not
    be placed, and stayed when its code was removed. A whole project's index that reads no
    unit with its text archives it; a narrower one, or a unit still there, keeps it."""
    import sqlite3

    index(run, "app")
    legacy = {m.id for m in code_memories(project) if "load_merchant" in m.summary}
    with sqlite3.connect(project / ".cortex" / "cortex.db") as conn:
        for mid in legacy | {m.id for m in code_memories(project) if "save_merchant" in m.summary}:
            conn.execute(
                "UPDATE memories SET tags = ? WHERE id = ?",
                (json.dumps(["code:[redacted:tag]", "lang:py"]), mid),
            )
    (project / "app" / "store.py").write_text(STORE.split("def load_merchant")[0])
    assert index(run, "app")["gone"] == 0  # not the whole project: it cannot be placed
    assert index(run, ".")["gone"] == 2
    archived = {m.id for m in code_memories(project, "archived")}
    assert archived == legacy
    assert any("save_merchant" in m.summary for m in code_memories(project))


def test_one_symbol_of_a_file(run, project: Path):
    report = index(run, "app/webhooks.py::Retrier.backoff")
    assert (report["files"], report["units"], report["memories_added"]) == (1, 1, 2)
    [prose] = [m for m in code_memories(project) if m.memory_type == "code_description"]
    assert prose.summary.startswith("app/webhooks.py::Retrier.backoff (line ")
    # A method's own name is enough; an absolute path works too.
    again = index(run, f"{project / 'app' / 'webhooks.py'}::backoff")
    assert (again["units"], again["memories_added"], again["unchanged"]) == (1, 0, 2)


def test_an_unknown_symbol_is_a_clear_error(run, project: Path):
    result = run("index-code", "app/webhooks.py::Retrier.nope", code=1)
    assert "no function, class or method 'Retrier.nope' in app/webhooks.py" in result.stderr
    assert "a ::SYMBOL needs a file" in run("index-code", "app::x", code=1).stderr
    assert (
        "no such file or folder: app/missing.py"
        in run("index-code", "app/missing.py", code=1).stderr
    )
    assert not (project / ".cortex" / "cortex.db").exists() or code_memories(project) == []


def test_editing_a_function_archives_its_old_pair(run, project: Path):
    index(run, "app")
    old = {
        m.memory_type: m
        for m in code_memories(project)
        if "code:app/webhooks.py::retry_delay" in m.tags
    }
    source = (project / "app" / "webhooks.py").read_text()
    edited = source.replace(
        "doubling, capped at an hour.", "doubling, capped at ten minutes."
    ).replace("min(cap, 2.0**attempt)", "min(cap, 600.0, 2.0**attempt)")
    assert edited != source
    (project / "app" / "webhooks.py").write_text(edited)
    report = index(run, "app")
    assert (report["memories_added"], report["archived"], report["unchanged"]) == (2, 2, 18)
    archived = {m.id for m in code_memories(project, "archived")}
    assert archived == {old["code"].id, old["code_description"].id}
    new = {
        m.memory_type: m
        for m in code_memories(project)
        if "code:app/webhooks.py::retry_delay" in m.tags
    }
    assert "600.0" in new["code"].content
    assert "ten minutes" in new["code_description"].content
    # Only the body changed: the description stays, the code is replaced.
    (project / "app" / "webhooks.py").write_text(edited.replace("cap, 600.0", "cap, 601.0"))
    report = index(run, "app")
    assert (report["memories_added"], report["archived"], report["unchanged"]) == (1, 1, 19)


def test_editing_a_method_archives_its_old_pair_and_the_old_class(run, project: Path):
    # Names with capitals (classes, paths like src/Main.java) are tagged in lower case.
    index(run, "app")
    tag = "code:app/webhooks.py::retrier.backoff"
    old = {m.id for m in code_memories(project) if tag in m.tags}
    path = project / "app" / "webhooks.py"
    path.write_text(
        path.read_text()
        .replace("Delay before attempt", "Pause before attempt")
        .replace("return retry_delay(attempt)", "return retry_delay(attempt + 1)")
    )
    report = index(run, "app")
    # backoff: new prose and code; Retrier: new code (it holds the method), same prose.
    assert (report["memories_added"], report["archived"], report["unchanged"]) == (3, 3, 17)
    assert old <= {m.id for m in code_memories(project, "archived")}
    active = [m for m in code_memories(project) if tag in m.tags]
    assert (
        len(active) == 2
        and "attempt + 1" in next(m for m in active if m.memory_type == "code").content
    )
    assert (
        len([m for m in code_memories(project) if "code:app/webhooks.py::retrier" in m.tags]) == 2
    )


def test_recall_finds_code_by_a_question_in_prose(run, project: Path):
    index(run, "app")
    question = "what writes a shop record to storage"
    code = next(
        m
        for m in code_memories(project)
        if m.memory_type == "code" and "code:app/store.py::save_merchant" in m.tags
    )
    words, _ = query_terms(question)
    assert not [w for w in words if w in code.content.lower()]
    # Words alone (nothing embedded yet) do not find it.
    assert code.id not in run("recall", "--json", question).stdout
    reindex = json.loads(run("reindex", "--json").stdout)
    assert (reindex["embedded"], reindex["remaining"]) == (20, 0)
    results = json.loads(run("recall", "--json", question).stdout)
    top = results[0]
    assert top["memory"]["memory_type"] == "code_description"
    assert top["memory"]["summary"].startswith("app/store.py::save_merchant")
    assert [m["id"] for m in top["linked"]] == [code.id]
    assert top["linked"][0]["content"] == code.content
    # The code served under its description is not listed again on its own.
    listed = [r["memory"]["id"] for r in results]
    assert code.id not in listed
    assert all(r["memory"]["memory_type"] != "code" for r in results if r["linked"])


def test_indexing_again_archives_nothing_that_is_still_there(run, project: Path):
    """What an independent review found archived by `index-code .`: paths whose tags were
    taken for tokens (i18n, e2e, k8s), a file indexed alone in a folder the walk passes over,
    a file whose name has capitals, and code that two files share when one goes."""
    files = {
        "src/i18n/catalogue.py": "def translate(message):\n    return message\n",
        "tests/e2e/test_login.py": "def test_login():\n    assert True\n",
        "deploy/k8s/RenderManifests.py": "def render():\n    return []\n",
        ".github/scripts/release.py": "def bump_version(v):\n    return v + 1\n",
        "src/a.py": "def helper(x):\n    return x * 2\n",
        "src/b.py": "def helper(x):\n    return x * 2\n",
    }
    for name, source in files.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(source)
    index(run, ".github/scripts/release.py")
    assert index(run, ".")["gone"] == 0
    (project / "src" / "a.py").unlink()
    # a.py's description goes; its code is the memory b.py shares, and stays
    assert index(run, ".")["gone"] == 1
    active = code_memories(project)
    assert {m.memory_type for m in active if "return x * 2" in m.content} == {"code"}
    for words in ("translate", "test_login", "render", "bump_version"):
        assert any(words in m.content for m in active), words


def test_migrations_named_by_an_id_are_indexed_and_retired_like_any_file(run, project: Path):
    """Alembic's and Rails' migrations carry an id in their name: their tag was taken for
    a token, so an edited or deleted one was never found again and stayed served."""
    versions = project / "migrations" / "versions"
    versions.mkdir(parents=True)
    users = versions / "3b2f1a9c7d4e_add_users.py"
    orders = versions / "9f8e7d6c5b4a_add_orders.py"
    users.write_text("def upgrade():\n    create('users')\n")
    orders.write_text("def upgrade():\n    create('orders')\n")
    index(run, "migrations")
    users.write_text("def upgrade():\n    create('users', 'email')\n")
    orders.unlink()
    report = index(run, "migrations")
    assert report["archived"] == 1 and report["gone"] == 2  # old users code; orders, both
    active = [m.content for m in code_memories(project) if m.memory_type == "code"]
    assert any("'email'" in c for c in active)
    assert not any("orders" in c or c.rstrip().endswith("create('users')") for c in active)
