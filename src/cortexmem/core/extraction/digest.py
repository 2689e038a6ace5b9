"""A session's digest: what the next session needs from it, recomputed from its events.

Per-event memories record what was said; some knowledge only exists across a whole session:

* ``session_summary``: the goal (the first real prompt), the outcome (the last replies), the
  files changed, the commits and what is still open, one memory per session;
* the plan folded: one memory with the latest to-do list and each step's final status (the
  last update wins; steps dropped from the list are gone), not one memory per step; and the
  last plan the person approved, until the session has carried it out;
* ``open_problem``: a failure (a test or check run, a build, a problem described in words)
  that nothing later in the session resolved;
* ``howto``: the commands the session used, successfully, as its test / check / build steps.

The digest is a pure function of the session's events in transcript order, so reading a
session at once or in pieces converges: the caller makes these memories the session's active
digest and supersedes the versions an earlier, shorter read produced.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from typing import Final

from cortexmem.core.extraction import commands
from cortexmem.core.extraction.events import clip
from cortexmem.core.extraction.prose import ANNOUNCES
from cortexmem.model import Event, Memory, SourceContext

# The events a digest reads.
DIGEST_KINDS: Final = (
    "prompt", "reply", "file_modified", "commit", "test_run", "command", "error",
    "error_resolved", "plan", "plan_step", "problem", "fix", "refused",
)  # fmt: skip
DIGEST_TAG: Final = "digest:"
MAX_FILES: Final = 12
MAX_COMMITS: Final = 8
MAX_HOWTO: Final = 6
MAX_OPEN: Final = 5
MAX_STEPS: Final = 30
GOAL_CHARS: Final = 400
OUTCOME_CHARS: Final = 1_200
PLAN_PREFIX: Final = "Plan: "
STEP_LABELS: Final = {"test": "run the tests", "check": "lint / type-check", "build": "build / run"}


def digest_tag(transcript: str) -> str:
    """The tag that marks one transcript's digest memories (so a newer digest replaces them)."""
    return DIGEST_TAG + hashlib.sha256(transcript.encode()).hexdigest()[:16]


def _ordered(events: Iterable[Event]) -> list[Event]:
    """Each event once, at its first time (as the store keeps it), in transcript order."""
    unique: dict[str, Event] = {}
    for event in events:
        unique.setdefault(event.content_hash, event)
    return sorted(unique.values(), key=lambda e: (e.provenance.line or 0, e.created_at))


def _memory(
    content: str,
    kind: str,
    memory_type: str,
    priority: int,
    last: Event,
    tag: str,
    confidence: float = 0.9,
) -> Memory:
    prov = last.provenance
    return Memory(
        content=clip(content, 2_000),
        memory_type=memory_type,
        confidence=confidence,
        priority=priority,
        source_type="extraction",
        source_session=prov.session_id,
        source_context=SourceContext(branch=prov.branch, commit=prov.commit),
        tags=(f"event:{kind}", "layer:digest", tag),
        created_at=last.created_at,
    )  # fmt: skip


# ----------------------------------------------------------------- open problems


def _run_key(event: Event) -> tuple[str, ...]:
    command = str(event.payload.get("command") or event.payload.get("target") or "")
    found = commands.runners(command)
    if found:
        return tuple(found)
    # "mise run fmt && mise run lint" is answered by a later "mise run lint" that passes
    return tuple(commands.normalise_command(part) for part in command.split("&&"))


