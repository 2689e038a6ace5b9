"""Claude Code's recall server: the project's server with this host's transcript reader.

Started by the hooks (``recall_client.start(root, SERVER_MODULE)``) as ``python -m
cortexmem.hosts.claude_code.serve --root DIR``. The server itself knows no host; given the
reader, it also takes a turn's end (``capture``), so the Stop hook is a thin client.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from cortexmem.project.paths import ProjectPaths

SERVER_MODULE: Final = "cortexmem.hosts.claude_code.serve"


def writers(paths: ProjectPaths) -> dict[str, Callable[[str], bool]]:
    """Where this host's rule files of a project are written (the lessons always loaded)."""
    from cortexmem.hosts.claude_code.rules import lessons_writer

    return {"lessons": lessons_writer(paths)}


def main(argv: list[str] | None = None) -> int:
    from cortexmem.hosts.claude_code.reader import READER
    from cortexmem.recall import server

    return server.main(argv, reader=READER, writers=writers)


if __name__ == "__main__":
    raise SystemExit(main())
