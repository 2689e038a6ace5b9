"""The learning loop (learning-loop.md, stages 2-5): formulas, the seed's worked example, and
runs on a real project store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cortexmem.core.command_form import command_form, form_program
from cortexmem.core.learning import (
    LearningConfig,
    confidence,
    decay,
    decayed_score,
    find_patterns,
    instinct_markdown,
    plan,
    rule_line,
    rules_markdown,
    workflow_steps,
)
from cortexmem.core.suggestions import from_instinct
from cortexmem.hosts.claude_code.transcript import DIALECT
from cortexmem.model import Instinct, Observation, format_time

from conftest import git

DAY0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def session(
    name: str, start: datetime, tools: list[str | tuple[str, bool, str]]
) -> list[Observation]:
    """A session's observations as the tool hooks record them: each call with the two before.

    A tool is a name, or ``(name, ok, command form)`` for a shell command."""
    out: list[Observation] = []
    done: list[str] = []
    for n, spec in enumerate(tools):
        tool, ok, command = (spec, True, None) if isinstance(spec, str) else spec
        out.append(
            Observation(
                session_id=name,
                tool=tool,
                ok=ok,
                at=format_time(start + timedelta(seconds=n)),
                prev_tool=done[-1] if done else None,
                prev2_tool=done[-2] if len(done) > 1 else None,
                tool_use_id=f"{name}-{n}",
                command=command,
            )
        )
        done.append(tool)
    return out


def times(chain: list[str], n: int) -> list[str | tuple[str, bool, str]]:
    return list(chain * n)


BRE = ["Bash", "Read", "Edit"]
GRE = ["Grep", "Read", "Edit"]


def seed_sessions() -> dict[int, list[Observation]]:
    """The worked example's seven sessions. Sessions 1-3 open by reading around (a run of
    Reads: the window's most common chain, Read->Read->Read, 17 times), which is what the
    seed's "normalized against window" frequency of 14 observations = 0.82 stands for."""
    day = timedelta(days=1)
    return {
        1: session("s1", DAY0, ["Read"] * 7 + times(BRE, 3)),
        2: session("s2", DAY0 + day, ["Read"] * 8 + times(BRE, 5)),
        3: session("s3", DAY0 + 2 * day, ["Read"] * 8 + times(BRE, 4)),
        4: session("s4", DAY0 + 5 * day, times(GRE, 6) + times(BRE, 2)),
        5: session("s5", DAY0 + 8 * day, times(GRE, 8)),
        6: session("s6", DAY0 + 9 * day, times(GRE, 7)),
        7: session("s7", DAY0 + 10 * day, times(GRE, 9)),
    }


def half_a_day_after(observations: list[Observation]) -> datetime:
    last = max(o.at for o in observations)
    return datetime.strptime(last, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC) + timedelta(
        hours=12
    )


def test_the_seeds_worked_example():
    config = LearningConfig()
    sessions = seed_sessions()
    first = [o for n in (1, 2, 3, 4) for o in sessions[n]]
    after_4 = plan([], first, half_a_day_after(first), config)
    scored = {s.pattern.label: s for s in after_4.scored}

    bash = scored["Bash->Read->Edit"]
    assert bash.pattern.count == 14 and len(bash.pattern.sessions) == 4
    assert bash.frequency == pytest.approx(14 / 17) == pytest.approx(0.82, abs=0.01)
    assert bash.consistency == 1.0
    assert bash.recency == pytest.approx(0.95, abs=0.01)
    assert round(100 * bash.confidence) == 78
    instincts = {i.label: i for i in after_4.instincts}
    assert instincts["Bash->Read->Edit"].status == "active"  # not yet promoted: 78% < 90%
    grep = scored["Grep->Read->Edit"]
    assert grep.pattern.count == 6 and grep.consistency == 0.25
    assert grep.confidence < 0.5 and "Grep->Read->Edit" not in instincts  # too low

    everything = [o for n in range(1, 8) for o in sessions[n]]
    after_7 = plan(after_4.instincts, everything, half_a_day_after(everything), config)
    scored = {s.pattern.label: s for s in after_7.scored}
    grep = scored["Grep->Read->Edit"]
    assert after_7.sessions == 4  # sessions 1-3 left the 7-day window
    assert grep.pattern.count == 30 and grep.frequency == 1.0 and grep.consistency == 1.0
    assert round(100 * grep.confidence) == 95
    promoted = {i.label: i for i in after_7.promoted}
    assert list(promoted) == ["Grep->Read->Edit"]
    assert rule_line(promoted["Grep->Read->Edit"]) == (
        "- **[95%, 30x seen]** Frequent tool chain: Grep->Read->Edit (seen 30x)"
    )
    old = {i.label: i for i in after_7.instincts}["Bash->Read->Edit"]
    assert old.status == "archived"  # the workflow changed: the old chain left the window
    assert "Grep->Read->Edit (seen 30x)" in rules_markdown(after_7.promoted)


