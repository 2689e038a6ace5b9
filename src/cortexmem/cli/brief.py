"""``cortex brief``: the session-start briefing, on demand.

Registered on the main group by ``cortexmem.cli.app``.
"""

from __future__ import annotations

import click


@click.command()
@click.option("--branch", default=None, help="Brief for this branch (default: the current one).")
@click.option(
    "--write",
    is_flag=True,
    help="Also write .claude/rules/cortex-briefing.md and the .cortex/ projections.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the briefing and its budget as JSON.")
@click.pass_context
def brief(click_ctx: click.Context, branch: str | None, write: bool, as_json: bool) -> None:
    """Print the briefing a new session starts with.

    Open problems, where the work stands, decisions, preferences, how to build, test and
    run, gotchas, the active plan, then the rest, within a 300-500 token budget; each line
    with a confidence marker and where it came from. SessionStart delivers the same text
    (from a cache while nothing changed).
    """
    from cortexmem.cli.common import open_context, print_json
    from cortexmem.services.brief import make_briefing
    from cortexmem.services.publish import publish

    ctx = open_context(click_ctx)
    written: list[str] = []
    if write:
        from cortexmem.errors import CortexError
        from cortexmem.hosts.claude_code.rules import RULES_FILE, briefing_writer
        from cortexmem.services.projections import write_projections

        ctx.writable("project")
        published = publish(
            ctx.paths, ctx=ctx, branch=branch, fresh=True, write=briefing_writer(ctx.paths)
        )
        if published.error is not None:
            raise CortexError(f"{RULES_FILE} not written: {published.error}")
        assert published.briefing is not None  # fresh: always built
        result = published.briefing
        if published.written:
            written.append(RULES_FILE)
        written += [f".cortex/{name}" for name in write_projections(ctx).written]
    else:
        result = make_briefing(ctx, branch=branch)
    if as_json:
        print_json(
            {
                "markdown": result.markdown,
                "tokens": result.tokens,
                "budget": result.budget,
                "lines": result.lines,
                "overflow": result.overflow,
                "ids": result.ids,
                "written": written,
            }
        )
        return
    click.echo(result.markdown, nl=False)
    click.echo(f"\n({result.size()})", err=True)
    for path in written:
        click.echo(f"wrote {path}", err=True)


def register(group: click.Group) -> None:
    group.add_command(brief)
