"""Lessons drawn from a session's events, offline.

* a failure and what fixed it: an ``error_resolved`` event whose files changed between the
  failing run and the passing one (a call that merely passed when run again taught nothing);
* a retry loop: the same call failing ``RETRY_LOOP`` times or more in one session;
* a correction: something the person said about how to work ("don't stash", "use X, not Y");
* a refused tool call, with the reason the person gave next (a refusal without one is left);
* a gotcha flagged by the assistant (``[MEMORY:gotcha]``);
* a reproducible success: how to build, test or run, stated; or a check that passes.

Each lesson has a ``key``: the same lesson learned again (another session, another pass over
the same events) is the same key, and ``confirm`` merges it into the one already kept.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from cortexmem.core.extraction.commands import display_command
from cortexmem.core.lessons.facts import (
    LANGUAGE_OF_SUFFIX,
    domain_of,
    framework_of,
    language_of,
    last_program,
    program_of,
    suffix_of,
    words_of,
)
from cortexmem.model import Event, Lesson, Trigger, content_hash, utc_now

RETRY_LOOP: Final = 3
# How many events after a refusal the person's reason may come.
REASON_WINDOW: Final = 6
KINDS: Final = (
    "error_resolved", "error", "preference", "refused", "prompt", "gotcha", "howto", "test_run",
)  # fmt: skip
# Layers whose gotchas the assistant flagged itself ([MEMORY:gotcha]).
FLAGGED: Final = frozenset({"tag", "self_report"})
_NUMBERS: Final = re.compile(r"\d+(?:\.\d+)?")
_PATHS: Final = re.compile(r"(?:[\w.-]*/)+[\w.-]+")
_QUOTED: Final = re.compile(r"(['\"`]).{1,120}?\1")
_CORRECTION: Final = re.compile(
    r"^(?:no[,.!]|nope\b|don'?t\b|do not\b|never\b|stop\b|please don'?t\b|instead\b|"
    r"use \S+,? not\b|not \S+,? use\b|always\b|avoid\b)",
    re.IGNORECASE,
)
IMPORTANCE: Final = {
    "fix_with_cause": 7, "fix": 5, "retry": 6, "correction": 8, "refusal": 8, "gotcha": 7,
    "victory": 3,
}  # fmt: skip


def error_shape(error: str) -> str:
    """An error line without what changes from run to run (numbers, paths, quoted names)."""
    text = _QUOTED.sub("_", _PATHS.sub("_", error.lower()))
    return " ".join(_NUMBERS.sub("N", text).split())[:120]


def _trigger(tool: str | None, command: str, files: Sequence[str], text: str) -> Trigger:
    words = words_of(" ".join((command, " ".join(files), text)))
    kinds = tuple(sorted({k for k in (suffix_of(f) for f in files) if k}))
    language = language_of(command=command) if command else None
    if language is None:
        langs = {LANGUAGE_OF_SUFFIX[k] for k in kinds if k in LANGUAGE_OF_SUFFIX}
        language = langs.pop() if len(langs) == 1 else None
    return Trigger(
        tool=tool or None,
        program=last_program(command) if command else None,
        command=_quote(display_command(command), 200) if command else None,
        file_kinds=kinds,
        language=language,
        framework=framework_of(words),
        domain=domain_of(words),
    )


def _make(
    event: Event, kind: str, text: str, key: str, trigger: Trigger, weight: str, source: str
) -> Lesson:
    session = event.provenance.session_id
    return Lesson(
        text=text,
        kind=kind,
        key=key,
        trigger=trigger,
        importance=IMPORTANCE[weight],
        learnable=kind != "victory",
        source=source,
        events=(event.content_hash,),
        sessions=(session,) if session else (),
        # learned now (the raw tier's 30 days count from here: ingesting old history must not
        # prune it at once); confirmed when it happened (recency fades old knowledge)
        last_confirmed_at=event.created_at,
    )


def _quote(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def from_fix(event: Event) -> Lesson | None:
    """A failure and the change that fixed it; None when nothing changed between the runs."""
    p = event.payload
    files = [str(f) for f in p.get("files") or []]
    if not files:
        return None
    shell = p.get("call") == "shell"
    target = str(p.get("target") or "")
    if not shell and not [f for f in files if f != target]:
        return None  # the call itself, retried until it went through: no fix between runs
    error = str(p.get("error") or "")
    cause = str(p.get("cause") or "").rstrip(".")
    command = target if shell else ""
    where = ", ".join(files[:4])
    what = f"`{_quote(target, 100)}`" if shell else f"{p.get('tool') or 'a tool'} on {target}"
    if cause:
        text = f"When {what} fails with “{_quote(error, 100)}”, look at {where}: last time {cause}"
    else:
        text = f"When {what} fails with “{_quote(error, 100)}”, the fix was a change to {where}"
    subject = program_of(command) if shell else str(p.get("tool") or "")
    key = content_hash("fix", subject or "", error_shape(error), " ".join(sorted(files)))
    trigger = _trigger(str(p.get("tool") or ""), command, files, error)
    return _make(event, "failure", text, key, trigger, "fix_with_cause" if cause else "fix",
                 "structural")  # fmt: skip


RETRY_ADVICE: Final = "stop and find the cause before running it again"


def is_retry_loop(lesson: Lesson) -> bool:
    """Whether ``lesson`` says a call was retried unchanged (``from_retries``): advice for the
    moment of the retry, with no fix to tell."""
    return RETRY_ADVICE in lesson.text


def from_retries(events: Sequence[Event]) -> list[Lesson]:
    """The same call failing ``RETRY_LOOP`` times or more in a row in one session (no success
    of it in between, which the capture says as ``error_resolved``): one lesson a call, from
    its longest run."""
    runs: dict[tuple[str | None, str], list[Event]] = {}
    longest: dict[tuple[str | None, str], list[Event]] = {}
    for e in events:
        target = e.payload.get("target")
        if not target or e.kind not in ("error", "error_resolved"):
            continue
        call = (e.provenance.session_id, str(target))
        if e.kind == "error_resolved":
            runs.pop(call, None)  # it went through: the run is over
            continue
        run = runs.setdefault(call, [])
        run.append(e)
        if len(run) > len(longest.get(call, ())):
            longest[call] = list(run)
    out = []
    for (_, target), failed in longest.items():
        if len(failed) < RETRY_LOOP:
            continue
        last = failed[-1]
        p = last.payload
        shell = p.get("call") == "shell"
        error = str(p.get("content") or last.content.split(" failed: ", 1)[-1])
        what = f"`{_quote(target, 100)}`" if shell else f"{p.get('tool') or 'a tool'} on {target}"
        text = (
            f"When {what} fails with “{_quote(error, 100)}”, {RETRY_ADVICE}: it failed "
            f"{len(failed)} times in a row last time"
        )
        command = target if shell else ""
        key = content_hash("retry", program_of(command) or target, error_shape(error))
        files = [] if shell else [target]
        out.append(
            _make(
                last,
                "failure",
                text,
                key,
                _trigger(str(p.get("tool") or ""), command, files, error),
                "retry",
                "structural",
            )
        )
    return out


def is_correction(sentence: str) -> bool:
    return bool(_CORRECTION.search(sentence.strip()))


def from_correction(event: Event) -> Lesson:
    said = _quote(event.content, 240)
    text = f"The person said: “{said}”"
    key = content_hash("correction", " ".join(sorted(words_of(said))))
    return _make(event, "correction", text, key, _trigger(None, "", [], said), "correction",
                 "keyword")  # fmt: skip


def from_refusal(refused: Event, reason: Event) -> Lesson:
    what = refused.content.removeprefix("The person refused ").strip()
    command = what.strip("`") if what.startswith("`") else ""
    said = _quote(str(reason.payload.get("said") or reason.content), 200)
    text = f"Do not run {what} unasked: the person refused it and said “{said}”"
    key = content_hash("refused", (program_of(command) if command else None) or what, said.lower())
    path = "" if command else what.split(" ", 1)[-1]
    trigger = _trigger(str(refused.payload.get("tool") or ""), command, [path] if path else [],
                       said)  # fmt: skip
    return _make(refused, "correction", text, key, trigger, "refusal", "structural")


def from_gotcha(event: Event) -> Lesson:
    said = _quote(event.content, 300)
    key = content_hash("gotcha", said.lower())
    files = re.findall(r"[\w./-]+\.[a-z]{1,5}\b", said)
    return _make(event, "failure", f"Watch out: {said}", key, _trigger(None, "", files, said),
                 "gotcha", "tag")  # fmt: skip


def from_success(event: Event) -> Lesson | None:
    if event.kind == "howto":
        said = _quote(event.content, 240)
        commands = re.findall(r"`([^`]{3,})`", said)
        command = commands[0] if commands else ""
        key = content_hash("victory", program_of(command) or said.lower())
        return _make(event, "victory", f"What worked: {said}", key,
                     _trigger(None, command, [], said), "victory", "keyword")  # fmt: skip
    return None


def refusal_reasons(events: Sequence[Event]) -> dict[int, Event]:
    """For each refusal (by position), what the person said: typed with the refusal (the
    ``preference`` or, for a question, the ``prompt`` extraction made of it, at the same line),
    else next in the same session (a prompt or a stated preference within ``REASON_WINDOW``
    events)."""
    found: dict[int, Event] = {}
    typed = {
        (x.provenance.session_id, x.provenance.line): x
        for x in events
        if x.kind in ("preference", "prompt") and x.payload.get("said")
    }
    for i, e in enumerate(events):
        if e.kind != "refused" or e.payload.get("cancelled"):
            continue  # a call stopped with a refused one: what was said is about that one
        with_it = typed.get((e.provenance.session_id, e.provenance.line))
        if with_it is not None:
            found[i] = with_it
            continue
        for later in events[i + 1 : i + 1 + REASON_WINDOW]:
            if (
                later.kind in ("prompt", "preference")
                and later.payload.get("speaker", "user") == "user"
                and later.provenance.session_id == e.provenance.session_id
            ):
                found[i] = later
                break
    return found


def lessons_from_events(events: Sequence[Event]) -> list[Lesson]:
    """Every lesson a session's events teach, in the order they happened (oldest first). What
    the person said as the reason for a refusal is that refusal's lesson, not another one."""
    reasons = refusal_reasons(events)
    said = {r.content for r in reasons.values()}
    out: list[Lesson] = []
    for i, e in enumerate(events):
        lesson: Lesson | None = None
        if e.kind == "error_resolved":
            lesson = from_fix(e)
        elif e.kind == "preference" and e.payload.get("speaker") == "user":
            if is_correction(e.content) and e.content not in said:
                lesson = from_correction(e)
        elif e.kind == "refused" and i in reasons:
            # A refused command is about the command; a refused edit is about that change,
            # unless the person stated a rule ("don't touch the generated files").
            shell = e.payload.get("call") == "shell"
            if shell or is_correction(reasons[i].content):
                lesson = from_refusal(e, reasons[i])
        elif e.kind == "gotcha" and e.payload.get("layer") in FLAGGED:
            lesson = from_gotcha(e)
        else:
            lesson = from_success(e)
        if lesson is not None:
            out.append(lesson)
    out += from_retries(events)
    return out


