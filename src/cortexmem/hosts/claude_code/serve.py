"""Claude Code's recall server: the project's server with this host's transcript reader.

Started by the hooks (``recall_client.start(root, SERVER_MODULE)``) as ``python -m
cortexmem.hosts.claude_code.serve --root DIR``. The server itself knows no host; given the
reader, it also takes a turn's end (``capture``), so the Stop hook is a thin client.
"""

from __future__ import annotations

from typing import Final

SERVER_MODULE: Final = "cortexmem.hosts.claude_code.serve"


def main(argv: list[str] | None = None) -> int:
    from cortexmem.hosts.claude_code.reader import READER
    from cortexmem.recall import server

    return server.main(argv, reader=READER)


if __name__ == "__main__":
    raise SystemExit(main())
