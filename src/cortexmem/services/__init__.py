"""Orchestration: the pure core plus the stores. The CLI, hooks and MCP server call these."""
