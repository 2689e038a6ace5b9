"""Git facts read straight from the repository's files: no ``git`` subprocess.

A hook runs on every tool call, so spawning git (10-30 ms, unbounded on a slow disk or a huge
repository) just to learn the branch is too dear. Reading ``.git/HEAD`` and the ref files gives
the repository root, the shared (common) git dir of all worktrees, the branch and the commit in
well under a millisecond.
"""

from __future__ import annotations

import os
from pathlib import Path


class GitRepo:
    """Where a working tree lives and which repository it belongs to.

    ``worktree`` is the top of the current working tree; ``git_dir`` is that tree's own git dir
    (``.git``, or ``.git/worktrees/<name>`` for a linked worktree); ``common_dir`` is the git dir
    shared by all worktrees; ``main_root`` is the main working tree, whose ``.cortex/`` every
    worktree shares.
    """

    # A plain class, not a dataclass: hooks import this, and dataclasses costs ~15 ms to import.
    __slots__ = ("common_dir", "git_dir", "worktree")

    def __init__(self, worktree: Path, git_dir: Path, common_dir: Path) -> None:
        self.worktree = worktree
        self.git_dir = git_dir
        self.common_dir = common_dir

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GitRepo) and (
            (self.worktree, self.git_dir, self.common_dir)
            == (other.worktree, other.git_dir, other.common_dir)
        )

    def __hash__(self) -> int:
        return hash((self.worktree, self.git_dir, self.common_dir))

    def __repr__(self) -> str:
        return f"GitRepo({self.worktree!r}, {self.git_dir!r}, {self.common_dir!r})"

    @property
    def has_main_worktree(self) -> bool:
        """False for a bare clone with linked worktrees or a ``--separate-git-dir`` layout."""
        return self.common_dir.name == ".git"

    @property
    def main_root(self) -> Path:
        return self.common_dir.parent if self.has_main_worktree else self.worktree

    def head(self) -> tuple[str | None, str | None]:
        """(branch, commit) of the working tree; branch is None on a detached HEAD."""
        try:
            text = (self.git_dir / "HEAD").read_text(encoding="utf-8").strip()
        except OSError:
            return None, None
        if text.startswith("ref:"):
            ref = text[4:].strip()
            branch = ref.removeprefix("refs/heads/")
            return branch, self.resolve_ref(ref)
        return None, text or None

    def resolve_ref(self, ref: str) -> str | None:
        for base in (self.git_dir, self.common_dir):
            try:
                return (base / ref).read_text(encoding="utf-8").strip() or None
            except OSError:
                continue
        try:
            packed = (self.common_dir / "packed-refs").read_text(encoding="utf-8")
        except OSError:
            return None
        for line in packed.splitlines():
            sha, _, name = line.partition(" ")
            if name == ref:
                return sha
        return None  # an unborn branch (no commit yet)


def find_repo(start: Path) -> GitRepo | None:
    """The git repository containing ``start``, or None outside any repository."""
    start = start.resolve()
    for folder in (start, *start.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return GitRepo(folder, dot_git, _common_dir(dot_git))
        if dot_git.is_file():
            git_dir = _gitdir_from_file(dot_git)
            if git_dir is not None:
                return GitRepo(folder, git_dir, _common_dir(git_dir))
    return None


def _gitdir_from_file(dot_git: Path) -> Path | None:
    try:
        text = dot_git.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    target = Path(text[7:].strip())
    if not target.is_absolute():
        target = dot_git.parent / target
    return target.resolve()


def _common_dir(git_dir: Path) -> Path:
    try:
        rel = (git_dir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return git_dir
    common = Path(rel)
    if not common.is_absolute():
        common = git_dir / common
    return common.resolve()


def changed_files(worktree: Path, timeout: float = 1.0, limit: int = 200) -> list[str] | None:
    """Paths with uncommitted changes (staged, unstaged, untracked), or None when git is missing,
    slow or fails. A hard ``timeout``: a hook must not wait on a huge repository."""
    import subprocess  # lazily: only Stop-time capture asks for this

    try:
        proc = subprocess.run(
            ["git", "-C", str(worktree), "status", "--porcelain=v1", "-z"],
            capture_output=True,
            timeout=timeout,
            check=False,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    files: list[str] = []
    parts = proc.stdout.decode("utf-8", "replace").split("\0")
    i = 0
    while i < len(parts) and len(files) < limit:
        entry = parts[i]
        i += 1
        if len(entry) < 4:
            continue
        status, path = entry[:2], entry[3:]
        if "R" in status or "C" in status:
            i += 1  # a rename/copy is followed by its source path
        files.append(path)
    return files


def exclude_from_git(git_common_dir: str, pattern: str) -> None:
    """List ``pattern`` in the repository's own ``info/exclude`` (local to this clone; the
    project's .gitignore is never touched): what Cortex writes into the working tree (the
    briefing, the lessons, the generated rules) is per person, private like its store."""
    path = os.path.join(git_common_dir, "info", "exclude")
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        text = ""
    if pattern in text.split("\n"):
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(("" if not text or text.endswith("\n") else "\n") + pattern + "\n")
