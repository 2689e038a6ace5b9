"""The ``cortex`` command line.

Each command imports what it needs inside its body: ``cortex status --json`` must not pay for
rich, and nothing here may pull in an embedding runtime. Exit codes: 0 success, 1 a failure the
user can act on (one line on stderr, no traceback), 2 a usage error.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import sys
from pathlib import Path
from typing import Any

import click

from cortexmem import __version__
from cortexmem.cli.common import (
    confirm,
    open_context,
    print_json,
    refuse_without_tty,
    scope_of,
)
from cortexmem.errors import FULL_HINT, CortexError, NotCortexStore, StoreCorrupt, disk_full
from cortexmem.model import MEMORY_TYPES, Memory

TYPE_CHOICE = click.Choice(MEMORY_TYPES, case_sensitive=False)


class CortexGroup(click.Group):
    """Turns expected failures into one-line messages with exit code 1."""

    def invoke(self, ctx: click.Context) -> Any:
        from cortexmem.core.export_format import ExportFormatError

        try:
            return super().invoke(ctx)
        except (CortexError, ExportFormatError) as exc:
            raise click.ClickException(str(exc)) from None
        except BrokenPipeError:
            # The reader stopped reading (`cortex export | head`): what it took is all it
            # wanted. Nothing more is written; the flush at exit goes nowhere.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            ctx.exit(0)
        except (sqlite3.Error, OSError) as exc:
            raise _one_line(exc) from None
        except UnicodeError as exc:  # text that is not UTF-8 reached something strict
            raise click.ClickException(f"text that is not valid UTF-8: {exc}") from None


def _one_line(exc: sqlite3.Error | OSError) -> click.ClickException:
    """A database or file error as one line; a full disk (or file size limit) says so."""
    if disk_full(exc):
        where = f" ({exc.filename})" if isinstance(exc, OSError) and exc.filename else ""
        detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return click.ClickException(f"{detail}{where}: {FULL_HINT}")
    if isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc)):
        return click.ClickException(
            "the memory store stayed busy for 30 s (another process holds it); try again"
        )
    if isinstance(exc, sqlite3.Error):
        return click.ClickException(f"database error: {exc}")
    where = f": {exc.filename}" if exc.filename else ""
    return click.ClickException(f"{exc.strerror or exc}{where}")


@click.group(cls=CortexGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cortex")
@click.option(
    "-C",
    "cwd",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="Run as if started in this folder (like git -C).",
)
@click.pass_context
def cli(ctx: click.Context, cwd: Path | None) -> None:
    """Cortex: memory for AI coding assistants.

    Memories live in two stores: the project's (.cortex/cortex.db at the repository root, shared
    by every worktree) and your global one ($CORTEX_HOME/global.db, default ~/.cortex/).
    Start with `cortex demo` for a tour on a throw-away store.
    """
    ctx.obj = {"cwd": cwd}


# ------------------------------------------------------------------------------------- init


@cli.command()
@click.option(
    "--setup",
    "do_setup",
    is_flag=True,
    help="Also merge Cortex's Claude Code hooks into .claude/settings.json (backup first; "
    "nothing else in it changes), write .claude/rules/cortex-memory-instructions.md, and add "
    "the MCP server (cortex mcp-server) to the project's .mcp.json.",
)
@click.option(
    "--user",
    is_flag=True,
    help="With --setup/--uninstall: use ~/.claude/ (every project) instead of this "
    "project's .claude/. Creates no project store.",
)
@click.option(
    "--uninstall",
    is_flag=True,
    help="Remove exactly what --setup added: Cortex's hooks (backup first), its rules "
    "file and its .mcp.json entry. The memory store is kept.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="With --setup/--uninstall: show the settings diff and what would change; write nothing.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def init(
    click_ctx: click.Context,
    do_setup: bool,
    user: bool,
    uninstall: bool,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Create the project store (.cortex/ at the repository root, kept out of git).

    Plain `cortex init` also prints the hooks block for a Claude Code settings file. Each hook
    runs `cortex-hook <Event>` from this environment, which captures the session and always
    exits 0. Running --setup again changes nothing; it updates the hooks in place when the
    environment moved. The MCP server (`cortex mcp-server`) goes into the project's .mcp.json
    with --setup; for --user, the command to register it is printed.

    \b
    cortex init --setup              this project: .claude/settings.json + .claude/rules/
                                     + .mcp.json
    cortex init --setup --user       every project: ~/.claude/settings.json + ~/.claude/rules/
    cortex init --setup --dry-run    show the diff, write nothing
    cortex init --uninstall [--user] remove Cortex's hooks and rules file
    """
    from cortexmem.hosts.claude_code import install as hooks_setup

    if do_setup and uninstall:
        raise click.UsageError("--setup and --uninstall cannot be combined")
    if (user or dry_run) and not (do_setup or uninstall):
        raise click.UsageError("--user and --dry-run go with --setup or --uninstall")
    ctx = open_context(click_ctx)
    report = None
    if do_setup or uninstall:  # read and check the settings file before creating anything
        project = hooks_setup.Target.for_scope("project", hooks_setup.settings_root(ctx.paths))
        user_target = hooks_setup.Target.for_scope("user")
        target = user_target if user else project
        if uninstall:
            report = hooks_setup.plan_uninstall(target, dry_run=dry_run)
        else:
            other = (project if user else user_target).settings_path
            report = hooks_setup.plan_setup(target, dry_run=dry_run, other=other)
    out: dict[str, Any] = {}
    if not (user or uninstall or dry_run):
        existed = ctx.exists("project")
        store = ctx.writable("project")
        version = store.schema_version()
        out["store"] = {"path": str(store.location), "created": not existed, "schema": version}
        out["global_store"] = str(ctx.paths.global_db)
        if not as_json:
            verb = "Already initialised" if existed else "Initialised"
            click.echo(f"{verb}: {store.location} (schema v{version})")
            click.echo(f"Global store: {ctx.paths.global_db}")
    if report is None:
        block = hooks_setup.cortex_hooks(hooks_setup.hook_command())
        mcp = hooks_setup.mcp_config.mcp_block(hooks_setup.cortex_command())
        if as_json:
            print_json({**out, "hooks": block, "mcp": mcp})
        else:
            click.echo(f"\n{hooks_setup.MCP_HINT} {json.dumps(mcp)}")
            click.echo(f"\n{hooks_setup.PASTE_HINT}")
            click.echo(json.dumps(block, indent=2))
        return
    if not dry_run:
        hooks_setup.apply(report)
    if as_json:
        print_json({**out, **report.to_dict()})
        return
    for line, warning in hooks_setup.describe(report):
        click.echo(line, err=warning)


