"""Suggestions: what recurs, drafted as a change to one of six destinations (pure).

A ``Draft`` says what to write where and why; ``to_suggestion`` gives it a key (destination,
target and the text's words: the same proposal is never queued twice), and ``change``
computes the target file's content after the change, from its content before:

* ``claude_md``: a bullet under the ``## Learned by Cortex`` section of a CLAUDE.md;
* ``settings_json``: a JSON object merged into ``.claude/settings.json`` (objects merged key
  by key, lists extended with what they lack, nothing removed);
* ``memory``: a tier-1 memory file (a rules file Claude Code loads in every session);
* ``brain_inbox`` and ``tool``: a note in the inbox (a concept, a tool or automation to make);
* ``skill``: a skill folder's ``SKILL.md``.

The sources: promoted instincts (``from_instinct``), failures that keep coming back
(``recurring_failures`` → ``from_failure``), and lessons worth keeping (``from_lesson``).
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from cortexmem.core.command_form import command_form
from cortexmem.core.extraction.commands import says_only_that_it_failed
from cortexmem.core.lessons.build import other_causes_each_time
from cortexmem.core.privacy import strip_personal
from cortexmem.core.readonly_shell import is_read_only_command
from cortexmem.core.redact import redact
from cortexmem.model import Event, Instinct, Lesson, Suggestion, new_id

SECTION: Final = "## Learned by Cortex"
CLAUDE_MD: Final = "CLAUDE.md"
SETTINGS_JSON: Final = ".claude/settings.json"
MEMORY_DIR: Final = ".claude/rules"
SKILLS_DIR: Final = ".claude/skills"
INBOX_DIR: Final = ".cortex/inbox"
MAX_TEXT: Final = 4_000


@dataclass(frozen=True)
class Draft:
    destination: str
    target: str
    title: str
    text: str
    rationale: str
    source: str
    evidence: tuple[str, ...] = ()
    recurrence: int = 1
    drafted_by: str = "template"
    # The words that, found in the target file, mean it already says this (default: the text).
    essence: str = ""
    # What identifies the proposal at its target when its text may change (a session's lesson,
    # drafted again as more of the session is read): the key is made of it, not of the text.
    ident: str = ""


# ----------------------------------------------------------------- keys and duplicates


def _words(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def suggestion_key(destination: str, target: str, text: str) -> str:
    digest = hashlib.sha256(_words(text).encode()).hexdigest()[:16]
    return f"{destination}:{target}:{digest}"


def draft_key(draft: Draft) -> str:
    if draft.ident:
        return f"{draft.destination}:{draft.target}:{draft.ident}"
    return suggestion_key(draft.destination, draft.target, draft.text.strip()[:MAX_TEXT])


def already_said(existing: str, text: str) -> bool:
    """Whether a file already says ``text`` (its words, whole and in order, whatever the
    markup: "use uv" is not said by "because uvicorn")."""
    wanted = _words(_body(text))
    return bool(wanted) and f" {wanted} " in f" {_words(existing)} "


def holds(destination: str, existing: str, text: str) -> bool:
    """Whether the file ``existing`` already holds ``text``: settings by their structure (the
    merge would change no value), any other file by its words (``already_said``)."""
    if destination == "settings_json":
        return settings_hold(existing, text)
    return already_said(existing, text)


def _body(text: str) -> str:
    """The words that matter: a bullet without its dash, a JSON fragment's values."""
    return text.strip().lstrip("-* ").strip()


def to_suggestion(draft: Draft, before: str, now: str) -> Suggestion:
    """A draft as a suggestion for the review queue. What it would write is stripped of
    secrets and personal data (an address, a phone number, a user's home folder quoted in an
    error) whatever drafted it: it is meant for a file people share."""
    text = _shareable(draft.text.strip())[:MAX_TEXT]
    title = _shareable(draft.title)
    return Suggestion(
        id=new_id("sg"),
        destination=draft.destination,
        target=draft.target,
        title=title,
        text=text,
        rationale=_shareable(draft.rationale),
        source=draft.source,
        key=draft_key(draft),
        before=before,
        after=change(draft.destination, before, text, title),
        evidence=draft.evidence,
        recurrence=draft.recurrence,
        created_at=now,
        drafted_by=draft.drafted_by,
    )


def _shareable(text: str) -> str:
    return strip_personal(redact(text))


