"""``cortex lifecycle``: decay, archive, restore and prune now, or show what would change.

Registered on the main group by ``cortexmem.cli.app``; imports what it needs inside its body.
"""

from __future__ import annotations

import click

from cortexmem.cli.common import stores_option

_VERBS = {
    "decayed": ("decayed", "would decay"),
    "archived": ("archived", "would be archived"),
    "restored": ("restored", "would be restored"),
    "pruned": ("pruned (deleted)", "would be pruned (deleted)"),
}


@click.command()
@click.option("--dry-run", is_flag=True, help="Show what would change; change nothing.")
@stores_option("to pass over")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON report (every id).")
@click.pass_context
def lifecycle(click_ctx: click.Context, dry_run: bool, scope: str, as_json: bool) -> None:
    """Age the memories: decay confidence, archive stale ones, prune long-archived ones.

    Confidence halves every 7 days for progress, 30 for context, 45 for gotchas and 60 for
    patterns (twice as slowly for memories recalled more than 10 times, and for hubs of the
    graph); architecture, code and decisions do not decay. A memory below 0.3 for 14 days,
    not recalled meanwhile, is archived; recalling it restores it; 30 days archived and
    untouched, it is deleted (after a backup). Pinned memories and decisions are never touched.
    The Stop hook runs this once a day by itself.

    Example: cortex lifecycle --dry-run
    """
    from cortexmem.cli.common import open_context, print_json
    from cortexmem.services.lifecycle import ACTIONS, run_lifecycle
    from cortexmem.services.memories import scopes_for

    ctx = open_context(click_ctx)
    report = run_lifecycle(ctx, dry_run=dry_run, scopes=scopes_for(scope))
    if as_json:
        print_json(report.to_dict())
        return
    from cortexmem.core.text import shorten

    if not report.scopes:
        click.echo("No memory store here yet: nothing to do.")
        return
    title = "Dry run: nothing changed." if dry_run else "Lifecycle pass done."
    click.echo(f"{title} ({', '.join(report.scopes)}; {report.elapsed_ms:.0f} ms)")
    counts = report.counts()
    for action in ACTIONS:
        verb = _VERBS[action][1 if dry_run else 0]
        click.echo(f"  {counts[action]:>7}  {verb}")
        for e in report.examples[action]:
            confidence = f"{e.confidence_before:.2f}"
            if e.confidence_after is not None and e.confidence_after != e.confidence_before:
                confidence += f" → {e.confidence_after:.2f}"
            where = "" if e.scope == "project" else f" ({e.scope})"
            click.echo(
                f"           {e.id} [{e.memory_type}] {confidence}{where} {shorten(e.text, 60)}"
            )
        if len(getattr(report, action)) > len(report.examples[action]):
            click.echo("           …")
    for backup in report.backups:
        click.echo(f"Backup taken before pruning: {backup}")


def register(group: click.Group) -> None:
    group.add_command(lifecycle)


__all__ = ["register"]