# --------------------------------------------------------------------------------- remember


@cli.command()
@click.argument("text", nargs=-1, required=True)
@click.option(
    "-t",
    "--type",
    "memory_type",
    type=TYPE_CHOICE,
    default="context",
    show_default=True,
    help="What kind of knowledge this is.",
)
@click.option(
    "-p",
    "--priority",
    type=click.IntRange(1, 10),
    default=5,
    show_default=True,
    help="How much it matters, 1-10; weighs in ranking and briefings.",
)
@click.option(
    "-g",
    "--global",
    "is_global",
    is_flag=True,
    help="Store in the global store (knowledge that holds across projects).",
)
@click.option("--pin", is_flag=True, help="Pinned memories never decay.")
@click.option("-T", "--tag", "tags", multiple=True, help="A tag (repeatable).")
@click.option("-s", "--summary", default=None, help="A one-line summary (default: derived).")
@click.option("--json", "as_json", is_flag=True, help="Print the stored memory as JSON.")
@click.pass_context
def remember(
    click_ctx: click.Context,
    text: tuple[str, ...],
    memory_type: str,
    priority: int,
    is_global: bool,
    pin: bool,
    tags: tuple[str, ...],
    summary: str | None,
    as_json: bool,
) -> None:
    """Store TEXT as a memory. Use `-` to read the text from stdin.

    Example: cortex remember -t decision "Use SQLite WAL; Postgres only for team sync"
    """
    from cortexmem.services.memories import remember as do_remember

    body = sys.stdin.read() if text == ("-",) else " ".join(text)
    ctx = open_context(click_ctx)
    memory, created = do_remember(
        ctx,
        body,
        memory_type=memory_type.lower(),
        priority=priority,
        scope="global" if is_global else "project",
        pinned=pin,
        tags=tags,
        summary=summary,
        embed=True,
    )
    if as_json:
        print_json({"created": created, "memory": memory.to_dict()})
    elif created:
        click.echo(f"Remembered {memory.id} ({memory.memory_type}, {memory.category})")
    else:
        click.echo(f"Already remembered as {memory.id}")


