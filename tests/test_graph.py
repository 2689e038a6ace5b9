"""Walking the typed graph: pure BFS, then `cortex traverse` on a real store."""

from __future__ import annotations

import json

from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from cortexmem.cli.app import cli
from cortexmem.core.graph import traverse
from cortexmem.model import Edge, Memory


def edge(a: str, b: str, kind: str = "relates_to", strength: float = 1.0, **kw) -> Edge:
    return Edge(a, b, kind, strength=strength, id=f"e-{a}-{b}-{kind}".replace("_", "-"), **kw)


def lookup(edges: list[Edge]):
    def touching(nodes: set[str]) -> list[Edge]:
        return [e for e in edges if e.source_id in nodes or e.target_id in nodes]

    return touching


CHAIN = [edge("a", "b"), edge("b", "c", "source_of"), edge("c", "d"), edge("x", "a", strength=0.2)]


def ids(levels) -> list[list[str]]:
    return [[s.memory_id for s in level] for level in levels]


def test_levels_by_depth_shortest_distance_first():
    assert ids(traverse("a", lookup(CHAIN), depth=3)) == [["b", "x"], ["c"], ["d"]]


def test_direction_type_and_strength_filters():
    assert ids(traverse("a", lookup(CHAIN), depth=3, direction="out")) == [["b"], ["c"], ["d"]]
    assert ids(traverse("a", lookup(CHAIN), depth=3, direction="in")) == [["x"]]
    assert ids(traverse("b", lookup(CHAIN), depth=3, types=("source_of",))) == [["c"]]
    assert ids(traverse("a", lookup(CHAIN), depth=1, min_strength=0.5)) == [["b"]]


def test_bidirectional_edges_are_followed_both_ways_and_suggested_ones_not_at_all():
    edges = [edge("a", "b", bidirectional=True), edge("a", "c", status="suggested")]
    assert ids(traverse("b", lookup(edges), direction="out")) == [["a"]]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from("abcdefg"), st.sampled_from("abcdefg")), max_size=20),
    st.integers(1, 5),
)
def test_every_memory_once_within_depth(pairs, depth):
    edges = [edge(a, b) for a, b in dict.fromkeys(pairs) if a != b]
    levels = traverse("a", lookup(edges), depth=depth)
    reached = [s.memory_id for level in levels for s in level]
    assert len(reached) == len(set(reached)) and "a" not in reached
    assert len(levels) <= depth
    for number, level in enumerate(levels, start=1):
        assert all(s.depth == number for s in level)


def test_cortex_traverse_on_a_real_store(ctx, repo):
    store = ctx.writable("project")
    prose = Memory("Retries back off exponentially up to an hour", "code_description")
    code = Memory("def backoff(n): return min(3600, 2 ** n)", "code")
    note = Memory("Webhook retries run every 30 s", "context")
    for m in (prose, code, note):
        store.add_memory(m)
    store.add_edge(Edge(prose.id, code.id, "source_of"))
    store.add_edge(Edge(note.id, prose.id, "relates_to", strength=0.4))
    runner = CliRunner()
    result = runner.invoke(cli, ["-C", str(repo), "traverse", prose.id, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert [[r["memory"]["id"] for r in level] for level in data["depths"]] == [[code.id, note.id]]
    out = runner.invoke(
        cli, ["-C", str(repo), "traverse", prose.id, "--type", "source_of", "-d", "3"]
    )
    assert out.exit_code == 0 and "source_of" in out.output and note.id not in out.output
    missing = runner.invoke(cli, ["-C", str(repo), "traverse", "m-nothere"])
    assert missing.exit_code == 1 and "no memory" in missing.output


def test_traverse_and_get_show_the_episodes_a_memory_was_drawn_from(ctx, repo, tmp_path):
    """memory → the episodes it was drawn from (role, session, transcript:line, clipped text),
    and episode → the memories drawn from it; in text and in JSON."""
    from cortexmem.hosts.claude_code.reader import READER
    from cortexmem.services import capture

    t = tmp_path / "s.jsonl"
    said = "We decided to use PostgreSQL because it has row level security."
    t.write_text(
        json.dumps(
            {
                "type": "assistant",
                "uuid": "u-1",
                "sessionId": "sess-g",
                "timestamp": "2026-01-01T00:00:01.000Z",
                "message": {"role": "assistant", "content": [{"type": "text", "text": said}]},
            }
        )
        + "\n"
    )
    store = ctx.writable("project")
    capture.capture_transcript(store, t, reader=READER, session_id="sess-g")
    memory = next(m for m in store.iter_memories() if store.episodes_of_memory(m.id))
    (episode,) = store.episodes_of_memory(memory.id)
    runner = CliRunner()

    data = json.loads(runner.invoke(cli, ["-C", str(repo), "traverse", memory.id, "--json"]).output)
    (source,) = data["episodes"]
    assert source["id"] == episode.id and source["role"] == "assistant"
    assert source["session_id"] == "sess-g" and source["line"] == 1
    assert source["transcript_path"] == str(t.resolve()) and "PostgreSQL" in source["text"]
    text = runner.invoke(cli, ["-C", str(repo), "traverse", memory.id]).output
    assert "drawn from:" in text and f"{t.resolve()}:1" in text and episode.id in text

    back = runner.invoke(cli, ["-C", str(repo), "traverse", episode.id, "--json"])
    assert back.exit_code == 0, back.output
    drawn = json.loads(back.output)
    assert drawn["episode"]["text"] == episode.text
    assert memory.id in [m["id"] for m in drawn["memories"]]
    plain = runner.invoke(cli, ["-C", str(repo), "traverse", episode.id]).output
    assert "memories drawn from it:" in plain and memory.id in plain
    missing = runner.invoke(cli, ["-C", str(repo), "traverse", "ep-nothere"])
    assert missing.exit_code == 1 and "no episode" in missing.output

    got = json.loads(runner.invoke(cli, ["-C", str(repo), "get", memory.id, "--json"]).output)
    assert [e["id"] for e in got["episodes"]] == [episode.id]
    shown = runner.invoke(cli, ["-C", str(repo), "get", memory.id]).output
    assert "drawn from" in shown and episode.id in shown
    # recall lists episodes by id: `get` shows one whole, where it was said, what came of it
    whole = runner.invoke(cli, ["-C", str(repo), "get", episode.id])
    assert whole.exit_code == 0, whole.output
    assert said in whole.output and "said: assistant" in whole.output
    assert (
        f"{t.resolve()}:1" in whole.output and f"{memory.id} [{memory.memory_type}]" in whole.output
    )
    as_json = json.loads(runner.invoke(cli, ["-C", str(repo), "get", episode.id, "--json"]).output)
    assert as_json["episode"]["text"] == said and as_json["scope"] == "project"
    assert [m["id"] for m in as_json["memories"]] == [m["id"] for m in drawn["memories"]]
