"""Where the two stores live.

* Project store: ``<repository root>/.cortex/cortex.db``. The root is the main working tree of the
  git repository (found through the common git dir), so every worktree and every sub-folder of
  one repository shares one memory. Outside git: the nearest ancestor folder that already has a
  ``.cortex/cortex.db``, else the current folder.
* Global store: ``$CORTEX_HOME/global.db`` (default ``~/.cortex/``).
"""

from __future__ import annotations

from pathlib import Path

from cortexmem import settings
from cortexmem.project.git import GitRepo, find_repo

DIR_NAME = ".cortex"
PROJECT_DB = "cortex.db"
GLOBAL_DB = "global.db"

# Ignore everything in .cortex/ (the rule file included, so `git status` stays clean); files that
# are meant to be committed are re-included below this line by the features that write them.
GITIGNORE = "# Written by Cortex: memory stays out of git unless listed below.\n*\n"


def cortex_home() -> Path:
    return Path(settings.cortex_home())


class ProjectPaths:
    """Every path Cortex uses for one project, plus the global store.

    ``root`` names the project (its hash is the project's identity); ``worktree`` is the working
    tree the command runs in; ``data_dir`` holds the project store. For an ordinary repository
    ``data_dir`` is ``<main worktree>/.cortex``. When the repository has no main worktree
    (a bare clone with linked worktrees, ``--separate-git-dir``) it lives inside the shared git
    dir, ``<common dir>/cortex``, so every worktree still shares one memory.
    """

    # A plain class, not a dataclass: every hook process imports this module.
    __slots__ = ("data_dir", "home", "repo", "root", "worktree")

    def __init__(
        self, root: Path, repo: GitRepo | None, home: Path, data_dir: Path, worktree: Path
    ) -> None:
        self.root = root
        self.repo = repo
        self.home = home
        self.data_dir = data_dir
        self.worktree = worktree

    def _key(self) -> tuple[object, ...]:
        return (self.root, self.repo, self.home, self.data_dir, self.worktree)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ProjectPaths) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return "ProjectPaths({})".format(", ".join(map(repr, self._key())))

    @property
    def db(self) -> Path:
        return self.data_dir / PROJECT_DB

    @property
    def global_db(self) -> Path:
        return self.home / GLOBAL_DB

    @property
    def log(self) -> Path:
        return self.data_dir / "cortex.log"

    @property
    def project_hash(self) -> str:
        """A stable short name for the project: its root path, hashed."""
        import hashlib  # lazily: most hooks never need it

        return hashlib.sha256(str(self.root).encode("utf-8")).hexdigest()[:12]

    @property
    def name(self) -> str:
        return self.root.name.removesuffix(".git") or str(self.root)

    def branch_and_commit(self) -> tuple[str | None, str | None]:
        return self.repo.head() if self.repo else (None, None)


def resolve(cwd: Path | None = None) -> ProjectPaths:
    cwd = (cwd or Path.cwd()).resolve()
    home = cortex_home()
    repo = find_repo(cwd)
    if repo is not None:
        if repo.has_main_worktree:
            root = repo.main_root
            return ProjectPaths(root, repo, home, root / DIR_NAME, repo.worktree)
        common = repo.common_dir
        return ProjectPaths(common, repo, home, common / "cortex", repo.worktree)
    root = _existing_store_root(cwd, home) or cwd
    return ProjectPaths(root, None, home, root / DIR_NAME, cwd)


def _existing_store_root(cwd: Path, home: Path) -> Path | None:
    """The nearest folder at or above ``cwd`` with a project store, never looking at the user's
    home folder or above it from a folder below it: a stray store there must not capture every
    folder underneath."""
    global_dir = home.resolve()
    user_home = Path.home().resolve()
    for folder in (cwd, *cwd.parents):
        if folder != cwd and (folder == user_home or folder in user_home.parents):
            break
        if folder != cwd and folder.parent == folder:
            break  # the filesystem root
        data_dir = folder / DIR_NAME
        if data_dir.resolve() == global_dir:
            continue  # ~/.cortex is the global store's home, not a project
        if (data_dir / PROJECT_DB).is_file():
            return folder
    return None


def ensure_data_dir(data_dir: Path) -> None:
    """Create ``.cortex/`` with its .gitignore (never overwriting one a person edited).

    Memory is private: the folder is 0700, and one an older Cortex left open to others is
    closed (the files in it meant for git are committed by content; git keeps no folder modes).
    """
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    private_dir(data_dir)
    ignore = data_dir / ".gitignore"
    if not ignore.exists():
        ignore.write_text(GITIGNORE, encoding="utf-8")


def private_dir(folder: Path) -> None:
    """Take group/other access away from a folder of Cortex's (best effort)."""
    import contextlib
    import os

    with contextlib.suppress(OSError):
        mode = folder.stat().st_mode & 0o7777
        if mode & 0o077:
            os.chmod(folder, mode & ~0o077)
