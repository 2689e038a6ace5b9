"""Replay bench for lessons: learn from a project's earlier sessions, replay its later sessions'
requests and tool calls through the prompt and PreToolUse paths, and count what fires.

Run:  .venv/bin/python bench/lessons.py [--data ../shared/data] [--dump warnings.json]

For each real multi-session project in ``transcripts/`` (sessions in the order they started),
session k is replayed against the lessons learned from sessions 1..k-1, then captured and
learned from. Each tool call goes through the hook's own code: layer 1
(``hosts.claude_code.readonly``), then layers 2 (words; no recall server, no model: the offline
path) with the session's dedup and budget, as of the session's own time. Each request the
person typed, in its place between the calls, goes through the prompt hook's lessons
(``services.warn.warn_for_prompt``: a request to fix a check calls up what fixed it last time),
under the same dedup and budget.

Reports: warnings per replayed session; fire rate on read-only calls (must be 0) and on
mutating calls; repeated mistakes (a later failing call whose program and error an earlier
session's failure lesson already described, in the same place: the session touched a file its
fix changed, or the failure's own output names one) and the share warned about before they
happened (and, looser, the same program
failing the same way whatever the files); the share of fired warnings labelled relevant, and
the fire rate on mutating calls that no lesson concerns (a call is concerned when a warning
fired on it was labelled relevant). Labels are in ``docs/lessons-labels.json`` by (session,
tool_use_id, lesson text); a warning without a label is listed so it can be labelled.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from cortexmem.core.command_form import command_form
from cortexmem.core.extraction.commands import error_line, outcome_summary
from cortexmem.core.lessons.build import error_shape
from cortexmem.core.lessons.facts import programs_of, targets
from cortexmem.core.text import relative_path
from cortexmem.hosts.claude_code.pretool import action_fields
from cortexmem.hosts.claude_code.reader import READER
from cortexmem.hosts.claude_code.readonly import is_read_only
from cortexmem.model import Lesson, parse_time
from cortexmem.services import lessons as lesson_service
from cortexmem.services.capture import capture_transcript
from cortexmem.services.context import Context
from cortexmem.services.warn import action_of, failed_programs, warn, warn_for_prompt

ROOT = Path(__file__).resolve().parents[1]
LABELS = ROOT / "docs" / "lessons-labels.json"
PROJECTS = (
    "entireio-cli/-Users-gtrrz-victor-wks-test-cli-cli",
    "claude-code-log-real_projects/-Users-dain-workspace-claude-code-log-sample",
    "claude-code-log-real_projects/-experiments-ideas",
    "claude-code-log-real_projects/-src-experiments-claude_p",
    "Durban-Designer-vsla/-home-kenth56-vsla",
    "Durban-Designer-vsla/-home-kenth56-Downloads",
    "entireio-skills/-Users-alisha-Projects-agent-plugins",
)
_FAILS_WITH = re.compile(r"fails with “([^”]+)”")
PROMPT = "UserPromptSubmit"  # a person's request, replayed through the prompt hook's lessons


@dataclass
class Call:
    tool: str
    tool_input: dict[str, Any]
    call_id: str
    at: str
    error: str | None = None  # the result's text when it failed
    cwd: str = ""  # where the session ran (the hook sees the file relative to the project)


@dataclass
class Figures:
    sessions: int = 0
    replayed: int = 0
    read_only: int = 0
    read_only_fired: int = 0
    mutating: int = 0
    mutating_fired: int = 0
    warnings: int = 0
    per_session: list[int] = field(default_factory=list)
    repeated: int = 0
    repeated_warned: int = 0
    loose: int = 0  # the same program failing the same way, whatever the files
    loose_warned: int = 0
    prompts: int = 0  # the people's requests replayed through the prompt hook's lessons
    prompts_fired: int = 0
    fired: list[dict[str, Any]] = field(default_factory=list)


def calls_of(path: Path) -> tuple[str | None, list[Call]]:
    """The main session's tool calls in order, with their failures, and the session's id."""
    session = None
    calls: dict[str, Call] = {}
    order: list[str] = []
    for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            entry = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(entry, dict) or entry.get("isSidechain"):
            continue
        session = session or entry.get("sessionId")
        message = entry.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            continue
        if entry.get("type") == "user" and not entry.get("isMeta"):
            said = _prompt_text(content)
            if said:
                key = f"prompt:{len(order)}"
                calls[key] = Call(PROMPT, {"prompt": said}, key, str(entry.get("timestamp") or ""))
                order.append(key)
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and isinstance(block.get("input"), dict):
                call_id = str(block.get("id"))
                calls[call_id] = Call(str(block.get("name")), block["input"], call_id,
                                      str(entry.get("timestamp") or ""),
                                      cwd=str(entry.get("cwd") or ""))  # fmt: skip
                order.append(call_id)
            elif block.get("type") == "tool_result" and block.get("is_error"):
                call = calls.get(str(block.get("tool_use_id")))
                text = block.get("content")
                if isinstance(text, list):
                    text = " ".join(str(b.get("text", "")) for b in text if isinstance(b, dict))
                if call is not None:
                    call.error = str(text or "")
    return session, [calls[c] for c in order]


def _prompt_text(content: list[Any]) -> str:
    """What a person typed in a user entry (not a tool result, an interruption notice, a hook's
    message or a slash command's output)."""
    text = " ".join(
        str(b.get("text") or "") for b in content if isinstance(b, dict) and b.get("type") == "text"
    ).strip()
    if not text or text.startswith(("<", "[Request interrupted", "Operation stopped by hook")):
        return ""
    return text


def first_time(path: Path) -> str:
    for raw in path.open(encoding="utf-8", errors="replace"):
        match = re.search(r'"timestamp":\s*"([^"]+)"', raw)
        if match:
            return match.group(1)
    return "9999"


def moment(text: str) -> datetime | None:
    try:
        return parse_time(text.replace("Z", "").split(".")[0] + ".000000Z")
    except ValueError:
        return None


def repeated_mistake(ctx: Context, call: Call, touched: set[str] | None) -> str | None:
    """The key of an earlier failure lesson this failing call repeats: the same program
    failing the same way (its error line, read as the extractor reads it) in the same place
    (the session touched a file that lesson's fix changed, or the failure's output names one;
    ``touched`` None: anywhere). A test runner's error line is often the same for any failing
    test ("[test] ERROR task failed"); the output says which failed."""
    command = str(call.tool_input.get("command") or "")
    if call.error is None or not command:
        return None
    line = outcome_summary(call.error) or error_line(call.error)
    shape = error_shape(line)[:40]
    for lesson in ctx.require("project").iter_lessons(("active",)):
        said = _FAILS_WITH.search(lesson.text)
        if (
            lesson.kind == "failure"
            and lesson.trigger.program in programs_of(command)
            and said is not None
            and error_shape(said.group(1).rstrip("…"))[:40] == shape
            and (touched is None or _same_place(targets(lesson.text), touched, call.error))
        ):
            return lesson.key
    return None


def _same_place(fixed: frozenset[str], touched: set[str], output: str) -> bool:
    low = output.lower()
    return bool(fixed & touched) or any("." in name and name in low for name in fixed)


def replay(project: Path, figures: Figures, labels: dict[str, str]) -> None:
    sessions = sorted(
        (p for p in project.glob("*.jsonl") if not p.name.startswith("agent-")), key=first_time
    )
    work = Path(tempfile.mkdtemp(prefix="cortex-bench-lessons-"))
    subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
    with Context.for_cwd(work) as ctx:
        store = ctx.writable("project")
        for k, path in enumerate(sessions):
            session, calls = calls_of(path)
            session = session or path.stem
            figures.sessions += 1
            if k > 0 and store.lesson_count():
                figures.replayed += 1
                fired_here = 0
                touched: set[str] = set()
                failed: list[str] = []
                for call in calls:
                    fired = replay_call(ctx, call, session, figures, labels, touched, failed)
                    fired_here += fired
                    # what the tool hooks spool: the form of a shell command that failed
                    form = command_form(call.tool_input.get("command"))
                    if call.error is not None and form:
                        failed.append(form)
                figures.per_session.append(fired_here)
            capture_transcript(store, path, reader=READER, session_id=session)
            lesson_service.learn_session(ctx, session)


def replay_call(
    ctx: Context,
    call: Call,
    session: str,
    figures: Figures,
    labels: dict[str, str],
    touched: set[str],
    failed: list[str],
) -> int:
    if call.tool == PROMPT:
        return replay_prompt(ctx, call, session, figures, labels)
    path = call.tool_input.get("file_path")
    if isinstance(path, str):
        touched.add(path.rsplit("/", 1)[-1].lower())
    repeated = repeated_mistake(ctx, call, touched)
    loosely = repeated_mistake(ctx, call, None)
    if is_read_only(call.tool, call.tool_input):
        figures.read_only += 1
        return 0  # layer 1: nothing looked up, nothing can fire
    figures.mutating += 1
    fields = action_fields(call.tool, call.tool_input)
    fields["path"] = relative_path(fields["path"], call.cwd)  # as the server does
    action = action_of(fields)
    result = warn(ctx, action, session_id=session, tool_use_id=call.call_id,
                  project=ctx.paths.name, now=moment(call.at),
                  failed=failed_programs(failed))  # fmt: skip
    shown_before = {w.lesson_id for w in ctx.require("project").warnings_of_session(session)}
    keys = {x.key for x in map(ctx.require("project").get_lesson, shown_before) if x}
    if repeated is not None:
        figures.repeated += 1
        figures.repeated_warned += repeated in keys
    if loosely is not None:
        figures.loose += 1
        figures.loose_warned += loosely in keys
    if result.shown:
        figures.mutating_fired += 1
        figures.warnings += len(result.shown)
        note(figures, labels, session, call, action.describe(), result.shown)
    return len(result.shown)


def replay_prompt(
    ctx: Context, call: Call, session: str, figures: Figures, labels: dict[str, str]
) -> int:
    """A person's request through the prompt hook's lessons (``warn_for_prompt``)."""
    figures.prompts += 1
    result = warn_for_prompt(ctx, str(call.tool_input["prompt"]), session_id=session)
    if result.shown:
        figures.prompts_fired += 1
        figures.warnings += len(result.shown)
        note(figures, labels, session, call, f"prompt: {call.tool_input['prompt'][:190]}",
             result.shown)  # fmt: skip
    return len(result.shown)


def note(
    figures: Figures, labels: dict[str, str], session: str, call: Call, action: str,
    shown: list[Lesson],
) -> None:  # fmt: skip
    for lesson in shown:
        label_key = f"{session}|{call.call_id}|{lesson.text[:120]}"
        figures.fired.append({
            "key": label_key, "label": labels.get(label_key, "unlabelled"),
            "action": action[:200], "lesson": lesson.text[:240],
        })  # fmt: skip


def report(f: Figures) -> None:
    labelled = [w for w in f.fired if w["label"] != "unlabelled"]
    relevant = [w for w in labelled if w["label"] == "relevant"]
    calls = [w for w in labelled if "|prompt:" not in w["key"]]  # requests are not calls
    concerned = {w["key"].rsplit("|", 1)[0] for w in calls if w["label"] == "relevant"}
    noise_calls = {w["key"].rsplit("|", 1)[0] for w in calls if w["label"] != "relevant"}
    unconcerned = max(1, f.mutating - len(concerned))
    per = f.per_session
    print(f"projects' sessions: {f.sessions}; replayed after learning: {f.replayed}")
    print(f"warnings per replayed session: mean {sum(per) / max(1, len(per)):.2f}, "
          f"max {max(per, default=0)} (budget 8)")  # fmt: skip
    print(f"requests: {f.prompts}, lessons called up at {f.prompts_fired} "
          f"({100 * f.prompts_fired / max(1, f.prompts):.1f}%)")  # fmt: skip
    print(f"read-only calls: {f.read_only}, fired on {f.read_only_fired} "
          f"({100 * f.read_only_fired / max(1, f.read_only):.1f}%; must be 0)")  # fmt: skip
    rate = 100 * f.mutating_fired / max(1, f.mutating)
    print(f"mutating calls: {f.mutating}, fired on {f.mutating_fired} ({rate:.1f}%), "
          f"{f.warnings} warnings")  # fmt: skip
    print(
        f"fired on mutating calls no lesson concerns: {len(noise_calls - concerned)} of "
        f"{unconcerned} ({100 * len(noise_calls - concerned) / unconcerned:.1f}%; target ≤ 2%)"
    )
    print(f"repeated mistakes (same program, same error, same place): "
          f"{f.repeated}, warned before: {f.repeated_warned} "
          f"({100 * f.repeated_warned / max(1, f.repeated):.0f}%; target ≥ 50%)")  # fmt: skip
    print(f"same program failing the same way again (any files): {f.loose}, warned before: "
          f"{f.loose_warned} ({100 * f.loose_warned / max(1, f.loose):.0f}%)")  # fmt: skip
    print(f"fired warnings labelled: {len(labelled)} of {len(f.fired)}; relevant: {len(relevant)} "
          f"({100 * len(relevant) / max(1, len(labelled)):.0f}%; target ≥ 90%)")  # fmt: skip
    for w in f.fired:
        if w["label"] == "unlabelled":
            print(f"  unlabelled: {json.dumps(w, ensure_ascii=False)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--dump", type=Path, default=None, help="write the fired warnings here")
    args = parser.parse_args()
    transcripts = args.data / "transcripts"
    if not transcripts.is_dir():
        sys.exit(f"no transcripts at {transcripts}")
    os.environ["CORTEX_HOME"] = tempfile.mkdtemp(prefix="cortex-bench-home-")
    labels = json.loads(LABELS.read_text()) if LABELS.is_file() else {}
    figures = Figures()
    for name in PROJECTS:
        if (transcripts / name).is_dir():
            replay(transcripts / name, figures, labels.get("labels", {}))
    report(figures)
    if args.dump:
        args.dump.write_text(json.dumps(figures.fired, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