def test_an_instinct_file_reads_like_the_seeds():
    inst = Instinct(
        key="chain:Bash>Read>Edit", kind="chain", label="Bash->Read->Edit",
        rule="Frequent tool chain: Bash->Read->Edit (seen 45x)", confidence=0.88, score=0.9,
        observations=45, sessions=6, total_sessions=7, first_seen="2026-02-26T10:00:00.000000Z",
        last_seen="2026-03-04T10:00:00.000000Z",
    )  # fmt: skip
    assert instinct_markdown(inst).startswith(
        "# Instinct: Bash->Read->Edit chain\n- Confidence: 88%\n- Observations: 45\n"
        "- First seen: 2026-02-26\n- Last seen: 2026-03-04\n- Sessions: 6/7\n"
    )


def test_decay_follows_the_seeds_formula():
    # A 90% pattern not seen for 14 days drops to ~22.5% (two half-lives of 7 days).
    assert decayed_score(0.9, 14, 7) == pytest.approx(0.225)
    assert decay(0, 7) == 1.0 and decay(7, 7) == 0.5
    assert confidence(0.82, 1.0, 0.95) == pytest.approx(0.779)


@given(st.floats(0, 1), st.floats(0, 1), st.floats(0, 400), st.floats(0.01, 100), st.floats(0, 400))
def test_confidence_stays_within_0_and_1_and_decay_only_falls(f, c, days, half_life, more):
    value = confidence(f, c, decay(days, half_life))
    assert 0.0 <= value <= 1.0
    assert decayed_score(value, days + more, half_life) <= decayed_score(value, days, half_life)


@given(st.integers(1, 80), st.integers(1, 6))
def test_never_more_than_30_active_instincts(n_chains, n_sessions):
    tools = [f"T{i}" for i in range(n_chains + 2)]
    observations = [
        o for s in range(n_sessions) for o in session(f"s{s}", DAY0 + timedelta(hours=s), tools * 2)
    ]
    result = plan([], observations, DAY0 + timedelta(hours=n_sessions), LearningConfig())
    live = [i for i in result.instincts if i.status != "archived"]
    assert len(live) <= 30


def test_an_instinct_no_longer_seen_fades_then_is_archived():
    sessions = seed_sessions()
    everything = [o for n in range(1, 8) for o in sessions[n]]
    now = half_a_day_after(everything)
    config = LearningConfig()
    promoted = plan([], everything, now, config).promoted[0]
    # Three days later nothing new was seen: the rule decays from its last sighting.
    later = plan([promoted], [], now + timedelta(days=3), config)
    faded = later.instincts[0]
    assert faded.confidence == pytest.approx(promoted.score * decay(3.5, 7))
    assert faded.status == "promoted"  # still above 50%: a rule does not flicker
    gone = plan([faded], [], now + timedelta(days=14), config).instincts[0]
    assert gone.status == "archived" and rules_markdown([]) == ""


def test_one_long_session_cannot_promote_a_pattern_by_itself():
    config = LearningConfig()
    long_one = session("long", DAY0, times(BRE, 60))
    short = session("short", DAY0 + timedelta(hours=2), times(GRE, 3) + times(BRE, 1))
    now = DAY0 + timedelta(hours=3)
    result = plan([], long_one + short, now, config)
    by_label = {s.pattern.label: s for s in result.scored}
    assert len(by_label["Bash->Read->Edit"].pattern.sessions) == 2
    assert by_label["Bash->Read->Edit"].confidence > config.promote_at
    # ...but 60 of its 61 observations come from one session: no rule.
    assert "Bash->Read->Edit" not in {i.label for i in result.promoted}


