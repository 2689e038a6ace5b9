"""What is stripped from text before it leaves the machine for a model, and again from what a
model answers before it is stored. Pure.

``redact`` (``core.redact``) takes the secrets; this takes the personal data a session is full
of — e-mail addresses, phone numbers, the user's name in home-folder paths — and, unless the
user's routing says ``send_code: true``, the bodies of fenced code blocks. ``for_model``
applies all of it in the one right order (secrets first, so a secret inside an address is never
half-kept).
"""

from __future__ import annotations

import re
from typing import Final

from cortexmem.core.redact import redact

EMAIL: Final = re.compile(
    r"(?<![\w.+-])([A-Za-z0-9][A-Za-z0-9._%+-]*)@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})\b"
)
# Hosting addresses like git@github.com:org/repo are not a person's.
SERVICE_USERS: Final = frozenset({"git", "noreply", "no-reply", "hg", "svn"})
PHONE: Final = re.compile(
    r"(?<![\w+])(?:"
    r"\+\d{1,3}[ .-]?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]\d{2,4}){1,4}"  # +33 6 12 34 56 78
    r"|\(\d{3}\)[ .-]?\d{3}[ .-]\d{4}"  # (555) 123-4567
    r"|\d{3}-\d{3}-\d{4}"  # 555-123-4567
    r")(?![\w-])"
)
HOME: Final = re.compile(r"(?P<head>/home/|/Users/|[A-Za-z]:\\Users\\)(?P<user>[^/\\\s\"'`:]+)")
NOT_A_USER: Final = frozenset({"[user]", "runner", "shared", "public", "default", "ubuntu"})
FENCE: Final = re.compile(
    r"(^|\n)([ \t]*)(```|~~~)([^\n]*)\n(.*?)(\n[ \t]*\3[ \t]*(?=\n|$)|$)", re.S
)


def strip_personal(text: str) -> str:
    """``text`` without e-mail addresses, phone numbers and user names in home paths."""
    if not text:
        return text

    def email(m: re.Match[str]) -> str:
        return m[0] if m[1].lower() in SERVICE_USERS else "[email]"

    def home(m: re.Match[str]) -> str:
        return m[0] if m["user"].lower() in NOT_A_USER else f"{m['head']}[user]"

    text = EMAIL.sub(email, text)
    text = PHONE.sub("[phone]", text)
    return HOME.sub(home, text)


def strip_code(text: str) -> str:
    """``text`` with the body of every fenced code block replaced by a one-line note (its
    language and size stay: a model can still read that code was written there)."""

    def note(m: re.Match[str]) -> str:
        lines = m[5].count("\n") + 1 if m[5] else 0
        language = m[4].strip()
        what = f"{language} code" if language else "code"
        return f"{m[1]}{m[2]}[{what}: {lines} lines not sent]"

    return FENCE.sub(note, text)


def for_model(text: str, *, send_code: bool = False) -> str:
    """What may be sent to a model: secrets redacted, personal data stripped, and code bodies
    left out unless ``send_code``."""
    text = strip_personal(redact(text))
    return text if send_code else strip_code(text)
