"""What can go wrong when embedding, in words a person can act on."""

from __future__ import annotations

from cortexmem.errors import CortexError


class EmbeddingError(CortexError):
    """Embedding failed."""


class ConfigError(EmbeddingError):
    """The routing file asks for something that cannot be done (and says what)."""


class ProviderError(EmbeddingError):
    """A provider refused or failed: ``status`` is the HTTP status (None: no answer at all)."""

    def __init__(self, message: str, status: int | None = None, *, retryable: bool = False):
        super().__init__(message)
        self.status = status
        self.retryable = retryable