# ----------------------------------------------------------------------------------- recall


@cli.command()
@click.argument("query", nargs=-1, required=True)
@click.option(
    "-t", "--type", "types", type=TYPE_CHOICE, multiple=True, help="Only this type (repeatable)."
)
@click.option(
    "--scope",
    type=click.Choice(["all", "project", "global", "lessons", "scars", "victories"]),
    default="all",
    show_default=True,
    help="Which stores to search; or the lessons (scars: failures and corrections, victories: "
    "what worked), re-ranked by importance × recency.",
)
@click.option(
    "--branch",
    default=None,
    help="Branch whose progress/context to include (default: the current one).",
)
@click.option(
    "--all-branches", is_flag=True, help="Include progress and context recorded on any branch."
)
@click.option("-n", "--limit", type=click.IntRange(1, 200), default=10, show_default=True)
@click.option(
    "--alpha",
    type=click.FloatRange(0, 1),
    default=None,
    help="Weight of meaning vs words: 0 words only, 1 meaning only (default 0.4, or "
    "$CORTEX_RECALL_ALPHA).",
)
@click.option(
    "--archived",
    "with_archived",
    is_flag=True,
    help="Search archived memories too (one the lifecycle archived is restored when served), and "
    "the older versions of a document read again.",
)
@click.option("--json", "as_json", is_flag=True, help="Print results as JSON.")
@click.pass_context
def recall(
    click_ctx: click.Context,
    query: tuple[str, ...],
    types: tuple[str, ...],
    scope: str,
    branch: str | None,
    all_branches: bool,
    limit: int,
    alpha: float | None,
    with_archived: bool,
    as_json: bool,
) -> None:
    """Find memories relevant to QUERY (any text: words, paths, questions).

    A query that starts with "-" goes after "--": cortex recall -- "-v flag"

    Results from the project and global stores are ranked together: full-text and meaning
    (local embeddings, once `cortex reindex` or the recall server has embedded the memories)
    fused by reciprocal rank, blended with confidence, priority, how linked a memory is and how
    often it was useful. A code description comes with its code. Decisions, architecture,
    gotchas and patterns are shared by all branches; progress and context are filtered to the
    current branch unless --all-branches.
    """
    from cortexmem.core.fusion import RELEVANCE_FLOOR
    from cortexmem.services.memories import scopes_for
    from cortexmem.services.recall import recall as do_recall

    if branch and all_branches:
        raise click.UsageError("--branch and --all-branches cannot be combined")
    text = " ".join(query)
    if not text.strip():
        raise click.UsageError("give some words to look for")
    if scope in ("lessons", "scars", "victories"):
        from cortexmem.cli.lessons import search as lessons_search

        click_ctx.invoke(lessons_search, query=text, scope=scope, limit=min(limit, 50),
                         as_json=as_json)  # fmt: skip
        return
    ctx = open_context(click_ctx)
    results = do_recall(
        ctx,
        text,
        types=tuple(t.lower() for t in types),
        scopes=scopes_for(scope),
        branch=branch,
        all_branches=all_branches,
        limit=limit,
        alpha=alpha,
        statuses=("active", "archived") if with_archived else ("active",),
        floor=RELEVANCE_FLOOR,
    )
    if as_json:
        print_json(
            [
                {
                    "rank": i,
                    "kind": r.kind,
                    "score": round(r.score, 6),
                    "relevance": round(r.relevance, 6),
                    "importance": round(r.importance, 6),
                    "scope": r.scope,
                    **(
                        {"episode": r.episode.to_dict()}
                        if r.episode is not None
                        else {"memory": r.memory.to_dict()}
                    ),
                    "linked": [m.to_dict() for m in r.linked],
                }
                for i, r in enumerate(results, start=1)
            ]
        )
        return
    from cortexmem.cli.render import recall_table

    recall_table(results, text)


