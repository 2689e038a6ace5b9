"""``cortex reindex`` and ``cortex serve``: the commands about embeddings and the recall server.

Registered on the main group by ``cortexmem.cli.app``.
"""

from __future__ import annotations

import sys

import click


def open_context(click_ctx: click.Context):
    from cortexmem.cli.common import open_context as context

    return context(click_ctx)


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print a JSON report.")
@click.pass_context
def reindex(click_ctx: click.Context, as_json: bool) -> None:
    """Embed every memory, passage of a session and lesson that has no vector from the
    configured model yet.

    Runs in batches of 50, each committed: stop it at any time and run it again to go on.
    Unchanged memories are skipped (content hash); after switching model in ai.yaml this
    re-embeds everything. The recall server does the same in the background.
    """
    from cortexmem.services.embedding import Embedder, sync_context

    ctx = open_context(click_ctx)
    embedder = Embedder.for_context(ctx)
    backlog = sum(
        store.embedding_backlog_size(embedder.model, embedder.skip_types)
        + (store.episode_embedding_backlog_size(embedder.model) if embedder.embeds_episodes else 0)
        for _, store in ctx.existing()
    )
    if as_json or not sys.stderr.isatty() or backlog == 0:
        report = sync_context(ctx, embedder)
    else:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        columns = (*Progress.get_default_columns()[:1], BarColumn(), MofNCompleteColumn(),
                   TimeRemainingColumn())  # fmt: skip
        with Progress(*columns, transient=True) as progress:
            task = progress.add_task(f"embedding with {embedder.model}", total=backlog)
            report = sync_context(ctx, embedder, on_batch=lambda n: progress.advance(task, n))
    if as_json:
        from cortexmem.cli.common import print_json

        print_json(
            {"model": report.model, "embedded": report.embedded, "remaining": report.remaining,
             "memories": report.memories, "episodes": report.episodes,
             "lessons": report.lessons}
        )  # fmt: skip
        return
    click.echo(
        f"Embedded {report.memories} memories, {report.episodes} passages of sessions and "
        f"{report.lessons} lessons with {report.model}; all up to date."
    )


@click.command()
@click.option("--stop", is_flag=True, help="Stop this project's recall server.")
@click.option("--status", "show_status", is_flag=True, help="Say whether one is running.")
@click.option(
    "--idle", type=click.FloatRange(min=5), default=None,
    help="Exit after this many seconds without a request (default 900).",
)  # fmt: skip
@click.pass_context
def serve(click_ctx: click.Context, stop: bool, show_status: bool, idle: float | None) -> None:
    """Run this project's recall server in the foreground (hooks start it on their own).

    It keeps the embedding model and the vectors in memory so that a UserPromptSubmit hook
    can recall in milliseconds, embeds new memories between requests, and exits after it has
    been idle for a while.
    """
    from cortexmem.recall import client as recall_client

    ctx = open_context(click_ctx)
    key = ctx.paths.project_hash
    data_dir = str(ctx.paths.data_dir)
    if stop or show_status:
        reply = recall_client.ask(key, {"op": "stop" if stop else "ping"}, 2.0, data_dir)
        if reply is None:
            click.echo("No recall server is running for this project.")
        elif stop:
            click.echo("Recall server stopped.")
        else:
            click.echo(f"Recall server running (pid {reply.get('pid')}).")
        return
    from cortexmem.hosts.claude_code.reader import READER
    from cortexmem.hosts.claude_code.serve import writers
    from cortexmem.recall.client import IDLE_SECONDS
    from cortexmem.recall.server import run

    running = recall_client.ask(key, {"op": "ping"}, 2.0, data_dir)
    if running is not None:  # one server per project: this one would leave at once
        click.echo(f"A recall server already serves this project (pid {running.get('pid')}).")
        return
    click.echo(f"Serving recall for {ctx.paths.root} on {recall_client.socket_path(key)}")
    # With Claude Code's transcript reader: the server also takes the Stop hooks' turn ends.
    run(ctx.paths.worktree or ctx.paths.root, idle or IDLE_SECONDS, READER, writers)


def register(group: click.Group) -> None:
    group.add_command(reindex)
    group.add_command(serve)
