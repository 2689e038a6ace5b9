from __future__ import annotations

import pytest

from cortexmem.model import (
    Edge,
    Event,
    Memory,
    Provenance,
    SourceContext,
    content_hash,
    new_id,
    normalise_tags,
)


def test_memory_defaults_and_round_trip():
    m = Memory(
        "Use WAL mode",
        memory_type="decision",
        tags=("Storage", " sqlite ", "storage"),
        source_context=SourceContext(branch="main", cwd="/x", commit="abc"),
    )
    assert m.tags == ("sqlite", "storage")
    assert m.updated_at == m.created_at
    assert m.status == "active" and m.category == "project"
    assert Memory.from_dict(m.to_dict()) == m


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"content": "  "}, "content"),
        ({"memory_type": "idea"}, "memory_type"),
        ({"category": "team"}, "category"),
        ({"confidence": 1.5}, "confidence"),
        ({"priority": 0}, "priority"),
        ({"priority": 11}, "priority"),
        ({"status": "deleted"}, "status"),
        ({"source_type": "telepathy"}, "source_type"),
        ({"access_count": -1}, "access_count"),
    ],
)
def test_memory_rejects_invalid_values(changes, message):
    fields = {"content": "x", **changes}
    with pytest.raises(ValueError, match=message):
        Memory(**fields)


def test_ids_are_unique_sortable_and_typeable():
    ids = [new_id() for _ in range(2000)]
    assert len(set(ids)) == 2000
    assert all(i == i.lower() and i.startswith("m-") for i in ids)
    # time-ordered at millisecond resolution: the time part never goes backwards
    times = [i.split("-")[1] for i in ids]
    assert times == sorted(times)


def test_content_hash_ignores_whitespace_layout_only():
    assert content_hash("a  b\n c") == content_hash("a b c")
    assert content_hash("a b c") != content_hash("a b d")
    assert content_hash("ab", "c") != content_hash("a", "bc")


def test_edge_validation():
    Edge("m-a", "m-b", "source_of")
    with pytest.raises(ValueError, match="relation_type"):
        Edge("m-a", "m-b", "causes")
    with pytest.raises(ValueError, match="itself"):
        Edge("m-a", "m-a", "relates_to")
    with pytest.raises(ValueError, match="strength"):
        Edge("m-a", "m-b", "relates_to", strength=2)


def test_event_hash_is_per_session_and_round_trips():
    a = Event("decision", "use uv", provenance=Provenance(session_id="s1", line=3))
    b = Event("decision", "use uv", provenance=Provenance(session_id="s1", line=9))
    c = Event("decision", "use uv", provenance=Provenance(session_id="s2"))
    assert a.content_hash == b.content_hash != c.content_hash
    assert Event.from_dict(a.to_dict()) == a


def test_normalise_tags():
    assert normalise_tags(["B", "a", "", " a "]) == ("a", "b")