def open_problems(events: Sequence[Event]) -> list[tuple[Event, str]]:
    """``(event, text)`` for each failure nothing after it resolved, oldest first."""
    open_: dict[tuple[str, ...], tuple[Event, str]] = {}
    errors = {
        (e.provenance.line, e.payload.get("target")): e.content
        for e in events
        if e.kind == "error" and e.payload.get("call") == "shell"
    }
    for event in events:
        kind = event.kind
        step = commands.step_kind(str(event.payload.get("command") or ""))
        if kind == "test_run" or (kind == "command" and step is not None):
            key = _run_key(event)
            if event.payload.get("ok"):
                for other in [k for k in open_ if set(k) & set(key)]:
                    del open_[other]
                continue
            if kind == "command" and commands.run_kind(str(event.payload.get("command"))):
                continue  # the test_run of the same call says it
            line = errors.get((event.provenance.line, event.payload.get("command")))
            text = line or event.content
            open_[key] = (event, text)
        elif kind == "error_resolved":
            key = _run_key(event)
            for other in [k for k in open_ if set(k) & set(key)]:
                del open_[other]
        elif kind == "problem":
            open_[("problem", event.content)] = (event, event.content)
        elif kind in ("fix", "commit"):
            for other in [k for k in open_ if k[0] == "problem"]:
                del open_[other]
    # a later passing run also answers problems described in words before it
    last_pass = max(
        (e.provenance.line or 0 for e in events if e.kind == "test_run" and e.payload.get("ok")),
        default=-1,
    )
    return [
        (e, text) for key, (e, text) in open_.items()
        if not (key[0] == "problem" and (e.provenance.line or 0) < last_pass)
    ][-MAX_OPEN:]  # fmt: skip


# ----------------------------------------------------------------- plan


def folded_plan(events: Sequence[Event]) -> tuple[list[tuple[str, str]], Event | None]:
    """The latest to-do list with each step's final status, and the event that last changed it."""
    steps: dict[str, str] = {}
    listed: list[str] | None = None
    last: Event | None = None
    for event in events:
        if event.kind == "plan" and event.payload.get("call") == "todo":
            listed = [str(s) for s in event.payload.get("steps") or []]
            steps = {text: steps.get(text, "pending") for text in listed}
            last = event
        elif event.kind == "plan_step":
            text = str(event.payload.get("step") or "")
            status = str(event.payload.get("status") or "pending")
            if not text:
                continue
            if listed is not None and text not in steps and event.payload.get("total"):
                continue  # a step of an earlier list
            steps[text] = status
            last = event
    return list(steps.items())[:MAX_STEPS], last


_FINISHED: Final = re.compile(
    r"\b(?:(?:is|are|now|fully|been|successfully) "
    r"(?:complete|completed|implemented|finished|done)"
    r"|all (?:\d+ )?(?:the )?(?:tests|checks)(?: are)? pass(?:ing|ed)?"
    r"|everything (?:passes|works))\b",
    re.IGNORECASE,
)


def _checks(event: Event) -> bool:
    return commands.step_kind(str(event.payload.get("command") or "")) in ("test", "check")


def plan_finished(events: Sequence[Event], steps: Sequence[tuple[str, str]], last: Event) -> bool:
    """Whether a plan needs no memory of its own: every step is done (the session's summary
    says what was done), or the to-do list went stale (``done_after`` its last update: to-do
    lists are often not updated again after a compaction, or the session went on to a new
    request)."""
    return all(status == "completed" for _, status in steps) or done_after(events, last)


def done_after(events: Sequence[Event], event: Event) -> bool:
    """Whether the work went on to its end after ``event``: the session's checks passed and a
    message said the work is complete."""
    line = event.provenance.line or 0
    later = [e for e in events if (e.provenance.line or 0) > line]
    passed = any(
        e.payload.get("ok")
        and (e.kind == "test_run" or (e.kind == "command" and _checks(e)))
        for e in later
    )  # fmt: skip
    return passed and any(e.kind == "reply" and _FINISHED.search(e.content) for e in later)


def approved_plan(events: Sequence[Event]) -> Event | None:
    """The last plan the person approved, while the session has not carried it out. Carried
    out, it is history (its text stays an episode; the summary says what was done), and shown
    as the plan it would tell a next session that the work is still to do: it is carried out
    once the work went on to its end (``done_after``) or was committed."""
    plans = [
        e for e in events
        if e.kind == "plan" and e.payload.get("call") == "plan" and e.payload.get("approved", True)
    ]  # fmt: skip
    if not plans:
        return None
    last = plans[-1]
    line = last.provenance.line or 0
    committed = any(e.kind == "commit" and (e.provenance.line or 0) > line for e in events)
    return None if committed or done_after(events, last) else last


def plan_text(steps: list[tuple[str, str]]) -> str:
    done = sum(1 for _, s in steps if s == "completed")
    listing = "; ".join(f"[{status}] {clip(text, 160)}" for text, status in steps)
    return f"Plan ({done}/{len(steps)} steps done): {listing}"