# -------------------------------------------------------------------------------------- get


@cli.command()
@click.argument("memory_id")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@click.pass_context
def get(click_ctx: click.Context, memory_id: str, as_json: bool) -> None:
    """Show one memory in full, with its edges and the episodes it was drawn from. A unique id
    prefix is enough. Given an episode's id (ep-…, as recall lists what was said), the whole
    passage, where it was said and the memories drawn from it."""
    from cortexmem.services.graph import drawn_from, episode_dict, is_episode_id, sources_of
    from cortexmem.services.memories import edges_of
    from cortexmem.services.memories import get as do_get

    ctx = open_context(click_ctx)
    if is_episode_id(memory_id):
        drawn = drawn_from(ctx, memory_id)
        if as_json:
            print_json(
                {
                    "scope": drawn.scope,
                    "episode": episode_dict(drawn.episode, None),
                    "memories": [m.to_dict() for m in drawn.memories],
                }
            )
            return
        from cortexmem.cli.render import episode_detail

        episode_detail(drawn.episode, drawn.scope, drawn.memories)
        return
    found = do_get(ctx, memory_id)
    edges = edges_of(ctx, found)
    sources = sources_of(ctx, found)
    if as_json:
        print_json(
            {
                "scope": found.scope,
                "memory": found.memory.to_dict(),
                "edges": [e.to_dict() for e in edges],
                "episodes": [episode_dict(e) for e in sources],
            }
        )
        return
    from cortexmem.cli.render import memory_detail

    memory_detail(found.memory, found.scope, edges, sources)


# ----------------------------------------------------------------------------------- forget


@cli.command()
@click.argument("memory_id", required=False)
@click.option("-q", "--query", default=None, help="Find what to forget by text instead of id.")
@click.option("-y", "--yes", is_flag=True, help="Do not ask (for scripts).")
@click.option("--json", "as_json", is_flag=True, help="Print what was archived as JSON.")
@click.pass_context
def forget(
    click_ctx: click.Context, memory_id: str | None, query: str | None, yes: bool, as_json: bool
) -> None:
    """Archive a memory by ID, or find candidates with --query and choose.

    With --query and --yes, only the memories that hold every word of the query are archived,
    and a query of only common words ("the") is refused (what was said in sessions is never a
    candidate: it is the record, not a memory). Archived memories are no longer recalled but
    stay in the store (and in backups).
    """
    from cortexmem.services import memories

    if (memory_id is None) == (query is None):
        raise click.UsageError("give either a memory ID or --query TEXT")
    ctx = open_context(click_ctx)
    if memory_id is not None:
        chosen = [memories.get(ctx, memory_id)]
    else:
        assert query is not None
        chosen = _forget_by_query(ctx, query, yes, as_json)
    # what was archived before is said to be (MCP `forget` says so too), not archived again
    done = [(memories.forget(ctx, f.memory.id), f.memory.status != "archived") for f in chosen]
    if as_json:
        print_json(
            [{"scope": f.scope, "archived": now, "memory": f.memory.to_dict()} for f, now in done]
        )
        return
    for f, now in done:
        click.echo(f"Archived {f.memory.id} ({f.scope})" if now
                   else f"{f.memory.id} ({f.scope}) was already archived")  # fmt: skip
    if not done:
        click.echo("Nothing archived.")


