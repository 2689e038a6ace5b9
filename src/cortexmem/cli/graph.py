"""``cortex traverse`` and ``cortex index-code``: commands about the graph between memories.

Registered on the main group by ``cortexmem.cli.app``; like every command, each imports what it
needs inside its body.
"""

from __future__ import annotations

import sys

import click

from cortexmem.model import RELATION_TYPES


def open_context(click_ctx: click.Context):
    from cortexmem.cli.common import open_context as context

    return context(click_ctx)


def print_json(data: object) -> None:
    from cortexmem.cli.common import print_json

    print_json(data)


class EdgeType(click.ParamType):
    """An edge type as a person types it: aliases, case and separators are forgiven
    (``--type derives``, ``--type Related-To``) through the one alias table."""

    name = "edge type"

    def convert(self, value, param, ctx):
        from cortexmem.core.edge_types import UnknownEdgeType, normalise_edge_type

        try:
            return normalise_edge_type(value)
        except UnknownEdgeType as exc:
            self.fail(str(exc), param, ctx)

    def get_metavar(self, param, *args, **kwargs) -> str:
        return "[" + "|".join(RELATION_TYPES) + "]"


def _line(memory, width: int = 100) -> str:
    from cortexmem.core.text import shorten

    return f"{memory.id} [{memory.memory_type}] {shorten(memory.content, width)}"


@click.command()
@click.argument("memory_id")
@click.option("-d", "--depth", type=click.IntRange(1, 10), default=2, show_default=True)
@click.option(
    "-t",
    "--type",
    "types",
    type=EdgeType(),
    multiple=True,
    help="Follow only edges of this type (repeatable; aliases like `derives` accepted).",
)
@click.option(
    "--direction",
    type=click.Choice(["out", "in", "both"]),
    default="both",
    show_default=True,
    help="out: edges from each memory; in: edges to it.",
)
@click.option(
    "--min-strength", type=click.FloatRange(0, 1), default=0.0, show_default=True,
    help="Ignore weaker edges.",
)  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@click.pass_context
def traverse(
    click_ctx: click.Context,
    memory_id: str,
    depth: int,
    types: tuple[str, ...],
    direction: str,
    min_strength: float,
    as_json: bool,
) -> None:
    """Walk the graph from MEMORY_ID breadth-first; results grouped by depth, then the
    episodes (what was said) the memory was drawn from. Given an episode id (ep-…), show the
    episode and the memories drawn from it.

    Example: cortex traverse m-01jd3x --depth 3 --type source_of --direction out
    """
    from cortexmem.services.graph import episode_dict, episode_line, is_episode_id, sources_of, walk

    ctx = open_context(click_ctx)
    if is_episode_id(memory_id):
        _from_episode(ctx, memory_id, as_json)
        return
    start, levels = walk(
        ctx, memory_id, depth=depth, types=types, direction=direction,  # type: ignore[arg-type]
        min_strength=min_strength,
    )  # fmt: skip
    sources = sources_of(ctx, start)
    if as_json:
        print_json(
            {
                "start": start.memory.to_dict(),
                "scope": start.scope,
                "depths": [[r.to_dict() for r in level] for level in levels],
                "episodes": [episode_dict(e) for e in sources],
            }
        )
        return
    click.echo(_line(start.memory))
    if sources:
        click.echo("drawn from:")
        for episode in sources:
            click.echo(f"  ⇐ {episode_line(episode)}")
    if not levels:
        click.echo("  (no edges to follow)")
    for number, level in enumerate(levels, start=1):
        click.echo(f"depth {number}:")
        for r in level:
            arrow = "→" if r.edge.source_id == r.via else "←"
            click.echo(
                f"  {arrow} {r.edge.relation_type} ({r.edge.strength:.2f}) from {r.via[:14]}: "
                f"{_line(r.memory, 80)}"
            )


def _from_episode(ctx, episode_id: str, as_json: bool) -> None:
    from cortexmem.services.graph import drawn_from, episode_dict, episode_line

    drawn = drawn_from(ctx, episode_id)
    if as_json:
        print_json(
            {
                "episode": episode_dict(drawn.episode, None),
                "scope": drawn.scope,
                "memories": [m.to_dict() for m in drawn.memories],
            }
        )
        return
    click.echo(episode_line(drawn.episode))
    if not drawn.memories:
        click.echo("  (no memory was drawn from it)")
        return
    click.echo("memories drawn from it:")
    for memory in drawn.memories:
        click.echo(f"  ⇒ {_line(memory, 80)}")


@click.command(name="index-code")
@click.argument("targets", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON report.")
@click.pass_context
def index_code(click_ctx: click.Context, targets: tuple[str, ...], as_json: bool) -> None:
    """Index source code for recall: TARGET is a file, a folder, or FILE::SYMBOL.

    Each function, class and method (Python; other languages: each file) is stored raw as a
    `code` memory with a prose description (`code_description`, from its name, signature,
    docstring and comments) linked to it. Recall finds the prose and shows the code with it.
    Indexing again keeps what did not change and archives old versions.

    Example: cortex index-code app/webhooks/retry.py::Retrier.backoff
    """
    from pathlib import Path

    from cortexmem.services.code_index import IndexReport, code_files
    from cortexmem.services.code_index import index_code as run

    ctx = open_context(click_ctx)
    base = (click_ctx.find_root().obj or {}).get("cwd") or Path.cwd()
    total = IndexReport()
    quiet = as_json or not sys.stderr.isatty()
    for target in targets:
        if quiet:
            report = run(ctx, target, base=base)
        else:
            from rich.progress import Progress, TaskID

            path = Path(target.partition("::")[0])
            count = len(code_files(path if path.is_absolute() else base / path))
            with Progress(transient=True) as progress:
                task = progress.add_task(f"indexing {target}", total=count or None)

                def advance(_file: Path, task: TaskID = task) -> None:
                    progress.advance(task)

                report = run(ctx, target, base=base, on_file=advance)
        for name in ("files", "units", "added", "unchanged", "archived", "gone"):
            setattr(total, name, getattr(total, name) + getattr(report, name))
        total.skipped += report.skipped
    if as_json:
        print_json(total.to_dict())
        return
    click.echo(
        f"Indexed {total.units} units in {total.files} files: {total.added} memories added, "
        f"{total.unchanged} unchanged, {total.archived} old versions archived"
        + (f", {total.gone} of code no longer there archived." if total.gone else ".")
    )
    for skipped, reason in total.skipped:
        click.echo(f"  skipped {skipped}: {reason}", err=True)


def register(group: click.Group) -> None:
    group.add_command(traverse)
    group.add_command(index_code)


__all__ = ["register"]
