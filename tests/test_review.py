"""Suggestions and the human review: what recurs is proposed once, ranked, and a person's yes
edits the real file, with a backup and an audit line."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.model_servers import ProviderServer, Reply
from tests.test_learning import half_a_day_after, session

from cortexmem.cli.app import cli
from cortexmem.core.extraction.memories import to_memories
from cortexmem.core.learning import LearningConfig
from cortexmem.core.suggestions import Draft, merge_settings, select, to_suggestion
from cortexmem.errors import CortexError
from cortexmem.model import Event, Observation, Provenance, format_time, utc_now
from cortexmem.project.paths import resolve
from cortexmem.services.context import Context
from cortexmem.services.learn import learn
from cortexmem.services.review import apply, refuse
from cortexmem.services.suggest import instinct_drafts, propose, read_target

DRAFTS = {
    "claude_md": Draft("claude_md", "CLAUDE.md", "Run tests",
                       "- Run tests with `uv run pytest`.", "seen 6x", "test"),
    "settings_json": Draft("settings_json", ".claude/settings.json", "Allow the test run",
                           '{"permissions": {"allow": ["Bash(uv run pytest:*)"]}}', "6x", "test"),
    "memory": Draft("memory", ".claude/rules/workflow-grep-read-edit.md", "Workflow",
                    "- Grep, then read the match, then edit.", "30x", "test"),
    "brain_inbox": Draft("brain_inbox", ".cortex/inbox/wal-mode.md", "WAL mode",
                         "SQLite in WAL mode lets readers run beside one writer.", "3x", "test"),
    "skill": Draft("skill", ".claude/skills/release/SKILL.md", "Release",
                   "1. Bump the version. 2. Tag. 3. Push the tag.", "3 tasks", "test"),
    "tool": Draft("tool", ".cortex/inbox/tool-flaky-tests.md", "A flaky-test detector",
                  "Rerun failing tests once and report the ones that pass.", "4x", "test"),
}  # fmt: skip


def queue(ctx: Context, draft: Draft) -> str:
    before = ""
    target = (ctx.paths.worktree or ctx.paths.root) / draft.target
    if target.is_file():
        before = target.read_text()
    suggestion = to_suggestion(draft, before, utc_now())
    assert ctx.writable("project").add_suggestions([suggestion]) == 1
    return suggestion.id


@pytest.mark.parametrize("destination", list(DRAFTS))
def test_each_destination_is_applied_with_a_backup_and_an_audit_line(repo: Path, destination: str):
    (repo / "CLAUDE.md").write_text("# Project\n\nUse Python 3.11.\n")
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(
        '{"permissions": {"allow": ["Bash(git status)"]}, "env": {"A": "1"}}'
    )
    with Context.for_cwd(repo) as ctx:
        ref = queue(ctx, DRAFTS[destination])
        done = apply(ctx, ref, who="alice")
        path = Path(str(done.path))
        text = path.read_text()
        entry = ctx.require("project").audit_entries()[0]
        data_dir = ctx.paths.data_dir
        status = ctx.require("project").suggestions(None)[0].status
    assert status == "applied"
    assert (entry.who, entry.action, entry.suggestion_id) == ("alice", "apply", ref)
    assert entry.diff.startswith("--- a/") and entry.diff == done.diff
    if destination == "claude_md":
        assert text == (
            "# Project\n\nUse Python 3.11.\n\n## Learned by Cortex\n\n"
            "- Run tests with `uv run pytest`.\n"
        )
        assert Path(str(done.backup)).read_text() == "# Project\n\nUse Python 3.11.\n"
    elif destination == "settings_json":
        assert json.loads(text) == {
            "permissions": {"allow": ["Bash(git status)", "Bash(uv run pytest:*)"]},
            "env": {"A": "1"},
        }
        assert done.backup is not None and str(data_dir) in done.backup
    elif destination == "skill":
        assert text.startswith("---\nname: release\ndescription: ")
        assert path == repo / ".claude" / "skills" / "release" / "SKILL.md"
        assert done.backup is None  # a new file: nothing to back up
    elif destination in ("brain_inbox", "tool"):
        assert path.parent == data_dir / "inbox" and text.startswith("# ")
    else:
        assert path.parent == repo / ".claude" / "rules" and "Grep" in text


def test_a_file_that_is_not_utf8_is_never_taken_for_empty(repo: Path):
    # Latin-1: read as "" it would be replaced by the suggestion alone
    original = "# Projet\n\nR\xe8gles de l'\xe9quipe.\n".encode("latin-1")
    with Context.for_cwd(repo) as ctx:
        ref = queue(ctx, DRAFTS["claude_md"])
        (repo / "CLAUDE.md").write_bytes(original)
        with pytest.raises(CortexError, match="not UTF-8"):
            apply(ctx, ref, who="alice")
        assert ctx.require("project").suggestions(None)[0].status == "pending"
    assert (repo / "CLAUDE.md").read_bytes() == original


def test_a_crlf_file_keeps_its_line_endings(repo: Path):
    (repo / "CLAUDE.md").write_bytes(b"# Project\r\n\r\nUse Python 3.11.\r\n")
    with Context.for_cwd(repo) as ctx:
        apply(ctx, queue(ctx, DRAFTS["claude_md"]), who="alice")
    written = (repo / "CLAUDE.md").read_bytes()
    assert b"- Run tests with `uv run pytest`.\r\n" in written
    assert written.count(b"\n") == written.count(b"\r\n")


def test_nothing_is_written_through_a_symlink_that_leads_out(repo: Path, tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "SHARED.md").write_text("# Shared\n")
    (repo / "CLAUDE.md").symlink_to(outside / "SHARED.md")
    (repo / ".claude").symlink_to(outside, target_is_directory=True)
    with Context.for_cwd(repo) as ctx:
        for name in ("claude_md", "skill"):
            with pytest.raises(CortexError, match="outside the project"):
                apply(ctx, queue(ctx, DRAFTS[name]), who="alice")
    assert (outside / "SHARED.md").read_text() == "# Shared\n"
    assert not (outside / "skills").exists()


def test_two_reviews_deciding_at_once_apply_once(repo: Path):
    """Two processes applying the same suggestion: one writes it, the other is told it is no
    longer pending; two suggestions to one file: both edits land."""
    import subprocess
    import sys
    import time

    (repo / "CLAUDE.md").write_text("# Project\n")
    with Context.for_cwd(repo) as ctx:
        same = queue(ctx, DRAFTS["claude_md"])
        other = queue(ctx, Draft("claude_md", "CLAUDE.md", "Lint", "- Lint with ruff.", "4x", "t"))
    go = repo.parent / "go"
    script = (
        "import sys, time; from pathlib import Path\n"
        "from cortexmem.services.context import Context\n"
        "from cortexmem.services.review import apply\n"
        "from cortexmem.errors import CortexError\n"
        "give_up = time.monotonic() + 30\n"
        "while not Path(sys.argv[3]).exists():\n"
        "    if time.monotonic() > give_up: sys.exit(3)\n"
        "    time.sleep(0.005)\n"
        "with Context.for_cwd(Path(sys.argv[1])) as ctx:\n"
        "    try: apply(ctx, sys.argv[2], who='p'); print('applied')\n"
        "    except CortexError as e: print('refused', e)\n"
    )
    refs = [same] * 3 + [other]
    runs = [
        subprocess.Popen([sys.executable, "-c", script, str(repo), ref, str(go)],
                         stdout=subprocess.PIPE, text=True)
        for ref in refs
    ]  # fmt: skip
    try:
        time.sleep(1.0)  # every process imported and waiting
        go.touch()
        outputs = sorted(run.communicate(timeout=60)[0].split()[0] for run in runs)
    finally:
        for run in runs:
            run.kill()
    assert outputs == ["applied", "applied", "refused", "refused"]
    text = (repo / "CLAUDE.md").read_text()
    assert text.count("uv run pytest") == 1 and "Lint with ruff" in text
    with Context.for_cwd(repo) as ctx:
        assert len(ctx.require("project").audit_entries()) == 2


def test_a_suggestion_carries_no_personal_data_nor_secret():
    error = "push rejected for alice.smith@example.com; call +1 415 555 0134"
    draft = Draft(
        "claude_md", "CLAUDE.md", "Recurring failure: ./deploy.sh",
        f'- `./deploy.sh` keeps failing with "{error}" (fixed in /home/alice/proj/deploy.sh); '
        "token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB.", "3x", "test",
    )  # fmt: skip
    queued = to_suggestion(draft, "", utc_now())
    for text in (queued.text, queued.after):
        assert "alice.smith@" not in text and "555 0134" not in text
        assert "/home/alice" not in text and "ghp_0123" not in text
        assert "/home/[user]/proj/deploy.sh" in text


def test_applying_what_the_file_already_says_changes_nothing(repo: Path):
    with Context.for_cwd(repo) as ctx:
        ref = queue(ctx, DRAFTS["claude_md"])
        (repo / "CLAUDE.md").write_text("# Project\n\n- Run tests with `uv run pytest`.\n")
        done = apply(ctx, ref, who="alice")
        entry = ctx.require("project").audit_entries()[0]
    assert done.diff == "" and done.backup is None and done.suggestion.status == "applied"
    assert (repo / "CLAUDE.md").read_text() == "# Project\n\n- Run tests with `uv run pytest`.\n"
    assert (entry.action, entry.diff) == ("apply", "")


def test_what_a_file_says_is_matched_by_whole_words_and_settings_by_structure(repo: Path):
    (repo / "CLAUDE.md").write_text("We use uvicorn because uvicorn is fast.\n")
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(
        '{"permissions": {"allow": ["Bash(uv run pytest tests/unit:*)"]}}'
    )
    with Context.for_cwd(repo) as ctx:
        use_uv = apply(ctx, queue(ctx, Draft("claude_md", "CLAUDE.md", "uv", "- Use uv.", "3x",
                                             "t")), who="alice")  # fmt: skip
        allow = apply(ctx, queue(ctx, DRAFTS["settings_json"]), who="alice")
    assert use_uv.diff and "- Use uv." in (repo / "CLAUDE.md").read_text()
    assert (
        allow.diff and "Bash(uv run pytest:*)" in (repo / ".claude" / "settings.json").read_text()
    )


def test_a_settings_draft_is_held_back_only_when_the_settings_hold_it():
    ask = Draft("settings_json", ".claude/settings.json", "Ask before git push",
                '{"permissions": {"ask": ["Bash(git push:*)"]}}', "3x", "t",
                essence="ask Bash(git push:*)")  # fmt: skip
    narrower = '{"permissions": {"ask": ["Bash(git push --force:*)"]}}'
    holding = '{\n "permissions": {"ask": ["Bash(ls)", "Bash(git push:*)"]}\n}'
    assert select([ask], set(), {".claude/settings.json": narrower}) == [ask]
    assert select([ask], set(), {".claude/settings.json": holding}) == []


def test_a_file_of_mixed_line_endings_keeps_the_ending_most_lines_have(repo: Path):
    # one stray CRLF line does not turn an LF file into a CRLF one
    (repo / "CLAUDE.md").write_bytes(b"# Project\n\nUse Python 3.11.\nA pasted line\r\nMore.\n")
    with Context.for_cwd(repo) as ctx:
        apply(ctx, queue(ctx, DRAFTS["claude_md"]), who="alice")
    written = (repo / "CLAUDE.md").read_bytes()
    assert written.startswith(b"# Project\n\nUse Python 3.11.\nA pasted line\nMore.\n")
    assert b"\r" not in written


def test_refusing_without_a_store_leaves_no_cortex_folder(repo: Path):
    runner = CliRunner()
    result = runner.invoke(cli, ["-C", str(repo), "review", "refuse", "sg-nope"])
    assert result.exit_code == 1 and not (repo / ".cortex").exists()


def test_a_linked_worktree_whose_claude_folder_is_the_main_checkouts_may_be_edited(
    repo: Path, tmp_path: Path
):
    from conftest import git

    (repo / ".claude").mkdir()
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", str(linked))
    (linked / ".claude").symlink_to(repo / ".claude", target_is_directory=True)
    with Context.for_cwd(linked) as ctx:
        done = apply(ctx, queue(ctx, DRAFTS["settings_json"]), who="alice")
    assert done.diff and (repo / ".claude" / "settings.json").is_file()


def test_a_second_claude_md_rule_joins_the_section():
    before = "# P\n\n## Learned by Cortex\n\n- one\n\n## Other\n\ntext\n"
    after = to_suggestion(DRAFTS["claude_md"], before, utc_now()).after
    assert after == (
        "# P\n\n## Learned by Cortex\n\n- one\n- Run tests with `uv run pytest`.\n\n"
        "## Other\n\ntext\n"
    )
    assert merge_settings("", '{"a": [1]}') == '{\n  "a": [\n    1\n  ]\n}\n'


def test_refuse_and_patch_through_the_command_line(repo: Path):
    runner = CliRunner()

    def run(*args: str, code: int = 0) -> str:
        result = runner.invoke(cli, ["-C", str(repo), *args])
        assert result.exit_code == code, (result.output, result.exception)
        return result.output

    with Context.for_cwd(repo) as ctx:
        first = queue(ctx, DRAFTS["claude_md"])
        second = queue(ctx, DRAFTS["memory"])
    listed = json.loads(run("review", "--json"))
    assert {s["id"] for s in listed} == {first, second}
    assert "+- Run tests with `uv run pytest`." in run("review", "show", first[:8] + first[8:])
    run("review", "refuse", second, "--reason", "not how we work")
    run("review", "patch", first, "--text", "- Run the tests with `make test`.", "--yes")
    assert "`make test`" in (repo / "CLAUDE.md").read_text()
    assert not (repo / ".claude" / "rules" / "workflow-grep-read-edit.md").exists()
    out = run("review", "apply", first, "--yes", code=1)
    assert "already modified" in out
    audit = json.loads(run("review", "audit", "--json"))
    assert [a["action"] for a in audit] == ["patch", "refuse"]
    assert audit[1]["reason"] == "not how we work" and "diff" not in audit[1]
    assert "(not how we work)" in run("review", "audit")
    assert run("review") == "No suggestions waiting.\n"
    assert "--as-of" in run("learn", "--as-of", "yesterday", code=2)  # a usage error
    assert "out of range" in run("learn", "--as-of", "0001-01-02", code=2)


def test_review_mistakes_a_script_or_a_person_can_make_are_stopped_plainly(repo: Path):
    """From an independent walk through the review: an unset variable as the id applied the
    only suggestion; `show` offered a diff that `apply` would not write (the file already
    said it) and a fresh one for a decided suggestion; a read-only CLAUDE.md was replaced
    anyway; a broken JSON edit was blamed on the settings file, and the edit was lost."""
    runner = CliRunner()

    def run(*args: str, code: int = 0, env: dict[str, str] | None = None) -> str:
        result = runner.invoke(cli, ["-C", str(repo), *args], env=env)
        assert result.exit_code == code, (result.output, result.exception)
        return result.output

    with Context.for_cwd(repo) as ctx:
        rule = queue(ctx, DRAFTS["claude_md"])
        settings = queue(ctx, DRAFTS["settings_json"])
    assert "give a suggestion's id" in run("review", "apply", "", "--yes", code=1)
    assert not (repo / "CLAUDE.md").exists()

    (repo / "CLAUDE.md").write_text("# P\n\n- Run tests with `uv run pytest`.\n")
    shown = run("review", "show", rule)
    assert "status: pending" in shown and "(no change: the file already says it)" in shown
    run("review", "apply", rule, "--yes")
    shown = run("review", "show", rule)
    assert "status: applied on" in shown and "+- Run tests" not in shown

    (repo / ".claude").mkdir()
    held = repo / ".claude" / "settings.json"
    held.write_text('{"model": "opus"}\n')
    held.chmod(0o444)
    assert "is read-only" in run("review", "apply", settings, "--yes", code=1)
    assert held.read_text() == '{"model": "opus"}\n'
    held.chmod(0o644)

    editor = repo.parent / "bad-editor.sh"
    editor.write_text('#!/bin/sh\nprintf \'{"permissions": {"ask": ["Bash(git stash:*)"\' > "$1"\n')
    editor.chmod(0o755)
    out = run("review", "patch", settings, "--yes", code=1, env={"EDITOR": str(editor)})
    assert "the suggestion's text is not JSON" in out and "settings file" not in out
    kept = repo / ".cortex" / f"patch-{settings}.json"
    assert kept.read_text() == '{"permissions": {"ask": ["Bash(git stash:*)"'
    assert str(kept) in out and held.read_text() == '{"model": "opus"}\n'


def test_a_failure_that_came_back_is_not_proposed_again_once_refused(repo: Path):
    """A recurring failure's text names its count and newest cause; its key did too, so a
    refused one came back as soon as it failed once more (an independent review)."""
    from cortexmem.core.suggestions import from_failure, recurring_failures

    with Context.for_cwd(repo) as ctx:
        store = ctx.writable("project")
        store.record_capture([failure(n) for n in range(3)], to_memories, None, [])
        first = propose(ctx, LearningConfig()).queued
        assert [s.title for s in first] == ["Recurring failure: uv run pytest"]
        refuse(ctx, first[0].id, who="bob")
        again = failure(3)
        again = replace(again, payload={**again.payload, "cause": "a stale lock file"})
        store.record_capture([again], to_memories, None, [])
        assert propose(ctx, LearningConfig()).queued == []
    # a task runner's bare "task failed", each time for another cause: nothing to write down
    runs = [
        Event(kind="error_resolved", content="`mise run test` failed",
              payload={"target": "mise run test", "error": "[test] ERROR task failed",
                       "cause": cause},
              provenance=Provenance(session_id=f"s-{n}", line=n))
        for n, cause in enumerate(["a message went to stderr", "old branch names", "a typo"])
    ]  # fmt: skip
    (recurring,) = recurring_failures(runs, 3)
    assert from_failure(recurring) is None
    one_cause = [replace(e, payload={**e.payload, "error": "ImportError: no module x"})
                 for e in runs]  # fmt: skip
    draft = from_failure(recurring_failures(one_cause, 3)[0])
    assert draft is not None and "for 3 different causes" in draft.text
    assert "a typo" not in draft.text


def test_a_rule_goes_after_a_code_block_that_holds_a_comment_not_inside_it():
    before = (
        "# P\n\n## Learned by Cortex\n\n- Before pushing, run:\n```bash\n# unit tests only\n"
        "mise run test\n```\n\n## Other\n\ntext\n"
    )
    after = to_suggestion(DRAFTS["claude_md"], before, utc_now()).after
    assert after == before.replace(
        "```\n\n## Other", "```\n- Run tests with `uv run pytest`.\n\n## Other"
    )


def test_a_rule_never_goes_inside_a_fence_of_four_backticks_holding_one_of_three():
    from cortexmem.core.suggestions import SECTION, add_to_section

    nested = f"{SECTION}\n\n- a\n\n````md\n```bash\n# x\n```\n````\n\n## Next\n"
    assert add_to_section(nested, "- NEW") == nested.replace("````\n\n##", "````\n- NEW\n\n##")
    indented = f"{SECTION}\n\n- a\n    ```not a fence\n\n## Next\n"
    assert add_to_section(indented, "- NEW").index("- NEW") < indented.index("## Next")


def test_a_refused_look_is_no_permission_rule():
    """The person refused `which python3 && echo …` for its approach: `Bash(which:*)` would
    ask before every `which`; a refused `git -C x stash` asks before `git stash`, not git."""
    from cortexmem.core.suggestions import from_lesson
    from cortexmem.model import Lesson, Trigger

    def drafts(command: str) -> list[str]:
        lesson = Lesson(text=f"Do not run `{command}` unasked", kind="correction",
                        trigger=Trigger(tool="Bash", command=command), tier="T1",
                        sessions=("a", "b"))  # fmt: skip
        return [d.text for d in from_lesson(lesson) if d.destination == "settings_json"]

    assert drafts('which python3 && echo "ok" || echo "Python 3 not found"') == []
    assert drafts("git -C /work/app stash") == ['{"permissions": {"ask": ["Bash(git stash:*)"]}}']


def _recent(observations: list[Observation]) -> list[Observation]:
    shift = datetime.now(UTC) - half_a_day_after(observations)
    return [Observation(**{**o.to_dict(), "at": format_time(_at(o) + shift)}) for o in observations]


def _at(o: Observation) -> datetime:
    return datetime.strptime(o.at, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def failure(n: int) -> Event:
    return Event(
        kind="error_resolved",
        content=f"`uv run pytest` failed (ImportError: cannot import name 'x{n}')",
        payload={"target": "uv run pytest", "call": "shell", "cause": "the venv was stale",
                 "error": f"ImportError: cannot import name 'x{n}' from 'app' (/w/app{n}.py)",
                 "files": ["app.py"]},
        provenance=Provenance(session_id=f"s-{n}", line=n),
    )  # fmt: skip


def test_what_recurs_is_proposed_once_ranked_by_recurrence(repo: Path):
    def shell(form: str, ok: bool) -> tuple[str, bool, str]:
        return ("Bash", ok, form)

    fixes = [
        session(f"f{n}", datetime(2026, 3, 1, tzinfo=UTC) + timedelta(hours=n),
                ["Grep", "Read", "Edit", shell("pytest", False), shell("uv run pytest", True)]
                + ["Grep", "Read", "Edit"] * n)
        for n in range(6)
    ]  # fmt: skip
    observations = _recent([o for s in fixes for o in s])
    with Context.for_cwd(repo) as ctx:
        store = ctx.writable("project")
        store.record_capture([failure(n) for n in range(3)], to_memories, None, observations)
        report = learn(ctx)
        queued = store.suggestions()
        assert report.suggested == len(queued) >= 3
        titles = [s.title for s in queued]
        assert titles[0] == "Workflow: Grep->Read->Edit"  # 21x: the most recurrent first
        assert "Run tests with `uv run pytest`" in titles
        assert titles[-1] == "Recurring failure: uv run pytest"  # 3x: the least
        fix = next(s for s in queued if s.title == "Run tests with `uv run pytest`")
        assert fix.destination == "claude_md" and fix.target == "CLAUDE.md"
        assert "## Learned by Cortex" in fix.after and fix.evidence
        # Queued once: a second pass proposes nothing new.
        assert propose(ctx, LearningConfig()).queued == []
        # What CLAUDE.md already says is not proposed at all.
        refuse(ctx, fix.id, who="bob")
        (repo / "CLAUDE.md").write_text("Always run tests with `uv run pytest`.\n")
        drafts = [d for d in instinct_drafts(ctx, LearningConfig(), datetime.now(UTC))
                  if "uv run" in d.text]  # fmt: skip
        said = {"CLAUDE.md": read_target(ctx, "CLAUDE.md")}
        assert drafts and select(drafts, set(), said) == []


def test_a_configured_model_words_the_suggestion(repo: Path, tmp_path: Path):
    from cortexmem.project.paths import cortex_home

    server = ProviderServer()
    try:
        (cortex_home()).mkdir(parents=True, exist_ok=True)
        (cortex_home() / "ai.yaml").write_text(
            f"models:\n  distill:\n    provider: ollama\n    base_url: {server.url}\n"
            "    model: llama3\n    timeout: 5\n"
        )
        server.script(Reply(text=json.dumps(
            {"text": "Run the test suite with `uv run pytest`, never bare `pytest`.",
             "rationale": "Bare pytest misses the project's virtualenv."})))  # fmt: skip
        with Context.for_cwd(repo) as ctx:
            report = propose(ctx, LearningConfig(), use_model=True, extra=[DRAFTS["claude_md"]],
                             sources=[])  # fmt: skip
        (queued,) = report.queued
        assert queued.text == "- Run the test suite with `uv run pytest`, never bare `pytest`."
        assert queued.drafted_by.endswith("llama3")
        assert "uv run pytest" in server.requests[0]["body"]["messages"][-1]["content"]
    finally:
        server.close()
    # No model configured: the template is queued as it is.
    (cortex_home() / "ai.yaml").unlink()
    with Context.for_cwd(repo) as ctx:
        report = propose(ctx, LearningConfig(), use_model=True, extra=[DRAFTS["memory"]],
                         sources=[])  # fmt: skip
    assert report.queued[0].drafted_by == "template" and not report.model_errors


def test_a_project_store_is_found_for_the_review(repo: Path):
    assert resolve(repo).data_dir == repo / ".cortex"


def test_a_long_queue_is_flagged_in_the_briefing_and_the_status(repo: Path):
    from cortexmem.services.brief import make_briefing
    from cortexmem.services.status import status

    (repo / ".cortex").mkdir(exist_ok=True)
    (repo / ".cortex" / "learning.yaml").write_text("review_alert: 3\n")
    with Context.for_cwd(repo) as ctx:
        for n in range(2):
            queue(ctx, Draft("claude_md", "CLAUDE.md", f"Rule {n}", f"- Rule {n}.", "x", "t"))
        assert status(ctx)["learning"]["alert"] is None
        queue(ctx, Draft("claude_md", "CLAUDE.md", "Rule 3", "- Rule 3.", "x", "t"))
        alert = status(ctx)["learning"]["alert"]
        assert alert == "3 suggestions wait for your review: run `cortex review`"
        assert f"⚑ {alert}" in make_briefing(ctx).markdown


# ----------------------------------------------------------------- the dream


def test_the_dream_is_a_dry_run_with_a_report_until_told_to_apply(repo: Path):
    from cortexmem.services.dream import dream

    rules = repo / ".claude" / "rules"
    rules.mkdir(parents=True)
    (rules / "cortex-generated-rules.md").write_text(
        "# Rules\n\n- Run tests with `uv run pytest` always.\n- See [the notes](docs/none.md).\n"
        "- Run tests with `uv run pytest` always.\n"
    )
    old = Observation(session_id="s-old", tool="Read", ok=True, at="2020-01-01T00:00:00.000000Z")
    with Context.for_cwd(repo) as ctx:
        store = ctx.writable("project")
        store.record_capture([failure(n) for n in range(3)], to_memories, None, [old])
        dry = dream(ctx)
        assert dry.dry_run and dry.compacted == 1 and dry.queued == 0
        assert [d.split(" (")[0] for d in dry.drafts] == ["Recurring failure: uv run pytest"]
        kinds = sorted(f.kind for f in dry.findings)
        assert kinds == ["dead_link", "same_entry"]
        assert Path(str(dry.report)).read_text().startswith("# Cortex dream — ")
        assert store.count_suggestions() == 0 and len(list(store.iter_observations())) == 1
        done = dream(ctx, apply=True)
        assert done.queued == 1 and store.count_suggestions() == 1
        assert list(store.iter_observations()) == []
        assert done.fixed == [".claude/rules/cortex-generated-rules.md"]
        assert (rules / "cortex-generated-rules.md").read_text().count("uv run pytest") == 1
        assert dream(ctx, apply=True).queued == 0  # proposed once


def test_a_second_dream_is_refused_while_one_runs(repo: Path):
    from cortexmem.services.briefing_cache import PidLock
    from cortexmem.services.dream import LOCK, DreamBusy, dream

    with Context.for_cwd(repo) as ctx:
        ctx.writable("project")
        with PidLock(str(ctx.paths.data_dir / LOCK)), pytest.raises(DreamBusy):
            dream(ctx)
        assert dream(ctx).dry_run  # free again once the first is done


def test_the_target_files_secrets_stay_out_of_the_store_but_not_out_of_the_file(repo: Path):
    """A settings.json's env block is how Claude Code is given keys: the suggestion keeps the
    file before and after to show, and the audit its diff, both redacted; the file itself is
    edited as it is, its key left where the person put it."""
    key = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"env": {"GITHUB_TOKEN": key}}))
    with Context.for_cwd(repo) as ctx:
        ref = queue(ctx, DRAFTS["settings_json"])
        apply(ctx, ref, who="alice")
        stored = ctx.require("project").suggestions(None)[0]
        entry = ctx.require("project").audit_entries()[0]
    assert key not in stored.before + stored.after + entry.diff
    assert "GITHUB_TOKEN" in stored.before and "uv run pytest" in stored.after
    assert json.loads(settings.read_text())["env"]["GITHUB_TOKEN"] == key


def test_a_dream_in_a_project_without_a_store_leaves_git_clean(repo: Path):
    """Its report and lock live in .cortex/, made private and ignored as the store makes it:
    a dry run leaves nothing for `git status` to show."""
    from cortexmem.services.dream import dream

    with Context.for_cwd(repo) as ctx:
        dream(ctx)
    data = repo / ".cortex"
    assert (data / ".gitignore").is_file() and data.stat().st_mode & 0o077 == 0
    status = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True,
                            text=True, check=True).stdout  # fmt: skip
    assert status == ""
