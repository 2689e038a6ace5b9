"""Extraction: session entries → events → memories, in three layers and without an LLM.

* ``Extractor`` / ``extract``: entries in, ``Event`` records out (structural, keyword,
  self-report layers);
* ``to_memories``: the events worth remembering as typed ``Memory`` records;
* ``entries_from_summary``: structured input (a subagent's work summary) as entries.

Everything here is pure: no files, no store, no clock beyond an event's default time.
"""