def select(drafts: Iterable[Draft], known_keys: set[str], contents: dict[str, str]) -> list[Draft]:
    """The drafts worth queueing: not already queued or decided (``known_keys``), not already
    said by their target file (``contents``: target → its text), not twice in one batch;
    ranked by recurrence, then evidence."""
    out: list[Draft] = []
    seen = set(known_keys)
    for d in sorted(drafts, key=lambda d: (-d.recurrence, -len(d.evidence), d.title)):
        key = draft_key(d)
        text = d.text if d.destination == "settings_json" else d.essence or d.text
        if key in seen or holds(d.destination, contents.get(d.target, ""), text):
            continue
        seen.add(key)
        out.append(d)
    return out


# ----------------------------------------------------------------- sources


def from_instinct(instinct: Instinct) -> Draft | None:
    """A promoted instinct as a lasting instruction: a command fix or a retry habit goes to
    CLAUDE.md; a chain of three different tools is a workflow worth keeping as a memory file
    (a tool repeated is not)."""
    evidence = (
        f"{instinct.observations} times over {instinct.sessions} of {instinct.total_sessions} "
        f"sessions, {instinct.first_seen[:10]} to {instinct.last_seen[:10]}",
    )
    why = (
        f"Promoted by the learning loop at {round(100 * instinct.confidence)}% confidence "
        f"({instinct.observations}x seen over {instinct.sessions} sessions)."
    )
    if instinct.kind == "fix":
        head = instinct.rule.split(":", 1)[0]
        passed = instinct.key.split(">", 1)[-1]  # a file that names the command says it
        return Draft(
            "claude_md", CLAUDE_MD, head, f"- {instinct.rule.rsplit(' (', 1)[0]}.", why,
            f"instinct:{instinct.key}", evidence, instinct.observations, essence=f"`{passed}`",
        )  # fmt: skip
    if instinct.kind == "retry":
        text = instinct.rule.rsplit(" (", 1)[0].rstrip(".")
        return Draft(
            "claude_md", CLAUDE_MD, f"Stop retrying: {instinct.label}",
            f"- {text}; before running it again, check what it needs.",
            why, f"instinct:{instinct.key}", evidence, instinct.observations,
        )  # fmt: skip
    if len(set(instinct.label.split("->"))) < 3:
        return None  # one tool over and over: a habit, nothing a person would write down
    slug = re.sub(r"[^a-z0-9]+", "-", instinct.label.lower()).strip("-")
    return Draft(
        "memory", f"{MEMORY_DIR}/workflow-{slug}.md", f"Workflow: {instinct.label}",
        f"- This project's usual sequence is {instinct.label.replace('->', ' → ')}: "
        "follow it rather than an ad-hoc order.",
        why, f"instinct:{instinct.key}", evidence, instinct.observations,
    )  # fmt: skip


@dataclass(frozen=True)
class Recurring:
    """One failure seen again and again: the step, the error's shape, every sighting."""

    target: str
    error: str
    causes: tuple[str, ...]
    files: tuple[str, ...]
    sessions: tuple[str, ...]
    count: int


_VOLATILE = re.compile(r"0x[0-9a-f]+|\b\d+(?:\.\d+)*\b|[\w./-]*/[\w./-]+|'[^']*'|\"[^\"]*\"")


def error_shape(line: str) -> str:
    """An error line without what changes from one time to the next (numbers, paths, quoted
    names), so the same failure compares equal."""
    return " ".join(_VOLATILE.sub("…", line.lower()).split())[:160]


def recurring_failures(events: Iterable[Event], min_repeats: int) -> list[Recurring]:
    """Failures resolved (``error_resolved`` events) whose step and error shape came back at
    least ``min_repeats`` times, most frequent first."""
    groups: dict[tuple[str, str], list[Event]] = defaultdict(list)
    for e in events:
        if e.kind != "error_resolved":
            continue
        target = str(e.payload.get("target") or "").strip()
        error = str(e.payload.get("error") or "").strip()
        if target and error:
            groups[(target, error_shape(error))].append(e)
    out = []
    for (target, _), found in groups.items():
        if len(found) < min_repeats:
            continue
        causes = tuple(dict.fromkeys(str(e.payload["cause"]) for e in found
                                     if e.payload.get("cause")))  # fmt: skip
        files: list[str] = []
        for e in found:
            files += [str(f) for f in e.payload.get("files") or []]
        sessions = tuple(dict.fromkeys(e.provenance.session_id or "?" for e in found))
        out.append(
            Recurring(
                target,
                str(found[-1].payload.get("error")),
                causes,
                tuple(dict.fromkeys(files))[:8],
                sessions,
                len(found),
            )
        )
    out.sort(key=lambda r: (-r.count, r.target))
    return out


