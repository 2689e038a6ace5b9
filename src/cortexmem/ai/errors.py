"""What can go wrong when embedding or completing, in words a person can act on.

Every message is safe to print and to log: an API key never appears in one (a provider's echo
of it is scrubbed, and the text also goes through the secret redaction).
"""

from __future__ import annotations

from cortexmem.errors import CortexError


class AIError(CortexError):
    """A call through the AI façade (``embed`` or ``complete``) failed."""


# The embedding half was written first; its callers catch this name.
EmbeddingError = AIError


class ConfigError(AIError):
    """The routing file asks for something that cannot be done (and says what), or the
    environment variable it names for a key is not set."""


class ProviderError(AIError):
    """A provider refused or failed.

    ``status``: the last HTTP status (None: no answer at all); ``retryable``: True when the
    failure is transient (429, 5xx, timeout, no connection) and only the retries ran out;
    ``provider``: ``"voyage"``, ``"openai"``, ``"anthropic"``, ``"ollama"`` or ``"claude-code"``;
    ``attempts``: requests made.
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
        # What the call cost when an answer came but could not be used (the ledger counts it).
        self.input_tokens = 0
        self.output_tokens = 0


class ProviderRejected(ProviderError):
    """A 4xx other than 429 (bad request, bad key, unknown model...): permanent, not retried."""


class ProviderUnavailable(ProviderError):
    """429, 5xx, a timeout or no connection, still failing after every retry."""


class ProviderResponseError(ProviderError):
    """A 200 whose body is not what was asked for (not JSON, wrong shape or count, an answer
    that does not match the schema): an error, never silently "nothing"."""


class NoModelConfigured(AIError):
    """``ai.yaml`` routes this use to no model (the default): the caller takes its offline
    path. Not a failure: nothing is logged as one and no budget is spent."""


class NotAllowed(AIError):
    """The guards said no before anything was sent; ``reason`` is one of ``budget`` (a call or
    token budget of the hour or the day is spent), ``circuit`` (the circuit breaker is open
    after consecutive failures), ``busy`` (another worker of this project holds the lock) and
    ``recursion`` (we are inside a session Cortex itself started); ``until`` is when it may
    pass again, when known (ISO time)."""

    def __init__(self, message: str, reason: str, until: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.until = until