def _forget_by_query(ctx, query: str, yes: bool, as_json: bool) -> list:
    """The memories a query picks to archive: chosen in a terminal, or with --yes every one
    holding all its words; a backup first when they are several."""
    from cortexmem.core.fts_query import STOPWORDS
    from cortexmem.core.fusion import RELEVANCE_FLOOR
    from cortexmem.services.recall import recall as do_recall

    hits = do_recall(
        ctx, query, all_branches=True, limit=10, count_access=False, floor=RELEVANCE_FLOOR
    )
    hits = [h for h in hits if h.episode is None]  # what was said is the record, not a memory
    if yes:
        # Unattended, only what certainly matches: a memory holding every word of the query,
        # small words included ("do not use npm" is not about what says "use npm"):
        # relevance is relative to the best hit, and meaning always finds a neighbour.
        terms = _words(query)
        if terms and terms <= STOPWORDS:
            # "the", "do not": held by almost every memory, they say nothing of which
            raise CortexError(f"{query!r} has only common words: say what to forget")
        hits = [h for h in hits if terms and _holds_every(terms, h.memory)]
    if not hits:
        if as_json:
            return []
        held = " holds every word of" if yes else " matches"
        raise CortexError(f"no memory{held} {query!r}")
    if yes:
        chosen = hits
    else:
        if not sys.stdin.isatty():
            refuse_without_tty("forget --query")
        from cortexmem.cli.render import recall_table

        recall_table(hits, query)
        answer = click.prompt(
            "Archive which? (numbers like 1,3 or 'all'; empty to cancel)",
            default="",
            show_default=False,
        ).strip()
        chosen = _pick(hits, answer)
    if len(chosen) > 1:
        # several at once: make it undoable with `cortex restore`
        for scope in {h.scope for h in chosen}:
            backup = ctx.require(scope).backup("pre-forget")
            click.echo(f"Backup of the {scope} store: {backup.name}", err=True)
    return chosen


def _words(text: str) -> set[str]:
    return set(re.findall(r"[^\W_]+", text.lower()))


def _holds_every(terms: set[str], memory: Memory) -> bool:
    return terms <= _words(f"{memory.content} {memory.summary} {' '.join(memory.tags)}")


def _pick(hits: list, answer: str) -> list:
    if not answer:
        return []
    if answer.lower() == "all":
        return hits
    picked = []
    for part in answer.replace(" ", "").split(","):
        if not part.isdigit() or not 1 <= int(part) <= len(hits):
            raise click.UsageError(f"{part!r} is not a number between 1 and {len(hits)}")
        picked.append(hits[int(part) - 1])
    return picked


# ----------------------------------------------------------------------------------- status


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@click.pass_context
def status(click_ctx: click.Context, as_json: bool) -> None:
    """Show where the stores are and what they hold."""
    from cortexmem.services.status import status as do_status

    report = do_status(open_context(click_ctx))
    if as_json:
        print_json(report)
        return
    from cortexmem.cli.render import status_report

    status_report(report)


# ------------------------------------------------------------------------------------ reset


@cli.command()
@click.option("-g", "--global", "is_global", is_flag=True, help="Reset the global store.")
@click.option("-y", "--yes", is_flag=True, help="Do not ask (for scripts).")
@click.pass_context
def reset(click_ctx: click.Context, is_global: bool, yes: bool) -> None:
    """Empty a store, after taking a backup of it (`cortex restore` undoes it).

    \b
    Everything the store file holds is deleted:
    - memories, their edges and vectors, and events;
    - episodes (what was said in sessions) and their links to memories;
    - lessons with their history and warnings, and the tool observations;
    - the cursors of transcripts and of the tool hooks' spool: the next Stop or
      `cortex ingest` reads each again from its start;
    - the learning loop's instincts, suggestions and review audit, and the model calls'
      ledger and queue.

    Files beside the store (the projections, .cortex/learning/, rules files, ai.yaml, the
    backups, the tool hooks' spool) are left as they are.
    """
    ctx = open_context(click_ctx)
    scope = scope_of(is_global)
    store = ctx.require(scope)
    counts = store.counts()
    what = f"{counts.memories} memories, {counts.events} events"
    if counts.observations:
        what += f", {counts.observations} tool calls"
    what += " and what was said in sessions, the lessons and the suggestions"
    if not confirm(f"Delete all {what} of the {scope} store {store.location}?", yes):
        click.echo("Nothing changed.")
        return
    backup = store.clear()
    click.echo(f"Reset the {scope} store. Backup: {backup}")
    click.echo(f"Undo with: cortex restore {'--global ' if is_global else ''}{backup.name}")