def from_failure(failure: Recurring) -> Draft | None:
    """A failure that keeps coming back, as a CLAUDE.md instruction; None when all it has in
    common is a task runner's "task failed" line and each time had another cause (it says
    nothing a person could write down: an independent reader found such a line claiming the
    newest cause for all of them). Its key is the step and the error's shape, not the text:
    a refused one is not proposed again when it comes back with another cause or count."""
    if len(failure.causes) > 1 and says_only_that_it_failed(failure.error):
        return None
    if len(failure.causes) == 1:
        because = f": {failure.causes[0].rstrip('.')}"
    elif failure.causes:
        because = f", for {len(failure.causes)} different causes"
    else:
        because = ""
    where = f" (fixed in {', '.join(failure.files[:3])})" if failure.files else ""
    text = (
        f'- `{failure.target}` keeps failing with "{failure.error[:160]}"{because}{where}. '
        "Check for this before running it."
    )
    ident = f"failure:{failure.target}:{error_shape(failure.error)}"
    return Draft(
        "claude_md", CLAUDE_MD, f"Recurring failure: {failure.target}", text,
        f"The same failure came back {failure.count} times over {len(failure.sessions)} "
        "sessions.",
        ident, tuple(f"session {s}" for s in failure.sessions[:10]), failure.count,
        ident=ident,
    )  # fmt: skip


def worth_keeping(lesson: Lesson) -> bool:
    """A lesson a person may want to make permanent: active and learnable, confirmed in a second
    session or promoted to the always-loaded tiers, not judged noise more often than followed,
    and the same lesson each time: one that came back with another cause every session says
    only where failures keep being fixed ("look at the test the failure names"), which two
    independent readers judged not worth a line of CLAUDE.md (it still warns)."""
    return (
        lesson.status == "active"
        and lesson.learnable
        and (lesson.tier in ("T1", "T0") or len(lesson.sessions) >= 2)
        and lesson.irrelevant + lesson.ignored <= lesson.followed + 1
        and not other_causes_each_time(lesson)
    )


def from_lesson(lesson: Lesson) -> list[Draft]:
    """A lesson worth keeping as a standing instruction in CLAUDE.md; a shell command the person
    refused also as an ``ask`` permission in ``.claude/settings.json``, so Claude Code asks
    before it runs that command again, whatever mode it runs in."""
    evidence = (
        f"learned {lesson.confirmed}x over {len(lesson.sessions)} sessions ({lesson.tier}); "
        f"shown {lesson.shown}, followed {lesson.followed}, ignored {lesson.ignored}",
        *(f"session {s}" for s in lesson.sessions[:5]),
    )
    why = (
        f"A {lesson.kind} lesson confirmed in {len(lesson.sessions)} sessions "
        f"(tier {lesson.tier}, lesson {lesson.id}); written down, it holds without Cortex."
    )
    title = " ".join(lesson.text.split())
    drafts = [
        Draft(
            "claude_md", CLAUDE_MD, "Lesson: " + (title[:70] + "…" if len(title) > 70 else title),
            f"- {title}", why, f"lesson:{lesson.id}", evidence, lesson.confirmed,
            ident=f"lesson:{lesson.key[:24]}",
        )
    ]  # fmt: skip
    t = lesson.trigger
    # A refused shell command (only those carry a command), in the host's permission syntax:
    # its tool's name, then the command's form as a prefix. Not one that only looks (``which
    # python3 && echo …``): what the person refused there was the approach, and asking before
    # every ``which`` would guard nothing.
    form = command_form(t.command) if lesson.kind == "correction" and t.command else ""
    if t.tool and form and not is_read_only_command(t.command or ""):
        rule = f"{t.tool}({form}:*)"
        drafts.append(Draft(
            "settings_json", SETTINGS_JSON, f"Ask before `{form}`",
            json.dumps({"permissions": {"ask": [rule]}}),
            f"The person refused `{form}` in {len(lesson.sessions)} sessions; with this rule "
            "Claude Code asks before running it.",
            f"lesson:{lesson.id}", evidence, lesson.confirmed, essence=f"ask {rule}",
            ident=f"ask:{form}",
        ))  # fmt: skip
    return drafts


# ----------------------------------------------------------------- the change itself


