"""Secret redaction: run on every text before it is stored, embedded or sent anywhere.

Each rule matches the *shape* of a real secret value (a provider's key prefix and length, a
private-key block, a JWT's three base64url parts, the password slot of a URL, the value of a
``*_TOKEN=`` / ``"api_key":`` assignment) and replaces only the value with ``[REDACTED:kind]``,
so the surrounding text still reads. Values that merely look like the words around secrets —
placeholders, variable references, numbers, paths — are left alone: a memory that says
"MAX_TOKENS=4096" or "password=settings.DB_PASSWORD" is knowledge, not a leak.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from cortexmem.model import Event, Memory

MARK = "[REDACTED:{}]"

_PLACEHOLDER = re.compile(
    r"""^(?:
        [<\[{(].*[>\]})]                        # <token>, [key], {secret}
      | \$\{?[A-Za-z_][A-Za-z0-9_]*\}?          # $VAR, ${VAR}
      | %\(?[A-Za-z_]+\)?s?%?                   # %(password)s, %TOKEN%
      | \*+ | x{3,} | X{3,} | \.{3,} | -+       # ****, xxxx, ...
      | .*(?:REDACTED|redacted|changeme|CHANGEME|example|EXAMPLE|placeholder|PLACEHOLDER
            |dummy|DUMMY|your[_-]|YOUR[_-]|xxxx|XXXX).*
    )$""",
    re.VERBOSE,
)
_IDENTIFIER_REF = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$")


def _looks_secret(value: str) -> bool:
    """A value assigned to a secret-named key that is plausibly the secret itself."""
    if len(value) < 6 or _PLACEHOLDER.match(value):
        return False
    if value.isdigit() or value.lower() in {"true", "false", "null", "none", "nil", "required"}:
        return False
    if value.startswith(("/", "./", "../", "~/", "http://", "https://", "file:")):
        return False
    if _IDENTIFIER_REF.match(value):  # settings.DB_PASSWORD, os.environ.get
        return False
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    has_symbol = any(not c.isalnum() for c in value)
    # A plain lower-case word ("password", "secret", "hunter") is far more often prose than a
    # credential; anything with digits, symbols, mixed case or real length is treated as one.
    mixed_case = value.lower() != value and value.upper() != value
    return (has_alpha and (has_digit or has_symbol or mixed_case)) or len(value) >= 16


_SECRET_NAME = (
    r"[A-Za-z0-9_.-]*(?:secret|token|passw(?:or)?d|passwd|pwd|api[_-]?key|apikey|access[_-]?key"
    r"|private[_-]?key|client[_-]?secret|credentials?|auth[_-]?key|session[_-]?key)[A-Za-z0-9_.-]*"
)

# (kind, pattern, group holding the secret value; 0 = the whole match)
_RULES: list[tuple[str, re.Pattern[str], int]] = [
    (
        "private-key",
        re.compile(
            r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:[\s\S]*?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|[\s\S]*\Z)"
        ),
        0,
    ),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}"), 0),
    (
        "openai-key",
        re.compile(r"\bsk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}|\bsk-[A-Za-z0-9]{32,}\b"),
        0,
    ),
    (
        "github-token",
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"),
        0,
    ),
    ("gitlab-token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"), 0),
    ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), 0),
    (
        "slack-webhook",
        re.compile(
            r"https://hooks\.slack\.com/services/T[A-Za-z0-9_]+/B[A-Za-z0-9_]+/[A-Za-z0-9_]+"
        ),
        0,
    ),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b"), 0),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"), 0),
    ("stripe-key", re.compile(r"\b(?:sk|rk)_(?:live|test)_[0-9a-zA-Z]{24,}\b"), 0),
    ("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"), 0),
    ("pypi-token", re.compile(r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}"), 0),
    ("huggingface-token", re.compile(r"\bhf_[A-Za-z0-9]{34,}\b"), 0),
    ("sendgrid-key", re.compile(r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b"), 0),
    ("voyage-key", re.compile(r"\bpa-[A-Za-z0-9_-]{40,}"), 0),
    (
        "jwt",
        re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
        0,
    ),
    (
        "authorization",
        re.compile(
            r"(?i)(?:authorization|proxy-authorization)[\"']?\s*[:=]\s*[\"']?"
            r"(?:bearer|basic|token|bot)\s+([A-Za-z0-9._~+/=-]{12,})"
        ),
        1,
    ),
    (
        "url-password",
        re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@'\"]*:([^\s@/'\"]+)@"),
        1,
    ),
    (
        "cli-secret",
        re.compile(
            r"(?i)(?:--|-)(?:password|passwd|token|api-key|apikey|secret|client-secret)"
            r"(?:=|\s+)([\"']?)([^\s\"']+)\1"
        ),
        2,
    ),
    (
        "assignment",
        re.compile(
            r"(?i)([\"']?)\b" + _SECRET_NAME + r"\b\1\s*(?::=|=>|[:=])\s*"
            r"(?:[\"']([^\"'\n]{6,})[\"']|([^\s\"'`,;)(\[\]{}<>]{6,}))"
        ),
        -1,  # either quoted (group 2) or bare (group 3) value
    ),
]


def _replacer(kind: str, group: int) -> Callable[[re.Match[str]], str]:
    def replace(match: re.Match[str]) -> str:
        if group == -1:
            index = 2 if match.group(2) is not None else 3
            value = match.group(index)
            if not _looks_secret(value):
                return match.group(0)
        else:
            index = group
            value = match.group(index)
            if kind in {"url-password", "cli-secret"} and not _looks_secret(value):
                return match.group(0)
        if group == 0 or index == 0:
            return MARK.format(kind)
        start, end = match.span(index)
        base = match.start(0)
        whole = match.group(0)
        return whole[: start - base] + MARK.format(kind) + whole[end - base :]

    return replace


_COMPILED = [(rule, _replacer(rule[0], rule[2])) for rule in _RULES]


def redact(text: str) -> str:
    """``text`` with every secret-shaped value replaced by ``[REDACTED:kind]``."""
    if not text:
        return text
    for (_, pattern, _), substitute in _COMPILED:
        text = pattern.sub(substitute, text)
    return text


def redact_value(value: Any) -> Any:
    """Redact every string inside a JSON-like value (dicts, lists, strings)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redact_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(v) for v in value]
    return value


def redact_memory(memory: Memory) -> Memory:
    """The memory as it may be stored: content, summary and tags redacted."""
    content, summary = redact(memory.content), redact(memory.summary)
    tags = tuple(redact(t) for t in memory.tags)
    if (content, summary, tags) == (memory.content, memory.summary, memory.tags):
        return memory
    return memory.with_changes(content=content, summary=summary, tags=tags)


def redact_event(event: Event) -> Event:
    content, payload = redact(event.content), redact_value(event.payload)
    if content == event.content and payload == event.payload:
        return event
    return replace(event, content=content, payload=payload)
