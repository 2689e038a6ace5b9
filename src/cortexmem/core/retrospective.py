"""After the work: a session's lesson draft, and skills from steps repeated across sessions.

``session_lesson`` drafts the post-session lesson of the learning chapter, in five sections:
estimated vs actual effort (tokens, against the project's usual session), the top 3 recurring
errors, the top 3 patterns to standardise, one candidate doctrine, one tool to create. A
session below ``min_calls`` tool calls is refused (not worth a lesson), and so is one where
nothing came back (no command fixed the same way twice, none failing the same way twice, no
``cd`` left in effect): the errors, the doctrine and the tool are drawn from what repeated, and
what the person said when refusing a call leads the patterns to standardise.
The draft is a note for the inbox: a person decides what, if anything, becomes lasting.

``skill_candidates`` finds sequences of at least ``MIN_SKILL_STEPS`` of a project's own steps
(test, check, build commands) that came back in at least ``min_tasks`` sessions, each a skill
proposal (two commands in a row are a line of CLAUDE.md, not a skill).
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from cortexmem.core.extraction.commands import (
    path_missing,
    says_only_that_it_failed,
    step_kind,
)
from cortexmem.core.learning import find_patterns
from cortexmem.core.lessons.build import refusal_reasons
from cortexmem.core.privacy import strip_personal
from cortexmem.core.suggestions import INBOX_DIR, SKILLS_DIR, Draft, error_shape
from cortexmem.core.text import shorten
from cortexmem.model import Event, Observation, parse_time

SECTIONS = (
    "Effort: estimated vs actual",
    "Top 3 recurring errors",
    "Top 3 patterns to standardise",
    "Candidate doctrine",
    "Tool to create",
)


_DIGITS = re.compile(r"\d+")


def _errors(
    events: Iterable[Event], observations: Sequence[Observation]
) -> list[tuple[str, str, int]]:
    """The session's failures by shape, most frequent first, as (the command that failed, or
    "" for another tool's failure; how it read; how often): what the extraction recorded
    (``error`` events), else the failed calls."""
    shapes: Counter[str] = Counter()
    said: dict[str, tuple[str, str]] = {}
    variants: dict[str, set[str]] = {}
    events = list(events)
    # Tests the session wrote itself fail, then pass, as it writes them (red, then green):
    # that is the work, not an error that recurs.
    written = {
        str(e.payload.get("path") or "").rsplit("/", 1)[-1]
        for e in events
        if e.kind == "file_modified" and e.content.startswith("Created ")
    } - {""}
    # A file named bare (the path relative to a folder the shell had moved to) is the one
    # path of the session with that name, when there is exactly one.
    paths: dict[str, set[str]] = {}
    for e in events:
        target = str(e.payload.get("target") or "")
        if e.kind == "error" and e.payload.get("call") != "shell" and "/" in target:
            paths.setdefault(target.rsplit("/", 1)[-1], set()).add(target)
    for e in events:
        if e.kind != "error":
            continue
        line = str(e.payload.get("error") or e.content.split(" failed: ", 1)[-1]).strip()
        target = str(e.payload.get("target") or e.payload.get("tool") or "").strip()
        shell = e.payload.get("call") == "shell"
        if shell and step_kind(target) == "test" and any(name in target for name in written):
            continue
        if not shell and "/" not in target and len(paths.get(target, ())) == 1:
            (target,) = paths[target]
        key = f"{target}: {error_shape(line)}"
        shapes[key] += 1
        command = target[:80] if shell else ""
        text = shorten(strip_personal(" ".join(e.content.split())), 160)
        said.setdefault(key, (command, text))
        variants.setdefault(key, set()).add(_DIGITS.sub("#", " ".join(line.split())))
    for key, seen in variants.items():
        if len(seen) > 1:  # one shape, other words ("cannot import name 'a'", then 'b')
            command, text = said[key]
            said[key] = (command, f"{text} — and {len(seen) - 1} other like it")
    if not shapes:
        for o in observations:
            if not o.ok:
                key = o.command or o.tool
                shapes[key] += 1
                said.setdefault(key, (o.command or "", f"`{key}` failed" if o.command
                                      else f"{key} failed"))  # fmt: skip
    # Failures of commands first (a doctrine or a tool can be drawn from them), then the rest.
    ranked = sorted(shapes, key=lambda k: (-shapes[k], not said[k][0]))
    return [(*said[k], shapes[k]) for k in ranked[:3]]


# A ``cd`` that found no such folder: the shell was not where the command assumed (a ``cd``
# of an earlier command stays in effect: the host's shell keeps its working directory).
_CD_FAILED = re.compile(
    r"\bcd:(?:\d+:)? (?:no such file or directory|can't cd to):? (\S+)"
    r"|\bcd: (\S+): no such file or directory",
    re.IGNORECASE,
)


_IMPORT_GUESS = re.compile(
    r"cannot import name '([\w.]+)' from '([\w.]+)'"
    r"|module '([\w.]+)' has no attribute '(\w+)'"
)


def guessed_names(events: Iterable[Event]) -> tuple[str, list[str]] | None:
    """``(module, names)`` when the session imported two or more names a module does not
    have (the assistant guessed its API instead of reading it), else None."""
    by_module: dict[str, list[str]] = {}
    for e in events:
        if e.kind != "error":
            continue
        for found in _IMPORT_GUESS.finditer(e.content):
            name, module = found.group(1) or found.group(4), found.group(2) or found.group(3)
            names = by_module.setdefault(module, [])
            if name not in names:
                names.append(name)
    module = max(by_module, key=lambda m: len(by_module[m]), default=None)
    return (module, by_module[module]) if module and len(by_module[module]) >= 2 else None


def cwd_drift(events: Iterable[Event]) -> tuple[str, int] | None:
    """``(folder, failures)`` when the session's shell was left in a sub-folder and two or
    more commands then failed to find a path named from the project (relative paths met the
    wrong folder). The folder is told by a ``cd FOLDER`` that failed because the shell was
    already there, or by a failure, while the host recorded the shell in FOLDER (``moved``,
    the extraction's), to find ``FOLDER/…``: a path the project names that way, not a file
    that is merely missing (a deliberate `cd web` and then a missing `dist` is no drift).
    Counted: the failed ``cd``s and the failures to find a path while the shell was in that
    folder (any, for failures stored before the extraction said where the shell was)."""
    failed = [e for e in events if e.kind == "error" and e.payload.get("call") == "shell"]
    folder = None
    for e in failed:
        found = _CD_FAILED.search(e.content)
        moved = str(e.payload.get("moved") or "")
        if found:
            folder = (found.group(1) or found.group(2) or "").strip("'\"")
        elif moved and _lost(e) and re.search(rf"(?<![\w./-]){re.escape(moved)}/", e.content):
            folder = moved
        if folder:
            break
    if not folder:
        return None
    said_where = any("moved" in e.payload for e in failed)
    missing = sum(
        1
        for e in failed
        if _CD_FAILED.search(e.content)
        or (_lost(e) and (e.payload.get("moved") == folder or not said_where))
    )
    return (folder, missing) if missing >= 2 else None


def _lost(e: Event) -> bool:
    return bool(e.payload.get("path_missing")) or path_missing(e.content)


def corrections(events: Sequence[Event]) -> list[str]:
    """What the person said right after refusing a call, oldest first ("The person refused
    Write test_link.py and said: “I'd love that test saved as a permanent unit test”"): the
    session's corrections, what a next session most needs to hear (``events`` oldest first)."""
    refused: dict[str, list[str]] = {}  # what they said -> the calls (refused together)
    for i, reason in refusal_reasons(events).items():
        what = strip_personal(events[i].content.removeprefix("The person refused ").strip())
        said = shorten(strip_personal(str(reason.payload.get("said") or reason.content)), 200)
        calls = refused.setdefault(said, [])
        if what not in calls:
            calls.append(what)
    return [
        f"The person refused {_and(calls)} and said: “{said}”" for said, calls in refused.items()
    ]


def _and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _line_of(said: str) -> str:
    """The error line of an error's text (``… failed: LINE``, maybe `` — and N other like it``)."""
    return said.split(" failed: ", 1)[-1].split(" — and ", 1)[0]


def _hours(observations: Sequence[Observation]) -> float:
    if len(observations) < 2:
        return 0.0
    times = sorted(o.at for o in observations)
    return (parse_time(times[-1]) - parse_time(times[0])).total_seconds() / 3600


def session_lesson(
    session_id: str,
    observations: Sequence[Observation],
    events: Iterable[Event],
    tokens: int,
    usual_tokens: Sequence[int],
    *,
    min_calls: int,
) -> Draft | None:
    """The lesson draft of one finished session, or None when it is too small to teach."""
    calls = [o for o in observations if o.session_id == session_id]
    if len(calls) < max(1, min_calls):
        return None
    events = sorted(events, key=lambda e: (e.created_at, e.provenance.line or 0))
    failed = sum(1 for o in calls if not o.ok)
    day = min(o.at for o in calls)[:10]
    usual = int(statistics.median(usual_tokens)) if usual_tokens else 0
    effort = [
        f"- Actual: {tokens:,} tokens, {len(calls)} tool calls ({failed} failed) over "
        f"{_hours(calls):.1f} h." if tokens else
        f"- Actual: {len(calls)} tool calls ({failed} failed) over {_hours(calls):.1f} h "
        "(no token usage recorded).",
    ]  # fmt: skip
    if tokens and usual:  # no estimate is made before a session: its project's usual one
        effort.append(f"- Estimated as the project's usual session (the median of "
                      f"{len(usual_tokens)} others): {usual:,} tokens; this one "
                      f"{100 * (tokens - usual) / usual:+.0f}%.")  # fmt: skip
    else:
        effort.append("- Estimated: no earlier session of this project to compare with.")
    errors = _errors(events, calls)
    patterns, _ = find_patterns(calls)
    # What came back in the session, and only that: a command fixed the same way twice or
    # more, a command failing the same way twice or more, the project's own steps in a row
    # (a workflow). A one-off slip fixed on the next call, a chain of tool names, a
    # step run often and a command "retried" with other arguments teach nothing lasting.
    fixes = [p for p in patterns if p.kind == "fix" and p.count > 1]
    workflows = [p for p in patterns if p.family == "workflow" and p.count > 1]
    # a task runner's "task failed" twice is two failures, not one failing the same way again
    recurring = [e for e in errors if e[2] > 1 and not says_only_that_it_failed(_line_of(e[1]))]
    repeated = [e for e in recurring if e[0]]
    drift = cwd_drift(events)
    if not (fixes or repeated or drift):
        # nothing came back in the session: nothing lasting to learn from it (what the person
        # said refusing a call alone made a thin note: a reader judged one not worth keeping)
        return None
    corrected = corrections(events)
    if drift:
        folder, times = drift
        said = (f"A `cd {folder}` stayed in effect: {times} later commands did not find a "
                "path they named relative to the project")  # fmt: skip
        recurring = [("", said, times), *recurring][:3]
    standard = corrected + [f"{p.rule} ({p.count}x)" for p in fixes]
    standard = (standard + [f"{p.rule} ({p.count}x)" for p in workflows])[:3]
    if fixes:
        doctrine = fixes[0].rule
    elif drift:
        doctrine = (f"A `cd {drift[0]}` in a shell command stays in effect for the next "
                    f"ones: run `(cd {drift[0]} && …)` in a subshell, or use paths from the "
                    "project root.")  # fmt: skip
    else:
        doctrine = "None stood out: what failed again was not fixed by another way of running it."
    guessed = guessed_names(events)
    if guessed:
        module, names = guessed
        guess = (f"Look up what `{module}` defines before importing from it: "
                 f"{len(names)} guessed names it does not have failed "
                 f"({', '.join(f'`{n}`' for n in names[:3])})")  # fmt: skip
        standard = [*corrected, guess, *standard[len(corrected) :]][:3]
    # A tool only for a command that failed the same way twice (not names guessed twice).
    tool = "None needed."
    for command, said, times in repeated:
        if guessed and guessed[0] in said:
            continue
        error = said.split(" failed: ", 1)[-1]
        tool = f"A pre-flight check for `{command}`: it failed {times}x with “{error}”."
        break
    body = [
        f"## {SECTIONS[0]}", "", *effort, "",
        f"## {SECTIONS[1]}", "", *([f"- {e} ({n}x)" for _, e, n in recurring] or ["- none"]), "",
        f"## {SECTIONS[2]}", "", *([f"- {p}" for p in standard] or ["- none"]), "",
        f"## {SECTIONS[3]}", "", f"- {doctrine}", "",
        f"## {SECTIONS[4]}", "", f"- {tool}",
    ]  # fmt: skip
    short = session_id[:8]
    return Draft(
        "brain_inbox", f"{INBOX_DIR}/lesson-{day}-{short}.md", f"Lesson: session {short} ({day})",
        "\n".join(body), f"A substantial session ended ({len(calls)} tool calls).",
        f"session:{session_id}", (f"session {session_id}",), len(calls), ident="lesson",
    )  # fmt: skip


@dataclass(frozen=True)
class SkillCandidate:
    steps: tuple[str, ...]
    sessions: tuple[str, ...]


def _step_runs(observations: Sequence[Observation]) -> list[str]:
    """The session's own steps (test, check, build commands that passed), in order, a step
    run twice in a row kept once."""
    out: list[str] = []
    for o in sorted(observations, key=lambda o: o.at):
        if o.ok and o.command and step_kind(o.command) and (not out or out[-1] != o.command):
            out.append(o.command)
    return out


MIN_SKILL_STEPS = 3


def skill_candidates(
    by_session: Mapping[str, Sequence[Observation]], *, min_tasks: int, longest: int = 4
) -> list[SkillCandidate]:
    """Sequences of ``MIN_SKILL_STEPS`` to ``longest`` steps found in at least ``min_tasks``
    sessions; the longest first, a sequence inside a longer one already proposed left out."""
    found: dict[tuple[str, ...], set[str]] = {}
    for session, calls in by_session.items():
        runs = _step_runs(calls)
        for size in range(MIN_SKILL_STEPS, longest + 1):
            for i in range(len(runs) - size + 1):
                gram = tuple(runs[i : i + size])
                if len(set(gram)) == size:
                    found.setdefault(gram, set()).add(session)
    ranked = sorted(
        (g for g, s in found.items() if len(s) >= min_tasks),
        key=lambda g: (-len(g), -len(found[g]), g),
    )
    kept: list[SkillCandidate] = []
    for gram in ranked:
        text = " ".join(gram)
        if any(text in " ".join(k.steps) for k in kept):
            continue
        kept.append(SkillCandidate(gram, tuple(sorted(found[gram]))))
    return kept


def skill_draft(candidate: SkillCandidate) -> Draft:
    name = "-".join(w for step in candidate.steps[-1:] for w in step.split() if w.isalnum())
    name = f"run-{name or 'steps'}"[:50]
    steps = "\n".join(f"{n}. Run `{s}`." for n, s in enumerate(candidate.steps, 1))
    text = (
        f"---\nname: {name}\ndescription: \"This project's usual sequence: "
        f'{" then ".join(candidate.steps)}. Use it when finishing a change."\n---\n\n'
        f"# {name}\n\n{steps}\n\nStop at the first step that fails and fix it before going on.\n"
    )
    return Draft(
        "skill", f"{SKILLS_DIR}/{name}/SKILL.md", f"Skill: {' → '.join(candidate.steps)}", text,
        f"The same steps ran in this order in {len(candidate.sessions)} sessions.",
        f"skill:{'>'.join(candidate.steps)}",
        tuple(f"session {s}" for s in candidate.sessions[:10]), len(candidate.sessions),
    )  # fmt: skip