_LAST_TIME: Final = ": last time "
_FIXED_THERE: Final = re.compile(
    r": fixed there in \d+ sessions, for different causes \(last: (.*)\)$", re.DOTALL
)


_FIX_TOLD: Final = re.compile(
    r"^When (?P<what>.+?) fails with “(?P<error>[^”]*)”, (?:look at|the fix was a change to) "
    r"(?P<where>.+?)(?:: (?:last time |fixed there in (?P<sessions>\d+) sessions)|$)",
    re.DOTALL,
)


@dataclass(frozen=True)
class FixTold:
    """What a fix lesson's offline text says: what failed, with which error, where the fix was
    (and in how many sessions, when it came back with another cause each time)."""

    what: str
    error: str
    where: str
    sessions: int = 1


def fix_told(lesson: Lesson) -> FixTold | None:
    """The parts of a fix lesson's offline text (``from_fix``, ``_recurring_text``); None for
    any other text (a model's or a person's words)."""
    found = _FIX_TOLD.match(lesson.text)
    if found is None:
        return None
    sessions = int(found.group("sessions") or 1)
    return FixTold(found.group("what"), found.group("error"), found.group("where"), sessions)


def other_causes_each_time(lesson: Lesson) -> bool:
    """Whether ``lesson`` came back with another cause each time (``_recurring_text``): it says
    where failures keep being fixed, not what to do to avoid them."""
    return bool(_FIXED_THERE.search(lesson.text))