# ----------------------------------------------------------------- how-to


def _steps_of(command: str) -> list[tuple[str, str]]:
    """``(step kind, command)`` for each part of a ``a && b`` chain that is a step of its own
    (``cd x``, ``git add`` are not): a chain is remembered as its steps, so the same step run
    in different chains by different sessions is one how-to."""
    parts = [commands.normalise_command(p) for p in command.split("&&")]
    found = [(commands.step_kind(p), p) for p in parts if p]
    return [(kind, part) for kind, part in found if kind and commands.is_general_step(part)]


def howtos(events: Sequence[Event]) -> list[tuple[str, str, Event]]:
    """``(step kind, command, event)`` for the general commands the session ran successfully as its
    test, check or build steps (a chain split into its steps), most used first."""
    # one how-to per step whatever its output flags, shown as it was run most (first on a tie)
    counts: dict[str, int] = {}
    forms: dict[str, dict[str, int]] = {}
    found: dict[str, tuple[str, Event]] = {}
    for event in events:
        if event.kind != "command" or not event.payload.get("ok"):
            continue  # a failed chain does not say which of its steps works
        command = str(event.payload.get("command") or "")
        if not commands.step_kind(command) or command.endswith("…"):
            continue
        for kind, shown in _steps_of(command):
            key = commands.step_key(shown)
            counts[key] = counts.get(key, 0) + 1
            seen = forms.setdefault(key, {})
            seen[shown] = seen.get(shown, 0) + 1
            found.setdefault(key, (kind, event))
    ranked = sorted(found, key=lambda k: -counts[k])[:MAX_HOWTO]
    return [(found[k][0], max(forms[k], key=lambda f: forms[k][f]), found[k][1]) for k in ranked]


# ----------------------------------------------------------------- the summary


def _date(event: Event) -> str:
    return event.created_at[:10]


_SENTENCE_END: Final = re.compile(r"(?<=[.!?:])\s+(?=[A-Z*`#-])")
MIN_OUTCOME: Final = 40


def stated(text: str) -> str:
    """A reply without the sentences at its end that only announce what comes next ("… Let
    me fix the tests.", "Now check formatters.py:", a colon before the call it introduces):
    what it says was found or done."""
    sentences = _SENTENCE_END.split(text.strip())
    while sentences and (
        ANNOUNCES.match(sentences[-1].strip()) or sentences[-1].rstrip().endswith(":")
    ):
        sentences.pop()
    return " ".join(sentences).strip()


def closing_reply(replies: Sequence[Event], prompts: Sequence[Event]) -> str | None:
    """What the session's end says: the assistant's last substantial message after the last
    request (an earlier one answered a request the person then changed), else after the
    first, each without the announcement of its next step."""
    if not prompts:
        return None

    def after(prompt: Event) -> list[str]:
        line = prompt.provenance.line or 0
        said = [stated(e.content) for e in replies if (e.provenance.line or 0) > line]
        return [text for text in said if len(text) >= MIN_OUTCOME]

    for told in (after(prompts[-1]), after(prompts[0])):
        if told:
            return next((t for t in reversed(told[-3:]) if len(t) >= 120), told[-1])
    return None


ENDING_CHARS: Final = 160


def how_it_ended(events: Sequence[Event], still_open: Sequence[Event] = ()) -> str | None:
    """What the session did after its last substantial reply, when that was to fail or to be
    refused and nothing succeeded after it ("`sudo dpkg -i …` failed (…); the person refused
    `sudo apt install …`"): the closing reply alone would read as where the work stands (the
    installer found) when the session ended on a refusal. Failures already said to be still
    open (``still_open``: the runs of the open problems, at their lines) are not said twice."""
    said = [e for e in events if e.kind == "reply" and len(stated(e.content)) >= MIN_OUTCOME]
    line = (said[-1].provenance.line or 0) if said else 0
    open_lines = {e.provenance.line for e in still_open}
    ending: list[Event] = []
    for event in (e for e in events if (e.provenance.line or 0) > line):
        failed = event.kind == "error" and event.payload.get("call") == "shell"
        # a call the host stopped because another was refused was not refused by the person
        refused = event.kind == "refused" and not event.payload.get("cancelled")
        if failed or refused:
            ending.append(event)
        elif event.kind == "file_modified" or (
            event.kind in ("command", "test_run") and event.payload.get("ok")
        ):
            ending = []  # the work went on after it
    told = [e for e in ending if e.provenance.line not in open_lines]
    if not told:
        return None
    # the first failure says what went wrong, the last event how it ended; the tries between
    # are counted
    parts = [
        clip(e.content, ENDING_CHARS) for e in (told if len(told) <= 2 else told[:: len(told) - 1])
    ]
    parts = [p[:1].lower() + p[1:] if p.startswith("The person") else p for p in parts]
    if len(told) > 2:
        parts.insert(1, f"{len(told) - 2} more tries")
    return "; ".join(parts)


