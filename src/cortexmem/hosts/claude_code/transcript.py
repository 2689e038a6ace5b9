"""Streaming reader for Claude Code transcripts (``~/.claude/projects/<cwd>/<session>.jsonl``).

Claude Code appends one JSON record per line while a session runs, so a reader must expect a
last line that is still being written, records of types it has never seen (new ones appear with
every release), and lines that are not JSON at all. Nothing here raises on content: what cannot
be used is skipped and counted in ``ParseStats``.

Memory stays bounded whatever the file's size: lines are read in chunks and handed on one at a
time, a line longer than ``MAX_LINE_BYTES`` (a pasted image, a huge tool result) is drained
without being held, and tool results are cut to ``MAX_RESULT_CHARS``.

Formats covered (1.0.24 → 2.1.x): ``user`` / ``assistant`` / ``system`` / ``summary`` records
become entries, and so does a prompt the person sent while the assistant was working, which the
host hands to the model mid-turn and records only as a ``queued_command`` attachment (2.1: no
``user`` record follows it); other attachments, ``progress``, ``file-history-snapshot``,
``queue-operation``, ``permission-mode``, ``last-prompt`` and any unknown type are skipped and
counted. Message content is a string or a list of ``text`` / ``thinking`` / ``tool_use`` /
``tool_result`` / ``image`` blocks. Sidechains come inline (``isSidechain``) or as separate
files, either ``agent-<id>.jsonl`` beside the session or ``<session>/subagents/agent-<id>.jsonl``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from cortexmem.core.session import (
    Block,
    Dialect,
    Entry,
    ParseStats,
    RawLine,
    Role,
    SessionInfo,
    ToolCall,
    ToolKind,
    ToolResult,
)
from cortexmem.core.text import clip_redacted, redacted_head

MAX_LINE_BYTES: Final = 16 * 1024 * 1024
MAX_RESULT_CHARS: Final = 20_000
MAX_TEXT_CHARS: Final = 200_000
CHUNK_BYTES: Final = 1 << 16
ENTRY_TYPES: Final = frozenset({"user", "assistant", "system", "summary"})
# What is kept of a read's ``file`` (its text is not): how many of the file's lines it showed.
_FILE_COUNTS: Final = ("numLines", "startLine", "totalLines")
# toolUseResult fields that repeat a whole file or patch: of no use to extraction, and big.
HEAVY_RESULT_KEYS: Final = frozenset(
    {"originalFile", "originalFileContents", "structuredPatch", "file", "content", "oldString",
     "newString", "edits"}
)  # fmt: skip


# ----------------------------------------------------------------- lines


def read_lines(
    path: str | Path, offset: int = 0, line: int = 0, stats: ParseStats | None = None
) -> Iterator[RawLine]:
    """Complete lines of ``path`` from byte ``offset`` (line ``line`` was the last one read).

    A last line without its newline is held back (it is probably still being written), unless
    it is already a whole JSON object: a prefix of an object never parses as one, so a file
    that simply ends without a newline is still read to its end.
    """
    with open(path, "rb") as fh:
        if offset > 0:
            # The last read ended at a tail without its newline: that newline is not a line.
            fh.seek(offset - 1)
            around = fh.read(3)
            if around[:1] != b"\n":
                if around[1:] == b"\r\n":
                    offset += 2
                elif around[1:2] == b"\n":
                    offset += 1
        fh.seek(offset)
        pos = offset
        buf = bytearray()
        buf_start = offset
        draining = False
        while True:
            chunk = fh.read(CHUNK_BYTES)
            if not chunk:
                break
            start_in_chunk = 0
            while True:
                nl = chunk.find(b"\n", start_in_chunk)
                if nl < 0:
                    rest = chunk[start_in_chunk:]
                    if not draining:
                        buf += rest
                        if len(buf) > MAX_LINE_BYTES:
                            draining = True
                            buf.clear()
                    pos += len(rest)
                    break
                piece = chunk[start_in_chunk:nl]
                pos += len(piece) + 1
                line += 1
                if draining or len(buf) + len(piece) > MAX_LINE_BYTES:
                    yield RawLine(line, buf_start, pos, None)
                else:
                    buf += piece
                    yield RawLine(line, buf_start, pos, bytes(buf))
                buf.clear()
                draining = False
                buf_start = pos
                start_in_chunk = nl + 1
        if draining or buf:
            if not draining and _is_whole_object(bytes(buf)):
                yield RawLine(line + 1, buf_start, pos, bytes(buf))
            elif stats is not None:
                stats.partial_tail = True


def _is_whole_object(data: bytes) -> bool:
    try:
        return isinstance(json.loads(_decode(data)), dict)
    except (ValueError, RecursionError):  # RecursionError: nesting deeper than json allows
        return False


def _decode(data: bytes) -> str:
    text = data.decode("utf-8", errors="replace").strip()
    return text[1:] if text.startswith("\ufeff") else text


# ----------------------------------------------------------------- Claude Code's dialect

# Claude Code's tools by what they do; an unknown tool (MCP tools, new ones) is "other".
TOOL_KINDS: Final[dict[str, ToolKind]] = {
    "Edit": "edit",
    "MultiEdit": "edit",
    "NotebookEdit": "edit",
    "Write": "write",
    "Bash": "shell",
    "PowerShell": "shell",
    "ExitPlanMode": "plan",
    "TodoWrite": "todo",
    "TaskCreate": "task_create",
    "TaskUpdate": "task_update",
    "Task": "subagent",
    "Read": "read",
    "Grep": "search",
    "Glob": "search",
}
# Older and newer names of the same tools.
TOOL_ALIASES: Final = {"exit_plan_mode": "ExitPlanMode", "Agent": "Task"}
# What Claude Code answers when the person refuses a tool call: a choice, not a failure.
# How a tool result says the person declined the call (two wordings seen in real sessions).
REFUSALS: Final = (
    "The user doesn't want to proceed with this tool use",
    # also what the calls of the same turn get once one of them was refused
    "The user doesn't want to take this action right now",
)
# What follows a refusal when the person typed something with it: "… The user provided the
# following reason for the rejection:  use pnpm" (2.0), "… To tell you how to proceed, the user
# said:\nare we testing …?" (2.1).
_REFUSAL_REASON: Final = re.compile(
    r"(?:The user provided the following reason for the rejection:"
    r"|To tell you how to proceed, the user said:)\s*(.+)",
    re.DOTALL,
)


def refusal_reason(text: str) -> str:
    """What the person typed when refusing a call, or ""."""
    if not text.startswith(REFUSALS):
        return ""
    found = _REFUSAL_REASON.search(text)
    return clip_redacted(" ".join(found.group(1).split()), 1_000) if found else ""


# What Claude Code writes into messages without anyone speaking.
DIALECT: Final = Dialect(
    injected_tags=("system-reminder", "command-[a-z-]+", "local-command-[a-z-]+", "ide_[a-z_]+"),
    injected_prefixes=(
        "Caveat:",
        "[Request interrupted",
        "Stop hook feedback",
        "Operation stopped by hook",
        "This session is being continued",
        "<command-",
        "<local-command",
        "<bash-",
        "<user-prompt-submit-hook>",
        "<task-notification>",
        "Base directory for this skill",
    ),
    summary_preamble=(
        r"^\s*This session is being continued from a previous conversation[^\n]*\n"
        r"(?:[^\n]*summarized below:?\s*\n)?"
    ),
    edit_tools=frozenset(t for t, kind in TOOL_KINDS.items() if kind in ("edit", "write")),
    # Approving a plan with a fresh context starts the session on it with this turn.
    plan_handoff=r"^\s*Implement the following plan:\s*",
    interrupted=("[Request interrupted by user",),
    attachment=r"\[Image #\d+\]",
    # A command the person ran with `!` in the prompt, then what it printed.
    shell_input=r"(?s)^\s*<bash-input>(?P<command>.*?)</bash-input>\s*$",
    shell_output=(  # its end may be cut off with a long output's middle
        r"(?s)^\s*<bash-stdout>(?P<out>.*?)(?:(?P<end></bash-stdout>)|\Z)\s*"
        r"(?:<bash-stderr>(?P<err>.*?)(?:</bash-stderr>|\Z))?"
    ),
    # The plan plan mode writes (~/.claude/plans/splendid-dreaming-haven.md): Claude Code's.
    own_files=r"(?:^|[/\\])\.claude[/\\]plans[/\\][^/\\]+\.md$",
)


def tool_name(name: str | None) -> str:
    return TOOL_ALIASES.get(name or "", name or "unknown")


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def tool_call(name: str | None, tool_input: dict[str, Any], call_id: str | None) -> ToolCall:
    """A ``tool_use`` block's call in neutral terms: its kind, and its input's fields found."""
    shown = tool_name(name)
    todos = tool_input.get("todos")
    steps = None
    if isinstance(todos, list):
        steps = tuple(
            (_text(t.get("content")), _text(t.get("status"))) for t in todos if isinstance(t, dict)
        )
    task_id = tool_input.get("taskId")
    status = tool_input.get("status")
    written = _input_written(tool_input)
    kind = TOOL_KINDS.get(shown, "other")
    return ToolCall(
        kind=kind,
        name=shown,
        call_id=call_id,
        path=_text(tool_input.get("file_path"))
        or _text(tool_input.get("notebook_path"))
        or _text(tool_input.get("path")),
        pattern=_text(tool_input.get("pattern")),
        command=_text(tool_input.get("command")),
        description=_text(tool_input.get("description")),
        plan=_text(tool_input.get("plan")),
        steps=steps,
        subject=_text(tool_input.get("subject")) or _text(tool_input.get("description")),
        task_id=None if task_id is None else str(task_id),
        status=status if isinstance(status, str) else None,
        agent=_text(tool_input.get("subagent_type")),
        written=written,
        # a read of a range of lines, or a written text cut here, shows part of the file
        partial=(kind == "read" and any(tool_input.get(k) for k in ("offset", "limit")))
        or is_cut(written),
    )


def _input_written(tool_input: dict[str, Any]) -> str:
    """What a Write (``content``), an Edit (``new_string``) or a MultiEdit (each edit's
    ``new_string``) asks to put into a file (cut to ``MAX_RESULT_CHARS``)."""
    if "new_string" in tool_input:
        text = _text(tool_input.get("new_string"))
    elif isinstance(tool_input.get("edits"), list):
        edits = [e for e in tool_input["edits"] if isinstance(e, dict)]
        text = "\n\n".join(_text(e.get("new_string")) for e in edits).strip()
    elif "file_path" in tool_input and isinstance(tool_input.get("content"), str):
        text = _text(tool_input.get("content"))
    else:
        return ""
    return _cut(text, MAX_RESULT_CHARS)


def tool_outcome(
    text: str,
    call_id: str | None,
    is_error: bool,
    result: dict[str, Any] | None,
    written: str = "",
) -> ToolResult:
    """A ``tool_result`` block in neutral terms (``result``: the record's ``toolUseResult``
    without its file bodies; ``written``: what ``written_text`` found in the whole of it)."""
    extra = result or {}
    task = extra.get("task")
    task_id = task.get("id") if isinstance(task, dict) else None
    return ToolResult(
        call_id=call_id,
        text=text,
        is_error=is_error,
        refused=is_error and text.startswith(REFUSALS),
        reason=refusal_reason(text) if is_error else "",
        cancelled=is_error and text.startswith(REFUSALS[1]),
        output="\n".join(_text(extra.get(k)) for k in ("stdout", "stderr") if _text(extra.get(k))),
        output_apart=any(isinstance(extra.get(k), str) for k in ("stdout", "stderr")),
        path=_text(extra.get("filePath")),
        created=extra.get("type") == "create",
        task_id=None if task_id is None else str(task_id),
        written="" if is_error else written,
        partial=is_cut(text) or _some_lines(extra.get("file")),
    )


def _some_lines(file: Any) -> bool:
    """Whether a read showed fewer of the file's lines than it has (Read stops at 2,000)."""
    if not isinstance(file, dict):
        return False
    shown, total = file.get("numLines"), file.get("totalLines")
    return isinstance(shown, int) and isinstance(total, int) and shown < total