# -------------------------------------------------------------------------- restore/backups


@cli.command()
@click.argument("backup", required=False)
@click.option("-g", "--global", "is_global", is_flag=True, help="Act on the global store.")
@click.option("--list", "list_only", is_flag=True, help="List the backups and exit.")
@click.option("-y", "--yes", is_flag=True, help="Do not ask (for scripts).")
@click.pass_context
def restore(
    click_ctx: click.Context, backup: str | None, is_global: bool, list_only: bool, yes: bool
) -> None:
    """Restore a store from a backup (the newest when BACKUP is omitted).

    Backups are taken automatically before reset, migration, restore and consolidation.
    The current state is itself backed up before it is replaced.
    """
    ctx = open_context(click_ctx)
    scope = scope_of(is_global)
    try:
        store = ctx.require(scope)
    except NotCortexStore:
        raise  # someone else's file: never moved, never replaced
    except StoreCorrupt as exc:
        _restore_damaged(ctx, scope, backup, list_only, yes, exc)
        return
    chosen = _choose_backup(store.list_backups(), backup, store.backup_dir, list_only, scope)
    if chosen is None:
        return
    try:
        held = sum(store.backup_status_counts(chosen).values())
        holding = f" ({held} memories)"
    except sqlite3.Error:
        holding = ""  # restore says what is wrong with it
    if not confirm(f"Replace the {scope} store with {chosen.name}{holding}?", yes):
        click.echo("Nothing changed.")
        return
    safety = store.restore(chosen)
    click.echo(f"Restored {chosen.name}. The previous state was saved as {safety.name}")


def _choose_backup(
    backups: list[Path],
    backup: str | None,
    folder: Path,
    list_only: bool,
    scope: str,
    why: str = "",
) -> Path | None:
    """The backup ``cortex restore`` should use (named, else the newest), or None after
    ``--list`` printed them."""
    if list_only:
        for path in backups:
            click.echo(path.name)
        if not backups:
            click.echo("No backups yet.")
        return None
    if not backups and backup is None:
        raise CortexError(f"{why}the {scope} store has no backups")
    chosen = Path(backup) if backup else backups[-1]
    return chosen if chosen.is_file() else folder / chosen.name


def _restore_damaged(
    ctx: Any, scope: Any, backup: str | None, list_only: bool, yes: bool, exc: Exception
) -> None:
    """`cortex restore` on a store that cannot be opened: the damaged file is moved aside into
    backups/ and the chosen backup (the newest by default) copied in its place."""
    folder = ctx.db_path(scope).parent / "backups"
    chosen = _choose_backup(ctx.backups(scope), backup, folder, list_only, scope, f"{exc}; ")
    if chosen is None:
        return
    click.echo(f"The {scope} store cannot be opened: {exc}", err=True)
    if not confirm(f"Replace it with {chosen.name} (the damaged file is kept aside)?", yes):
        click.echo("Nothing changed.")
        return
    aside = ctx.replace_damaged(scope, chosen)
    click.echo(f"Restored {chosen.name}. The damaged file was moved to {aside}")


# ------------------------------------------------------------------------------ export/import


@cli.command()
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(["jsonl", "markdown"]),
    default="jsonl",
    show_default=True,
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write to this file (default: stdout).",
)
@click.option("-g", "--global", "is_global", is_flag=True, help="Export the global store.")
@click.pass_context
def export(click_ctx: click.Context, fmt: str, output: Path | None, is_global: bool) -> None:
    """Export a store: JSONL (lossless, for `cortex import`) or Markdown (for reading)."""
    from cortexmem.services import transfer

    ctx = open_context(click_ctx)
    scope = scope_of(is_global)
    if output is not None and _a_database(output):
        raise click.ClickException(
            f"{output} is a SQLite database (a Cortex store or a backup?): not overwritten. "
            "Export to another file."
        )
    if fmt == "markdown":
        chunks: Any = [transfer.export_md(ctx, scope)]
    else:
        chunks = (line + "\n" for line in transfer.export_lines(ctx, scope))
    if output is None:
        for chunk in chunks:
            click.echo(chunk, nl=False)
        return
    tmp = output.with_name(output.name + ".part")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # memory: private
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.writelines(chunks)
        tmp.replace(output)
    finally:
        tmp.unlink(missing_ok=True)
    click.echo(f"Exported the {scope} store to {output}", err=True)