_WORDS: Final = re.compile(r"[a-z0-9]+")
# The share of a fix's cause a closing reply holds for the reply to be that cause restated.
RESTATED: Final = 0.8


# Where a session stopped mid-turn, its last words are an announcement of the next step
# ("Let me explore the tests.", "Now check formatters.py:"): a reply at the end of a turn does
# not announce ("Let me know …" is a sign-off; "Let's revisit it once we see traffic", "Let
# me check back when you have run it" put the step off until later).
_NEXT_STEP: Final = re.compile(
    r"^(?:(?:now|first|next|then|ok(?:ay)?)[,!.]? )*(?:let me|let's|lets) (?!know\b)", re.I
)
_PUT_OFF: Final = re.compile(
    r"\b(?:once|later|tomorrow|next time|revisit|(?:check|come|comes|get) back|"
    r"(?:when|whenever|after|if) (?:you|we|they)\b)",
    re.I,
)  # not "check if the tests pass", "see what happens when the folder is created"
LAST_WORDS_CHARS: Final = 120
# What ``cut_short`` says, first under "Still open" (a briefing that lists the session's open
# problems on lines of their own keeps it: no other line says it; ``stop_of`` finds it there).
STOPPED_AT: Final = "unfinished: the last reply stops at "
NO_REPLY: Final = "unanswered: the last request has no reply"


def cut_short(events: Sequence[Event]) -> str | None:
    """Where the session stands when it stopped mid-turn (closed, interrupted, cut off) before
    the assistant came back to the person: the last request with no reply after it, or a last
    reply that announces a next step nothing followed. A next session needs to know the work
    was left there; a session that went on after the announcement (a command run, a file
    changed) is told by what came of that (``how_it_ended``), not by this. Said so that it is
    true of a session still running too (a pass at Stop can come before the turn's last reply
    is in the transcript: the next pass says what followed)."""
    replies = [e for e in events if e.kind == "reply"]
    requests = [e for e in events if e.kind == "prompt" and len(e.content.split()) >= 3]
    line = max((e.provenance.line or 0 for e in replies[-1:] + requests[-1:]), default=-1)
    if any((e.provenance.line or 0) > line for e in events):
        return None  # something was done after it
    said_at = (replies[-1].provenance.line or 0) if replies else -1
    if requests and (requests[-1].provenance.line or 0) > said_at:
        return NO_REPLY
    if not replies:
        return None
    tail = _SENTENCE_END.split(replies[-1].content.strip())[-1].strip()
    if not (tail.endswith(":") or (_NEXT_STEP.match(tail) and not _PUT_OFF.search(tail))):
        return None
    return f"{STOPPED_AT}“{clip(tail, LAST_WORDS_CHARS)}”"


def stop_of(still: str) -> str | None:
    """What ``cut_short`` said at the head of a summary's "Still open" text, without the open
    problems that follow it (None: it said nothing)."""
    if still.startswith(NO_REPLY):
        return NO_REPLY
    if still.startswith(STOPPED_AT):
        said, closed, _ = still.partition("”; ")
        return said + ("”" if closed else "")
    return None