def test_a_failed_command_and_the_form_that_passed_become_a_rule():
    def shell(form: str, ok: bool) -> tuple[str, bool, str]:
        return ("Bash", ok, form)

    sessions = [
        session(f"s{n}", DAY0 + timedelta(hours=n),
                ["Edit", shell("pytest", False), shell("uv run pytest", True), "Read",
                 shell("git status", True), shell("git status", False), shell("git status", True)])
        for n in range(5)
    ]  # fmt: skip
    observations = [o for s in sessions for o in s]
    patterns, total = find_patterns(observations)
    keys = {p.key: p for p in patterns}
    assert total == 5
    assert keys["fix:pytest>uv run pytest"].count == 5
    assert keys["retry:Bash:git status"].count == 5
    result = plan([], observations, DAY0 + timedelta(hours=6), LearningConfig())
    rules = rules_markdown(result.promoted)
    assert (
        "Run tests with `uv run pytest`: `pytest` failed where `uv run pytest` passed (5x)" in rules
    )
    assert "Bash error-retry pairs detected (10x). Consider pre-validation." in rules


def test_the_steps_of_the_work_become_a_workflow_an_assistant_can_follow():
    def shell(form: str, ok: bool = True) -> tuple[str, bool, str]:
        return ("Bash", ok, form)

    # Each session edits, lints and tests, with reading, searching and looking around between
    # the steps, a failed test run and edits in a row: none of that is a step of the workflow.
    sessions = [
        session(f"s{n}", DAY0 + timedelta(hours=n),
                ["Read", "Edit", "Edit", shell("ls"), shell("uv run ruff check"), "Grep",
                 shell("uv run pytest", False), "Edit", shell("git log"),
                 shell("uv run pytest")])
        for n in range(5)
    ]  # fmt: skip
    observations = [o for s in sessions for o in s]
    edits = DIALECT.edit_tools  # Claude Code's tools that change files (Edit, Write, …)
    assert [step for step, _ in workflow_steps(sessions[0], edits)] == [
        "Edit", "`uv run ruff check`", "Edit", "`uv run pytest`"
    ]  # fmt: skip
    patterns, _ = find_patterns(observations, edit_tools=edits)
    workflows = {p.label: p for p in patterns if p.family == "workflow"}
    # Edit -> lint -> Edit ends on an edit: work in progress, not a workflow that checks it.
    assert set(workflows) == {"`uv run ruff check`->Edit->`uv run pytest`"}
    assert workflows["`uv run ruff check`->Edit->`uv run pytest`"].count == 5

    result = plan([], observations, DAY0 + timedelta(hours=6), LearningConfig(), edit_tools=edits)
    rules = rules_markdown(result.promoted)
    assert "Workflow: `uv run ruff check`, then Edit, then `uv run pytest` (seen 5x)" in rules
    draft = from_instinct(next(i for i in result.promoted if i.label.startswith("`uv run ruff")))
    assert draft is not None and draft.destination == "memory"
    assert "`uv run ruff check` → Edit → `uv run pytest`" in draft.text


def test_automated_sessions_are_not_learned_from():
    sessions = seed_sessions()
    everything = [o for n in range(1, 8) for o in sessions[n]]
    now = half_a_day_after(everything)
    result = plan([], everything, now, LearningConfig(), frozenset({"s4", "s5", "s6", "s7"}))
    assert result.sessions == 0 and result.instincts == []


