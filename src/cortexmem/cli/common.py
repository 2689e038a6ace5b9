"""What every ``cortex`` command shares: the store context of the invocation, JSON output and
confirmation. Commands import this module, never ``cli.app`` (which imports them)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from cortexmem.errors import CortexError

if TYPE_CHECKING:
    from cortexmem.services.context import Scope

F = TypeVar("F", bound=Callable[..., Any])


def open_context(click_ctx: click.Context):  # -> services.context.Context
    from cortexmem.services.context import Context

    obj = click_ctx.find_root().obj or {}
    ctx = Context.for_cwd(obj.get("cwd"))
    click_ctx.call_on_close(ctx.close)
    return ctx


def print_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False))


def refuse_without_tty(what: str) -> NoReturn:
    raise CortexError(f"{what} needs confirmation; run it in a terminal or pass --yes")


def plural(n: int, word: str) -> str:
    """``1 row``, ``2 rows``."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def confirm(question: str, yes: bool) -> bool:
    if yes:
        return True
    if not sys.stdin.isatty():
        refuse_without_tty("this")
    return click.confirm(question, default=False)


def stores_option(purpose: str) -> Callable[[F], F]:
    """``--scope all|project|global``: which stores a command works on (``purpose``: "to
    redact", "to pass over")."""
    return click.option(
        "--scope",
        type=click.Choice(["all", "project", "global"]),
        default="all",
        show_default=True,
        help=f"Which stores {purpose}.",
    )


def scope_of(is_global: bool) -> Scope:
    """The store a ``-g/--global`` flag picks."""
    return "global" if is_global else "project"
