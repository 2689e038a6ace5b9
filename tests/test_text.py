from __future__ import annotations

from cortexmem.core.text import base_folder, shorten, summarise


def test_summarise_takes_the_first_sentence():
    assert summarise("Use WAL. It allows readers during writes.") == "Use WAL."
    assert summarise("no  full\nstop here") == "no full stop here"


def test_shorten_cuts_at_a_word_boundary():
    assert shorten("alpha beta gamma", 100) == "alpha beta gamma"
    assert shorten("alpha beta gamma", 12) == "alpha beta…"
    assert len(shorten("x" * 50, 10)) == 10


def test_paths_are_relative_to_the_project_while_the_shell_is_inside_it():
    home = "/home/dev/app"
    assert base_folder(home, "/home/dev/app/test") == home  # a `cd test` stayed in effect
    assert base_folder(home, "/home/dev/app/") == home
    assert base_folder(home, home) == home
    assert base_folder(home, "/tmp/scratch") == "/tmp/scratch"  # elsewhere: its own folder
    assert base_folder(None, "/home/dev/app/test") == "/home/dev/app/test"  # nothing known
    # a worktree Claude Code made inside the project is a checkout of its own
    tree = "/home/dev/app/.claude/worktrees/feat"
    assert base_folder(home, tree) == tree and base_folder(home, tree + "/src") == tree
    # Windows paths, either slash
    assert base_folder("C:\\work\\app", "C:\\work\\app\\test") == "C:\\work\\app"
    assert base_folder("C:\\work\\app", "D:\\other") == "D:\\other"
