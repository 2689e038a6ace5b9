"""Storage: one ``Store`` protocol and its backends (SQLite by default)."""