def _recurring_text(kept: Lesson, learned: Lesson, sessions: int) -> str:
    """A fix learned again in another session with another cause: where it was fixed is what
    recurs, and one cause would mislead; the latest is kept as such. Only offline text is
    reworded (a model's or a person's words stay)."""
    if kept.kind != "failure" or kept.source != "structural":
        return kept.text
    latest = learned.text.split(_LAST_TIME, 1)[1] if _LAST_TIME in learned.text else None
    found = _FIXED_THERE.search(kept.text)
    if found:
        head, cause = kept.text[: found.start()], found.group(1)
    elif _LAST_TIME in kept.text:
        head, cause = kept.text.split(_LAST_TIME, 1)
    else:
        return kept.text
    if latest is None or (found is None and latest == cause):
        return kept.text
    return f"{head}: fixed there in {sessions} sessions, for different causes (last: {latest})"


_CODE: Final = re.compile(r"`([^`\n]{1,200})`")


def invented(draft: str, evidence: str) -> list[str]:
    """What a drafted lesson names that its evidence does not: each command, path or
    identifier it quotes in backticks, and each path it writes bare, that appears nowhere in
    the evidence (compared without case and spacing). A model that rewrites a lesson may
    reword it, never make up the command it tells the next session to run."""
    seen = " ".join(evidence.lower().split())
    paths = (p.rstrip(".") for p in _PATHS.findall(_CODE.sub(" ", draft)))  # a sentence's end
    bare = [p for p in paths if _looks_like_a_path(p)]
    named = [m.group(1) for m in _CODE.finditer(draft)] + bare
    return [n for n in named if " ".join(n.lower().split()) not in seen]


