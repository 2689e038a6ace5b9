"""``cortex learn``: the learning loop on demand (it also runs at Stop when due).

Registered on the main group by ``cortexmem.cli.app``.
"""

from __future__ import annotations

from datetime import UTC, datetime

import click

from cortexmem.cli.common import open_context, print_json
from cortexmem.errors import CortexError


def parse_moment(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise CortexError(f"not a date or time: {text!r} (use e.g. 2026-03-04T12:00)") from None
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
    from cortexmem.services.learn import learn as run

    ctx = open_context(click_ctx)
    report = run(ctx, now=parse_moment(as_of), dry_run=dry_run)
    if as_json:
        print_json(report.to_dict())
        return
    for problem in report.problems:
        click.echo(f"warning: {problem}", err=True)
    p = report.plan
    click.echo(
        f"{p.observations} observations over {p.sessions} sessions in the window: "
        f"{len(p.scored)} patterns, {len(p.active)} instincts, {len(p.promoted)} rules"
        + (" (dry run: nothing written)" if dry_run else "")
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


def register(cli: click.Group) -> None:
    cli.add_command(learn)