def change(destination: str, before: str, text: str, title: str) -> str:
    """The target file's content once ``text`` is applied to ``before``."""
    if destination == "claude_md":
        return add_to_section(before, text)
    if destination == "settings_json":
        return merge_settings(before, text)
    if destination == "skill":
        return text if text.lstrip().startswith("---") else skill_markdown(title, text)
    if destination == "memory" and before.strip():
        return add_to_section(before, text, heading=None)
    return f"# {title}\n\n{text.strip()}\n"


def add_to_section(before: str, text: str, heading: str | None = SECTION) -> str:
    """``text`` appended to ``heading``'s section (made at the end when missing; with no
    heading, at the end of the file)."""
    lines = before.splitlines()
    addition = text.strip().splitlines()
    if heading is None:
        return "\n".join([*lines, *addition]).strip("\n") + "\n"
    if heading not in lines:
        lead = [*lines, ""] if lines and lines[-1].strip() else lines
        return "\n".join([*lead, heading, "", *addition]).strip("\n") + "\n"
    start = lines.index(heading) + 1
    end = _section_end(lines, start)
    while end > start and not lines[end - 1].strip():
        end -= 1
    rest = lines[end:]
    while rest and not rest[0].strip():
        rest = rest[1:]
    gap = [""] if rest else []
    return "\n".join([*lines[:end], *addition, *gap, *rest]).strip("\n") + "\n"


_FENCE: Final = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


def _section_end(lines: list[str], start: int) -> int:
    """Where the section that begins at ``start`` ends: the next heading, not a line of a
    code block that starts with ``#`` (a shell comment in a fenced block). Fences as
    CommonMark reads them: a block opened by four backticks holds one of three, and is closed
    only by a run of its own character at least as long, with nothing after it."""
    fence = ""
    for i in range(start, len(lines)):
        found = _FENCE.match(lines[i])
        if fence:
            closes = (
                found is not None
                and found.group(1)[0] == fence[0]
                and len(found.group(1)) >= len(fence)
                and not found.group(2).strip()
            )
            fence = "" if closes else fence
        elif found and not (found.group(1)[0] == "`" and "`" in found.group(2)):
            fence = found.group(1)
        elif lines[i].startswith("#"):
            return i
    return len(lines)


def merge_settings(before: str, fragment: str) -> str:
    """``fragment`` (a JSON object) merged into the settings ``before`` (objects key by key,
    lists extended with the items they lack; nothing removed or overwritten but scalars)."""
    try:
        addition = json.loads(fragment)
    except ValueError as exc:
        raise ValueError(f"the suggestion's text is not JSON: {exc}") from None
    if not isinstance(addition, dict):
        raise ValueError("a settings suggestion must be a JSON object")
    try:
        current: Any = json.loads(before) if before.strip() else {}
    except ValueError as exc:
        raise ValueError(f"the settings file is not JSON: {exc}") from None
    if not isinstance(current, dict):
        raise ValueError("the settings file does not hold a JSON object")
    return json.dumps(_merge(current, addition), indent=2, ensure_ascii=False) + "\n"


def settings_hold(before: str, fragment: str) -> bool:
    """Whether the settings ``before`` already hold everything ``fragment`` would merge in
    (compared as JSON, whatever the layout; settings that are not JSON hold nothing)."""
    try:
        current: Any = json.loads(before) if before.strip() else {}
        return isinstance(current, dict) and _merge(current, json.loads(fragment)) == current
    except ValueError:
        return False


def _merge(base: Any, extra: Any) -> Any:
    if isinstance(base, dict) and isinstance(extra, dict):
        out = dict(base)
        for key, value in extra.items():
            out[key] = _merge(base[key], value) if key in base else value
        return out
    if isinstance(base, list) and isinstance(extra, list):
        return base + [item for item in extra if item not in base]
    return extra


def skill_markdown(title: str, text: str) -> str:
    name = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:60] or "skill"
    description = " ".join(text.split())[:200].replace('"', "'")
    return f'---\nname: {name}\ndescription: "{description}"\n---\n\n# {title}\n\n{text.strip()}\n'


def diff(before: str, after: str, target: str) -> str:
    """A unified diff of the change, as a person reviews it."""
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=f"a/{target}",
            tofile=f"b/{target}",
        )
    )


def rank(suggestions: Sequence[Suggestion]) -> list[Suggestion]:
    """The review queue's order: recurrence, then evidence, then age (never newest first)."""
    return sorted(suggestions, key=lambda s: (-s.recurrence, -len(s.evidence), s.created_at))
