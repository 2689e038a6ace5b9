"""Issue 12 fault 3: no secret survives, wherever it sits, and look-alikes do.

The corpus (``secret_corpus``) is generated: every kind of secret, random but valid-shaped, in
shell commands, .env lines, JSON, YAML, prose and URLs, also placed so it straddles the clip
points (300 characters for commands, 120 for plan steps). It goes through ``redact`` directly
and through the real paths end to end; every artefact is then searched byte for byte for each
secret's distinctive parts.
"""

from __future__ import annotations

from collections import Counter

from cortexmem.core.redact import redact, redact_tag
from cortexmem.core.text import clip_redacted
from secret_corpus import Secret, generated_look_alikes, secrets, straddle

CORPUS = list(secrets())


def leaks_by_kind(items: list[tuple[Secret, str]]) -> Counter[str]:
    return Counter(s.kind for s, out in items if any(p in out for p in s.parts))


def placements(secret: Secret) -> list[str]:
    text = secret.text
    return [text] + [straddle(text, secret.value, cut, k) for cut in (300, 120) for k in (1, 5, 11)]


def test_the_corpus_covers_every_kind():
    kinds = {s.kind for s in CORPUS}
    assert len(kinds) >= 24, kinds
    assert len(CORPUS) >= 300


def test_redact_leaves_no_secret_of_any_kind():
    results = [(s, redact(text)) for s in CORPUS for text in placements(s)]
    assert not leaks_by_kind(results), leaks_by_kind(results)


def test_clipping_after_redaction_keeps_no_prefix():
    results = [
        (s, clip_redacted(text, cut))
        for s in CORPUS
        for text in placements(s)
        for cut in (300, 120)
    ]
    assert not leaks_by_kind(results), leaks_by_kind(results)


def test_secrets_in_tags_are_redacted_before_lower_casing():
    results = [(s, redact_tag(s.value).lower()) for s in CORPUS if " " not in s.value]
    lowered = [(s, redact_tag(s.value.lower())) for s in CORPUS if len(s.value) >= 20]
    assert not leaks_by_kind(results), leaks_by_kind(results)
    assert not leaks_by_kind(lowered), leaks_by_kind(lowered)


def test_look_alikes_survive():
    texts = generated_look_alikes()
    destroyed = [t for t in texts if redact(t) != t]
    assert len(destroyed) <= len(texts) // 100, destroyed
