"""Human-readable output with rich. Imported only by commands that print for a person
(``--json`` output never loads rich)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from rich.console import Console
from rich.markup import escape

from cortexmem.core.ranking import Ranked
from cortexmem.core.text import shorten
from cortexmem.model import Edge, Episode, Memory, parse_time

# Wrapped to the terminal's width in a terminal; piped into a file, `less` or `grep`, a line
# stays one line (rich would cut it at 80 columns, in the middle of a path or "1.7 MB").
console = Console(highlight=False, soft_wrap=not sys.stdout.isatty())
err_console = Console(stderr=True, highlight=False)


def age(timestamp: str | None, now: datetime | None = None) -> str:
    if not timestamp:
        return "never"
    delta = (now or datetime.now(UTC)) - parse_time(timestamp)
    seconds = max(0, int(delta.total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return "just now"


def headline(m: Memory, width: int = 90) -> str:
    return shorten(m.summary or m.content, width)


CODE_LINES = 12


def recall_table(results: Sequence[Ranked], query: str) -> None:
    """A numbered list, two lines per memory: readable in an 80-column terminal."""
    if not results:
        console.print(f"Nothing relevant found for [bold]{escape(query)}[/].")
        return
    console.print(f"[bold]Recall:[/] {escape(query)}")
    for i, r in enumerate(results, start=1):
        m = r.memory
        if r.episode is not None:
            ep = r.episode
            label = f"said: {ep.role}"
            width = max(30, console.width - 9 - len(label))
            console.print(f"{i:>3}. [bold]\\[{label}][/] {escape(headline(m, width))}")
            where = f"{ep.transcript_path or '?'}:{ep.line}" if ep.line else "?"
            details = [ep.id, f"score {r.score:.2f}", r.scope, age(ep.created_at)]
            details += [f"session {ep.session_id}"] if ep.session_id else []
            details += [ep.branch] if ep.branch else []
            console.print("     [dim]" + escape(" · ".join(details)) + "[/]")
            console.print("     [dim]" + escape(where) + "[/]", soft_wrap=True)
            continue
        # --archived serves what `forget` archived beside the rest: it must not pass for active
        mark = f" ({m.status})" if m.status != "active" else ""
        pin = " 📌" if m.pinned else ""
        width = max(30, console.width - 9 - len(m.memory_type) - len(mark) - len(pin))
        label = f"[bold]\\[{m.memory_type}][/]" + (f"[yellow]{mark}[/]" if mark else "")
        console.print(f"{i:>3}. {label}{pin} {escape(headline(m, width))}")
        details = [m.id, f"score {r.score:.2f}", f"p{m.priority}", r.scope, age(m.created_at)]
        if m.branch:
            details.append(m.branch)
        console.print("     [dim]" + escape(" · ".join(details)) + "[/]")
        for code in r.linked:
            lines = code.content.splitlines()
            shown = lines[:CODE_LINES] + ([f"… {len(lines) - CODE_LINES} more lines"]
                                          if len(lines) > CODE_LINES else [])  # fmt: skip
            console.print(f"     [dim]code {escape(code.id)}:[/]")
            for line in shown:
                console.print("       " + escape(line), highlight=False, soft_wrap=True)


def episode_detail(e: Episode, scope: str, memories: Sequence[Memory]) -> None:
    """An episode whole (what was said, as it was kept), where it was said, and the memories
    drawn from it."""
    console.print(f"[bold cyan]{e.id}[/]  [bold]said: {e.role}[/]  ({scope})")
    console.print()
    console.print(escape(e.text))
    console.print()
    where = f"{e.transcript_path}:{e.line}" if e.transcript_path else "-"
    rows = [
        ("session", e.session_id or "-"),
        ("transcript", where + (f" (part {e.chunk + 1})" if e.chunk else "")),
        ("branch", e.branch or "-"),
        ("said", f"{e.created_at} ({age(e.created_at)})"),
    ]
    for key, value in rows:
        console.print(f"  [dim]{key:>10}[/]  {escape(value)}")
    if memories:
        console.print()
        console.print("  [dim]memories drawn from it[/]")
        for m in memories:
            console.print(f"  ⇒ {m.id} " + escape(f"[{m.memory_type}] {shorten(m.content, 100)}"))


def memory_detail(
    m: Memory, scope: str, edges: Sequence[Edge], sources: Sequence[Episode] = ()
) -> None:
    console.print(f"[bold cyan]{m.id}[/]  [bold]{m.memory_type}[/]  ({scope}, {m.status})")
    if m.summary:
        console.print(f"[bold]{escape(m.summary)}[/]")
    console.print()
    console.print(escape(m.content))
    console.print()
    ctx = m.source_context
    rows = [
        ("priority", str(m.priority)),
        ("confidence", f"{m.confidence:.2f}"),
        ("pinned", "yes" if m.pinned else "no"),
        ("tags", ", ".join(m.tags) or "-"),
        ("source", m.source_type + (f" (session {m.source_session})" if m.source_session else "")),
        ("branch", ctx.branch or "-"),
        ("commit", (ctx.commit or "-")[:12]),
        ("created", f"{m.created_at} ({age(m.created_at)})"),
        ("updated", m.updated_at),
        ("accessed", f"{m.access_count} times, last {age(m.last_accessed_at)}"),
    ]
    for key, value in rows:
        console.print(f"  [dim]{key:>10}[/]  {escape(value)}")
    if edges:
        console.print()
        for e in edges:
            direction = f"→ {e.target_id}" if e.source_id == m.id else f"← {e.source_id}"
            console.print(f"  {e.relation_type} {direction} ({e.strength:.2f}, {e.status})")
    if sources:
        from cortexmem.services.graph import episode_line

        console.print()
        console.print("  [dim]drawn from[/]")
        for episode in sources:
            console.print(f"  ⇐ {escape(episode_line(episode))}")


def _when(timestamp: str | None) -> str:
    """``2026-11-25 00:42 UTC (3m ago)``: to the minute, and how long ago."""
    if not timestamp:
        return "-"
    return f"{timestamp[:16].replace('T', ' ')} UTC ({age(timestamp)})"


def status_report(report: dict[str, Any]) -> None:
    branch = report["branch"] or ("detached" if report["commit"] else "-")
    lines = [
        ("project", report["project"]),
        ("hash", report["hash"]),
        ("git", f"yes, branch {branch}" if report["git"] else "no (not a git repository)"),
        ("fts5_available", "yes" if report["fts5_available"] else "NO (recall will not work)"),
        ("schema", f"version {report['schema_head']} (this Cortex)"),
    ]
    for key, value in lines:
        console.print(f"[dim]{key:>15}[/]  {escape(str(value))}")
    for scope, store in report["stores"].items():
        console.print()
        console.print(f"[bold]{scope} store[/]  {escape(store['path'])}")
        if not store["exists"]:
            console.print("  not created yet")
            continue
        active = store["by_status"].get("active", 0)
        console.print(
            f"  memories: {store['memories']} ({active} active)   edges: {store['edges']}   "
            f"events: {store['events']}   schema: v{store['schema_version']}   "
            f"size: {human_bytes(store['size_bytes'])}   backups: {store['backups']}"
        )
        if store.get("integrity", ["ok"]) != ["ok"]:
            console.print(
                "  [bold red]⚠ the memory store is damaged[/]: "
                + escape("; ".join(store["integrity"])[:300])
                + " — run `cortex restore`"
            )
        if store["by_type"]:
            console.print(
                "  by type: " + ", ".join(f"{k} {v}" for k, v in store["by_type"].items())
            )
        if store.get("transcripts") or store.get("observations"):
            console.print(
                f"  captured: {store['transcripts']} transcripts, "
                f"{store['observations']} tool observations, {store.get('episodes', 0)} episodes, "
                f"last {_when(store['last_capture'])}"
                + (
                    f", {report['queued_transcripts']} queued"
                    if scope == "project" and report.get("queued_transcripts")
                    else ""
                )
            )
        others = {k: v for k, v in store["by_status"].items() if k != "active"}
        if others:
            console.print("  by status: " + ", ".join(f"{k} {v}" for k, v in others.items()))
        if store.get("embedded"):
            embedded_report(store["embedded"])
    if "ai" in report:
        ai_report(report["ai"])
    learning = report.get("learning")
    if learning and (learning["last_run"] or learning["pending"]):
        console.print()
        console.print(
            f"[bold]learning[/]  {learning['instincts']} instincts, {learning['rules']} rules, "
            f"{learning['pending']} suggestions pending, last run {learning['last_run'] or '-'}"
        )
        if learning["alert"]:
            console.print(f"  [bold yellow]⚑[/] {escape(learning['alert'])}")


def embedded_report(embedded: dict[str, Any]) -> None:
    """``embedded: 1 of 28 memories, 0 of 488 episodes``, and what to run when much is not:
    recall judges what has no vector by its words alone."""
    parts = [(name, embedded[name]) for name in ("memories", "episodes") if embedded[name]]
    parts = [(name, part) for name, part in parts if part["total"]]
    if not parts:
        return
    console.print(
        "  embedded: "
        + ", ".join(f"{p['embedded']} of {p['total']} {name}" for name, p in parts)
        + f" ({escape(embedded['model'])})"
    )
    if any(much_unembedded(part) for _, part in parts):
        console.print(
            "  [bold yellow]⚑[/] what has no vector is found by its words only: run `cortex "
            "reindex` (the recall server a session starts embeds it in the background)"
        )


def much_unembedded(part: dict[str, int]) -> bool:
    """More than a tenth without a vector: a few new memories wait for the recall server's
    next idle moment; a whole ingested history waits for `cortex reindex`."""
    return (part["total"] - part["embedded"]) * 10 > part["total"]


def ai_report(ai: dict[str, Any]) -> None:
    """The model side: routes, the budget and what was spent, the breaker, the queue."""
    console.print()
    routed = {use: name for use, name in ai["models"].items() if name}
    if routed:
        names = ", ".join(f"{u} → {n}" for u, n in routed.items())
        console.print(f"[bold]models[/]  {escape(names)}")
    else:
        console.print("[bold]models[/]  none configured (everything runs offline)")
    b, s = ai["budget"], ai["spent"]
    if routed or s["calls_day"]:
        console.print(
            f"  budget: calls {s['calls_hour']}/{b['calls_per_hour']} this hour, "
            f"{s['calls_day']}/{b['calls_per_day']} in 24 h; tokens {s['tokens_hour']}/"
            f"{b['tokens_per_hour']} this hour, {s['tokens_day']}/{b['tokens_per_day']} in 24 h"
        )
    if ai["paused"]:
        console.print(f"  [bold yellow]paused[/]: {escape(ai['paused'])}")
    elif s["failures_in_a_row"]:
        console.print(f"  failed calls in a row: {s['failures_in_a_row']}")
    if ai["queued"] and routed:
        console.print(f"  sessions queued for the model: {ai['queued']}")
    for problem in ai["problems"]:
        console.print(f"  [yellow]ai.yaml[/]: {escape(problem)}")


def human_bytes(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"
