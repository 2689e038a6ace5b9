"""Claude Code: transcripts in, hook payloads in, hook output and settings files out."""
