"""Issue 12, fault 8: prose keeps what people write in angle brackets (only the host's injected
tags are stripped), and the log shows control characters escaped, one line per message."""

from __future__ import annotations

from pathlib import Path

from cortexmem.core.extraction.events import ExtractionContext
from cortexmem.core.extraction.extractor import Extractor
from cortexmem.core.extraction.prose import injected, sentences
from cortexmem.core.session import Block, Entry
from cortexmem.hosts.claude_code.payload import HookInput
from cortexmem.hosts.claude_code.transcript import DIALECT
from cortexmem.project.log import log_line

PROSE = (
    "We decided to wrap each row in a <div> so the grid lays out.\n"
    "We decided to name branches fix/<ticket-id> from now on.\n"
    "We decided to send Bearer <token> in the Authorization header.\n"
    "<system-reminder>We decided to leak the reminder text.</system-reminder>\n"
    "<command-name>/clear</command-name> We decided to keep the </system-reminder> stray out."
)


def test_lower_case_words_in_angle_brackets_survive_and_host_tags_do_not():
    found = sentences(PROSE, injected(DIALECT))
    joined = "\n".join(found)
    assert "<div>" in joined
    assert "fix/<ticket-id>" in joined
    assert "Bearer <token>" in joined
    assert "reminder text" not in joined and "system-reminder" not in joined
    assert "/clear" not in joined and "command-name" not in joined


def test_extracted_decisions_keep_their_angle_brackets():
    extractor = Extractor(ExtractionContext(session_id="s", dialect=DIALECT))
    entry = Entry(line=1, role="assistant", blocks=[Block("text", PROSE)])
    contents = [e.content for e in extractor.feed(entry)]
    assert any("<div>" in c for c in contents), contents
    assert any("fix/<ticket-id>" in c for c in contents), contents
    assert any("Bearer <token>" in c for c in contents), contents
    assert not any("reminder text" in c for c in contents), contents


def test_control_characters_in_a_payload_are_escaped_in_the_log_one_line_each(tmp_path: Path):
    log = tmp_path / "cortex.log"
    hook = HookInput.parse("Stop", {"session_id": "s\x1b[2Jid\n", "cwd": str(tmp_path)})
    hook.log("Stop failed: bad path 'a\nb\r\x1b[31mred\x00\x07\u2028end\ud83d'", log)
    log_line(log, "second\nmessage\twith tab")
    lines = log.read_text(encoding="utf-8").split("\n")
    assert lines[-1] == ""  # every message ends its own line
    first, second = lines[:-1]
    assert "a\\nb\\r\\x1b[31mred\\x00\\x07\\u2028end\\ud83d" in first
    assert "[s\\x1b[2J" in first  # the session tag too
    assert second.endswith("second\\nmessage\\twith tab")
    assert not any(ord(ch) < 0x20 for ch in first + second)
