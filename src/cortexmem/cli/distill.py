"""``cortex distill``: ask the configured model to distill sessions into memories, by hand.

Registered on the main group by ``cortexmem.cli.app``.
"""

from __future__ import annotations

import click


@click.command()
@click.option(
    "--session", "session_id", default=None, metavar="ID",
    help="Distill this session (default: every session queued by the hooks).",
)  # fmt: skip
@click.option(
    "--dry-run", is_flag=True,
    help="Ask the model and show what would be kept, store nothing (the call is still counted).",
)  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print a JSON report.")
@click.pass_context
def distill(click_ctx: click.Context, session_id: str | None, dry_run: bool, as_json: bool) -> None:
    """Turn sessions into typed memories with the model ai.yaml routes `distill` to.

    The session's transcript lines not distilled yet (redacted, personal data and code
    blocks left out) go to the model, which proposes decisions, gotchas, how-tos,
    preferences, open problems and facts, each citing the lines it rests on. Only items
    whose quotes are really on those lines are kept; they are merged with what the offline
    extraction found (no duplicates) and marked as distilled. The budget and the circuit
    breaker in ai.yaml apply. Without a configured model this says so and changes nothing.
    """
    from cortexmem.cli.common import open_context, print_json
    from cortexmem.errors import CortexError
    from cortexmem.services import distill as service
    from cortexmem.services.models import worker_lock

    ctx = open_context(click_ctx)
    ctx.require("project")
    if not service.routing_of(ctx).route(service.KIND).configured:
        raise CortexError(
            "no model is configured for distill: set models.distill (or models.default) in "
            '$CORTEX_HOME/ai.yaml; see README, "Using a model"'
        )
    if session_id is None:
        sessions = [job.session_id for job in ctx.require("project").ai_jobs(service.KIND)]
        if not sessions:
            raise CortexError("no session is queued for distillation; name one with --session")
    else:
        sessions = [session_id]
    reports = []
    with worker_lock(ctx.paths.data_dir):
        for one in sessions:
            report = service.distill_session(ctx, one, dry_run=dry_run)
            reports.append(report)
            if not dry_run:
                for job in ctx.require("project").ai_jobs(service.KIND):
                    if job.session_id == one:
                        ctx.require("project").finish_ai_job(job.id)
    if as_json:
        print_json([r.to_dict() for r in reports])
        return
    for r in reports:
        if not r.lines:
            click.echo(f"{r.session_id}: nothing new to distill.")
            continue
        verb = "would keep" if dry_run else "kept"
        click.echo(
            f"{r.session_id}: {r.lines} lines sent to {r.model} "
            f"({r.input_tokens} + {r.output_tokens} tokens); {verb} {len(r.kept)} of "
            f"{r.proposed} proposed"
            + ("" if dry_run else f", {r.added} added, {r.duplicates} already known")
        )
        for item in r.kept:
            click.echo(f"  + [{item['type']}/{item['scope']}] {item['content']}")
        for why in r.dropped:
            click.echo(f"  - dropped {why}")


def register(group: click.Group) -> None:
    group.add_command(distill)