def _a_database(path: Path) -> bool:
    """Whether ``path`` holds a SQLite database, or is one's journal beside it: an export
    written there would replace a store (the live one, a backup) with text and orphan its
    write-ahead log. What cannot be read is left to the write to report."""
    stem = path.name.rsplit("-", 1)[0]
    if (
        path.name.endswith(("-wal", "-shm", "-journal"))
        and stem
        and _sqlite_file(path.with_name(stem))
    ):
        return True
    return _sqlite_file(path)


def _sqlite_file(path: Path) -> bool:
    from cortexmem.store.sqlite.tx import SQLITE_HEADER

    try:
        with path.open("rb") as fh:
            return fh.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False


@cli.command(name="import")
@click.argument("source", type=click.File("r", encoding="utf-8"))
@click.option("-g", "--global", "is_global", is_flag=True, help="Import into the global store.")
@click.option(
    "--into-project", is_flag=True, help="Import into the project store, a global export too."
)
@click.option("--json", "as_json", is_flag=True, help="Print the counts as JSON.")
@click.pass_context
def import_(
    click_ctx: click.Context, source: Any, is_global: bool, into_project: bool, as_json: bool
) -> None:
    """Import a JSONL export (`-` for stdin). Safe to repeat: nothing is duplicated.

    It goes into the store it was exported from: a global export (`cortex export -g`) into the
    global store, any other into this project's; -g or --into-project says otherwise.
    The whole file is checked first; if any line is bad nothing is written.
    """
    from cortexmem.services import transfer

    if is_global and into_project:
        raise click.UsageError("-g and --into-project cannot be combined")
    ctx = open_context(click_ctx)
    asked = scope_of(is_global) if is_global or into_project else None  # None: the header's
    scope, result = transfer.import_lines(ctx, source, asked)
    data = {
        "scope": scope,
        "inserted": result.inserted,
        "updated": result.updated,
        "unchanged": result.unchanged,
        "edges_added": result.edges_added,
        "events_added": result.events_added,
        "episodes_added": result.episodes_added,
        "episode_links_added": result.episode_links_added,
        "lessons_added": result.lessons_added,
        "lesson_edges_added": result.lesson_edges_added,
        "observations_added": result.observations_added,
        "skipped": result.skipped,
    }
    if as_json:
        print_json(data)
        return
    click.echo(
        f"Imported into the {scope} store: {result.inserted} new, {result.updated} updated, "
        f"{result.unchanged} unchanged memories; {result.edges_added} edges, "
        f"{result.events_added} events, {result.episodes_added} episodes, "
        f"{result.episode_links_added} episode links, {result.lessons_added} lessons, "
        f"{result.lesson_edges_added} lesson edges, {result.observations_added} tool calls."
    )
    for note in result.skipped:
        click.echo(f"  skipped {note}", err=True)


# ----------------------------------------------------------------------------- ingest