@pytest.mark.parametrize(
    ("command", "form", "program"),
    [
        ("cd /repo && uv run pytest -q tests/ 2>&1 | tail -5", "uv run pytest", "pytest"),
        ("API_KEY=sk-secret python3 -m pytest -x", "python3 -m pytest", "pytest"),
        (".venv/bin/pytest tests/test_x.py", ".venv/bin/pytest", "pytest"),
        ("git commit -m 'my password is hunter2'", "git commit", "git"),
        ("FOO=1 npm run test -- --watch", "npm run test", "npm"),
        ("/home/alice/bin/deploy --token abc", "deploy", "deploy"),
        ("sudo -E apt-get install foo", "apt-get install", "apt-get"),
        # options before the subcommand, with their value: `git -C x stash` asked before
        # every git command (an independent review)
        ("git -C /work/app stash pop", "git stash", "git"),
        ("git --no-pager log -5", "git log", "git"),
        ("make -C app test", "make test", "make"),
        ("gh -R org/repo pr list", "gh pr", "gh"),
        # an option not known might take a value: the form stops at the program (a fifth
        # review: `npm --loglevel warn install` was "npm warn")
        ("npm --loglevel warn install", "npm", "npm"),
        ("cargo --color always build", "cargo", "cargo"),
        ("git --git-dir=.git log", "git log", "git"),
    ],
)
def test_a_command_form_keeps_how_a_program_runs_and_nothing_it_runs_on(command, form, program):
    assert command_form(command) == form
    assert form_program(form) == program


def test_settings_come_from_one_file_and_bad_values_keep_their_defaults():
    config, problems = LearningConfig.from_mapping(
        {"promote_at": 0.95, "window_days": 14, "max_active": "many", "colour": "blue"}
    )
    assert config.promote_at == 0.95 and config.window_days == 14.0
    assert config.max_active == 30  # "many" is not a number
    assert len(problems) == 2


@pytest.mark.parametrize(
    "setting",
    ["window_days: 1000000", "window_days: .inf", "half_life_days: .nan", "promote_at: 1.5",
     "max_active: 1e12", "run_every_hours: 1e9"],
)  # fmt: skip
def test_a_setting_past_what_a_date_or_a_share_holds_keeps_its_default(repo: Path, setting):
    """`window_days: 1000000` went through and `cortex learn` ended on an OverflowError's
    traceback (an independent review): such a value is reported and its default kept."""
    from click.testing import CliRunner

    from cortexmem.cli.app import cli

    (repo / ".cortex").mkdir()
    (repo / ".cortex" / "learning.yaml").write_text(setting + "\n")
    for command in (["learn", "--dry-run"], ["dream"], ["review", "propose", "--dry-run"]):
        result = CliRunner().invoke(cli, ["-C", str(repo), *command])
        assert result.exit_code == 0, (result.output, result.exception)
        assert setting.split(":")[0] in result.output + result.stderr


# ----------------------------------------------------------------- on a real store


def test_learn_writes_instincts_the_summary_and_the_generated_rules(repo: Path):
    from cortexmem.project.paths import resolve
    from cortexmem.services.context import Context
    from cortexmem.services.learn import is_due, learn, rules_path

    project = repo
    (project / ".cortex").mkdir()
    (project / ".cortex" / "learning.yaml").write_text("min_sessions: 2\nnot yaml: [\n")
    sessions = seed_sessions()
    everything = [o for n in range(1, 8) for o in sessions[n]]
    now = half_a_day_after(everything)
    with Context(resolve(project)) as ctx:
        from cortexmem.core.extraction.memories import to_memories

        ctx.writable("project").record_capture([], to_memories, None, everything)
        dry = learn(ctx, now=now, dry_run=True)
        assert [i.label for i in dry.plan.promoted] == ["Grep->Read->Edit"]
        assert dry.problems and "not valid YAML" in dry.problems[0]
        assert not rules_path(ctx.paths).exists()  # a dry run writes nothing
        assert is_due(ctx, now)

        report = learn(ctx, now=now)
        rules = rules_path(ctx.paths).read_text()
        assert "- **[95%, 30x seen]** Frequent tool chain: Grep->Read->Edit (seen 30x)" in rules
        # private like the store: listed in the clone's own info/exclude, never a change to commit
        assert "cortex-generated-rules" not in git(repo, "status", "--porcelain", "-uall")
        assert "/.claude/rules/cortex-generated-rules.md" in (
            repo / ".git" / "info" / "exclude").read_text()  # fmt: skip
        summary = (ctx.paths.data_dir / "learning" / "daily-summary.md").read_text()
        assert "1 promoted" in summary
        files = sorted(p.name for p in (ctx.paths.data_dir / "learning" / "instincts").glob("*"))
        assert "chain-grep-read-edit.md" in files
        assert not is_due(ctx, now + timedelta(hours=2))  # nothing new since
        assert report.written
        assert learn(ctx, now=now).written == []  # same content: nothing rewritten