def written_text(result: Any) -> str:
    """What a Write (``content`` of a create or update), an Edit (``newString``) or a
    MultiEdit (each edit's ``new_string``) put into the file, from its ``toolUseResult``
    (cut to ``MAX_RESULT_CHARS``)."""
    if not isinstance(result, dict):
        return ""
    if "newString" in result:
        text = _text(result.get("newString"))
    elif isinstance(result.get("edits"), list):
        edits = [e for e in result["edits"] if isinstance(e, dict)]
        text = "\n\n".join(_text(e.get("new_string")) for e in edits).strip()
    elif result.get("type") in ("create", "update") and result.get("filePath"):
        text = _text(result.get("content"))
    else:
        return ""
    return _cut(text, MAX_RESULT_CHARS)


def tool_use_block(name: str | None, tool_input: Any, call_id: str | None) -> Block:
    tool_input = tool_input if isinstance(tool_input, dict) else {}
    return Block(
        "tool_use",
        tool_name=name,
        tool_input=tool_input,
        tool_use_id=call_id,
        call=tool_call(name, tool_input, call_id),
    )


def tool_result_block(
    text: str,
    call_id: str | None,
    is_error: bool,
    result: dict[str, Any] | None,
    written: str = "",
) -> Block:
    return Block(
        "tool_result",
        text,
        tool_use_id=call_id,
        is_error=is_error,
        result=result,
        outcome=tool_outcome(text, call_id, is_error, result, written),
    )


