"""The export formats, as pure functions over records.

JSONL is the lossless interchange format: a header line, then one record per line, memories
before the edges that reference them, then events, then episodes (what was said) and the links
between memories and the episodes they were drawn from (version 2), then lessons, each with its
timeline, and the edges of the experience graph (version 3), then the tool calls observed and
where the lifecycle stands with each memory (version 4), and the sessions the learning loop
knows, which were automated (version 5). An older export lacks what came after it
and is read as it is. Markdown is for people to read and is not imported.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from cortexmem.core.edge_types import normalise_edge_type
from cortexmem.model import (
    LESSON_EDGE_TYPES,
    MEMORY_TYPES,
    Edge,
    Episode,
    Event,
    Lesson,
    Memory,
    Observation,
    normalise_time,
)

FORMAT = "cortex-export"
FORMAT_VERSION = 5
RECORDS = (
    "memory", "edge", "event", "episode", "episode_link", "lesson", "lesson_edge", "observation",
    "session",
)  # fmt: skip


class ExportFormatError(ValueError):
    """The file is not a Cortex export; the message names the first bad line."""


@dataclass
class ParsedExport:
    header: dict[str, Any]
    memories: list[Memory] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    episodes: list[Episode] = field(default_factory=list)
    # (memory id, episode id)
    episode_links: list[tuple[str, str]] = field(default_factory=list)
    lessons: list[Lesson] = field(default_factory=list)
    # lesson id -> its timeline, (at, what, detail) oldest first
    lesson_history: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)
    # (source id, target id, type)
    lesson_edges: list[tuple[str, str, str]] = field(default_factory=list)
    # memory id -> where the lifecycle stands with it (``LIFECYCLE_MARKS``): when its decay
    # was last applied, since when it is below the archive threshold, when the lifecycle (not
    # a person) archived it. An export without them is read as it is.
    lifecycle: dict[str, dict[str, str]] = field(default_factory=dict)
    observations: list[Observation] = field(default_factory=list)
    # (session id, automated, entrypoint, tokens): what the learning loop knows of each
    sessions: list[tuple[str, bool, str | None, int]] = field(default_factory=list)


LIFECYCLE_MARKS = ("decayed_at", "below_since", "archived_at")


def export_jsonl(
    header: dict[str, Any],
    memories: Iterable[Memory],
    edges: Iterable[Edge],
    events: Iterable[Event],
    episodes: Iterable[Episode] = (),
    episode_links: Iterable[tuple[str, str]] = (),
    lessons: Iterable[tuple[Lesson, Sequence[tuple[str, str, str]]]] = (),
    lesson_edges: Iterable[tuple[str, str, str]] = (),
    lifecycle: dict[str, dict[str, str]] | None = None,
    observations: Iterable[Observation] = (),
    sessions: Iterable[tuple[str, bool, str | None, int]] = (),
) -> Iterator[str]:
    """Lines (without newlines) of a JSONL export. Keys are sorted so exports diff cleanly."""
    yield _dump({"format": FORMAT, "version": FORMAT_VERSION, **header})
    marks = lifecycle or {}
    # "record" names the line's type; it cannot clash with a field (events have a "kind").
    for m in memories:
        extra = {"lifecycle": marks[m.id]} if marks.get(m.id) else {}
        yield _dump({"record": "memory", **m.to_dict(), **extra})
    for e in edges:
        yield _dump({"record": "edge", **e.to_dict()})
    for ev in events:
        yield _dump({"record": "event", **ev.to_dict()})
    for ep in episodes:
        yield _dump({"record": "episode", **ep.to_dict()})
    for memory_id, episode_id in episode_links:
        yield _dump({"record": "episode_link", "memory_id": memory_id, "episode_id": episode_id})
    for lesson, history in lessons:
        yield _dump({"record": "lesson", **lesson.to_dict(), "history": [list(h) for h in history]})
    for source_id, target_id, type_ in lesson_edges:
        yield _dump(
            {"record": "lesson_edge", "source_id": source_id, "target_id": target_id, "type": type_}
        )
    for o in observations:
        yield _dump({"record": "observation", **o.to_dict()})
    for session_id, automated, entrypoint, tokens in sessions:
        yield _dump({"record": "session", "session_id": session_id, "automated": automated,
                     "entrypoint": entrypoint, "tokens": tokens})  # fmt: skip


def _dump(obj: dict[str, Any]) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False)


def parse_jsonl(lines: Iterable[str]) -> ParsedExport:
    """Parse and validate a whole export before anything is written."""
    parsed: ParsedExport | None = None
    number = 0
    try:
        for number, raw in enumerate(lines, start=1):
            parsed = _parse_line(number, raw, parsed)
    except UnicodeDecodeError as exc:
        raise ExportFormatError(f"line {number + 1}: not UTF-8 text") from exc
    if parsed is None:
        raise ExportFormatError("the file is empty")
    return parsed


def _parse_line(number: int, raw: str, parsed: ParsedExport | None) -> ParsedExport | None:
    line = raw.strip()
    if not line:
        return parsed
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ExportFormatError(f"line {number}: not JSON ({exc.msg})") from exc
    if not isinstance(obj, dict):
        raise ExportFormatError(f"line {number}: expected a JSON object")
    if parsed is None:
        if obj.get("format") != FORMAT:
            raise ExportFormatError(f"line {number}: not a Cortex export (no format header)")
        if not isinstance(obj.get("version"), int) or obj["version"] > FORMAT_VERSION:
            raise ExportFormatError(
                f"line {number}: export format version {obj.get('version')!r} is not "
                f"supported (this Cortex reads up to {FORMAT_VERSION})"
            )
        return ParsedExport(header=obj)
    kind = obj.pop("record", None)
    if kind not in RECORDS:
        raise ExportFormatError(f"line {number}: unknown record type {kind!r}")
    try:
        if kind == "memory":
            marks = _marks(obj.pop("lifecycle", None))
            memory = Memory.from_dict(obj)
            parsed.memories.append(memory)
            if marks:
                parsed.lifecycle[memory.id] = marks
        elif kind == "edge":
            if "relation_type" in obj:  # written by another tool or a model: one alias table
                obj["relation_type"] = normalise_edge_type(obj["relation_type"])
            parsed.edges.append(Edge.from_dict(obj))
        elif kind == "event":
            parsed.events.append(Event.from_dict(obj))
        elif kind == "episode":
            parsed.episodes.append(Episode.from_dict(obj))
        elif kind == "episode_link":
            parsed.episode_links.append(_link(obj))
        elif kind == "lesson":
            history = _history(obj.pop("history", []))
            lesson = Lesson.from_dict(obj)
            parsed.lessons.append(lesson)
            parsed.lesson_history[lesson.id] = history
        elif kind == "session":
            parsed.sessions.append(_session(obj))
        elif kind == "observation":
            known = {k: v for k, v in obj.items() if k in Observation.__dataclass_fields__}
            if "at" in known:
                known["at"] = normalise_time(known["at"])
            parsed.observations.append(Observation(**known))
        else:
            parsed.lesson_edges.append(_lesson_edge(obj))
    except (TypeError, ValueError, AttributeError) as exc:  # a field of the wrong type
        raise ExportFormatError(f"line {number}: invalid {kind}: {exc}") from exc
    return parsed


def _marks(raw: Any) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ValueError("lifecycle must be an object")
    marks = {k: raw[k] for k in LIFECYCLE_MARKS if raw.get(k)}
    for key, value in marks.items():
        if not isinstance(value, str):
            raise ValueError(f"lifecycle {key} must be a time")
        marks[key] = normalise_time(value)
    return marks


def _session(obj: dict[str, Any]) -> tuple[str, bool, str | None, int]:
    session_id, automated = obj.get("session_id"), obj.get("automated")
    entrypoint, tokens = obj.get("entrypoint"), obj.get("tokens", 0)
    if not isinstance(session_id, str) or not session_id or not isinstance(automated, bool):
        raise ValueError("a session needs a session_id and automated true or false")
    if entrypoint is not None and not isinstance(entrypoint, str):
        raise ValueError("entrypoint must be text")
    if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 0:
        raise ValueError("tokens must be a count")
    return session_id, automated, entrypoint, tokens


def _link(obj: dict[str, Any]) -> tuple[str, str]:
    memory_id, episode_id = obj.get("memory_id"), obj.get("episode_id")
    if not isinstance(memory_id, str) or not isinstance(episode_id, str):
        raise ValueError("an episode link needs a memory_id and an episode_id")
    return memory_id, episode_id


def _history(raw: Any) -> list[tuple[str, str, str]]:
    if not isinstance(raw, list):
        raise ValueError("a lesson's history is a list of [at, what, detail]")
    out = []
    for item in raw:
        triple = isinstance(item, list) and len(item) == 3
        if not triple or not all(isinstance(x, str) for x in item):
            raise ValueError("a lesson's history is a list of [at, what, detail]")
        out.append((item[0], item[1], item[2]))
    return out


def _lesson_edge(obj: dict[str, Any]) -> tuple[str, str, str]:
    source_id, target_id, type_ = obj.get("source_id"), obj.get("target_id"), obj.get("type")
    if not isinstance(source_id, str) or not isinstance(target_id, str):
        raise ValueError("a lesson edge needs a source_id and a target_id")
    if type_ not in LESSON_EDGE_TYPES:
        raise ValueError(f"a lesson edge's type is one of {', '.join(LESSON_EDGE_TYPES)}")
    return source_id, target_id, str(type_)


def export_markdown(title: str, memories: Iterable[Memory], edges: Iterable[Edge]) -> str:
    """A readable document: memories grouped by type, highest priority first."""
    by_type: dict[str, list[Memory]] = {}
    for m in memories:
        by_type.setdefault(m.memory_type, []).append(m)
    links: dict[str, list[Edge]] = {}
    for e in edges:
        links.setdefault(e.source_id, []).append(e)
    out = [f"# {title}", ""]
    for memory_type in MEMORY_TYPES:
        group = by_type.get(memory_type)
        if not group:
            continue
        out += [f"## {memory_type.replace('_', ' ').capitalize()} ({len(group)})", ""]
        for m in sorted(group, key=lambda m: (-m.priority, m.created_at, m.id)):
            out += _memory_markdown(m, links.get(m.id, []))
    if len(out) == 2:
        out.append("_No memories._")
    return "\n".join(out).rstrip() + "\n"


def _memory_markdown(m: Memory, links: list[Edge]) -> list[str]:
    meta = [
        f"`{m.id}`",
        f"priority {m.priority}",
        f"confidence {m.confidence:.2f}",
        m.status,
        m.created_at[:10],
    ]
    if m.pinned:
        meta.append("pinned")
    if m.branch:
        meta.append(f"branch {m.branch}")
    if m.tags:
        meta.append("tags: " + ", ".join(m.tags))
    lines = [f"### {m.summary}" if m.summary else "###", "", m.content.strip(), ""]
    if not m.summary:
        lines = lines[2:]
    lines += ["<sub>" + " · ".join(meta) + "</sub>", ""]
    for e in links:
        lines.append(f"- {e.relation_type} → `{e.target_id}` ({e.strength:.2f}, {e.status})")
    if links:
        lines.append("")
    return lines
