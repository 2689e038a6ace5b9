"""``cortex lessons`` (list, show, timeline, review, search, learn, evolve), ``cortex feedback``
and ``cortex warn --dry-run``. Registered on the main group by ``cortexmem.cli.app``."""

from __future__ import annotations

import shlex
from typing import Any

import click

from cortexmem.model import LESSON_KINDS, LESSON_STATUSES, LESSON_TIERS, NOISE_REASONS


def _line(lesson: Any) -> str:
    from cortexmem.core.lessons.render import short_id

    counts = f"✓{lesson.followed} ✗{lesson.ignored} ~{lesson.irrelevant} ×{lesson.confirmed}"
    return (
        f"{short_id(lesson.id)}  {lesson.tier} {lesson.kind:<10} {lesson.status:<10} {counts}  "
        f"{lesson.text[:110]}"
    )


@click.group(invoke_without_command=True)
@click.option("--tier", type=click.Choice(LESSON_TIERS), default=None)
@click.option("--kind", type=click.Choice(LESSON_KINDS), default=None)
@click.option("--status", type=click.Choice(LESSON_STATUSES), default="active", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def lessons(
    click_ctx: click.Context, tier: str | None, kind: str | None, status: str, as_json: bool
) -> None:
    """What Cortex learned from what happened: failures and their fixes, corrections,
    refusals, gotchas, successes. Without a subcommand: the list (ID, tier, kind, status,
    followed ✓ / ignored ✗ / irrelevant ~ / confirmed ×, the lesson)."""
    if click_ctx.invoked_subcommand is not None:
        return
    from cortexmem.cli.common import open_context, print_json

    store = open_context(click_ctx).store("project")
    found = [] if store is None else list(store.iter_lessons((status,)))
    found = [
        x for x in found if (tier is None or x.tier == tier) and (kind is None or x.kind == kind)
    ]
    if as_json:
        print_json([x.to_dict() for x in found])
        return
    for x in found:
        click.echo(_line(x))
    if not found:
        click.echo(f"No {status} lessons.")


def _get(click_ctx: click.Context, lesson_id: str) -> tuple[Any, Any]:
    from cortexmem.cli.common import open_context
    from cortexmem.errors import NotFound

    ctx = open_context(click_ctx)
    store = ctx.require("project")
    lesson = store.get_lesson(lesson_id)
    if lesson is None:
        from cortexmem.errors import CortexError
        from cortexmem.model import LESSON_STATUSES

        named = [x.id for x in store.iter_lessons(LESSON_STATUSES) if x.id.startswith(lesson_id)]
        if len(named) > 1:
            raise CortexError(
                f"{lesson_id!r} starts {len(named)} lessons ({', '.join(named[:3])}"
                f"{', …' if len(named) > 3 else ''}); give more of the id"
            )
        raise NotFound(f"no lesson {lesson_id} (an ID, its start or its last part)")
    return ctx, lesson


@lessons.command()
@click.argument("lesson_id", metavar="ID")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def show(click_ctx: click.Context, lesson_id: str, as_json: bool) -> None:
    """One lesson in full: its trigger, evidence, counters, scope and edges."""
    from cortexmem.cli.common import print_json

    ctx, lesson = _get(click_ctx, lesson_id)
    edges = ctx.require("project").lesson_edges([lesson.id])
    if as_json:
        print_json({**lesson.to_dict(), "edges": [list(e) for e in edges]})
        return
    data = lesson.to_dict()
    click.echo(lesson.text)
    for key in ("id", "kind", "tier", "status", "importance", "learnable", "source", "trigger",
                "sessions", "confirmed", "shown", "followed", "ignored", "irrelevant", "noise",
                "recalled", "lang_exclude", "project_exclude", "superseded_by", "created_at",
                "last_confirmed_at"):  # fmt: skip
        if data[key] not in (None, [], {}, ""):
            click.echo(f"  {key:<17} {data[key]}")
    for source, target, kind in edges:
        click.echo(f"  edge              {source} --{kind}--> {target}")


@lessons.command()
@click.argument("lesson_id", metavar="ID")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def timeline(click_ctx: click.Context, lesson_id: str, as_json: bool) -> None:
    """How a piece of knowledge evolved: the lesson's history and that of the lessons it
    supersedes, is superseded by, generalises or is generalised by."""
    from cortexmem.cli.common import print_json
    from cortexmem.services.lessons import timeline as service

    ctx, lesson = _get(click_ctx, lesson_id)
    rows = service(ctx, lesson.id)
    if as_json:
        print_json(rows)
        return
    for r in rows:
        who = "" if r["lesson"] == lesson.id else f" [{r['lesson']}: {r['relation']}]"
        click.echo(f"{r['at'][:19]}  {r['what']:<12} {r['detail']}{who}")


@lessons.command()
@click.argument("lesson_id", metavar="ID", required=False)
@click.option("--approve", "answer", flag_value="approve", help="Make the principle active.")
@click.option("--refuse", "answer", flag_value="refuse", help="Archive the draft.")
@click.pass_context
def review(click_ctx: click.Context, lesson_id: str | None, answer: str | None) -> None:
    """Principles drafted from clusters of lessons wait here for a person's yes: without an
    ID, the list; with one, --approve (it becomes active, always loaded, and retires the
    lessons it generalises) or --refuse."""
    from cortexmem.cli.common import open_context
    from cortexmem.errors import CortexError
    from cortexmem.services.lessons import pending
    from cortexmem.services.lessons import review as service

    ctx = open_context(click_ctx)
    if lesson_id is None:
        waiting = pending(ctx)
        for x in waiting:
            click.echo(_line(x))
            for source, target, kind in ctx.require("project").lesson_edges([x.id]):
                if kind == "generalizes" and source == x.id:
                    member = ctx.require("project").get_lesson(target)
                    click.echo(f"      generalises {member.text[:100] if member else target}")
        if not waiting:
            click.echo("No principle is waiting for review.")
        return
    if answer is None:
        raise CortexError("say --approve or --refuse")
    principle, retired = service(ctx, lesson_id, answer == "approve")
    click.echo(f"{principle.id}: {principle.status}" + (f"; {len(retired)} lessons retired"
                                                        if retired else ""))  # fmt: skip


@lessons.command()
@click.argument("query")
@click.option("--scope", type=click.Choice(["lessons", "scars", "victories"]), default="lessons",
              show_default=True)  # fmt: skip
@click.option("--limit", type=click.IntRange(1, 50), default=10, show_default=True)
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def search(click_ctx: click.Context, query: str, scope: str, limit: int, as_json: bool) -> None:
    """Lessons for QUERY, re-ranked by importance × recency (scars: failures and corrections;
    victories: what worked). Each one served counts as recalled."""
    from cortexmem.cli.common import open_context, print_json
    from cortexmem.services.lessons import recall_lessons

    found = recall_lessons(open_context(click_ctx), query, scope=scope, limit=limit)
    if as_json:
        print_json([r.to_dict() for r in found])
        return
    for r in found:
        click.echo(f"{r.score:.3f}  {_line(r.lesson)}")
    if not found:
        click.echo("No lesson matches.")


@lessons.command()
@click.option("--model", is_flag=True, help="Put lessons in better words and draft principles "
              "with the model ai.yaml routes `distill` to (default: offline).")  # fmt: skip
@click.pass_context
def learn(click_ctx: click.Context, model: bool) -> None:
    """Learn from every session in the project store (a backfill after `cortex ingest`), then
    draft principles and prune unused raw lessons. With --model, each lesson drawn offline is
    also rewritten by the model from its evidence ("when X, do Y, because Z"), once."""
    from cortexmem.cli.common import open_context
    from cortexmem.services.lessons import (
        DRAFT_BATCH,
        draft_with_model,
        drafts_due,
        drafts_waiting,
        evolve,
        learn_all,
    )

    ctx = open_context(click_ctx)
    ctx.require("project")
    click.echo(str(learn_all(ctx)))
    if model:
        rewritten = 0
        rounds = -(-drafts_waiting(ctx) // DRAFT_BATCH)  # each lesson is asked about once
        for _ in range(rounds):
            if not drafts_due(ctx):
                break
            rewritten += draft_with_model(ctx, DRAFT_BATCH)
            click.echo(f"  {rewritten} lessons drafted by the model so far", err=True)
        click.echo(f"{rewritten} lessons drafted by the model")
    click.echo(str(evolve(ctx, model=model)))


@click.command()
@click.argument("lesson_id", metavar="LESSON")
@click.argument("signal", type=click.Choice(["followed", "ignored", "noise"]))
@click.option("--reason", type=click.Choice(NOISE_REASONS), default=None,
              help="Why it was noise: wrong_language / wrong_repo narrow where it applies; "
              "wrong_task / stale_rule count toward retiring it.")  # fmt: skip
@click.option("--language", default=None, help="The language it was wrong for (wrong_language).")
@click.pass_context
def feedback(
    click_ctx: click.Context, lesson_id: str, signal: str, reason: str | None, language: str | None
) -> None:
    """Tell Cortex whether a warning helped: a stronger signal than the automatic judge.

    A person's verdict counts as two of the judge's: two "followed" are four followed
    warnings, past the three that promote a lesson to T1; "ignored" and "noise" weigh as
    much against it.
    """
    from cortexmem.cli.common import open_context
    from cortexmem.errors import CortexError
    from cortexmem.services.judge import feedback as service

    if signal == "noise" and reason is None:
        raise CortexError("noise needs --reason (" + ", ".join(NOISE_REASONS) + ")")
    if reason == "wrong_language" and language is None:
        raise CortexError("wrong_language needs --language (the language it was wrong for)")
    lesson = service(open_context(click_ctx), lesson_id, signal, reason, language=language)
    click.echo(_line(lesson))


@click.command()
@click.argument("call", metavar='"TOOL INPUT"')
@click.option("--dry-run", is_flag=True, help="Show what would fire; record nothing (always so "
              "from the command line: only the hook records a warning shown).")  # fmt: skip
@click.option("--after-failure", "failures", multiple=True, metavar="COMMAND",
              help="As in a session where COMMAND failed earlier (repeatable). A lesson about "
              "a file warns at its edit once its own check failed in the session; without "
              "this option that is not known, and the file alone decides.")  # fmt: skip
@click.option("--prompt", "is_prompt", is_flag=True,
              help="CALL is a person's request (what the prompt hook would say): a request to "
              "fix a check calls up the lessons that tell what fixed it last time.")  # fmt: skip
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def warn(
    click_ctx: click.Context,
    call: str,
    dry_run: bool,
    failures: tuple[str, ...],
    is_prompt: bool,
    as_json: bool,
) -> None:
    """What would be warned before a tool call, and why, layer by layer: e.g.
    `cortex warn --dry-run "Bash git stash"`, `cortex warn --dry-run "Edit src/app.ts"`,
    `cortex warn --dry-run --after-failure "uv run pytest" "Edit src/cache.py"`,
    `cortex warn --dry-run --prompt "fix the tests"`."""
    from cortexmem.cli.common import open_context, print_json
    from cortexmem.core.command_form import command_form
    from cortexmem.hosts.claude_code.pretool import action_fields
    from cortexmem.hosts.claude_code.readonly import is_read_only
    from cortexmem.services.warn import (
        action_of,
        failed_programs,
        in_project,
        model_filter_for,
        warn_for_prompt,
    )
    from cortexmem.services.warn import warn as service

    if is_prompt:
        told = warn_for_prompt(open_context(click_ctx), call, session_id=None, dry_run=True)
        if as_json:
            print_json({"request": call, "context": told.text, "ids": [x.id for x in told.shown]})
        else:
            click.echo(told.text or "(no lesson: the request asks to fix no check a lesson knows)")
        return
    tool, _, rest = call.strip().partition(" ")
    shell = tool in ("Bash", "PowerShell")
    tool_input: dict[str, Any] = {"command": rest} if shell else {}
    if not shell:
        words = shlex.split(rest) if rest else []
        tool_input = {"file_path": words[0] if words else "", "content": " ".join(words[1:])}
    if is_read_only(tool, tool_input):
        report: dict[str, Any] = {"layer1": "read-only: skipped, nothing looked up"}
    else:
        ctx = open_context(click_ctx)
        action = in_project(action_of(action_fields(tool, tool_input)), ctx)
        failed = [f for f in (command_form(c) for c in failures) if f] if failures else None
        result = service(ctx, action, session_id=None, project=ctx.paths.name, dry_run=True,
                         model_filter=model_filter_for(ctx),
                         failed=failed_programs(failed))  # fmt: skip
        report = {"layer1": "mutating: looked up", **result.to_dict()}
    if as_json:
        print_json(report)
        return
    click.echo(f"layer 1: {report['layer1']}")
    for row in report.get("layer2", []):
        click.echo(f"layer 2: {row['lesson']}  sim {row['similarity']:.2f}  {row['why']}")
    if "layer3" in report:
        click.echo(f"layer 3: {report['layer3']}")
    click.echo(report.get("context") or "(no warning)")


def register(group: click.Group) -> None:
    group.add_command(lessons)
    group.add_command(feedback)
    group.add_command(warn)
