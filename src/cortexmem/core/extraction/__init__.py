"""Extraction: session entries → events → memories, in three layers and without an LLM.

* ``Extractor`` / ``extract``: entries in, ``Event`` records out (structural, keyword,
  self-report layers);
* ``to_memories``: the events worth remembering as typed ``Memory`` records;
* ``entries_from_summary``: structured input (a subagent's work summary) as entries.

Everything here is pure: no files, no store, no clock beyond an event's default time.
"""

from cortexmem.core.extraction.events import EVENT_KINDS, ExtractionContext
from cortexmem.core.extraction.extractor import Extractor, extract
from cortexmem.core.extraction.memories import to_memories, to_memory, worth_remembering
from cortexmem.core.extraction.summaries import entries_from_summary

__all__ = [
    "EVENT_KINDS",
    "ExtractionContext",
    "Extractor",
    "entries_from_summary",
    "extract",
    "to_memories",
    "to_memory",
    "worth_remembering",
]
