"""Layer 1: what tool calls and their results say, exactly (no interpretation of prose).

A ``tool_use`` block is remembered until its ``tool_result`` arrives (bounded: a result that
never comes does not hold memory forever), and the pair becomes events: files modified,
commands, test and check runs with their outcome, commits, plans and plan steps, failures, and
a failure's resolution when the same call later succeeds.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Final

from cortexmem.core.extraction import commands
from cortexmem.core.extraction.events import EventFactory, clip
from cortexmem.core.session import Block, Entry
from cortexmem.model import Event

MAX_PENDING: Final = 256
MAX_FAILURES: Final = 64
MAX_TODOS: Final = 500
MAX_RECENT_FILES: Final = 200

EDIT_TOOLS: Final = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})
# Older and newer names of the same tools.
TOOL_ALIASES: Final = {"exit_plan_mode": "ExitPlanMode", "Agent": "Task"}
TODO_STATUSES: Final = ("pending", "in_progress", "completed")
# What Claude Code answers when the person refuses a tool call: a choice, not a failure.
REFUSAL: Final = "The user doesn't want to proceed with this tool use"


def tool_name(name: str | None) -> str:
    return TOOL_ALIASES.get(name or "", name or "unknown")


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _path(tool_input: dict[str, Any], result: dict[str, Any] | None, cwd: str | None) -> str:
    raw = (
        _text(tool_input.get("file_path"))
        or _text(tool_input.get("notebook_path"))
        or _text(tool_input.get("path"))
        or _text((result or {}).get("filePath"))
    )
    if cwd and raw.startswith(cwd.rstrip("/") + "/"):
        return raw[len(cwd.rstrip("/")) + 1 :]
    return raw


class _Bounded(OrderedDict):
    """An insertion-ordered dict that forgets its oldest items past ``limit``."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def __setitem__(self, key: Any, value: Any) -> None:
        super().__setitem__(key, value)
        self.move_to_end(key)
        while len(self) > self.limit:
            self.popitem(last=False)


