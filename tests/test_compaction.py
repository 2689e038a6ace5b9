"""A compaction summary's list of errors and fixes, one gotcha per item."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from cortexmem.core.extraction.compaction import (
    MAX_ITEM,
    MAX_ITEMS,
    MIN_ITEM,
    errors_fixed,
    items,
    sections,
)
from cortexmem.core.extraction.extractor import extract
from cortexmem.core.extraction.memories import to_memories
from cortexmem.core.session import Block, Entry

# The shape Claude Code writes when it compacts a session (trimmed from a real one).
SUMMARY = """Summary:
1. Primary Request and Intent:
   The user requested simplifying the `CheckpointSummary` structure.

2. Key Technical Concepts:
   - Go struct field removal and type changes

3. Files and Code Sections:
   - **`cmd/entire/cli/checkpoint/committed.go`**
     - Updated `writeCheckpointSummary()` to use an array:
     ```go
     summary.Sessions = make([]SessionFilePaths, len(existing.Sessions)+1)
     ```

4. Errors and fixes:
   - **gocritic `appendAssign` lint error**: `append(a.S, p)` assigned to another slice
     - Fixed by using explicit `make()` + `copy()` + direct assignment
   - **Missing strconv import** in session_test.go
     - Added `"strconv"` to import blocks
   - **Global tool not updating**: User reminded to run `uv tool install . --reinstall` after edits.
   - Fixed

5. Problem Solving:
   - Replaced the confusing S/I ratio with percentages

7. Pending Tasks:
   - None
"""


def test_a_summary_is_read_as_its_numbered_sections():
    assert [title for title, _ in sections(SUMMARY)] == [
        "Primary Request and Intent", "Key Technical Concepts", "Files and Code Sections",
        "Errors and fixes", "Problem Solving", "Pending Tasks",
    ]  # fmt: skip


def test_each_error_with_its_fix_is_one_item_and_trivia_is_left_out():
    assert errors_fixed(SUMMARY) == [
        "gocritic `appendAssign` lint error: `append(a.S, p)` assigned to another slice; "
        "fixed by using explicit `make()` + `copy()` + direct assignment",
        "Global tool not updating: User reminded to run `uv tool install . --reinstall` after "
        "edits.",
    ]
    # "Problem Solving" says what was worked out, not what broke
    assert not [i for i in errors_fixed(SUMMARY) if "S/I ratio" in i]


def test_fallout_in_tests_lint_rules_by_code_and_fixes_already_kept_are_left_out():
    summary = """4. Errors and fixes:
   - **Test failures checking removed fields** (SessionCount on CheckpointSummary)
     - Updated tests to derive these from session-level metadata
   - **Multi-session test failure** in TestWriteCommitted_MultiSession
     - Updated expectation: Agent now comes from latest session
   - **Ruff F811**: Duplicate `visit_Call` method definition. Fixed by merging both into one.
   - **gocritic `appendAssign`**: `append(existingSummary.Sessions, sessionFilePaths)`, new slice
   - **TodoItem model mismatch**: Model expected `id` and `priority`. Fixed by updating the model.
"""
    kept = ("`mise run lint` failed: The lint error is because append(existingSummary.Sessions, "
            "sessionFilePaths) is appending to existingSummary.Sessions. Fixed by changes to "
            "committed.go")  # fmt: skip
    assert errors_fixed(summary, [kept]) == [
        "TodoItem model mismatch: Model expected `id` and `priority`. Fixed by updating the model."
    ]
    # without what the session keeps, the lint error is an item of its own
    assert len(errors_fixed(summary)) == 2


def test_an_item_keeps_its_wrapped_lines_and_drops_code_fences():
    body = "- **Build broke**: the linker\n  could not find libfoo\n  ```\n  ld\n  ```\n- A second"
    assert items(body) == [
        "Build broke: the linker; could not find libfoo",
        "A second",
    ]


def test_a_summary_without_an_errors_section_gives_none():
    assert errors_fixed("1. Primary Request and Intent:\n   - build the thing\n") == []
    assert errors_fixed("Just prose, no sections. Errors and fixes: none.") == []


def test_a_compacted_session_keeps_its_fixed_errors_as_gotchas():
    entry = Entry(line=7, role="user", blocks=[Block("text", SUMMARY)], is_compact_summary=True,
                  session_id="s1", timestamp="2026-01-10T10:00:00Z")  # fmt: skip
    events = extract([entry])
    assert [e.kind for e in events] == ["compact_summary", "gotcha", "gotcha"]
    gotchas = [m for m in to_memories(events) if m.memory_type == "gotcha"]
    assert [m.content[:40] for m in gotchas] == [
        "gocritic `appendAssign` lint error: `app", "Global tool not updating: User reminded ",
    ]  # fmt: skip
    assert all(e.provenance.line == 7 for e in events)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("12. -*•\n \tErorsandfix:`*#AbZ"), max_size=400))
def test_any_text_reads_without_error_and_gives_bounded_items(text: str):
    found = errors_fixed(text)
    assert len(found) <= MAX_ITEMS
    assert all(MIN_ITEM <= len(item) <= MAX_ITEM for item in found)


def test_numbered_items_fenced_code_and_none_lines_read_as_what_they_are():
    numbered = (
        "4. Errors and fixes:\n   1. Import error after moving the package\n"
        "      - Fixed by updating the import path in cli.py\n"
        "   2. Tests timed out on the CI runners\n      - Fixed by raising the timeout to 60 s\n"
    )
    assert errors_fixed(numbered) == [
        "Import error after moving the package; fixed by updating the import path in cli.py",
        "Tests timed out on the CI runners; fixed by raising the timeout to 60 s",
    ]
    fenced = (
        "4. Errors and fixes:\n   - Loader crashed on empty files. Fixed in loader.py:\n"
        "     ```yaml\n     - name: not an item of the list\n     ```\n"
    )
    assert errors_fixed(fenced) == ["Loader crashed on empty files. Fixed in loader.py"]
    none = "4. Errors and fixes:\n   - No errors were encountered during this session.\n"
    assert errors_fixed(none) == []
    assert errors_fixed("4) **Errors and fixes**:\n   - The cache key ignored the tenant id\n")


def test_real_errors_with_codes_or_tests_in_them_are_kept():
    summary = (
        "4. Errors and fixes:\n"
        "   - TS2307: Cannot find module '@/lib/db'; the tsconfig paths alias was missing\n"
        "   - Race condition in the cache warmer; fixed with a lock and updated the tests\n"
        "   - Integration tests failed because the middleware expects a Bearer token\n"
        "   - **flake8 E501**: line too long in cli.py, wrapped\n"
    )
    assert len(errors_fixed(summary)) == 3  # the lint rule fixed in place is the one left out
    # two common names are not enough to say a known fix tells the same thing
    known = ["The test expects `user_id` but the fixture sets `session_id`"]
    item = (
        "4. Errors and fixes:\n   - Migration dropped the user_id index; session_id reads failed\n"
    )
    assert errors_fixed(item, known) == errors_fixed(item)


def test_a_long_item_is_cut_and_the_list_bounded():
    long_item = "4. Errors and fixes:\n" + "".join(
        f"   - The importer {n} failed on a file of {'x' * 700}\n" for n in range(20)
    )
    found = errors_fixed(long_item)
    assert len(found) == MAX_ITEMS
    assert all(len(item) == MAX_ITEM and item.endswith("…") for item in found)
