"""``cortex redact``: take what is already stored to today's secret redaction.

Registered on the main group by ``cortexmem.cli.app``; imports what it needs inside its body.
"""

from __future__ import annotations

from typing import Any

import click

from cortexmem.cli.common import stores_option


@click.command()
@click.option("--dry-run", is_flag=True, help="Say what would change; change nothing.")
@stores_option("to redact")
@click.option("-y", "--yes", is_flag=True, help="Do not ask (for scripts).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON report.")
@click.pass_context
def redact(click_ctx: click.Context, dry_run: bool, scope: str, yes: bool, as_json: bool) -> None:
    """Redact secrets in what is already stored, with today's rules.

    Every text is redacted before Cortex stores it, but the rules grow: a store written by an
    older version keeps what the rules of its day let through. This rewrites, in place, every
    memory, event, episode, lesson, suggestion and log line that today's rules change, in the
    store, in each of its backups and in the text files Cortex keeps beside it, then compacts
    the file so no free page keeps the old words. It cannot be undone (a backup would keep the
    secrets): run it with --dry-run first to see what it would change. Texts whose vectors
    change are embedded again by the recall server, or at once by `cortex reindex`. Captures
    wait while it runs (about half a second for 4,000 texts) and then go on. A file or a
    backup it could not check is named, and the exit status is 1.

    Example: cortex redact --dry-run
    """
    from cortexmem.cli.common import confirm, open_context, print_json
    from cortexmem.services.memories import scopes_for
    from cortexmem.services.redaction import redact_scope

    ctx = open_context(click_ctx)
    stores = [(s, st) for s, st in ctx.existing() if s in scopes_for(scope)]
    if not stores:
        if as_json:
            print_json({"dry_run": dry_run, "stores": {}})
        else:
            click.echo("No memory store here yet: nothing to redact.")
        return
    if not dry_run:
        where = " and ".join(f"the {s} store ({st.location})" for s, st in stores)
        question = (
            f"Redact {where}, its backups and Cortex's files beside it, in place? "
            "This cannot be undone."
        )
        if not confirm(question, yes):
            click.echo("Nothing changed.")
            return
    reports = {s: redact_scope(st, ctx.db_path(s).parent, apply=not dry_run) for s, st in stores}
    # The briefing quotes both stores: written again whichever was redacted.
    republished = not dry_run and ctx.exists("project") and _republish(ctx)
    left = any(r.left or r.unreadable for r in reports.values())
    if as_json:
        print_json({"dry_run": dry_run, "stores": {s: _as_dict(r) for s, r in reports.items()},
                    "briefing_written": bool(republished)})  # fmt: skip
        if left:
            raise click.exceptions.Exit(1)
        return
    for s, report in reports.items():
        _print(s, report, dry_run)
    if republished:
        click.echo("Wrote .claude/rules/cortex-briefing.md again from the redacted stores.")
    changed = sum(r.store.total + sum(b.total for _, b in r.backups) for r in reports.values())
    if not dry_run and changed:
        click.echo(
            "Changed texts are embedded again by the recall server, or now by `cortex reindex`."
        )
    if left:
        raise click.exceptions.Exit(1)  # a script must tell a partial redaction from a whole one


def _print(scope: str, report: Any, dry_run: bool) -> None:
    from cortexmem.cli.common import plural

    verb = "would change" if dry_run else "changed"
    store = report.store
    if not report.changed:
        click.echo(f"The {scope} store: nothing to redact.")
    else:
        click.echo(f"The {scope} store: {plural(store.total, 'row')} {verb}.")
    for table, n in store.rows:
        click.echo(f"  {n:>7}  {table}")
    if store.folded:
        click.echo(f"  {store.folded:>7}  copies of another once redacted, folded into it")
    if store.total and not dry_run and not store.compacted:
        click.echo(
            "  The file could not be compacted (another process was reading it): run "
            "`cortex redact` again when Cortex is idle to clear the free pages."
        )
    for path, done in report.backups:
        if done.total:
            click.echo(f"  backup {path.name}: {plural(done.total, 'row')} {verb}")
    for path, why in report.unreadable:
        click.echo(f"  backup {path.name} left as it is: {why}")
    for path, n in report.files:
        click.echo(f"  {path.name}: {plural(n, 'secret')} {'found' if dry_run else 'redacted'}")
    for path, why in report.left:
        click.echo(f"  {path} not checked ({why}): anything secret in it is still there")


def _republish(ctx: Any) -> bool:
    """The briefing Claude Code reads (``.claude/rules/cortex-briefing.md``, outside
    ``.cortex/``) and the projections made again from the redacted stores, when they exist:
    they quoted the stores as they were. Whether the briefing was written."""
    from cortexmem.hosts.claude_code.rules import RULES_FILE, briefing_writer
    from cortexmem.services.projections import write_projections
    from cortexmem.services.publish import publish

    base = ctx.paths.worktree or ctx.paths.root
    written = False
    if (base / RULES_FILE).is_file():
        published = publish(ctx.paths, ctx=ctx, fresh=True, write=briefing_writer(ctx.paths))
        written = bool(published.written)
    write_projections(ctx)
    return written


def _as_dict(report: Any) -> dict[str, Any]:
    def counts(done: Any) -> dict[str, Any]:
        return {"rows": dict(done.rows), "folded": done.folded, "compacted": done.compacted}

    return {
        "store": counts(report.store),
        "backups": {str(p): counts(d) for p, d in report.backups},
        "unreadable": {str(p): why for p, why in report.unreadable},
        "files": {str(p): n for p, n in report.files},
        "left": {str(p): why for p, why in report.left},
    }


def register(group: click.Group) -> None:
    group.add_command(redact)


__all__ = ["register"]