def fix_told(closing: str, resolved: Sequence[Event]) -> str:
    """The closing reply, or, when it only restates the cause of a failure fixed in the
    session (the whole session was that fix: its gotcha already says it in the same words),
    what came of it: "`mise run test` passed after changes to reset_test.go"."""
    said = set(_WORDS.findall(closing.lower()))
    for event in resolved:
        cause = str(event.payload.get("cause") or "")
        words = set(_WORDS.findall(cause.lower()))
        if len(words) < 5 or len(words & said) < RESTATED * len(words):
            continue
        if len(said - words) > len(words):  # the reply says much more than the cause
            continue
        target = str(event.payload.get("target") or "")
        files = event.payload.get("files") or []
        where = f" after changes to {', '.join(map(str, files[:MAX_FILES]))}" if files else ""
        return f"`{target}` passed{where} (its cause is kept as a gotcha)"
    return closing


def session_summary(events: Sequence[Event], problems: list[tuple[Event, str]]) -> str | None:
    prompts = [e for e in events if e.kind == "prompt"]
    if not prompts:
        return None
    replies = [e for e in events if e.kind == "reply"]
    first = prompts[0]
    # The branch is the memory's provenance, not its text: live capture knows it from git and
    # a backfill from the transcript, and the same session must give the same summary.
    parts = [f"Session {_date(first)}: goal: {clip(first.content, GOAL_CHARS)}"]
    if len(prompts) > 1:
        # the last one that asks for something ("continue", "yes please" only go on)
        last = next((e for e in reversed(prompts) if len(e.content.split()) >= 3), prompts[-1])
        if last is not first:
            parts.append(f"Last request: {clip(last.content, GOAL_CHARS)}")
    closing = closing_reply(replies, prompts)
    ended = how_it_ended(events, [e for e, _ in problems])
    if closing is not None:
        closing = fix_told(closing, [e for e in events if e.kind == "error_resolved"])
        then = f" Then {ended}" if ended else ""
        parts.append(f"Outcome: {clip(closing, OUTCOME_CHARS)}{then}")
    elif ended:
        parts.append(f"Outcome: {ended}")
    files = list(
        dict.fromkeys(str(e.payload.get("path")) for e in events if e.kind == "file_modified")
    )
    if files:
        more = f" (+{len(files) - MAX_FILES} more)" if len(files) > MAX_FILES else ""
        parts.append("Files changed: " + ", ".join(files[:MAX_FILES]) + more)
    commits = [
        f"{e.payload.get('sha') or ''} {e.payload.get('subject') or ''}".strip()
        for e in events if e.kind == "commit"
    ]  # fmt: skip
    if commits:
        parts.append("Commits: " + "; ".join(clip(c, 120) for c in commits[-MAX_COMMITS:]))
    left = [clip(t, 200) for _, t in problems]
    stopped = cut_short(events)
    if stopped:
        left.insert(0, stopped)
    if left:
        parts.append("Still open: " + "; ".join(left))
    return ". ".join(p.rstrip(". ") for p in parts) + "."


def session_digest(events: Iterable[Event], transcript: str) -> list[Memory]:
    """The digest memories of one transcript's events (any order; duplicates ignored)."""
    ordered = _ordered(events)
    if not ordered:
        return []
    tag = digest_tag(transcript)
    out: list[Memory] = []
    problems = open_problems(ordered)
    summary = session_summary(ordered, problems)
    if summary:
        out.append(_memory(summary, "session_summary", "context", 4, ordered[-1], tag))
    steps, last = folded_plan(ordered)
    if steps and last is not None and not plan_finished(ordered, steps, last):
        out.append(_memory(plan_text(steps), "plan", "progress", 6, last, tag))
    approved = approved_plan(ordered)
    if approved is not None:
        out.append(
            _memory(PLAN_PREFIX + approved.content, "plan", "progress", 6, approved, tag,
                    confidence=approved.confidence)
        )  # fmt: skip
    for event, text in problems:
        when = f" (as of {_date(event)}" + (
            f", {event.provenance.branch})" if event.provenance.branch else ")"
        )
        out.append(
            _memory(
                f"Open problem{when}: {text}", "open_problem", "gotcha", 7, event, tag,
                confidence=min(0.9, event.confidence),
            )
        )  # fmt: skip
    for kind, command, event in howtos(ordered):
        out.append(
            _memory(f"How to {STEP_LABELS[kind]}: `{command}`", "howto", "pattern", 6, event, tag)
        )
    unique: dict[str, Memory] = {}
    for memory in out:
        unique.setdefault(memory.content_hash, memory)
    return list(unique.values())