# ----------------------------------------------------------------- history and Stop

TRANSCRIPTS = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "transcripts"


def ingest_real(tmp_path: Path, name: str = "entireio-cli"):
    """``cortex ingest`` of one real multi-session project into a new folder: (folder, what
    the ingest reported)."""
    from cortexmem.hosts.claude_code.reader import READER
    from cortexmem.services.ingest import ingest

    source = TRANSCRIPTS / name
    if not source.is_dir():
        pytest.skip(f"{source} is not here (the shared real transcripts)")
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    return project, ingest([source], reader=READER, into=project)


def test_history_gives_the_observations_once(tmp_path: Path):
    project, first = ingest_real(tmp_path)
    added = sum(t["observations_added"] for t in first.projects.values())
    _, again = ingest_real(tmp_path)
    assert added > 300  # eight real sessions' tool calls: time, tool, outcome, the two before
    assert sum(t["observations_added"] for t in again.projects.values()) == 0
    from cortexmem.project.paths import resolve
    from cortexmem.services.context import Context

    with Context(resolve(project)) as ctx:
        store = ctx.require("project")
        observations = list(store.iter_observations())
        assert len(observations) == added
        assert len({o.session_id for o in observations}) == 8
        chained = [o for o in observations if o.prev_tool and o.prev2_tool]
        assert len(chained) >= added - 2 * 8
        assert any(o.command == "mise run test" and not o.ok for o in observations)
    # months later, the window holds none of it: `cortex learn` says how to analyse it
    from click.testing import CliRunner

    from cortexmem.cli.app import cli

    said = CliRunner().invoke(cli, ["-C", str(project), "learn", "--dry-run"]).output
    assert "0 observations over 0 sessions" in said
    assert "the newest observation is of 2026-02-04" in said and "--as-of 2026-02-04T23:59" in said
    later = CliRunner().invoke(cli, ["-C", str(project), "learn", "--dry-run", "--as-of",
                                     "2026-02-04T23:59"]).output  # fmt: skip
    assert f"{added} observations over 8 sessions" in later and "newest" not in later
    before = CliRunner().invoke(cli, ["-C", str(project), "learn", "--dry-run", "--as-of",
                                      "2026-01-01"]).output  # fmt: skip
    assert "0 observations" in before and "--as-of 2026-02-04T23:59" in before