# ----------------------------------------------------------------- records


# Redaction before a cut starts at a line this far before it: past any one-line secret.
CUT_WINDOW: Final = 4_000


def _cut(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how many were left out. What reaches the
    cut is redacted first: a secret the cut went through would keep most of itself, and no
    rule knows a token by its first half. Only around the cut, from the start of a line well
    before it (what lies before is whole, and redacted when it is stored): a 60 kB output
    redacted whole cost 30 ms a call on the Stop hook's path."""
    if len(text) <= limit:
        return text
    start = text.rfind("\n", 0, max(0, limit - CUT_WINDOW)) + 1
    head = (text[:start] + redacted_head(text, limit, start))[:limit]
    return head + f"\n… [{len(text) - limit} more characters]"


_CUT_MARK: Final = re.compile(r"\n… \[\d+ more characters\]\Z")


def is_cut(text: str) -> bool:
    """Whether ``_cut`` cut ``text`` (its end says how much it left out)."""
    return bool(_CUT_MARK.search(text))


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _result_text(content: Any) -> str:
    """A tool result's content (a string, or a list of text / image blocks) as text."""
    if isinstance(content, str):
        return _cut(content, MAX_RESULT_CHARS)
    if isinstance(content, list):
        parts: list[str] = []
        size = 0
        for item in content:
            if isinstance(item, dict) and item.get("type") == "text":
                text = item.get("text")
                if isinstance(text, str):
                    parts.append(text)
                    size += len(text)
            elif isinstance(item, str):
                parts.append(item)
                size += len(item)
            if size > MAX_RESULT_CHARS:
                break
        return _cut("\n".join(parts), MAX_RESULT_CHARS)
    return ""


def _small_result(result: Any) -> dict[str, Any] | None:
    """``toolUseResult`` kept only when it is an object, without file bodies, strings cut."""
    if not isinstance(result, dict):
        return None
    out: dict[str, Any] = {}
    for key, value in result.items():
        if key == "file" and isinstance(value, dict):
            # a read's file without its text: how many of its lines the read showed
            out[key] = {k: v for k, v in value.items() if k in _FILE_COUNTS}
            continue
        if key in HEAVY_RESULT_KEYS:
            continue
        if isinstance(value, str):
            out[key] = _cut(value, MAX_RESULT_CHARS)
        elif isinstance(value, bytes | bytearray):
            continue
        else:
            out[key] = value
    return out


def _blocks(content: Any, tool_result: Any) -> list[Block]:
    if isinstance(content, str):
        return [Block("text", _cut(content, MAX_TEXT_CHARS))] if content else []
    if not isinstance(content, list):
        return []
    blocks: list[Block] = []
    for item in content:
        if isinstance(item, str):
            blocks.append(Block("text", _cut(item, MAX_TEXT_CHARS)))
            continue
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "text":
            text = item.get("text")
            if isinstance(text, str):
                blocks.append(Block("text", _cut(text, MAX_TEXT_CHARS)))
        elif kind == "thinking":
            text = item.get("thinking")
            if isinstance(text, str):
                blocks.append(Block("thinking", _cut(text, MAX_TEXT_CHARS)))
        elif kind == "tool_use":
            blocks.append(
                tool_use_block(
                    _string(item.get("name")), item.get("input"), _string(item.get("id"))
                )
            )
        elif kind == "tool_result":
            blocks.append(
                tool_result_block(
                    _result_text(item.get("content")),
                    _string(item.get("tool_use_id")),
                    item.get("is_error") is True,
                    _small_result(tool_result),
                    written_text(tool_result),
                )
            )
        elif kind == "image":
            blocks.append(Block("image"))
    return blocks


_COMMAND_NAME: Final = re.compile(r"<command-name>\s*(/?[\w:.-]{1,80})\s*</command-name>")
_COMMAND_ARGS: Final = re.compile(r"<command-args>(.*?)</command-args>", re.DOTALL)
_REQUEST_WORD: Final = re.compile(r"(?<![-\w/])[A-Za-z]{2,}\b")


def _slash_request(block: Block) -> Block:
    """A custom command or skill run with a request (``/entire:search what's the purpose of
    …``): the host records it as command markup, which is skipped as the host's own text, so
    the person's words would be lost. It becomes the request as typed. A command with settings
    (``/model sonnet``, ``--verbose``) or none stays the host's."""
    if (
        block.kind != "text"
        or not block.text.lstrip().startswith("<command-")
        or "<command-args>" not in block.text
    ):
        return block  # markup quoted inside a prompt is the person's words
    name, args = _COMMAND_NAME.search(block.text), _COMMAND_ARGS.search(block.text)
    words = " ".join(args.group(1).split()) if args else ""
    if name is None or len(_REQUEST_WORD.findall(words)) < 3:
        return block
    command = name.group(1) if name.group(1).startswith("/") else "/" + name.group(1)
    return Block("text", f"{command} {words}")


def _role(kind: str) -> Role:
    return "assistant" if kind == "assistant" else "user"


def queued_prompt(obj: dict[str, Any]) -> Any:
    """What the person typed while the assistant worked, handed to it mid-turn (an
    ``attachment`` record of type ``queued_command``, ``commandMode`` "prompt", from a
    ``human``): a string or content blocks; ``None`` for any other record (a background
    task's notification, another agent's message, what the host added)."""
    if obj.get("type") != "attachment":
        return None
    queued = obj.get("attachment")
    if not isinstance(queued, dict) or queued.get("type") != "queued_command":
        return None
    origin = queued.get("origin")
    kind = origin.get("kind") if isinstance(origin, dict) else None
    if queued.get("commandMode", "prompt") != "prompt" or kind not in (None, "human"):
        return None
    if queued.get("isMeta") is True or obj.get("isMeta") is True:
        return None
    prompt = queued.get("prompt")
    return prompt if isinstance(prompt, str | list) and prompt else None


def parse_record(obj: Any, line: int, transcript_path: str | None = None) -> Entry | None:
    """One decoded record as an ``Entry``, or ``None`` when it is not a conversation record.

    Never raises: a record of a known type with fields of unexpected types yields what can be
    read from it.
    """
    if not isinstance(obj, dict):
        return None
    kind = obj.get("type")
    kind = kind if isinstance(kind, str) else ""  # a list or dict is unhashable
    queued = queued_prompt(obj)
    if queued is None and kind not in ENTRY_TYPES:
        return None
    tokens, message_id = 0, None
    if queued is not None:
        blocks = [b for b in _blocks(queued, None) if b.kind in ("text", "image")]
        role: Role = "user"
    elif kind == "summary":
        text = obj.get("summary")
        blocks = [Block("text", _cut(text, MAX_TEXT_CHARS))] if isinstance(text, str) else []
        role = "summary"
    elif kind == "system":
        text = obj.get("content")
        blocks = [Block("text", _cut(text, MAX_TEXT_CHARS))] if isinstance(text, str) else []
        role = "system"
    else:
        message = obj.get("message")
        if isinstance(message, dict):
            tokens, message_id = _usage(message.get("usage")), _string(message.get("id"))
            content = message.get("content")
            said = message.get("role")
            role = said if said == "user" or said == "assistant" else _role(kind)
        else:
            content, role = message if isinstance(message, str) else None, _role(kind)
        blocks = _blocks(content, obj.get("toolUseResult"))
        if role == "user":
            blocks = [_slash_request(b) for b in blocks]
    return Entry(
        line=line,
        role=role,
        blocks=blocks,
        session_id=_string(obj.get("sessionId")),
        uuid=_string(obj.get("uuid")),
        timestamp=_string(obj.get("timestamp")),
        cwd=_string(obj.get("cwd")),
        branch=_string(obj.get("gitBranch")),
        is_sidechain=obj.get("isSidechain") is True,
        agent_id=_string(obj.get("agentId")),
        is_compact_summary=obj.get("isCompactSummary") is True,
        is_meta=obj.get("isMeta") is True,
        subtype=_string(obj.get("subtype")),
        transcript_path=transcript_path,
        tokens=tokens,
        message_id=message_id,
    )


def _usage(usage: Any) -> int:
    """The tokens an answer cost: new input, cache writes and output (cache reads are the
    same context read again, not new work)."""
    if not isinstance(usage, dict):
        return 0
    total = 0
    for key in ("input_tokens", "cache_creation_input_tokens", "output_tokens"):
        value = usage.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            total += value
    return total


def parse_line(
    raw: RawLine, transcript_path: str | None = None, stats: ParseStats | None = None
) -> Entry | None:
    """Decode one line; count what it was in ``stats``."""
    stats = stats if stats is not None else ParseStats()
    stats.lines += 1
    if raw.data is None:
        stats.oversized += 1
        return None
    text = _decode(raw.data)
    if not text:
        stats.blank += 1
        return None
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        stats.malformed += 1
        return None
    if not isinstance(obj, dict):
        stats.malformed += 1
        return None
    kind = obj.get("type")
    if (not isinstance(kind, str) or kind not in ENTRY_TYPES) and queued_prompt(obj) is None:
        stats.skip(kind if isinstance(kind, str) and kind else "untyped")
        return None
    try:
        if _SURROGATE_ESCAPE.search(text):
            obj = _mend(obj)
        entry = parse_record(obj, raw.number, transcript_path)
    except Exception:
        entry = None
    if entry is None:
        stats.malformed += 1
        return None
    stats.entries += 1
    return entry


# A JSON escape of half a surrogate pair: the only way a decoded line can hold a lone one.
_SURROGATE_ESCAPE: Final = re.compile(r"\\u[dD][89a-fA-F]")


def _mend(value: Any) -> Any:
    """``value`` with every string made valid UTF-8 (a lone surrogate becomes U+FFFD)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict):
        return {_mend(k): _mend(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mend(v) for v in value]
    return value


def iter_entries(
    path: str | Path, offset: int = 0, line: int = 0, stats: ParseStats | None = None
) -> Iterator[tuple[Entry | None, RawLine]]:
    """Every complete line from ``offset`` with its entry (``None`` for skipped lines)."""
    stats = stats if stats is not None else ParseStats()
    key = str(path)
    for raw in read_lines(path, offset, line, stats):
        yield parse_line(raw, key, stats), raw


def parse_file(path: str | Path, stats: ParseStats | None = None) -> list[Entry]:
    """Every entry of a (small) transcript; use ``iter_entries`` for big ones."""
    return [e for e, _ in iter_entries(path, stats=stats) if e is not None]


# ----------------------------------------------------------------- sessions


def session_info(path: str | Path, max_lines: int = 200) -> SessionInfo:
    """Session id, working folder, branch and version from the first records that carry them.

    Old transcripts may open with ``summary`` records that carry none of these, so this reads
    up to ``max_lines`` lines. The session id falls back to the file's name.
    """
    found: dict[str, str] = {}
    wanted = {
        "sessionId": "session_id",
        "cwd": "cwd",
        "gitBranch": "branch",
        "version": "version",
        "timestamp": "first_timestamp",
        "entrypoint": "entrypoint",
    }
    for raw in read_lines(path):
        if raw.number > max_lines or len(found) == len(wanted):
            break
        if raw.data is None:
            continue
        try:
            obj = json.loads(_decode(raw.data))
        except (ValueError, RecursionError):
            continue
        if not isinstance(obj, dict):
            continue
        for source, name in wanted.items():
            value = obj.get(source)
            if name not in found and isinstance(value, str) and value:
                found[name] = value
    return SessionInfo(
        session_id=found.get("session_id") or Path(path).stem,
        cwd=found.get("cwd"),
        branch=found.get("branch"),
        version=found.get("version"),
        first_timestamp=found.get("first_timestamp"),
        entrypoint=found.get("entrypoint"),
    )


def subagent_transcripts(session_path: str | Path) -> list[Path]:
    """The transcripts of a session's subagents, in both on-disk layouts.

    * 2.x: ``<folder>/<session-id>/subagents/**/agent-*.jsonl`` (any depth: workflows nest);
    * 1.x: ``<folder>/agent-*.jsonl`` beside the session, claimed by their ``sessionId``.
    """
    session_path = Path(session_path)
    session_id = session_path.stem
    found: list[Path] = []
    nested = session_path.parent / session_id / "subagents"
    if nested.is_dir():
        found += sorted(p for p in nested.rglob("*.jsonl") if p.is_file())
    if not session_path.name.startswith("agent-"):
        for candidate in sorted(session_path.parent.glob("agent-*.jsonl")):
            try:
                owner = session_info(candidate, max_lines=20).session_id
            except OSError:
                continue
            if owner == session_id:
                found.append(candidate)
    return found