def _looks_like_a_path(text: str) -> bool:
    """``src/cache.py`` or ``a/b/c``, not prose such as ``and/or``."""
    return text.count("/") >= 2 or "." in text.rsplit("/", 1)[-1]


def confirm(kept: Lesson, learned: Lesson, now: str | None = None) -> Lesson | None:
    """``kept`` with what ``learned`` (the same key) adds, or None when it adds nothing (its
    evidence is already kept: learning twice from the same events changes nothing). A new
    session is one more confirmation; the same session again is more evidence, not more
    confirmation (one long session confirms nothing by itself)."""
    new_events = [e for e in learned.events if e not in kept.events]
    if not new_events:
        return None
    new_sessions = [s for s in learned.sessions if s not in kept.sessions]
    sessions = kept.sessions + tuple(new_sessions)
    return kept.with_changes(
        text=_recurring_text(kept, learned, len(sessions)) if new_sessions else kept.text,
        events=kept.events + tuple(new_events),
        episodes=kept.episodes + tuple(e for e in learned.episodes if e not in kept.episodes),
        sessions=sessions,
        confirmed=kept.confirmed + len(new_sessions),
        last_confirmed_at=learned.last_confirmed_at if new_sessions else kept.last_confirmed_at,
        importance=max(kept.importance, learned.importance),
        learnable=kept.learnable or (kept.kind == "victory" and bool(new_sessions)),
        updated_at=now or utc_now(),
    )