def test_a_scripted_session_is_remembered_as_automated(tmp_path: Path):
    import json

    from cortexmem.hosts.claude_code.reader import READER
    from cortexmem.project.paths import resolve
    from cortexmem.services.context import Context
    from cortexmem.services.ingest import ingest

    project = tmp_path / "proj"
    project.mkdir()
    lines = [
        {"type": "user", "sessionId": "p-1", "entrypoint": "sdk-cli", "cwd": str(project),
         "timestamp": "2026-03-01T10:00:00.000Z",
         "message": {"role": "user", "content": "summarise the repo"}},
        {"type": "assistant", "sessionId": "p-1", "timestamp": "2026-03-01T10:00:01.000Z",
         "message": {"role": "assistant", "content": [
             {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls -la"}}]}},
        {"type": "user", "sessionId": "p-1", "timestamp": "2026-03-01T10:00:02.000Z",
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": "t1", "content": "total 0"}]}},
    ]  # fmt: skip
    transcript = tmp_path / "p-1.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    ingest([transcript], reader=READER, into=project)
    with Context(resolve(project)) as ctx:
        store = ctx.require("project")
        assert store.automated_sessions() == {"p-1"}
        (call,) = store.iter_observations()
        assert (call.tool, call.ok, call.command, call.duration_ms) == ("Bash", True, "ls", 1000)


def test_the_upkeep_a_stop_hands_off_runs_the_loop_when_due(tmp_path: Path):
    from cortexmem.core.extraction.memories import to_memories
    from cortexmem.project.paths import resolve
    from cortexmem.services.context import Context
    from cortexmem.services.learn import rules_path
    from cortexmem.services.session import upkeep_steps

    sessions = seed_sessions()
    everything = [o for n in range(1, 8) for o in sessions[n]]
    shift = datetime.now(UTC) - half_a_day_after(everything)
    recent = [Observation(**{**o.to_dict(), "at": format_time(_at(o) + shift)}) for o in everything]
    project = tmp_path / "proj"
    project.mkdir()
    lines: list[str] = []
    with Context(resolve(project)) as ctx:
        ctx.writable("project").record_capture([], to_memories, None, recent)
        steps = list(upkeep_steps(ctx, "Stop (upkeep)", lines.append, [0]))
        assert steps == ["projections", "lifecycle", "learning", "consolidation"]
        assert "Frequent tool chain: Grep->Read->Edit" in rules_path(ctx.paths).read_text()
        assert any("learning: " in line and "1 rules (1 new)" in line for line in lines)
        lines.clear()
        list(upkeep_steps(ctx, "Stop (upkeep)", lines.append, [0]))  # nothing new: not due
        assert not any("learning" in line for line in lines)


def _at(o: Observation) -> datetime:
    return datetime.strptime(o.at, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def test_a_window_of_one_session_does_not_confirm_itself():
    alone = session("only", DAY0, times(GRE, 12))
    result = plan([], alone, DAY0 + timedelta(hours=1), LearningConfig())
    top = result.scored[0]
    assert top.pattern.label == "Grep->Read->Edit" and top.consistency == 0.5
    assert result.instincts == []  # 1.0 x 0.5 x ~1.0 < 50%: not even an instinct


# ----------------------------------------------------------------- lessons and skills


def test_a_substantial_real_session_gets_a_five_section_lesson(tmp_path: Path):
    from cortexmem.core.retrospective import SECTIONS, session_lesson
    from cortexmem.project.paths import resolve
    from cortexmem.services.context import Context
    from cortexmem.services.suggest import lesson_events

    project, _ = ingest_real(
        tmp_path, "claude-code-log-real_projects/-Users-dain-workspace-claude-code-log-sample"
    )
    with Context(resolve(project)) as ctx:
        store = ctx.require("project")
        observations = list(store.iter_observations())
        tokens = store.session_tokens()
        sizes = {s: sum(1 for o in observations if o.session_id == s) for s in tokens}
        big = max(sizes, key=lambda s: sizes[s])
        small = min(sizes, key=lambda s: sizes[s])
        errors = lesson_events(store, big)
        usual = [n for s, n in tokens.items() if s != big]
        draft = session_lesson(big, observations, errors, tokens[big], usual, min_calls=40)
        assert session_lesson(small, observations, [], tokens[small], usual, min_calls=40) is None
    assert len(tokens) >= 8 and all(n > 0 for n in tokens.values())
    assert draft is not None and draft.destination == "brain_inbox"
    assert [line[3:] for line in draft.text.splitlines() if line.startswith("## ")] == list(
        SECTIONS
    )
    assert f"- Actual: {tokens[big]:,} tokens, {sizes[big]} tool calls" in draft.text
    assert draft.target.startswith(".cortex/inbox/lesson-2025-07-")
    # What came back in the session, and only that: a `cd test` that stayed in effect (its
    # later relative paths failed: "no such file or directory: test", "file or directory not
    # found: test/…", ruff's E902 behind its "Found 1 error."), and two ImportErrors of names
    # `claude_code_log.parser` does not have (guessed, not read: said as such, not as one
    # message twice). Not "recurring": the red-then-green runs of the test the session was
    # writing. The edit whose text matched two places of that test, three times (once with
    # the path relative to `test/`, where the shell had moved), is.
    errors = draft.text.split("## Top 3 recurring errors")[1].split("## ")[0]
    assert "- A `cd test` stayed in effect: 5 later commands did not find a path" in errors
    assert "- Edit test/test_combined_transcript_link.py failed: Found 2 matches" in errors
    assert "set… (3x)" in errors and "— and 1 other like it (2x)" in errors  # cut at a word
    assert "uv run pytest" not in errors
    # What the person said when refusing a call is the first thing to standardise.
    patterns = draft.text.split("## Top 3 patterns to standardise")[1].split("## ")[0]
    assert patterns.splitlines()[2] == (
        "- The person refused Write test_combined_link.py and said: “I'd actually love that "
        "test to be saved a permanent unit test”"
    )
    assert "Look up what `claude_code_log.parser` defines before importing from it" in patterns
    assert "- A `cd test` in a shell command stays in effect for the next ones" in draft.text
    assert "## Tool to create\n\n- None needed." in draft.text  # no check for a guessed name

    # The service compares with the sessions a person worked in: the folder holds four
    # subagent transcripts whose sessions are not there (136 to 4,058 tokens each).
    from datetime import timedelta

    from cortexmem.core.learning import LearningConfig
    from cortexmem.model import parse_time
    from cortexmem.services.suggest import lesson_drafts

    later = parse_time(max(o.at for o in observations)) + timedelta(hours=13)
    with Context(resolve(project)) as ctx:
        drafts = {d.target: d for d in lesson_drafts(ctx, LearningConfig(), later)}
    (served,) = [d for t, d in drafts.items() if big[:8] in t]
    others = len(tokens) - 1
    assert f"(the median of {others - 4} others)" in served.text


def test_a_cd_that_stayed_in_effect_is_told_apart_from_paths_merely_mistyped():
    from cortexmem.core.retrospective import cwd_drift
    from cortexmem.model import Event

    def failed(text: str, call: str = "shell") -> Event:
        return Event(kind="error", content=text, payload={"call": call})

    cd = failed(
        "`cd test && uv run python -c …` failed: (eval):cd:1: no such file or directory: test"
    )
    grep = failed("`grep -n x claude_code_log/renderer.py` failed: grep: claude_code_log/"
                  "renderer.py: No such file or directory")  # fmt: skip
    assert cwd_drift([cd, grep]) == ("test", 2)
    assert cwd_drift([grep, grep]) is None  # a wrong path, twice: no folder was left behind
    assert cwd_drift([cd]) is None  # one failure is no drift
    assert cwd_drift([cd, failed("Edit a.py failed: no such file or directory", "edit")]) is None
    bash = failed("`cd web && npm test` failed: bash: cd: web: No such file or directory")
    assert cwd_drift([bash, grep, grep]) == ("web", 3)
    assert cwd_drift([grep, cd]) == ("test", 2)  # stored before the shell's folder was kept

    def moved(text: str, folder: str | None) -> Event:
        said = {"call": "shell", "path_missing": True} | ({"moved": folder} if folder else {})
        return Event(kind="error", content=text, payload=said)

    # The host said the shell was in test/ when `test/x.py` was not found: a drift, though
    # no `cd` failed; a failure with the shell back in the project does not count.
    lost = moved("`uv run pytest test/x.py` failed: ERROR: file or directory not found: "
                 "test/x.py", "test")  # fmt: skip
    ruff = moved("`ruff check app/a.py` failed: app/a.py:1:1: E902 No such file", "test")
    home = moved("`cat notes.md` failed: cat: notes.md: No such file or directory", None)
    assert cwd_drift([lost, ruff]) == ("test", 2)
    assert cwd_drift([lost, home]) is None
    # A deliberate `cd packages/web` and then files merely missing there is no drift.
    dist = moved("`ls dist` failed: ls: dist: No such file or directory", "packages/web")
    env = moved("`cat .env.local` failed: cat: .env.local: No such file", "packages/web")
    assert cwd_drift([dist, env]) is None


def test_refusals_are_told_with_what_the_person_said_next_once_for_calls_refused_together():
    from cortexmem.core.retrospective import corrections
    from cortexmem.model import Event, Provenance

    def said(kind: str, text: str, line: int) -> Event:
        return Event(kind=kind, content=text, provenance=Provenance("s1", line=line))

    events = [
        said("refused", "The person refused `which node`", 10),
        said("refused", "The person refused Edit /Users/alice/app/CLAUDE.md", 11),
        said("prompt", "Don't assume people's environment: find a cross-platform way", 13),
        said("refused", "The person refused Write scratch.py", 20),
        said("prompt", "I'd love that test saved as a permanent unit test", 22),
        said("refused", "The person refused `git stash`", 30),  # nothing said after it
    ]
    assert corrections(events) == [
        "The person refused `which node` and Edit /Users/[user]/app/CLAUDE.md and said: “Don't "
        "assume people's environment: find a cross-platform way”",
        "The person refused Write scratch.py and said: “I'd love that test saved as a permanent "
        "unit test”",
    ]


def test_a_tool_errors_message_is_its_first_line_not_its_input_quoted_back():
    from cortexmem.core.extraction.commands import path_missing, tool_error_line

    quoted = ("<tool_use_error>Found 2 matches of the string to replace, but replace_all is "
              "false.\nString:     assert x not in html</tool_use_error>")  # fmt: skip
    assert tool_error_line(quoted).startswith("Found 2 matches of the string to replace")
    assert path_missing("claude_code_log/renderer.py:1:1: E902 No such file or directory")
    assert not path_missing("1 failed, 3 passed in 0.2s")


def test_a_task_runners_task_failed_twice_is_not_one_failure_come_back():
    from cortexmem.core.extraction.commands import says_only_that_it_failed
    from cortexmem.core.retrospective import session_lesson
    from cortexmem.model import Event

    for line in ("[test] ERROR task failed", "make: *** [Makefile:12: test] Error 2",
                 "npm ERR! Test failed.  See above for more details.", "Exit code 1"):  # fmt: skip
        assert says_only_that_it_failed(line), line
    assert not says_only_that_it_failed("FAILED tests/test_cache.py::test_key - AssertionError")

    def failed(line: str) -> Event:
        said = {"call": "shell", "target": "mise run test", "error": line}
        return Event(kind="error", content=f"`mise run test` failed: {line}", payload=said)

    calls = session("s1", DAY0, ["Bash"] * 12)
    wrapped = [failed("[test] ERROR task failed")] * 2  # a build error, then a failing test
    assert session_lesson("s1", calls, wrapped, 0, [], min_calls=10) is None
    same = [failed("ModuleNotFoundError: No module named 'app'")] * 2
    draft = session_lesson("s1", calls, same, 0, [], min_calls=10)
    assert draft is not None and "No module named 'app'" in draft.text


def test_names_guessed_from_a_module_that_lacks_them_are_told_apart():
    from cortexmem.core.retrospective import guessed_names
    from cortexmem.model import Event

    def failed(text: str) -> Event:
        return Event(kind="error", content=text, payload={"call": "shell"})

    one = failed("ImportError: cannot import name 'parse_jsonl_file' from 'app.parser' (/x.py)")
    two = failed("ImportError: cannot import name 'load_all' from 'app.parser' (/x.py)")
    attr = failed("AttributeError: module 'app.parser' has no attribute 'read'")
    assert guessed_names([one, two, attr]) == (
        "app.parser",
        ["parse_jsonl_file", "load_all", "read"],
    )
    assert guessed_names([one, one]) is None  # the same name twice is one guess


def test_steps_repeated_across_three_sessions_become_a_skill():
    from cortexmem.core.retrospective import skill_candidates, skill_draft

    def shell(form: str) -> tuple[str, bool, str]:
        return ("Bash", True, form)

    steps = [shell("ruff check"), "Edit", shell("mypy"), shell("uv run pytest")]
    sessions = {
        f"s{n}": session(f"s{n}", DAY0 + timedelta(days=n), ["Read", "Edit", *steps])
        for n in range(3)
    }
    sessions["other"] = session("other", DAY0, [shell("uv run pytest"), shell("ruff check")])
    (found,) = skill_candidates(sessions, min_tasks=3)
    assert found.steps == ("ruff check", "mypy", "uv run pytest")
    draft = skill_draft(found)
    assert draft.target == ".claude/skills/run-uv-run-pytest/SKILL.md"
    assert draft.text.startswith("---\nname: run-uv-run-pytest\n")
    assert "1. Run `ruff check`.\n2. Run `mypy`.\n3. Run `uv run pytest`." in draft.text
    assert skill_candidates(sessions, min_tasks=4) == []
    # two steps in a row are a line of CLAUDE.md, not a skill
    pair = [shell("mise run test"), "Edit", shell("mise run fmt")]
    pairs = {f"p{n}": session(f"p{n}", DAY0, pair) for n in range(4)}
    assert skill_candidates(pairs, min_tasks=3) == []
