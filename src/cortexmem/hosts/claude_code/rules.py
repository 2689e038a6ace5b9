"""Claude Code's briefing file: ``.claude/rules/cortex-briefing.md``, which Claude Code loads at
session start (stdlib only: SessionStart writes it on its cache-hit path too).

Written atomically (a unique temporary file renamed over it) under the briefing lock
(``services.briefing_cache.PidLock``), so concurrent sessions never leave it half-written;
unchanged content is not rewritten. ``services.publish.publish`` is handed ``write_rules_file``
bound to a project (``briefing_writer``) and knows nothing of where the file is.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable

from cortexmem.project.files import write_atomic
from cortexmem.project.git import exclude_from_git
from cortexmem.project.paths import ProjectPaths
from cortexmem.services.briefing_cache import LOCK_NAME, PidLock

RULES_FILE = os.path.join(".claude", "rules", "cortex-briefing.md")
# The always-loaded lessons (T0 principles, T1 behavioural): ``services.lessons.publish``.
LESSONS_FILE = os.path.join(".claude", "rules", "cortex-lessons.md")


def write_rules_file(
    worktree: str,
    data_dir: str,
    markdown: str,
    git_common_dir: str | None = None,
    name: str = RULES_FILE,
) -> bool:
    """Write ``.claude/rules/cortex-briefing.md`` (or ``name``) under the lock; True if it
    changed. Inside a git repository the file is listed in ``info/exclude`` so it never shows
    as a change."""
    with PidLock(os.path.join(data_dir, LOCK_NAME)):
        if git_common_dir:
            with contextlib.suppress(OSError):
                exclude_from_git(git_common_dir, "/" + name.replace(os.sep, "/"))
        # Per person and excluded from git: private like the store it comes from.
        return write_atomic(os.path.join(worktree, name), markdown, private=True)


def briefing_writer(paths: ProjectPaths) -> Callable[[str], bool]:
    """``write(markdown) -> changed`` for the project's working tree (each git worktree has its
    own checked-out ``.claude/``), handed to ``services.publish.publish``."""
    worktree = str(paths.worktree or paths.root)
    git_dir = str(paths.repo.common_dir) if paths.repo is not None else None

    def write(markdown: str) -> bool:
        return write_rules_file(worktree, str(paths.data_dir), markdown, git_dir)

    return write


def lessons_writer(paths: ProjectPaths) -> Callable[[str], bool]:
    """``write(markdown) -> changed`` for ``.claude/rules/cortex-lessons.md``; an empty text
    removes the file (no lesson is always loaded any more), and makes none where none was."""
    worktree = str(paths.worktree or paths.root)
    git_dir = str(paths.repo.common_dir) if paths.repo is not None else None

    def write(markdown: str) -> bool:
        if not markdown:
            path = os.path.join(worktree, LESSONS_FILE)
            if not os.path.exists(path):
                return False
            os.unlink(path)
            return True
        return write_rules_file(worktree, str(paths.data_dir), markdown, git_dir, LESSONS_FILE)

    return write
