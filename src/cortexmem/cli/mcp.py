"""``cortex mcp-server``: registered on the main group by ``cortexmem.cli.app``.

The MCP SDK is imported when the command runs, never when the CLI loads: every other command
(``cortex status --json`` above all) stays as lean as before.
"""

from __future__ import annotations

from pathlib import Path

import click


@click.command(name="mcp-server")
@click.option(
    "--project",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    default=None,
    help="Serve this project (default: $CLAUDE_PROJECT_DIR, else -C or the current folder).",
)
@click.option(
    "--log-level",
    type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False),
    default="WARNING",
    show_default=True,
    help="What the server logs to stderr.",
)
@click.pass_context
def mcp_server(click_ctx: click.Context, project: Path | None, log_level: str) -> None:
    """Serve this project's memory to an AI assistant over MCP (stdio).

    Claude Code starts it from .mcp.json (`cortex init --setup` writes the entry, the Cortex
    plugin ships one). Tools: search, search_decisions, get_plan, get_recent, get_status,
    remember, get, traverse, forget. Resources: cortex://status, cortex://decisions,
    cortex://plan. stdout carries only protocol messages; logs go to stderr.
    """

    try:
        from cortexmem.mcp import server
    except ImportError as exc:  # an environment installed without the dependency
        raise click.ClickException(
            f"the MCP server needs the `mcp` package ({exc}); pip install 'mcp>=2.3,<3'"
        ) from None
    from cortexmem.hosts.claude_code.payload import launched_for

    if project is None and not launched_for():
        project = (click_ctx.find_root().obj or {}).get("cwd")
    server.run(project, log_level=log_level.upper())


def register(group: click.Group) -> None:
    group.add_command(mcp_server)


__all__ = ["register"]
