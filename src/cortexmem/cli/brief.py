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

    Decisions first, then the active plan, gotchas, recent progress on this branch and the
    rest, within a 300-500 token budget; each line with a confidence marker and where it
    came from. SessionStart delivers the same text (from a cache while nothing changed).
    """
    from cortexmem.cli.common import open_context, print_json
    from cortexmem.services.brief import make_briefing

    ctx = open_context(click_ctx)
    result = make_briefing(ctx, branch=branch)
    written: list[str] = []
    if write:
        from cortexmem.services.briefing_cache import RULES_FILE, write_rules_file
        from cortexmem.services.projections import write_projections

        ctx.writable("project")
        worktree = ctx.paths.worktree or ctx.paths.root
        repo = ctx.paths.repo
        git_dir = str(repo.common_dir) if repo is not None else None
        if write_rules_file(str(worktree), str(ctx.paths.data_dir), result.markdown, git_dir):
            written.append(RULES_FILE)
        written += [f".cortex/{name}" for name in write_projections(ctx).written]
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
    click.echo(f"\n({result.tokens} of {result.budget} tokens)", err=True)
    for path in written:
        click.echo(f"wrote {path}", err=True)


def register(group: click.Group) -> None:
    group.add_command(brief)
