from __future__ import annotations

from pathlib import Path

from cortexmem.project.git import find_repo
from cortexmem.project.paths import resolve
from cortexmem.services.context import Context
from cortexmem.services.memories import remember
from cortexmem.services.recall import recall

from conftest import git


def test_subfolders_share_the_repository_store(repo: Path):
    sub = repo / "src" / "deep"
    sub.mkdir(parents=True)
    assert resolve(sub).db == repo / ".cortex" / "cortex.db"
    assert resolve(repo).project_hash == resolve(sub).project_hash


def test_worktrees_share_one_memory(repo: Path, tmp_path: Path):
    wt = tmp_path / "feature-wt"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(wt))
    paths = resolve(wt)
    assert paths.root == repo
    assert paths.db == repo / ".cortex" / "cortex.db"
    # but each worktree knows its own branch
    assert paths.branch_and_commit()[0] == "feature"
    assert resolve(repo).branch_and_commit()[0] == "main"


def test_branch_and_commit_match_git(repo: Path):
    head = git(repo, "rev-parse", "HEAD")
    assert resolve(repo).branch_and_commit() == ("main", head)
    git(repo, "pack-refs", "--all")  # loose ref gone: resolved through packed-refs
    assert resolve(repo).branch_and_commit() == ("main", head)
    git(repo, "checkout", "-q", "--detach")
    assert resolve(repo).branch_and_commit() == (None, head)


def test_unborn_branch(tmp_path: Path):
    git(tmp_path, "init", "-q", "-b", "trunk")
    assert resolve(tmp_path).branch_and_commit() == ("trunk", None)


def test_submodule_style_gitdir_file(tmp_path: Path):
    real = tmp_path / "modules" / "sub"
    real.mkdir(parents=True)
    (real / "HEAD").write_text("ref: refs/heads/dev\n")
    work = tmp_path / "checkout"
    work.mkdir()
    (work / ".git").write_text("gitdir: ../modules/sub\n")
    repo = find_repo(work)
    assert repo is not None and repo.git_dir == real
    assert repo.head() == ("dev", None)
    # no main worktree named .git: the memory lives in the git dir, shared by any worktrees
    paths = resolve(work)
    assert paths.data_dir == real / "cortex" and paths.worktree == work


def test_outside_git_walks_up_to_an_existing_store(tmp_path: Path):
    project = tmp_path / "plain"
    (project / "a" / "b").mkdir(parents=True)
    assert resolve(project / "a").root == project / "a"  # nothing yet: the current folder
    with Context.for_cwd(project) as ctx:
        ctx.writable("project")
    assert resolve(project / "a" / "b").root == project


def test_cortex_dir_is_kept_out_of_git(repo: Path):
    with Context.for_cwd(repo) as ctx:
        ctx.writable("project")
    assert (repo / ".cortex" / ".gitignore").read_text().splitlines()[-1] == "*"
    assert git(repo, "status", "--porcelain") == ""


def test_global_store_follows_cortex_home(cortex_home: Path, repo: Path):
    assert resolve(repo).global_db == cortex_home / "global.db"


def test_bare_clone_worktrees_share_one_memory(repo: Path, tmp_path: Path):
    bare = tmp_path / "proj.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    git(bare, "worktree", "add", "-q", str(tmp_path / "wt-main"), "main")
    git(bare, "worktree", "add", "-q", "-b", "feat", str(tmp_path / "wt-feat"))
    main_paths, feat_paths = resolve(tmp_path / "wt-main"), resolve(tmp_path / "wt-feat")
    assert main_paths.db == feat_paths.db == bare / "cortex" / "cortex.db"
    assert main_paths.name == "proj"
    assert feat_paths.branch_and_commit()[0] == "feat"
    with Context.for_cwd(tmp_path / "wt-main") as ctx:
        remember(ctx, "bare worktree note", memory_type="decision")
    with Context.for_cwd(tmp_path / "wt-feat") as ctx:
        assert [r.memory.content for r in recall(ctx, "bare worktree")] == ["bare worktree note"]


def test_separate_git_dir_with_a_linked_worktree(tmp_path: Path):
    work, gitdir = tmp_path / "work", tmp_path / "gitdir"
    work.mkdir()
    git(work, "init", "-q", "-b", "main", f"--separate-git-dir={gitdir}")
    (work / "f").write_text("x")
    git(work, "add", "f")
    git(work, "commit", "-q", "-m", "c")
    git(work, "worktree", "add", "-q", "-b", "side", str(tmp_path / "side"))
    assert resolve(work).db == resolve(tmp_path / "side").db == gitdir / "cortex" / "cortex.db"


def test_a_store_above_home_is_not_used_below_it(tmp_path: Path, monkeypatch):
    home = tmp_path / "home" / "me"
    (home / "code" / "notes").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    with Context.for_cwd(tmp_path / "home") as ctx:  # a stray store above home
        ctx.writable("project")
    assert resolve(home / "code" / "notes").root == home / "code" / "notes"
