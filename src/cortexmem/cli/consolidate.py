"""``cortex consolidate``: a person reviews merge candidates and suggested edges.

Registered on the main group by ``cortexmem.cli.app``; imports what it needs inside the command.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    pass

MERGE_CHOICES = {
    "a": "accept: merge, keep [1]",
    "o": "accept, but keep [2]",
    "e": "edit the merged text",
    "r": "reject: not the same, never propose again",
    "s": "skip for now",
    "q": "quit",
}
EDGE_CHOICES = {"a": "accept", "r": "reject (delete)", "s": "skip", "q": "quit"}


def _stdin_is_tty() -> bool:
    return sys.stdin.isatty()


def _line(memory, width: int = 96) -> str:
    from cortexmem.core.text import shorten

    return f"{memory.id} [{memory.memory_type}] {shorten(memory.content, width)}"


def _show_memory(number: int, memory, note: str = "") -> None:
    pin = ", pinned" if memory.pinned else ""
    click.echo(
        f"  [{number}] {memory.id}  {memory.memory_type}, priority {memory.priority}{pin}, "
        f"{memory.created_at[:10]}{note}"
    )
    for text_line in memory.content.strip().splitlines() or [""]:
        click.echo(f"      {text_line}")


def _ask(choices: dict[str, str]) -> str:
    click.echo("  " + " · ".join(f"{key} {text}" for key, text in choices.items()))
    return click.prompt(
        "  choice", type=click.Choice(list(choices)), show_choices=False, default="s"
    )


def _scores(view) -> str:
    pair = view.pair
    words = f"words {pair.jaccard:.2f}"
    meaning = f", meaning {pair.cosine:.2f}" if pair.cosine is not None else ""
    return f"similarity {view.similarity:.2f} ({words}{meaning})"


def _walk_candidates(review) -> bool:
    """Returns False when the person quit."""
    from cortexmem.core.consolidation import merge_draft
    from cortexmem.errors import CortexError

    done: set[tuple[str, str]] = set()
    while True:
        views = [v for v in review.candidates() if (v.pair.a_id, v.pair.b_id) not in done]
        if not views:
            return True
        view = views[0]
        done.add((view.pair.a_id, view.pair.b_id))
        click.echo(f"\nMerge candidate — {_scores(view)}; {len(views) - 1} more after this")
        _show_memory(1, view.keep, "  (kept)")
        _show_memory(2, view.other)
        answer = _ask(MERGE_CHOICES)
        try:
            if answer == "q":
                return False
            if answer == "s":
                review.tally.skipped += 1
            elif answer == "r":
                review.reject_merge(view)
                click.echo("  Rejected: the two stay apart, linked as related.")
            elif answer in ("a", "o"):
                keep_other = answer == "o"
                review.accept_merge(view, keep_other=keep_other)
                kept = view.other if keep_other else view.keep
                click.echo(f"  Merged into {kept.id}.")
            else:  # edit
                text = click.edit(merge_draft(view.keep, view.other))
                if text is None or not text.strip():
                    click.echo("  Edit cancelled; nothing changed.")
                    review.tally.skipped += 1
                else:
                    review.accept_merge(view, content=text)
                    click.echo(f"  Merged into {view.keep.id} with the edited text.")
        except CortexError as exc:
            click.echo(f"  Not done: {exc}", err=True)


def _walk_suggestions(review) -> bool:
    from cortexmem.errors import CortexError

    views = review.suggestions()
    for number, view in enumerate(views, start=1):
        edge = view.edge
        click.echo(
            f"\nSuggested edge {number} of {len(views)} — {edge.relation_type}, "
            f"strength {edge.strength:.2f}"
        )
        click.echo(f"  from {_line(view.source)}")
        click.echo(f"  to   {_line(view.target)}")
        answer = _ask(EDGE_CHOICES)
        try:
            if answer == "q":
                return False
            if answer == "a":
                review.accept_edge(view)
            elif answer == "r":
                review.reject_edge(view)
            else:
                review.tally.edges_skipped += 1
        except CortexError as exc:
            click.echo(f"  Not done: {exc}", err=True)
    return True


def _rollback(store, scope: str, yes: bool) -> None:
    from cortexmem.cli.common import confirm
    from cortexmem.errors import CortexError
    from cortexmem.services import consolidate

    target = consolidate.rollback_target(store)
    if target is None:
        raise CortexError(f"the {scope} store has no consolidation checkpoint to roll back to")

    def shown(counts: dict[str, int]) -> str:
        return ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "none"

    taken = consolidate.checkpoint_time(target)
    click.echo(f"Last consolidation checkpoint of the {scope} store: {target.name}")
    if taken:
        click.echo(f"  taken {taken}")
    click.echo(f"  memories now:           {shown(consolidate.memory_counts(store))}")
    click.echo(f"  memories in checkpoint: {shown(consolidate.memory_counts(store, target))}")
    click.echo("  Everything since then is replaced, captures included (the transcripts are")
    click.echo("  read again from there); the current state is backed up first.")
    if not confirm("Roll back to this checkpoint?", yes):
        click.echo("Nothing changed.")
        return
    safety = consolidate.rollback(store, target)
    click.echo(f"Rolled back to {target.name}.")
    again = f"cortex restore {'--global ' if scope == 'global' else ''}{safety.name}"
    click.echo(f"The state before the rollback was saved as {safety.name} ({again} undoes it).")


@click.command()
@click.option("-g", "--global", "is_global", is_flag=True, help="Consolidate the global store.")
@click.option(
    "--json", "as_json", is_flag=True,
    help="List merge candidates and suggested edges as JSON; change nothing.",
)  # fmt: skip
@click.option(
    "-y", "--yes", is_flag=True,
    help="Do not ask: merge candidates above 0.85 similarity that restate each other (the same "
    "words in the same order, the longer text kept; a paraphrase, another command, a swapped "
    "or denied claim waits for a person) and accept every suggested edge (for scripts). With "
    "--rollback: roll back without asking.",
)  # fmt: skip
@click.option(
    "--rollback", is_flag=True,
    help="Restore the last consolidation checkpoint (asks first unless --yes).",
)  # fmt: skip
@click.pass_context
def consolidate(
    click_ctx: click.Context, is_global: bool, as_json: bool, yes: bool, rollback: bool
) -> None:
    """Review near-duplicate memories and suggested links.

    New memories are first embedded and linked to their neighbours (the hooks do this every 10
    captures; this does it for everything not linked yet). Then, for each merge candidate —
    two memories so alike they may be one — accept (the kept memory absorbs the other, which
    becomes superseded), edit the merged text, reject (never proposed again), or skip; and for
    each suggested link, accept or reject.

    A checkpoint (a backup) is taken before anything changes; --rollback restores the last one.

    \b
    cortex consolidate               walk through candidates and suggestions
    cortex consolidate --json        list them, change nothing
    cortex consolidate --yes         merge near-duplicates, accept links (scripts)
    cortex consolidate --rollback    undo the last consolidation
    """
    from cortexmem.cli.common import open_context, print_json, refuse_without_tty, scope_of
    from cortexmem.services import consolidate as service

    if as_json and (yes or rollback):
        raise click.UsageError("--json only lists; it cannot be combined with --yes or --rollback")
    ctx = open_context(click_ctx)
    scope = scope_of(is_global)
    if rollback:
        _rollback(ctx.require(scope), scope, yes)
        return
    if as_json:
        print_json(service.listing(ctx, scope))
        return
    if not yes and not _stdin_is_tty():
        refuse_without_tty("consolidate")
    review, links = service.prepare(ctx, scope, note=lambda text: click.echo(text, err=True))
    if links.examined:
        click.echo(
            f"Linked {links.examined} new memories: {links.related} related, "
            f"{links.suggested} suggested links, {links.candidates} merge candidates."
        )
    if yes:
        review.accept_all()
    else:
        if _walk_candidates(review):
            _walk_suggestions(review)
    tally = review.tally
    click.echo(
        f"\nMerged {tally.merged}, rejected {tally.rejected}, skipped {tally.skipped}; "
        f"suggested links: {tally.edges_accepted} accepted, {tally.edges_rejected} rejected, "
        f"{tally.edges_skipped} skipped."
    )
    if review.checkpoint is not None:
        click.echo(
            f"Checkpoint: {review.checkpoint.name} (undo with `cortex consolidate --rollback"
            f"{' --global' if is_global else ''}`)"
        )
    else:
        click.echo("Nothing changed.")


def register(group: click.Group) -> None:
    group.add_command(consolidate)


__all__ = ["register"]
