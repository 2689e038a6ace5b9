"""Storage: the store contract by concern (``protocols``) and its backends (``sqlite/``)."""
