"""``cortex learn`` (the learning loop on demand; it also runs at Stop when due) and
``cortex review`` (a person decides what becomes permanent).

Registered on the main group by ``cortexmem.cli.app``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import click

from cortexmem.cli.common import open_context, plural, print_json
from cortexmem.errors import CortexError


def parse_moment(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise click.BadParameter(
            f"not a date or time: {text!r} (use e.g. 2026-03-04T12:00)", param_hint="--as-of"
        ) from None
    if not 1970 <= moment.year <= 9000:  # a window of days before it must still be a date
        raise click.BadParameter(f"{text!r} is out of range", param_hint="--as-of")
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


@click.command()
@click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")
@click.option(
    "--as-of",
    "as_of",
    default=None,
    help="Analyse as if it were this time (ISO date), e.g. on imported history.",
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON report.")
@click.pass_context
def learn(click_ctx: click.Context, dry_run: bool, as_of: str | None, as_json: bool) -> None:
    """Find tool chains, retries and command fixes of the last days; promote the strong ones.

    Reads the observations of the rolling window (7 days), keeps the patterns scoring 50% or
    more as instincts (.cortex/learning/), and writes those at 90% or more, seen 5 times over
    2 sessions, to .claude/rules/cortex-generated-rules.md. Settings: .cortex/learning.yaml.
    """
    from cortexmem.core.learning import percent, rule_line
    from cortexmem.hosts.claude_code.transcript import DIALECT
    from cortexmem.services.learn import learn as run

    ctx = open_context(click_ctx)
    report = run(ctx, now=parse_moment(as_of), dry_run=dry_run, edit_tools=DIALECT.edit_tools)
    if as_json:
        print_json(report.to_dict())
        return
    _warn(report.problems)
    p = report.plan
    click.echo(
        f"{p.observations} observations over {p.sessions} sessions in the window: "
        f"{plural(len(p.scored), 'pattern')}, {plural(len(p.active), 'instinct')}, "
        f"{plural(len(p.promoted), 'rule')}" + (" (dry run: nothing written)" if dry_run else "")
    )
    if report.latest_before:
        day = report.latest_before[:10]
        click.echo(
            f"The window ({report.config.window_days:g} days) holds none; the newest observation "
            f"is of {day} (imported history?): `cortex learn --as-of {day}T23:59` analyses the "
            "days before it."
        )
    for inst in p.promoted:
        mark = " (new)" if inst in p.newly_promoted else ""
        click.echo(rule_line(inst) + mark)
    for inst in p.active[:10]:
        click.echo(
            f"  instinct {percent(inst.confidence)}%: {inst.label} "
            f"({inst.observations}x, {inst.sessions}/{inst.total_sessions} sessions)"
        )
    if p.archived:
        click.echo(f"  archived: {', '.join(i.label for i in p.archived[:10])}")
    if report.suggested:
        click.echo(f"{report.suggested} new suggestions: see `cortex review`.")


def _warn(problems: list[str]) -> None:
    """What ``learning.yaml`` holds that was ignored (its default kept), one line each."""
    for problem in problems:
        click.echo(f"warning: {problem}", err=True)


# ------------------------------------------------------------------------------------ review


def _who() -> str:
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def _line(s) -> str:  # a Suggestion
    return f"{s.id}  [{s.destination}] {s.title}  ({s.recurrence}x, {s.target})"


def _show(s, shown: str) -> None:
    click.echo(_line(s))
    decided = f" on {s.decided_at[:10]}" if s.decided_at else ""
    click.echo(f"  status: {s.status}{decided}")
    click.echo(f"  why: {s.rationale}")
    for item in s.evidence[:5]:
        click.echo(f"  evidence: {item}")
    click.echo(f"  drafted by: {s.drafted_by}")
    click.echo("")
    if s.status != "pending":
        click.echo(f"(decided: {s.status}; `cortex review audit` has what was written)")
    else:
        click.echo(shown or "(no change: the file already says it)")


@click.group(invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@click.option("--all", "show_all", is_flag=True, help="Every suggestion, decided ones too.")
@click.pass_context
def review(click_ctx: click.Context, as_json: bool, show_all: bool) -> None:
    """Review the suggestions: list them (most recurrent first), then show, apply, refuse or
    patch one. Applying edits the real file (with a backup and an audit line); nothing
    outside .cortex/ and .claude/rules/cortex-* changes any other way."""
    if click_ctx.invoked_subcommand is not None:
        return
    ctx = open_context(click_ctx)
    store = ctx.store("project")
    items = store.suggestions(None if show_all else "pending") if store is not None else []
    if as_json:
        print_json([s.to_dict() for s in items])
        return
    if not items:
        click.echo("No suggestions waiting." if not show_all else "No suggestions.")
        return
    for s in items:
        mark = "" if s.status == "pending" else f"  <{s.status}>"
        click.echo(_line(s) + mark)


@review.command()
@click.argument("ref")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@click.pass_context
def show(click_ctx: click.Context, ref: str, as_json: bool) -> None:
    """Show a suggestion and the diff it would make to its file now."""
    from cortexmem.services.review import find, preview

    ctx = open_context(click_ctx)
    s = find(ctx, ref)
    _, shown = preview(ctx, s)
    if as_json:
        print_json({**s.to_dict(), "diff": shown})
        return
    _show(s, shown)


def _decide(click_ctx: click.Context, ref: str, yes: bool, as_json: bool, text: str | None):
    from cortexmem.cli.common import confirm
    from cortexmem.services.review import apply, find, preview

    ctx = open_context(click_ctx)
    s = find(ctx, ref)
    if not yes:
        _, shown = preview(ctx, s, text)
        _show(s, shown)
    if not confirm(f"Apply this change to {s.target}?", yes):
        click.echo("Nothing changed.")
        return
    done = apply(ctx, ref, who=_who(), text=text)
    if as_json:
        print_json(done.to_dict())
        return
    if not done.diff:
        click.echo(f"{done.path} already says it: {done.suggestion.id} recorded, file unchanged.")
        return
    backup = f" (backup: {done.backup})" if done.backup else ""
    click.echo(f"Applied {done.suggestion.id} to {done.path}{backup}.")


@review.command(name="apply")
@click.argument("ref")
@click.option("--yes", "-y", is_flag=True, help="Do not ask.")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@click.pass_context
def apply_(click_ctx: click.Context, ref: str, yes: bool, as_json: bool) -> None:
    """Apply a suggestion: edit its file (backup first) and log it in the audit."""
    _decide(click_ctx, ref, yes, as_json, None)


@review.command()
@click.argument("ref")
@click.option("--yes", "-y", is_flag=True, help="Apply the edited text without asking.")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@click.option("--text", default=None, help="The new text (instead of opening $EDITOR).")
@click.pass_context
def patch(click_ctx: click.Context, ref: str, yes: bool, as_json: bool, text: str | None) -> None:
    """Edit a suggestion's text in $EDITOR, then apply it."""
    from cortexmem.project.files import write_atomic
    from cortexmem.services.review import find

    if text is not None:
        _decide(click_ctx, ref, yes, as_json, text)
        return
    ctx = open_context(click_ctx)
    s = find(ctx, ref)
    suffix = ".md" if s.destination != "settings_json" else ".json"
    text = click.edit(s.text + "\n", extension=suffix)
    if text is None or not text.strip():
        click.echo("Nothing changed (the edit was empty or abandoned).")
        return
    try:
        _decide(click_ctx, ref, yes, as_json, text)
    except CortexError as exc:  # the person's edit is not lost with the error
        kept = ctx.paths.data_dir / f"patch-{s.id}{suffix}"
        write_atomic(kept, text, private=True)
        raise CortexError(
            f"{exc}\nYour edit is kept in {kept}: fix it, then "
            f'`cortex review patch {s.id} --text "$(cat {kept})"`'
        ) from None


