"""What can go wrong when embedding, in words a person can act on.

Every message is safe to print and to log: an API key never appears in one (a provider's echo
of it is scrubbed, and the text also goes through the secret redaction).
"""

from __future__ import annotations

from cortexmem.errors import CortexError


class EmbeddingError(CortexError):
    """Embedding failed."""


class ConfigError(EmbeddingError):
    """The routing file asks for something that cannot be done (and says what), or the
    environment variable it names for a key is not set."""


class ProviderError(EmbeddingError):
    """A provider refused or failed.

    ``status``: the last HTTP status (None: no answer at all); ``retryable``: True when the
    failure is transient (429, 5xx, timeout, no connection) and only the retries ran out;
    ``provider``: ``"voyage"`` or ``"openai"``; ``attempts``: requests made.
    """

    def __init__(
        self,
        message: str,
        status: int | None = None,
        *,
        retryable: bool = False,
        provider: str | None = None,
        attempts: int = 1,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.provider = provider
        self.attempts = attempts


class ProviderRejected(ProviderError):
    """A 4xx other than 429 (bad request, bad key, unknown model...): permanent, not retried."""


class ProviderUnavailable(ProviderError):
    """429, 5xx, a timeout or no connection, still failing after every retry."""


class ProviderResponseError(ProviderError):
    """A 200 whose body is not the embeddings asked for (not JSON, wrong shape or count)."""