def _run_ingest(paths: list[Path], into: Path | None, as_json: bool) -> None:
    from cortexmem.hosts.claude_code.reader import READER
    from cortexmem.services.ingest import Skipped, ingest

    if as_json or not sys.stderr.isatty():
        result = ingest(paths, reader=READER, into=into)
    else:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

        with Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=True,
        ) as bar:
            task = bar.add_task("Finding transcripts", total=None)

            def start(total: int) -> None:
                bar.update(task, total=total, description="Reading transcripts")

            def advance(path: Path, outcome: object) -> None:
                mark = "skipped" if isinstance(outcome, Skipped) else "read"
                bar.update(task, advance=1, description=f"{mark} {path.name[:40]}")

            result = ingest(paths, reader=READER, into=into, on_start=start, on_progress=advance)
    if as_json:
        print_json(result.to_dict())
        return
    if not result.projects and not result.skipped:
        click.echo("No transcripts found.")
    for project, totals in sorted(result.projects.items()):
        if "memories_active" in totals:
            gained = totals["memories_active"] - totals["memories_active_before"]
            memories = f"{totals['memories_active']} memories ({gained:+d})"
        else:  # the store could not be counted: what the new events added
            memories = f"{totals['memories_added']} new memories"
        click.echo(
            f"{project}: {totals['sessions']} sessions, {totals['lines']} new lines, "
            f"{totals['events_added']} events, {memories}, "
            f"{totals['observations_added']} tool calls observed, "
            f"{totals['lessons_added']} lessons learned"
        )
    # one line per reason (a project folder gone skips all its sessions): the first file by
    # name, and how many more
    by_reason: dict[str, list[str]] = {}
    for skipped in result.skipped:
        by_reason.setdefault(skipped.reason, []).append(skipped.path)
    for reason, files in by_reason.items():
        more = f" and {len(files) - 1} more" if len(files) > 1 else ""
        click.echo(f"  skipped {min(files)}{more}: {reason}", err=True)
    if result.skipped and not result.projects:  # nothing could be read: a script must know
        raise CortexError("no transcript was captured (see above why; --into picks a project)")


_INTO = click.option(
    "--into",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    default=None,
    help="Store everything in this folder's project instead of each transcript's own.",
)


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@_INTO
@click.option("--json", "as_json", is_flag=True, help="Print the counts as JSON.")
def ingest(paths: tuple[Path, ...], into: Path | None, as_json: bool) -> None:
    """Capture existing Claude Code transcripts (files or folders of .jsonl).

    Each session goes to the project it was recorded in (its `cwd`); subagent transcripts are
    read with their session. Safe to repeat: only lines not read before are extracted.
    """
    _run_ingest(list(paths), into, as_json)


@cli.command(name="import-history")
@click.argument("folder", required=False, type=click.Path(file_okay=False, path_type=Path))
@_INTO
@click.option("--json", "as_json", is_flag=True, help="Print the counts as JSON.")
def import_history(folder: Path | None, into: Path | None, as_json: bool) -> None:
    """Backfill every session Claude Code kept (default ~/.claude/projects).

    Sessions whose project folder no longer exists are listed and skipped (use --into).
    """
    from cortexmem.hosts.claude_code.reader import DEFAULT_HISTORY

    folder = (folder or DEFAULT_HISTORY).expanduser()
    if not folder.is_dir():
        raise CortexError(f"no Claude Code history at {folder}")
    _run_ingest([folder], into, as_json)


# ------------------------------------------------------------------------------------- demo


@cli.command()
@click.option("--keep", is_flag=True, help="Keep the throw-away project and print its path.")
def demo(keep: bool) -> None:
    """A tour on a throw-away project: capture the sample sessions, embed, brief, recall.

    The three Claude Code sessions in examples/ are captured as the hooks would, embedded by
    the local model, and the briefing the next session would get is printed, then questions
    are answered and the status shown. Offline, in about a second; your stores are untouched.
    """
    from cortexmem.cli.demo import run_demo

    run_demo(keep=keep)


def _register_more() -> None:
    from cortexmem.cli import (
        ai,
        brief,
        consolidate,
        distill,
        graph,
        learning,
        lessons,
        lifecycle,
        mcp,
        redact,
    )  # fmt: skip

    for module in (
        graph,
        ai,
        brief,
        lifecycle,
        consolidate,
        mcp,
        distill,
        learning,
        lessons,
        redact,
    ):
        module.register(cli)


_register_more()


def main() -> None:
    """Console-script entry point."""
    try:
        cli.main(prog_name="cortex")
    except KeyboardInterrupt:
        click.echo("Interrupted.", err=True)
        sys.exit(130)


if __name__ == "__main__":
    main()