@review.command()
@click.argument("ref")
@click.option("--reason", default="", help="Why (kept in the audit log).")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@click.pass_context
def refuse(click_ctx: click.Context, ref: str, reason: str, as_json: bool) -> None:
    """Refuse a suggestion: it is not proposed again."""
    from cortexmem.services.review import refuse as do_refuse

    done = do_refuse(open_context(click_ctx), ref, who=_who(), reason=reason)
    if as_json:
        print_json(done.to_dict())
        return
    click.echo(f"Refused {done.suggestion.id}.")


@review.command()
@click.option("--model", "use_model", is_flag=True, help="Let the configured model word them.")
@click.option("--dry-run", is_flag=True, help="Show what would be queued; queue nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@click.pass_context
def propose(click_ctx: click.Context, use_model: bool, dry_run: bool, as_json: bool) -> None:
    """Draft suggestions from promoted instincts and recurring failures, and queue them."""
    from cortexmem.services.learn import load_config
    from cortexmem.services.suggest import propose as run

    ctx = open_context(click_ctx)
    config, problems = load_config(ctx.paths)
    _warn(problems)
    report = run(ctx, config, use_model=use_model, dry_run=dry_run)
    if as_json:
        print_json(report.to_dict())
        return
    for error in report.model_errors[:3]:
        click.echo(f"warning: model: {error}", err=True)
    for skipped in report.skipped:
        click.echo(f"warning: not queued: {skipped}", err=True)
    verb = "would queue" if dry_run else "queued"
    click.echo(f"{report.drafts} drafts, {verb} {len(report.queued)} new suggestions.")
    for s in report.queued:
        click.echo("  " + _line(s))


@review.command()
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@click.option("--limit", default=20, show_default=True)
@click.pass_context
def audit(click_ctx: click.Context, as_json: bool, limit: int) -> None:
    """The audit log: who applied, patched or refused what, when (newest first)."""
    from dataclasses import asdict

    store = open_context(click_ctx).store("project")
    entries = store.audit_entries(limit) if store is not None else []
    if as_json:
        print_json([_audit_record(asdict(e)) for e in entries])
        return
    for e in entries:
        why = f"  ({e.diff})" if e.action == "refuse" and e.diff else ""
        click.echo(f"{e.at}  {e.who}  {e.action}  {e.suggestion_id}  {e.target}{why}")


def _audit_record(entry: dict[str, Any]) -> dict[str, Any]:
    """An audit line as JSON: a refusal keeps its reason where an edit keeps its diff."""
    if entry["action"] == "refuse":
        entry["reason"] = entry.pop("diff")
    return entry


# ------------------------------------------------------------------------------------- dream


@click.command()
@click.option("--apply", "do_apply", is_flag=True, help="Act (default: a dry run, a report only).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON report.")
@click.pass_context
def dream(click_ctx: click.Context, do_apply: bool, as_json: bool) -> None:
    """Consolidate: draft repeated failures as suggestions, compact old observations, check
    Cortex's rule and memory files (dead links, duplicates, obsolete entries).

    A dry run by default, with a timestamped report in .cortex/dream/; --apply queues the
    suggestions and compacts, and never merges anything into a permanent file: that stays
    a person's yes in `cortex review`.
    """
    from cortexmem.services.dream import dream as run
    from cortexmem.services.learn import load_config

    ctx = open_context(click_ctx)
    _warn(load_config(ctx.paths)[1])
    report = run(ctx, apply=do_apply)
    if as_json:
        print_json(report.to_dict())
        return
    verb = "would" if report.dry_run else "did"
    click.echo(
        f"Dream ({'dry run' if report.dry_run else 'applied'}): {len(report.drafts)} repeated "
        f"failures to propose, {report.compacted} old observations {verb} go, "
        f"{len(report.findings)} hygiene findings."
    )
    for finding in report.findings[:20]:
        click.echo(f"  {finding.kind}: {finding.file}: {finding.detail}")
    click.echo(f"Report: {report.report}")


def register(cli: click.Group) -> None:
    cli.add_command(learn)
    cli.add_command(review)
    cli.add_command(dream)