class StructuralLayer:
    def __init__(self, factory: EventFactory) -> None:
        self.make = factory.make
        self.pending: _Bounded = _Bounded(MAX_PENDING)
        self.failures: _Bounded = _Bounded(MAX_FAILURES)  # key -> (error line, files seen index)
        self.todos: _Bounded = _Bounded(MAX_TODOS)  # step text -> status
        self.tasks: _Bounded = _Bounded(MAX_TODOS)  # TaskCreate id -> subject
        self.files_seen = 0
        self.recent_files: list[str] = []
        self.plan_key: tuple[str, ...] = ()

    # ------------------------------------------------------------- feeding

    def tool_use(self, entry: Entry, block: Block) -> None:
        if block.tool_use_id:
            self.pending[block.tool_use_id] = (tool_name(block.tool_name), block.tool_input)

    def tool_result(self, entry: Entry, block: Block) -> list[Event]:
        if not block.tool_use_id or block.tool_use_id not in self.pending:
            return []
        name, tool_input = self.pending.pop(block.tool_use_id)
        if block.is_error and block.text.startswith(REFUSAL) and name != "ExitPlanMode":
            return self._refused(entry, name, tool_input)
        handler = getattr(self, "_on_" + name, None)
        events: list[Event] = list(handler(entry, block, tool_input)) if handler else []
        if name in EDIT_TOOLS:
            events += self._on_edit(entry, block, name, tool_input)
        if block.is_error and name not in ("Bash", "ExitPlanMode"):
            events += self._failure(entry, name, self._target(name, tool_input, entry), block.text)
        elif not block.is_error and name != "Bash":
            events += self._success(entry, name, self._target(name, tool_input, entry))
        return events

    # ------------------------------------------------------------- failures and resolutions

    def _refused(self, entry: Entry, name: str, tool_input: dict[str, Any]) -> list[Event]:
        if name == "Bash":
            what = f"`{clip(commands.display_command(_text(tool_input.get('command'))), 300)}`"
        else:
            what = f"{name} {self._target(name, tool_input, entry)}".strip()
        return [
            self.make(
                "refused",
                f"The person refused {what}",
                entry,
                confidence=1.0,
                salience=0.5,
                layer="structural",
                tool=name,
            )
        ]

    def _target(self, name: str, tool_input: dict[str, Any], entry: Entry) -> str:
        return _path(tool_input, None, entry.cwd) or clip(_text(tool_input.get("pattern")), 100)

    def _failure(
        self, entry: Entry, name: str, target: str, output: str, keys: list[str] | None = None
    ) -> list[Event]:
        line = commands.outcome_summary(output) if name == "Bash" else None
        line = line or commands.error_line(output)
        for key in keys or [target]:
            self.failures[(name, key)] = (target, line, self.files_seen)
        what = f"`{target}`" if name == "Bash" else f"{name} {target}".strip()
        return [
            self.make(
                "error", f"{what} failed: {line}", entry,
                confidence=1.0, salience=0.5 if name == "Bash" else 0.2, layer="structural",
                tool=name, target=target,
            )
        ]  # fmt: skip

    def _success(
        self, entry: Entry, name: str, target: str, shown: str | None = None
    ) -> list[Event]:
        failed = self.failures.pop((name, target), None)
        if failed is None:
            return []
        failed_call, line, seen = failed
        changed = self.recent_files[max(0, len(self.recent_files) - (self.files_seen - seen)) :]
        changed = list(dict.fromkeys(changed))
        what = f"`{failed_call}`" if name == "Bash" else f"{name} {failed_call}".strip()
        how = f" after changes to {', '.join(changed[:8])}" if changed else " when run again"
        return [
            self.make(
                "error_resolved", f"{what} failed ({line}) and passed{how}", entry,
                confidence=0.9, salience=0.7 if name == "Bash" else 0.2, layer="structural",
                tool=name, target=failed_call, passed=shown, error=line, files=changed or None,
            )
        ]  # fmt: skip

    # ------------------------------------------------------------- tools

    def _on_edit(
        self, entry: Entry, block: Block, name: str, tool_input: dict[str, Any]
    ) -> list[Event]:
        if block.is_error:
            return []
        path = _path(tool_input, block.result, entry.cwd)
        if not path:
            return []
        self.files_seen += 1
        self.recent_files.append(path)
        del self.recent_files[:-MAX_RECENT_FILES]
        created = name == "Write" and (block.result or {}).get("type") == "create"
        return [
            self.make(
                "file_modified", f"{'Created' if created else 'Modified'} {path}", entry,
                confidence=1.0, salience=0.3, layer="structural", path=path, tool=name,
            )
        ]  # fmt: skip

    def _on_Bash(self, entry: Entry, block: Block, tool_input: dict[str, Any]) -> list[Event]:
        command = _text(tool_input.get("command"))
        if not command:
            return []
        result = block.result or {}
        output = block.text or "\n".join(
            _text(result.get(k)) for k in ("stdout", "stderr") if _text(result.get(k))
        )
        kind = commands.run_kind(command)
        failed = commands.run_failed(block.is_error, output) if kind else block.is_error
        shown = clip(commands.display_command(command), 300)
        events = [
            self.make(
                "command", f"Ran `{shown}`" + (" (failed)" if failed else ""), entry,
                confidence=1.0, salience=0.2, layer="structural", command=shown, ok=not failed,
                description=_text(tool_input.get("description")) or None,
            )
        ]  # fmt: skip
        if kind:
            summary = commands.outcome_summary(output)
            verdict = "failed" if failed else "passed"
            label = "Tests" if kind == "test" else "Checks"
            events.append(
                self.make(
                    "test_run",
                    f"{label} {verdict}: `{shown}`" + (f" ({summary})" if summary else ""),
                    entry, confidence=1.0, salience=0.6 if failed else 0.4, layer="structural",
                    command=shown, run=kind, ok=not failed, summary=summary,
                )
            )  # fmt: skip
        # Runs of a tool resolve each other whatever their flags ("ruff check --fix ." fails,
        # "ruff check ." passes); other commands must match exactly.
        targets = commands.runners(command) if kind else [shown]
        if failed:
            events += self._failure(entry, "Bash", shown, output, keys=targets)
        else:
            for target in targets:
                events += self._success(entry, "Bash", target, shown=shown)
            if commands.is_git_commit(command):
                events += self._commit(entry, command, output)
        return events

    def _commit(self, entry: Entry, command: str, output: str) -> list[Event]:
        sha, subject = commands.commit_details(command, output)
        if sha is None and subject is None:
            return []
        where = f" on {entry.branch}" if entry.branch else ""
        content = f"Committed {sha or ''}{where}: {subject or '(no message)'}".replace("  ", " ")
        return [
            self.make(
                "commit", content, entry, confidence=1.0, salience=0.6, layer="structural",
                sha=sha, subject=subject,
            )
        ]  # fmt: skip

    def _on_TodoWrite(self, entry: Entry, block: Block, tool_input: dict[str, Any]) -> list[Event]:
        todos = tool_input.get("todos")
        if block.is_error or not isinstance(todos, list):
            return []
        steps: list[tuple[str, str]] = []
        for todo in todos:
            if isinstance(todo, dict):
                text = _text(todo.get("content"))
                status = todo.get("status") if todo.get("status") in TODO_STATUSES else "pending"
                if text:
                    steps.append((text, status))
        return self._steps(entry, steps, "TodoWrite")

    def _steps(self, entry: Entry, steps: list[tuple[str, str]], tool: str) -> list[Event]:
        events: list[Event] = []
        key = tuple(text for text, _ in steps)
        if key and key != self.plan_key:
            self.plan_key = key
            listing = "; ".join(clip(t, 120) for t in key[:15])
            events.append(
                self.make(
                    "plan", f"Plan ({len(key)} steps): {listing}", entry,
                    confidence=1.0, salience=0.6, layer="structural", tool=tool,
                    steps=[clip(t, 200) for t in key[:50]],
                )
            )  # fmt: skip
        for position, (text, status) in enumerate(steps, 1):
            if self.todos.get(text) == status:
                continue
            self.todos[text] = status
            events.append(
                self.make(
                    "plan_step", f"[{status}] {text}", entry,
                    confidence=1.0, salience=0.5 if status == "completed" else 0.3,
                    layer="structural", step=clip(text, 300), status=status,
                    position=position, total=len(steps),
                )
            )  # fmt: skip
        return events

    def _on_TaskCreate(self, entry: Entry, block: Block, tool_input: dict[str, Any]) -> list[Event]:
        subject = _text(tool_input.get("subject")) or _text(tool_input.get("description"))
        if block.is_error or not subject:
            return []
        task = (block.result or {}).get("task")
        task_id = task.get("id") if isinstance(task, dict) else None
        if task_id is not None:
            self.tasks[str(task_id)] = subject
        return self._single_step(entry, subject, "pending")

    def _on_TaskUpdate(self, entry: Entry, block: Block, tool_input: dict[str, Any]) -> list[Event]:
        status = tool_input.get("status")
        subject = self.tasks.get(str(tool_input.get("taskId")))
        if block.is_error or status not in TODO_STATUSES or not subject:
            return []
        return self._single_step(entry, subject, status)

    def _single_step(self, entry: Entry, text: str, status: str) -> list[Event]:
        if self.todos.get(text) == status:
            return []
        self.todos[text] = status
        return [
            self.make(
                "plan_step", f"[{status}] {text}", entry, confidence=1.0,
                salience=0.5 if status == "completed" else 0.3, layer="structural",
                step=clip(text, 300), status=status,
            )
        ]  # fmt: skip

    def _on_ExitPlanMode(
        self, entry: Entry, block: Block, tool_input: dict[str, Any]
    ) -> list[Event]:
        plan = _text(tool_input.get("plan"))
        if not plan:
            return []
        approved = not block.is_error
        return [
            self.make(
                "plan", plan if approved else f"Plan not approved: {plan}", entry,
                confidence=1.0 if approved else 0.6, salience=0.8 if approved else 0.3,
                layer="structural", limit=4_000, tool="ExitPlanMode", approved=approved,
            )
        ]  # fmt: skip

    def _on_Task(self, entry: Entry, block: Block, tool_input: dict[str, Any]) -> list[Event]:
        report = block.text.strip()
        if block.is_error or not report:
            return []
        label = _text(tool_input.get("description")) or _text(tool_input.get("subagent_type"))
        return [
            self.make(
                "subagent_summary", f"{label}: {report}" if label else report, entry,
                confidence=0.8, salience=0.4, layer="structural",
                agent=_text(tool_input.get("subagent_type")) or None,
            )
        ]  # fmt: skip
