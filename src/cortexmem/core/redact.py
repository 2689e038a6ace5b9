"""Secret redaction: run on every text before it is clipped, tagged, hashed, stored, embedded or
sent anywhere.

Two rule sets, both matching the *shape* of a real secret value and replacing only the value
with ``[REDACTED:kind]`` so the surrounding text still reads:

* Cortex's own rules (below): the common providers' keys, private-key blocks, JWTs, passwords
  in URLs, connection strings, ``.netrc``, ``mysql -pPASS``, ``docker login -p``,
  ``Authorization:`` headers, and an assignment rule for ANY secret-looking name (``*_KEY``,
  ``*_SECRET``, ``*_TOKEN``, ``*PASSWORD*``, ``*_PASS``, ``*_PWD``, credentials ...) whose value
  passes a shape and entropy check.
* gitleaks' default rule set (about 200 kinds), converted to Python regexes as data in
  ``secret_rules.json`` by ``scripts/gen_secret_rules.py``. Each rule runs only when one of its
  keywords is in the text, and is compiled the first time that happens, so importing this
  module and redacting ordinary text costs almost nothing.

Values that merely look like the words around secrets (placeholders, variable references,
numbers, paths, names such as ``SECRET_NAME = 'db-password'``) are left alone: a memory that
says "MAX_TOKENS=4096" or "password=settings.DB_PASSWORD" is knowledge, not a leak. Where
nothing but a password can stand and prose puts no word (``user:…@host``, ``mysql -p…``,
``IDENTIFIED BY '…'``), a plain word is taken for one too.
"""

from __future__ import annotations

import functools
import json
import math
import re
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cache, lru_cache
from itertools import pairwise
from pathlib import Path
from typing import Any, Final

from cortexmem.model import Episode, Event, Memory, Observation

MARK = "[REDACTED:{}]"
RULES_FILE = Path(__file__).with_name("secret_rules.json")

_PLACEHOLDER = re.compile(
    r"""^(?:
        [<\[{(].*[>\]})]                        # <token>, [key], {secret}
      | \$\{?[A-Za-z_][A-Za-z0-9_]*\}?          # $VAR, ${VAR}
      | %\(?[A-Za-z_]+\)?s?%?                   # %(password)s, %TOKEN%
      | \{\{.*\}\}                              # {{ secrets.X }}
      | \*+ | x{3,} | X{3,} | \.{3,} | -+       # ****, xxxx, ...
      | .*(?:REDACTED|redacted|changeme|CHANGEME|example|EXAMPLE|placeholder|PLACEHOLDER
            |dummy|DUMMY|your[_-]|YOUR[_-]|xxxx|XXXX|\.\.\.|…).*
    )$""",
    re.VERBOSE,
)
# settings.DB_PASSWORD, os.environ.get, os.environ["X"], process.env.TOKEN, getenv("X")
_REFERENCE = re.compile(
    r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+(?:\(.*\)|\[.*\])?$"
    r"|^[A-Za-z_][A-Za-z0-9_.]*\s*[(\[].*[)\]]$"
)
_WORDY = re.compile(r"^[A-Za-z]+(?:['’][A-Za-z]+)?(?:[-_. ][A-Za-z]+(?:['’][A-Za-z]+)?)*$")
_NOT_A_SECRET_NAME = re.compile(
    r"(?i)(?:^|[_.-])(?:name|names|id|ids|file|path|dir|url|uri|env|var|type|len|length|size|count"
    r"|header|field|prefix|suffix|ttl|timeout|expiry|expires|endpoint|max|min|limit|mode|version"
    r"|format|hash|enabled|required|policy|rotation|kind|label|ref|arn|param|column|table)$"
    r"|^(?:max|min|num|n)[_.-]"
)


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    if not value:
        return 0.0
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


def _case_changes(value: str) -> int:
    return sum(1 for a, b in pairwise(value) if a.islower() and b.isupper())


def _wordy(value: str) -> bool:
    """Words people write (``db-password``, ``SomeClassName``), few changes of case."""
    return bool(_WORDY.match(value)) and _case_changes(value) * 8 <= len(value)


_ELLIPSIS_END = re.compile(r"(?:\.{3,}|…)$")


def _placeholder(value: str) -> bool:
    """``<token>``, ``${VAR}``, ``changeme``, ``…``: a stand-in, not a value. A value cut short
    (``Zk3QxP9vLm2RtY8wQe7...``, as a log or a listing clips it) is judged on what is left: its
    first 19 characters are still most of a key."""
    return bool(_PLACEHOLDER.match(_ELLIPSIS_END.sub("", value) or value))


# A Go test file's path or a test's ("PASS: tests/unit/auth.test.js"): a path, not a password.
_RELATIVE_FILE = re.compile(r"[\w.-]+(?:/[\w.-]+)+\.[A-Za-z]{1,5}")
# A call whose arguments are names or quoted names (``getpass()``, ``get_password(user)``,
# ``os.environ["DB"]``): code. ``Summer(2024)`` under a password's name is not.
# a name, a quoted name, a keyword given a name, a name indexed (``auth[0]``)
_ARGUMENT = r"(?:[A-Za-z_]\w*=)?(?:[A-Za-z_][\w.]*(?:\[[\w\"':-]{0,40}\])?|\"[^\"]*\"|'[^']*')"
_INDEX = r"(?:[A-Za-z_][\w.]*|\"[^\"]*\"|'[^']*'|-?\d+|-?\d*:-?\d*)"
_NAMED_ARGUMENTS = re.compile(
    rf"[^(\[]*(?:\(\s*(?:{_ARGUMENT}(?:\s*,\s*{_ARGUMENT})*)?\s*\)"
    rf"|\[\s*{_INDEX}(?:\s*,\s*{_INDEX})*\s*\])"
)
# ``os.path.dirname(os.path.abspath(__file__))``, ``get_auth_from_url(proxies[scheme])``,
# ``Dict[str, AuthInfo]``: a call of a dotted or snake_case name, a type with its parameters:
# code, under any name
_CODE_CALL = re.compile(
    r"(?:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|_?[a-z]+(?:_[a-z]+)+)\([\w.,\s()\[\]\"'=]*"
)
_GENERIC_TYPE = re.compile(
    r"(?:[A-Z]\w*|dict|list|set|tuple|type|map)\[\[?[A-Za-z_][\w.]*(?:,|\]|\[)?"
)


def _looks_secret(value: str, *, password: bool = False) -> bool:
    """A value assigned to a secret-named key that is plausibly the secret itself.

    ``password``: the name says password (people's passwords are shorter and less random
    than keys), so any value that is not a plain word, reference or placeholder counts."""
    value = value.strip()
    if _placeholder(value):
        return False
    value = _ELLIPSIS_END.sub("", value)
    if len(value) < (6 if password else 8):
        return False
    low = value.lower()
    if value.isdigit() or low in {"true", "false", "null", "none", "nil", "required", "optional"}:
        return False
    if value.startswith(("/", "./", "../", "~/", "http://", "https://", "file:", "$", "%")):
        return False
    if _REFERENCE.match(value) and _a_name(value):
        called = "(" in value or "[" in value
        if not password or not called or _NAMED_ARGUMENTS.match(value):
            return False
    if (_CODE_CALL.fullmatch(value) or _GENERIC_TYPE.fullmatch(value)) and _a_word(
        _OPENING.split(value, 1)[0]
    ):
        return False
    if _RELATIVE_FILE.fullmatch(value):
        return False
    # db-password, my_secret_name, SomeClassName: a name, not a credential, unless it is one
    # long run of letters with the randomness of a key
    wordy = _wordy(value)
    if wordy and (len(value) < 20 or entropy(value) < 4.0):
        return False
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    has_symbol = any(not c.isalnum() for c in value)
    if password:
        return has_alpha or has_symbol
    if re.fullmatch(r"[0-9.:_-]+", value):  # versions, times, numbers
        return False
    return has_alpha and (has_digit or has_symbol or len(value) >= 16) and entropy(value) >= 2.5


_SECRET_WORDS = (
    "secret|token|passw(?:or)?d|passwd|passphrase|pwd|pass|key|apikey|credentials?|creds"
    "|auth|signature|salt|cookie|session"
)
# ``DB_PASS_PROD``, ``STRIPE_KEY_LIVE``, ``ENCRYPTION_KEY_1``: an environment or a number after
# the secret word is still its name
_NAME_SUFFIX = (
    r"(?:[_.-](?:prod|production|dev|development|live|test|staging|stage|local|old|new|backup"
    r"|primary|secondary|v?\d+))*"
)
_NAME_IS_SECRET = re.compile(
    rf"(?i)(?:^|[_.-]|(?-i:(?<=[a-z])(?=[A-Z])))(?:{_SECRET_WORDS})s?{_NAME_SUFFIX}$"
)
_NAME_HAS_SECRET = re.compile(
    r"(?i)password|passwd|secret|token(?!i[sz])|api[_.-]?key|private[_.-]?key"
)
_NAME_IS_PASSWORD = re.compile(r"(?i)pass|pwd")


@functools.lru_cache(maxsize=4096)
def _secret_name(name: str) -> bool:
    """ENCRYPTION_KEY, db_password, apiToken, "client_secret": yes; SECRET_NAME, MAX_TOKENS,
    key_id, monkey: no."""
    name = name.strip("\"'-")
    if _NOT_A_SECRET_NAME.search(name):
        return False
    return bool(_NAME_IS_SECRET.search(name) or _NAME_HAS_SECRET.search(name))


# The context gitleaks' rules match before a name (``[\w.-]{0,50}?cohere``), twice over in
# some: searched for at every position, two lazy 50-character runs cost seconds a megabyte (8 ms
# for one 8 kB document). Where only a group is the secret, the context changes nothing: a
# match it would start earlier starts at the name instead, with the same group.
_LEAD = re.compile(r"^(\(\?i\)|)(?:\[\\w\.-\]\{0,50\}\?)+|(?<=\(\?i:)\[\\w\.-\]\{0,50\}\?")


@dataclass
class Rule:
    """One kind of secret. ``group``: the capture group holding the value (0 = whole match,
    -1 = the first group that matched, -2 = the group named ``value``). ``check``: extra test
    of the value. ``prefilter``: a cheaper test of the lower-cased text that every text
    ``regex`` matches in passes; a text that fails it is left alone without running
    ``regex``."""

    kind: str
    regex: str
    group: int = 0
    keywords: tuple[str, ...] = ()
    min_entropy: float = 0.0
    allow: tuple[str, ...] = ()
    stopwords: tuple[str, ...] = ()
    check: Callable[[str, re.Match[str]], bool] | None = None
    flags: int = 0
    prefilter: Callable[[str], bool] | None = None
    _compiled: re.Pattern[str] | None = field(default=None, repr=False)
    _allow: list[re.Pattern[str]] | None = field(default=None, repr=False)

    def pattern(self) -> re.Pattern[str]:
        if self._compiled is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)
                regex = self.regex if self.group == 0 else _LEAD.sub(r"\1", self.regex)
                self._compiled = re.compile(regex, self.flags)
                self._allow = [re.compile(a) for a in self.allow]
        return self._compiled

    def keep(self, value: str, match: re.Match[str]) -> bool:
        """True when this value is not a secret after all."""
        if not value or "REDACTED:" in value:
            return True
        if self.min_entropy and entropy(value) < self.min_entropy:
            return True
        if self._allow and any(a.search(value) for a in self._allow):
            return True
        if self.stopwords:
            low = value.lower()
            if any(w in low for w in self.stopwords):
                return True
        if self.check is not None:
            return not self.check(value, match)
        return False

    def sub(self, text: str, lower: str | None = None) -> str:
        """``text`` with this rule's secrets redacted; ``lower``: the text lower-cased (and
        folded as ``_redact`` does), for the prefilter."""
        if self.prefilter is not None and not self.prefilter(lower or _folded(text)):
            return text
        return self.pattern().sub(self._replace, text)

    def _replace(self, match: re.Match[str], nested: bool = True) -> str:
        groups = match.re.groupindex
        index = self.group
        if "v1" in groups:  # the assignment rule: the value, quoted one way or bare
            index = next(groups[v] for v in _VALUES if match.group(v) is not None)
        elif index == -2:
            index = groups["value"]
        elif index == -1:
            index = next((i for i in range(1, match.re.groups + 1) if match.group(i)), 0)
        elif index > match.re.groups or match.group(index) is None:
            index = 0
        value = match.group(index)
        whole, base = match.group(0), match.start(0)
        start, end = match.span(index)
        if self.keep(value, match) or (index and _placeholder(value)):
            if "v1" not in groups or not nested or len(value) < 8 or match.group("v2"):
                return whole
            # a quoted value that is not a secret may hold one: a JSON document in a string
            # ("SecretString": "{\"password\":\"…\"}") is read for assignments of its own,
            # once (not what that reading keeps in turn)
            inner = self.pattern().sub(functools.partial(self._replace, nested=False), value)
            return whole if inner == value else whole[: start - base] + inner + whole[end - base :]
        return whole[: start - base] + MARK.format(self.kind) + whole[end - base :]


_VALUES = ("v1", "v3", "v4", "v5", "v2")
_PROSE_WORD = re.compile(r"(?<!\S)[A-Za-z]{2,}[,.;:]?(?!\S)")


def _named_value_check(name: str, value: str) -> bool:
    """A value given apart from its secret name (a YAML block, ``Setenv(name, value)``)."""
    return _secret_name(name) and _looks_secret(
        value, password=bool(_NAME_IS_PASSWORD.search(name))
    )


def _named_value_of(value: str, match: re.Match[str]) -> bool:
    """The value of a rule that matched the secret's name too (its group ``name``)."""
    return _named_value_check(match.group("name"), value)


def _password_check(value: str, match: re.Match[str]) -> bool:
    return _looks_secret(value, password=True)


# What documents put where a password goes (``mysql -ppassword``, ``user:pass@host``).
_PASSWORD_STAND_INS: Final = frozenset(
    {"password", "passwd", "pass", "pw", "pwd", "secret", "pass123", "password123", "mypassword",
     "mypass", "yourpassword", "true", "false", "null", "none", "nil"}
)  # fmt: skip
_PLAIN_VALUE: Final = re.compile(r"[\w.!#*+=@^~-]{1,200}")


def _given_password_check(value: str, match: re.Match[str]) -> bool:
    """A value where nothing but a password can stand, and prose does not put a word:
    ``user:…@host`` in a URL, ``mysql -p…`` (no space), ``IDENTIFIED BY '…'``. A plain word
    or a number is one there (``-prootpass``, ``app:apppass@db``), though the same word
    assigned in code may be a type or a name (``password: str``), and after a flag and a
    space a word of the text (``sshpass -p is unsafe``, ``--password TEXT`` in a help
    screen, ``docker run -u 1000:1000``). Stand-ins, variables and paths are not."""
    if _looks_secret(value, password=True):
        return True
    value = value.strip()
    if _placeholder(value) or value.lower() in _PASSWORD_STAND_INS:
        return False
    return not value.startswith(("$", "%", ".")) and bool(_PLAIN_VALUE.fullmatch(value))


# user/password (the password maybe quoted, the whole maybe in escaped quotes) before @ or the
# end of the word: how Oracle's tools take a login.
_ORACLE_LOGIN: Final = (
    r"\\?[\"']?[A-Za-z][\w$#]{0,127}/"
    r"(?:\"([^\"\n]{1,200})\"|([^\s@/\"'()\\]{1,200}))(?=@|\\?[\"']?(?:\s|$))"
)


def _oracle_password_check(value: str, match: re.Match[str]) -> bool:
    """Not a SQL*Plus substitution variable (``&&password_system``): a name, not a value."""
    return not value.startswith("&") and _looks_secret(value, password=True)


# The words a name must hold for the assignment rule (its keywords and its pattern's).
_ASSIGNED_WORDS = ("secret", "token", "pass", "pwd", "key", "cred", "auth", "salt", "signature",
                   "cookie", "session")  # fmt: skip
_NAME_THEN_OPERATOR = re.compile(r"[a-z0-9_.-]{0,80}\\{0,3}[\"']?[ \t]*(?::=|=>|\?=|[:=])")


def _secret_name_assigned(lower: str) -> bool:
    """Whether a secret-named word of ``lower`` is followed by the rest of a name and an
    assignment operator: what the assignment rule needs. Its look-ahead at every word start
    costs several times this walk from each secret word, and most texts of a session that
    hold the words ("key", "session") assign none of them."""
    for word in _ASSIGNED_WORDS:
        at = lower.find(word)
        while at != -1:
            if _NAME_THEN_OPERATOR.match(lower, at + len(word)):
                return True
            at = lower.find(word, at + 1)
    return False


# Go's test report: "--- PASS: TestResetCmd (0.05s)" names a test, not a password (740 such
# lines in the shared sessions lost their test's name): "--- ", a test's name, its duration.
_GO_TEST_PASSED = re.compile(r"--- ")
_GO_TEST = re.compile(r"(?:Test|Example|Benchmark|Fuzz)[A-Z0-9_]\S*|(?:Test|Example)")
_GO_DURATION = re.compile(r" \(\d+(?:\.\d+)?s\)")
_CALL = re.compile(r"([A-Za-z_][\w.]*)\(")
_HEX = re.compile(r"[0-9a-f]+")
_ADDRESS_OF = re.compile(r"&[A-Za-z_][\w.]*")
_OPENING = re.compile(r"[(\[]")
_RAW_PREFIX = re.compile(r"(?<!\w)[bB]?[rR][bB]?$")
_ONLY_SESSION = re.compile(r"(?i)[\w.-]*?sessions?(?:[_.-]?(?:id|ids|name))?")
_SESSION_LIKE = re.compile(r"\d{4}-\d{2}-\d{2}(?:-[A-Za-z0-9]{1,40})?")
# How Claude Code names a session (its transcript's file name): under "sessions", a list of
# them is ids (a lesson's); under "session" a UUID may be a session cookie, and stays a secret.
_UUID = re.compile(r"(?i)[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}")
# setup-uv-1-x86_64-unknown-linux-gnu-f6c65b…: lower-case words and numbers, a hash at the end
_CACHE_KEY = re.compile(r"[a-z][a-z0-9_.]*(?:-[a-z0-9_.]+){2,}-[0-9a-f]{8,}")
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")


def _a_name(reference: str) -> bool:
    """``settings.DB_PASSWORD``, ``getpass()``, ``os.environ["X"]``: what a reference starts with
    is a dotted name or a word, not a key's random letters followed by a note in parentheses
    (``Zk3QxP9vLm2RtY8w (rotated 2024-05)``)."""
    head = reference.split("(", 1)[0].split("[", 1)[0].strip()
    if "." in head:  # settings.DB_PASSWORD, not sk.eyJ1Ijoi… or Hello.World99
        return all(_a_word(part.rstrip("0123456789") or "x") for part in head.split(".")[1:])
    return _a_word(head)


def _a_word(identifier: str) -> bool:
    """``load_sessions``, ``flatten``, ``loadSessions``: a name people write, not a key's
    random letters (few changes of case)."""
    return _wordy(identifier.rsplit(".", 1)[-1].strip("_"))


def _a_session_ref(value: str) -> bool:
    """A date-led session id (``2025-12-10-xyz789``) or a ref made of words
    (``entire/sessions:entire/sessions``)."""
    if _SESSION_LIKE.fullmatch(value):
        return True
    refs = [part for part in value.split("/") if part]
    return len(refs) > 1 and all(_wordy(part.split(":")[-1]) for part in refs)


def _a_cache_key(value: str) -> bool:
    """Lower-case words and numbers joined by dashes, a hash at the end, two of the words real
    ones (``setup-uv-1-x86_64-unknown-linux-gnu-f6c65b…``; not a UUID)."""
    if not _CACHE_KEY.fullmatch(value):
        return False
    words = [p for p in value.split("-") if len(p) >= 3 and p.isalpha() and not _HEX.fullmatch(p)]
    return len(words) >= 2


def _assignment_check(value: str, match: re.Match[str]) -> bool:
    name = match.group("name")
    if not _secret_name(name):
        return False
    password = bool(_NAME_IS_PASSWORD.search(name))
    if not password and _ADDRESS_OF.fullmatch(value):  # Go's ``x := &pkg.Type{``
        return False
    if value.lower() == name.lower().rsplit(".", 1)[-1]:  # AWS_SIGNATURE_V2 = 'AWS_SIGNATURE_V2'
        return False
    quoted = next((v for v in ("v1", "v3") if match.group(v) is not None), None)
    if not password and quoted:
        opening = match.start(quoted) - 1  # the quote
        if _RAW_PREFIX.search(match.string, max(0, opening - 3), opening):  # r"…": a regex
            return False
        # "Don't embed data in the PKCS7 structure": words, none of them a key's random run
        tokens = value.split()
        if len(_PROSE_WORD.findall(value)) >= 4 and all(
            len(t) <= 6 or _PROSE_WORD.fullmatch(t) for t in tokens
        ):
            return False
    if _ONLY_SESSION.fullmatch(name) and (
        _a_session_ref(value) or (name.lower().endswith("sessions") and _UUID.fullmatch(value))
    ):
        return False  # a session's id, date or ref ("Session: 2025-12-10-xyz789")
    if name.lower() == "pass" and match.group("v4") and " " in value.strip():
        return False  # what passed ("All tests pass: `mise run test:ci`"), not a password
    if name.lower() == "key" and _a_cache_key(value):
        return False  # a cache key: words joined by dashes, then a hash ("setup-uv-1-…-f6c6")
    if not password:
        # Code, not a literal: a function called (``sessions = _load_sessions(…)``), a
        # signature described (``Signature: `flatten(nested: list) -> list```).
        # A type annotated (``sessions: Dict[str, Cache]``) likewise.
        head = _OPENING.split(value, 1)[0]
        called = head != value or match.string[match.end() : match.end() + 1] in ("(", "[")
        if match.group("v2") and called and (_a_word(head) or _DOTTED.fullmatch(head)):
            return False
        call = _CALL.search(value)
        if call and " " in value and ")" in value[call.end() :] and _a_word(call.group(1)):
            return False
    if (
        name == "PASS"
        and _GO_TEST_PASSED.fullmatch(match.string, max(0, match.start() - 4), match.start())
        and _GO_TEST.fullmatch(value)
        and _GO_DURATION.match(match.string, match.end())
    ):
        return False
    return _looks_secret(value, password=password)


_B64 = "A-Za-z0-9+/="
_END = r"(?![A-Za-z0-9_-])"  # a key may end in - or _ (so no trailing \b)

# Cortex's own rules, most specific first.
OWN_RULES: list[Rule] = [
    Rule(
        "private-key",
        r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
        # cut short (no END): the base64 lines after it, not the rest of the text (a
        # docstring naming the header)
        r"(?:[\s\S]*?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
        r"|(?:[ \t]*\r?\n(?:[A-Za-z0-9+/=:, -]{0,80}\r?\n)?[\w+/=-]{16,})"
        r"(?:\r?\n[\w+/=-]{16,200})*+)",
    ),
    Rule("anthropic-key", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
    Rule(
        "openai-key",
        r"\bsk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}|\bsk-[A-Za-z0-9]{32,}" + _END,
    ),
    Rule("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"),
    Rule("gitlab-token", r"\bgl(?:pat|dt|rt|ptt|cbt|soat|ft|imt|agent)-[A-Za-z0-9_-]{20,}"),
    Rule("slack-token", r"\bxox[abposre]-[A-Za-z0-9-]{10,}"),
    Rule("slack-webhook", r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9_/]+"),
    Rule("aws-access-key", r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}" + _END),
    Rule("google-api-key", r"\bAIza[0-9A-Za-z_-]{35}" + _END),
    Rule("stripe-key", r"\b(?:sk|rk)_(?:live|test|prod)_[0-9a-zA-Z]{20,}" + _END),
    Rule("npm-token", r"\bnpm_[A-Za-z0-9]{36}" + _END),
    Rule("pypi-token", r"\bpypi-AgE[A-Za-z0-9_-]{50,}"),
    Rule("huggingface-token", r"\bhf_[A-Za-z0-9]{34,}" + _END),
    Rule("sendgrid-key", r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}" + _END),
    Rule("twilio-key", r"\b(?:SK|AC)[0-9a-fA-F]{32}" + _END),
    Rule("voyage-key", r"\bpa-[A-Za-z0-9_-]{40,}"),
    Rule("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    # A token cut short by whatever clipped the text before it was redacted (an older Cortex
    # clipped first; a tool or a listing shortens its own output): its prefix says what it
    # is, and half of a key is most of one. Random, so it holds a digit or an upper-case
    # letter (``npm_config_...`` is a name).
    Rule(
        "cut-token",
        r"\b(?:sk-ant-|sk-(?:proj|svcacct|admin)-|gh[pousr]_|github_pat_|gl(?:pat|dt|rt)-"
        r"|xox[abposre]-|(?:sk|rk)_(?:live|test|prod)_|npm_|pypi-AgE|hf_|AKIA|ASIA|AIza|SG\.)"
        r"(?P<body>[A-Za-z0-9_-]{6,})(?=\s*…|\.{3})",
        check=lambda _, match: any(c.isdigit() or c.isupper() for c in match.group("body")),
    ),
    Rule(
        "azure-storage-key",
        rf"(?i)(?:AccountKey|SharedAccessKey|SharedAccessSignature)\s*=\s*([{_B64}%&:.-]{{16,}})",
        group=1,
    ),
    Rule(
        "authorization",
        # the value quoted, an f-string or a template literal too (f"Bearer …", `Bearer …`)
        r"(?i)(?:authorization|proxy-authorization)[\"']?\s*[:=]\s*(?:f?[\"'`])?"
        r"(?:bearer|basic|token|bot|digest|apikey)\s+([A-Za-z0-9._~+/=-]{8,})",
        group=1,
    ),
    Rule(
        "url-password",
        # to the last @ before the host: a password may hold one (``Xk9mPq@q2vLz``)
        # (not an image's tag before its digest: docker://alpine:3.19@sha256:…)
        r"\b[a-zA-Z][a-zA-Z0-9+.-]{0,30}://[^\s:/@'\"]{0,200}:([^\s/'\"]{1,400})@"
        r"(?!sha(?:256|384|512):)",
        group=1,
        check=_given_password_check,
    ),
    Rule(
        "netrc-password",
        r"(?im)(?:^[ \t]*|\bmachine\s+\S+\s+(?:login\s+\S+\s+)?)password[ \t]+([^\s'\"]+)",
        group=1,
        check=_password_check,
    ),
    Rule(
        "mysql-password",
        r"\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump|mysqlimport|mysqlsh)\b"
        r"[^\n|;&]{0,300}?\s-p([\"']?)([^\s\"']+)\1",
        group=2,
        check=_given_password_check,
    ),
    Rule(
        # Oracle's tools take user/password before the connect identifier (sqlplus
        # scott/Xk9mPq2@orcl, expdp "sys/…@db as sysdba", rman target …@cdb catalog …@rcat,
        # CONNECT app/… in a script); options may take an argument (-R 3, -M "csv on")
        "oracle-password",
        r"(?im)(?:(?<![\w-])(?:sqlplus|sqlldr|expdp|impdp|rman|dgmgrl)"
        r"(?:[ \t]+-\w+(?:[ \t]+(?:\d+|\"[^\"\n]*\"|'[^'\n]*'))?){0,8}[ \t]+"
        r"(?:userid=|target[ \t]+)?"
        r"|^[ \t]*(?:SQL>[ \t]*)?conn(?:ect)?[ \t]+)" + _ORACLE_LOGIN,
        group=-1,
        check=_oracle_password_check,
    ),
    Rule(
        # rman's other connections, on its line (only there: "catalog" and "auxiliary" are
        # common words, and "rman" is in "performance")
        "rman-password",
        r"(?i)\brman\b[^\n]{0,400}?\b(?:catalog|auxiliary)[ \t]+" + _ORACLE_LOGIN,
        group=-1,
        check=_oracle_password_check,
    ),
    Rule(
        "cli-password",
        r"\b(?:docker|podman|helm|oras|skopeo|buildah|nerdctl)\s+(?:registry\s+)?login\b"
        r"[^\n|;&]{0,300}?\s-p(?:=|\s+)([\"']?)([^\s\"']+)\1",
        group=2,
        check=_password_check,
    ),
    Rule(
        "cli-secret",
        r"(?i)(?:--|-)(?:password|passwd|token|api-key|apikey|secret|client-secret|auth-token"
        r"|access-key|secret-key|private-key)(?:=|\s+)"
        # quoted, a password may hold spaces (--password "Xk9 mPq2vLz")
        r"(?:\"([^\"\n]{1,200})\"|'([^'\n]{1,200})'|([^\s\"']+))",
        group=-1,
        check=_password_check,
    ),
    Rule(
        # curl's user and password however far from "curl" (a long -d body before -u: past
        # gitleaks' bounded curl rule)
        "curl-user",
        r"(?:^|\s)(?:-u|--user)(?:=|\s+)(?:\"[^\":\n]{1,100}:([^\"\n]{1,200})\""
        r"|'[^':\n]{1,100}:([^'\n]{1,200})'|[^\s:\"']{1,100}:([^\s\"']{1,200}))",
        group=-1,
        check=_password_check,
    ),
    Rule(
        # SQL: CREATE USER … IDENTIFIED BY '…', ALTER ROLE … WITH PASSWORD '…'
        "sql-password",
        r"(?i)\b(?:IDENTIFIED[ \t]+(?:WITH[ \t]+\w+[ \t]+)?BY"
        r"|WITH[ \t]+(?:ENCRYPTED[ \t]+)?PASSWORD|ROLE[ \t]+\S+[ \t]+(?:LOGIN[ \t]+)?PASSWORD)"
        r"[ \t]+'([^'\n]{1,200})'",
        group=1,
        check=_given_password_check,
    ),
    Rule(
        # a setter or builder named for the secret: ds.setPassword("…"), .password("…"),
        # .apiKey('…')
        "setter",
        r"\.(?:set|with)?(?P<name>[A-Za-z]{0,30}(?:[Pp]assword|[Ss]ecret|[Tt]oken|[Aa]pi[Kk]ey))"
        r"\([ \t]{0,8}[\"'](?P<value>[^\"'\n]{4,400})[\"'][ \t]{0,8}\)",
        group=-2,
        check=_named_value_of,
    ),
    Rule(
        # XML: <password>…</password>, <add key="ApiKey" value="…"/>
        "xml-secret",
        r"<(?P<name>[\w.:-]{1,80})>(?P<value>[^<\n]{4,400})</(?P=name)>",
        group=-2,
        check=_named_value_of,
    ),
    Rule(
        "xml-key-value",
        r"\bkey=[\"'](?P<name>[\w.:-]{1,80})[\"'][ \t]{1,8}"
        r"value=[\"'](?P<value>[^\"'\n]{4,400})[\"']",
        group=-2,
        check=_named_value_of,
    ),
    Rule(
        # a password given by position: HTTPBasicAuth("bob", "…"), auth=("bob", "…"),
        # DriverManager.getConnection(url, "app", "…"), Go's DSN "app:…@tcp(host)/db"
        "positional-password",
        r"\b(?:HTTP(?:Basic|Digest)Auth|BasicAuth|basic_auth)\([ \t]{0,8}[\"'][^\"'\n]{1,100}[\"']"
        r"[ \t]{0,8},[ \t]{0,8}[\"']([^\"'\n]{1,200})[\"']"
        r"|\bauth[ \t]{0,8}=[ \t]{0,8}\([ \t]{0,8}[\"'][^\"'\n]{1,100}[\"'][ \t]{0,8},[ \t]{0,8}"
        r"[\"']([^\"'\n]{1,200})[\"'][ \t]{0,8}\)"
        r"|\bgetConnection\([^,()\n]{1,200},[ \t]{0,8}[\"'][^\"'\n]{1,100}[\"'][ \t]{0,8},"
        r"[ \t]{0,8}[\"']([^\"'\n]{1,200})[\"']"
        r"|[\"'`][\w.-]{1,64}:([^\s@/\"':]{1,200})@(?:tcp|unix)\(",
        group=-1,
        check=_password_check,
    ),
    Rule(
        # a program's own password flag: redis-cli -a, sqlcmd -P, mongo -p, ldapsearch -w,
        # keytool -storepass/-keypass, openssl -k / -passin pass:… / -passout pass:…
        "tool-password",
        r"\b(?:redis-cli\b[^\n|;&]{0,200}?\s-a|sqlcmd\b[^\n|;&]{0,200}?\s-P"
        r"|mongo(?:sh)?\b[^\n|;&]{0,200}?\s-p|ldap\w{0,10}\b[^\n|;&]{0,200}?\s-w"
        r"|keytool\b[^\n|;&]{0,200}?\s-(?:storepass|keypass|srcstorepass|deststorepass)"
        r"|openssl\b[^\n|;&]{0,200}?\s-(?:k|pass(?:in|out)[ \t]+(?:pass:)?))"
        r"[ \t]*(?!-)(?:\"([^\"\n]{1,200})\"|'([^'\n]{1,200})'|([^\s\"']+))",
        group=-1,
        check=_password_check,
    ),
    Rule(
        "sshpass",
        r"\bsshpass\s+-p\s*(?:\"([^\"\n]{1,200})\"|'([^'\n]{1,200})'|([^\s\"']+))",
        group=-1,
        check=_password_check,
    ),
    Rule(
        "gh-secret",
        r"\bgh\s+secret\s+set\s+\S+(?:\s+-{1,2}(?!b\b|body\b)[\w-]+(?:[= ][^\s-]\S*)?){0,6}"
        r"\s+(?:-b|--body)(?:=|\s*)"
        r"(?:\"([^\"\n]{1,400})\"|'([^'\n]{1,400})'|([^\s\"']+))",
        group=-1,
        check=_password_check,
    ),
    Rule(
        # what code puts into the environment (t.Setenv("API_KEY", "…"),
        # os.environ["API_KEY"] = "…") and a name and its value given apart
        # (Kubernetes' "- name: DB_PASSWORD / value: …", its JSON form)
        "named-value",
        # (and a setter given the name: define('DB_PASSWORD', '…'), props.put("password", …))
        r"(?:\b(?:[Ss]etenv|putenv|setdefault|getenv|environ\.get|ENV\.fetch|define|put"
        r"|setProperty|set)\([ \t]{0,8}[\"']"
        r"(?P<n1>[\w.-]{1,80})[\"'][ \t]{0,8},"
        r"[ \t]{0,8}(?=[\"'])"
        r"|(?:environ|ENV|env)\[[ \t]{0,8}[\"'](?P<n2>[\w.-]{1,80})[\"'][ \t]{0,8}\][ \t]{0,8}="
        r"[ \t]{0,8}(?=[\"'])"
        # process.env.JWT_SECRET || "…" (a default in the code)
        r"|\benv\.(?P<n4>[\w]{1,80})[ \t]{0,8}(?:\|\||\?\?)[ \t]{0,8}(?=[\"'`])"
        r"|(?i:\bname)\\?[\"']?[ \t]{0,8}:[ \t]{0,8}\\?[\"']?(?P<n3>[\w.-]{1,80})\\?[\"']?"
        r"[ \t]{0,8},?\s{0,20}(?:- )?\\?[\"']?(?i:value)\\?[\"']?[ \t]{0,8}:[ \t]{0,8})"
        r"\\?[\"'`]?(?P<value>[^\s\"'`\\,)}]{4,400})",
        group=-2,
        check=lambda value, match: _named_value_check(
            match.group("n1") or match.group("n2") or match.group("n3") or match.group("n4") or "",
            value,
        ),
    ),
    Rule(
        # a YAML block scalar: "password: |" and the secret on the next, deeper line
        "yaml-block",
        r"(?m)^(?P<indent>[ \t]*)(?:- )?(?P<name>[\w.-]{1,80}):[ \t]*[|>][-+]?[ \t]*\r?\n"
        r"(?P=indent)[ \t]+(?P<value>\S[^\n]{3,400})",
        group=-2,
        check=lambda value, match: (
            len(_PROSE_WORD.findall(value)) < 3 and _named_value_check(match.group("name"), value)
        ),
    ),
    Rule(
        # a private key's body shown without its first line (a file read from an offset,
        # `tail`): the base64 lines before its END line
        "private-key-body",
        r"(?m)^(?:[A-Za-z0-9+/=]{40,}\r?\n){1,128}+[A-Za-z0-9+/=]{0,200}\r?\n?"
        r"(?=-----END[ A-Z0-9]*PRIVATE KEY)",
    ),
    Rule(
        # the middle of a key's body, its BEGIN and END lines both out of sight (a file read
        # from an offset, a window cut short): four or more lines of exactly 64 base64
        # characters, the PEM line, are a key's or a certificate's, not prose or code
        "key-body-lines",
        # (indented in YAML or a quote; 70 to a line in an OpenSSH key, 76 in MIME)
        r"(?m)^[ \t]*(?:[A-Za-z0-9+/]{64,76}\r?\n[ \t]*){3}[A-Za-z0-9+/]{64,76}"
        # and its last, shorter line: base64 to the end of the line, not a word that follows
        r"(?:\r?\n[ \t]*[A-Za-z0-9+/]{16,76}={0,2}(?=[ \t]*(?:\r?\n|$)))*+",
        prefilter=lambda lower: len(lower) >= 4 * 64 and "\n" in lower,
    ),
    Rule(
        "assignment",
        # the name's look-ahead is bounded like the name and starts at a letter: unbounded, it
        # scanned to the end of a run of dashes from each of them (10 kB of "-": 6.7 s)
        r"(?P<q>\\{0,3}[\"']|)(?P<name>(?<![A-Za-z0-9_.])(?<![A-Za-z0-9]-)(?=[A-Za-z_])(?=[A-Za-z0-9_.-]{0,80}?(?i:secret|token|pass|pwd|key|cred|auth|salt|signature|cookie|session))[A-Za-z_][A-Za-z0-9_.-]{0,80})(?P=q)"
        # a type annotated between the name and its value (API_KEY: str = "…")
        r"(?:[ \t]*:[ \t]*[A-Za-z_][\w.\[\], |]{0,40}?(?=[ \t]*=[^=]))?"
        r"[ \t]*(?::=|=>|\?=|[:=])[ \t]*(?:"
        # JSON inside JSON (\"password\":\"…\", escaped once or twice over), then each
        # quote with the others and escapes inside it ("it's-a-secret-99", "p\"ssw0rd"),
        # Python's b'…' and r"…" too
        r"(?P<esc>\\{1,3})\"(?P<v5>[^\"\\\n]{4,400})(?P=esc)\""
        r"|(?:[bBrRuU]{1,2}(?=[\"']))?(?:\"(?P<v1>(?:\\.|[^\"\\\n]){4,400})\""
        r"|'(?P<v3>(?:\\.|[^'\\\n]){4,400})'|`(?P<v4>[^`\n]{4,400})`)"
        # a value unquoted runs to a space or a delimiter; a parenthesis or bracket within it
        # is part of it (``hunter2(2)``, ``p@ss[w0rd]``): cut there, a password's tail stayed
        # in clear
        r"|(?P<v2>(?:(?!\\[nrt])[^\s\"'`,;)(\[\]{}<>]){1,400}"
        r"(?:[(\[][^\s()\[\]]{0,200}[)\]]?(?:(?!\\[nrt])[^\s\"'`,;)(\[\]{}<>]){0,200}){0,8}))",
        check=_assignment_check,
        prefilter=_secret_name_assigned,
    ),
]

# What must occur (lower-cased) for each of Cortex's own rules to match at all: the same
# pre-filter gitleaks uses, so a text runs only the rules it could trigger. A rule not listed
# always runs.
_OWN_KEYWORDS: dict[str, tuple[str, ...]] = {
    "private-key": ("private key",),
    "anthropic-key": ("sk-ant-",),
    "openai-key": ("sk-",),
    "github-token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "gitlab-token": tuple(
        f"gl{p}-" for p in ("pat", "dt", "rt", "ptt", "cbt", "soat", "ft", "imt", "agent")
    ),
    "slack-token": ("xox",),
    "slack-webhook": ("hooks.slack.com",),
    "aws-access-key": ("akia", "asia", "abia", "acca", "a3t"),
    "google-api-key": ("aiza",),
    "stripe-key": ("sk_live", "sk_test", "sk_prod", "rk_live", "rk_test", "rk_prod"),
    "npm-token": ("npm_",),
    "pypi-token": ("pypi-age",),
    "huggingface-token": ("hf_",),
    "sendgrid-key": ("sg.",),
    "twilio-key": ("sk", "ac"),
    "voyage-key": ("pa-",),
    "jwt": ("eyj",),
    "azure-storage-key": ("accountkey", "sharedaccesskey", "sharedaccesssignature"),
    "authorization": ("authorization",),
    "url-password": ("://",),
    "netrc-password": ("password",),
    "mysql-password": ("mysql", "mariadb"),
    "oracle-password": ("sqlplus", "sqlldr", "expdp", "impdp", "rman", "dgmgrl", "conn"),
    "rman-password": ("rman",),
    "cut-token": ("…", "..."),
    "cli-password": ("login",),
    "sshpass": ("sshpass",),
    "positional-password": ("auth", "getconnection", "@tcp(", "@unix("),
    "setter": ("password", "secret", "token", "apikey"),
    "xml-secret": _ASSIGNED_WORDS,
    "xml-key-value": ("value=",),
    "tool-password": ("redis-cli", "sqlcmd", "mongo", "ldap", "keytool", "openssl"),
    "sql-password": ("identified", "password"),
    "curl-user": ("curl",),
    "gh-secret": ("secret",),
    "named-value": (
        "define(",
        "put(",
        "setproperty(",
        "set(",
        "getenv",
        "environ.get",
        "env.fetch",
        "env.",
        'value\\":',
        "setenv",
        "putenv",
        "setdefault",
        "environ[",
        "env[",
        "value:",
        'value":',
        "value':",
    ),
    "yaml-block": _ASSIGNED_WORDS,
    "private-key-body": ("-----end",),
    "cli-secret": tuple(
        f"-{w}"
        for w in (
            "password",
            "passwd",
            "token",
            "api-key",
            "apikey",
            "secret",
            "auth-token",
            "access-key",
            "secret-key",
            "private-key",
        )
    ),
    "assignment": _ASSIGNED_WORDS,
}
for _rule in OWN_RULES:
    _rule.keywords = _OWN_KEYWORDS.get(_rule.kind, ())


# gitleaks' curl rules read from "curl" to a flag: a text without the flag is not read at all
_CURL_FLAGS: dict[str, Callable[[str], bool]] = {
    "curl-auth-header": lambda lower: "-h" in lower or "--header" in lower,
    "curl-auth-user": lambda lower: "-u" in lower or "--user" in lower,
}


def _bounded(regex: str) -> str:
    """``regex`` with its unbounded runs of any character bounded (gitleaks' curl rules:
    ``\\bcurl\\b.*?`` scanned to the end of the line from every "curl", 100 kB of them took
    91 s): a flag 400 characters after its command is no longer read as the command's."""
    return regex.replace(".*?", ".{0,400}?").replace(".*", ".{0,400}")


@cache
def gitleaks_rules() -> tuple[Rule, ...]:
    """The converted gitleaks rules (loaded on first use; each compiled on its first hit)."""
    data = json.loads(RULES_FILE.read_text(encoding="utf-8"))
    return tuple(
        Rule(
            r["id"],
            _bounded(r["regex"]),
            group=r["group"],
            keywords=tuple(r["keywords"]),
            min_entropy=float(r.get("entropy", 0.0)),
            allow=tuple(r.get("allow", ())),
            stopwords=tuple(r.get("stopwords", ())),
            prefilter=_CURL_FLAGS.get(r["id"]) or _named_prefilter(r["regex"]),
        )
        for r in data["rules"]
    )


# gitleaks' "generic" rules: ``(?i)[\w.-]{0,50}?(?:lob|…)(?:[ \t\w.-]{0,20})… = value``: a
# provider's name, then an assignment. Their keywords are often wider than the name (lob's are
# ``live_`` and ``test_``, in every test file), and the lazy ``[\w.-]{0,50}?`` before the name
# is tried at every position: the name itself must occur first.
_NAMED_RULE = re.compile(
    r"^(?:\(\?i\))?\[\\w\.-\]\{0,50\}\?(?:\(\?i:(?:\[\\w\.-\]\{0,50\}\?)?)?\(\?:([^()]+)\)"
    r"(?![?*{+])"  # a name the rule may leave out is no requirement
)
_PLAIN_NAME = re.compile(r"^[A-Za-z0-9_-]+$")


def _named_prefilter(regex: str) -> Callable[[str], bool] | None:
    """A prefilter for a rule that names its provider before the assignment: one of the names
    (lower-cased) occurs in the lower-cased text; None for other shapes, or names that are
    patterns rather than plain words."""
    found = _NAMED_RULE.match(regex)
    if found is None:
        return None
    names = found.group(1).split("|")
    if not all(_PLAIN_NAME.match(n) for n in names):
        return None
    wanted = tuple(n.lower() for n in names)
    return lambda lower: any(n in lower for n in wanted)


def redact(text: str) -> str:
    """``text`` with every secret-shaped value replaced by ``[REDACTED:kind]``.

    Pure, so remembered: a capture redacts the same text several times over (when it is
    clipped into an event, again in the payload, again when the store takes the event as
    defence in depth), and a pass re-meets the same command strings."""
    if not text:
        return text
    if len(text) > _MEMO_MAX_CHARS:
        return _redact(text)
    return _redact_memo(text)


# At most 1,024 texts of ≤ 2,000 characters, in and out (~16 MB at worst even at 4 bytes a
# character): a hook stays under its memory budget; longer texts are redacted each time.
_MEMO_MAX_CHARS = 2_000


@lru_cache(maxsize=1_024)
def _redact_memo(text: str) -> str:
    return _redact(text)


def _redact(text: str) -> str:
    # Cortex's own rules first (most specific), then gitleaks'; each only when one of its
    # keywords occurs. Keywords are looked for once, in the text as it came: a replacement
    # only ever removes a secret, it never brings in a keyword another rule needs.
    rules = all_rules()
    lower = _folded(text)
    for index in _candidates(lower):
        text = rules[index].sub(text, lower)
    return text


# ſ (long s), K (Kelvin sign), ı and İ: a case-insensitive rule matches them as s, k and i.
_FOLD = str.maketrans({"\u017f": "s", "\u212a": "k", "\u0131": "i", "\u0130": "i"})


def _folded(text: str) -> str:
    """``text`` lower-cased with the letters a case-insensitive rule matches as ASCII letters
    (but ``lower()`` leaves alone) folded to them: where keywords are looked for."""
    lower = text.lower()
    if lower.isascii() or not any(c in lower for c in _UNFOLDED):
        return lower  # most non-ASCII text holds none of them: no copy through translate
    return lower.translate(_FOLD)


# What ``lower()`` leaves of _FOLD's letters: ſ and ı (the Kelvin sign and İ it lowers itself).
_UNFOLDED = ("\u017f", "\u0131")


@cache
def all_rules() -> tuple[Rule, ...]:
    return (*OWN_RULES, *gitleaks_rules())


def _candidates(lower: str) -> list[int]:
    """The indexes (in ``all_rules`` order) of the rules whose keywords occur in ``lower``.

    One pass of one pattern holding every keyword as a trie (``_keyword_pass``): about 270
    substring scans cost two to three times that pass at every length measured (3.6 against
    8 µs at 50 characters, 33 against 75 at 600; a capture of 5,000 transcript lines redacts
    1.2 MB in 4,000 texts). Only a process that has not compiled the pattern yet (about 4 ms)
    searches a short text keyword by keyword: a hook redacting a few lines does not pay it."""
    words, by_word, always = _keyword_index()
    if len(lower) < _ONE_PASS_FROM and _keyword_pass.cache_info().currsize == 0:
        found = [by_word[w] for w in words if w in lower]
        return sorted(set(always).union(*found))
    pattern, implied = _keyword_pass()
    hit = {m.group(1) for m in pattern.finditer(lower)}
    return sorted(set(always).union(*(implied[w] for w in hit)))


# From this many characters the pattern is worth compiling (once a process).
_ONE_PASS_FROM = 1_000


@cache
def _keyword_index() -> tuple[tuple[str, ...], dict[str, tuple[int, ...]], tuple[int, ...]]:
    """Which rules a text can trigger: a rule runs only when one of its keywords occurs in the
    lower-cased text (gitleaks' own pre-filter). ``(keywords, rules by keyword, rules that
    have no keyword and always run)``."""
    rules = all_rules()
    by_word: dict[str, list[int]] = {}
    for index, rule in enumerate(rules):
        for word in rule.keywords:
            by_word.setdefault(word, []).append(index)
    always = tuple(i for i, r in enumerate(rules) if not r.keywords)
    return tuple(sorted(by_word)), {w: tuple(v) for w, v in by_word.items()}, always


@cache
def _keyword_pass() -> tuple[re.Pattern[str], dict[str, frozenset[int]]]:
    """``(pattern, rules by match)``: the pattern finds, at every position of a text, the
    longest keyword that starts there (a look-ahead, so overlapping keywords are all seen); a
    keyword found implies the keywords that are its prefixes (``sk-`` holds ``sk``), so each
    match maps to the rules of all of them. Compiled once, about 4 ms."""
    words, by_word, _ = _keyword_index()
    trie: dict[str, Any] = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}
    known = set(words)
    implied = {
        word: frozenset(
            i for n in range(1, len(word) + 1) if word[:n] in known for i in by_word[word[:n]]
        )
        for word in words
    }
    return re.compile("(?=(" + _trie_pattern(trie) + "))"), implied


def _trie_pattern(node: dict[str, Any]) -> str:
    """A regex matching the words of a trie, longest first at each step."""
    branches = [
        re.escape(char) + _trie_pattern(child) for char, child in sorted(node.items()) if char
    ]
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    return f"(?:{body})?" if "" in node else body


_TOKENISH = re.compile(r"[A-Za-z0-9+/=_.~-]{20,}")
# A word of a joined tag: letters with a number after them (``python3``, ``plan-2026``), or
# a short mix with a digit or two (``i18n``, ``e2e``, ``k8s``, ``v1beta2``): a token's parts
# are long and random.
_TAG_WORD = re.compile(
    r"[a-z]{1,24}[0-9]{0,4}|[0-9]{1,4}|(?=(?:[a-z]*[0-9]){1,2}[a-z]*$)[a-z0-9]{1,8}"
)
_SHA_OR_UUID = re.compile(
    r"[0-9a-fA-F]{40}|[0-9a-fA-F]{64}|[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}"
)


# Tags that name a file of the project (``model.DOCUMENT_TAG`` and the code index's).
_PATH_MARKERS: Final = ("code:", "doc:")
_MARKER_PARTS: Final = re.compile(r"(::|/|\\|(?<=^code):|(?<=^doc):)")


def redact_tag(tag: str) -> str:
    """A tag as it may be stored. Tags are lower-cased later, so this runs on the tag as
    written; a long random-looking run the shape rules did not catch (an already lower-cased
    key) is redacted too, as tags are short words, not tokens. Git SHAs and UUIDs stay."""
    if tag.startswith(_PATH_MARKERS):
        # a file's path and a symbol in it (``code:src/auth/token.py::refresh``,
        # ``code:migrations/versions/3b2f1a9c7d4e_add_users.py``): each part redacted alone,
        # so "token.py::refresh" is not a name given a value and an id in a file's name not a
        # token, yet a key in a path still goes; the marker must name the file as it is, or
        # its memories are never found again
        return "".join(redact(part) for part in _MARKER_PARTS.split(tag))
    tag = redact(tag)

    def token(match: re.Match[str]) -> str:
        value = match.group(0)
        if "REDACTED" in value or _SHA_OR_UUID.fullmatch(value):
            return value
        # python3.11-migration-notes, doc:/Users/x/docs/ARCHITECTURE.md: words joined, not a
        # token (a path's leading "/" leaves an empty part; a tag is lower-cased later)
        parts = [p.lower() for p in re.split(r"[-_./~]", value) if p]
        if len(parts) > 1 and all(_TAG_WORD.fullmatch(p) for p in parts):
            return value
        has_digit = any(c.isdigit() for c in value)
        if has_digit and any(c.isalpha() for c in value) and entropy(value) >= 3.0:
            return MARK.format("tag")
        return value

    return _TOKENISH.sub(token, tag)


def redact_value(value: Any, *, within: str | None = None) -> Any:
    """``value`` (JSON-like: dicts, lists, strings, numbers) with every string redacted, keys
    included: event payloads, the extractor's pending state and quarantined records are
    stored as they are, so what is saved anywhere is redacted first. A string is also judged
    as the value of the key that names it: its own, a name/value pair's name, or (``within``)
    the key of the list or object holding it when nothing nearer says what it is (a list
    under ``"passwords"``, ``{"api_keys": {"prod": …}}``; not ``{"credentials": {"host":
    …}}``: "host" says what that is)."""
    if isinstance(value, str):
        return redact(value) if within is None else _named(within, value)
    if isinstance(value, dict):
        out = {}
        named = _pair_name(value)  # {"Name": "DB_PASSWORD", "Value": …}
        for k, v in value.items():
            key = redact(str(k))
            name = str(k)
            if named is not None and name.lower() in _PAIR_NAMES:
                # a pair's name names its value ("ParameterKey": "DbPassword"): not a secret
                out[key] = redact_value(v)
                continue
            if named is not None and name.lower() in _PAIR_VALUES:
                name = named if within is None or _secret_name(named) else within
            elif within is not None and _ENVIRONMENT.fullmatch(name.strip("\"'-")):
                name = within  # {"api_keys": {"prod": …}}: the key above says what it is
            if isinstance(v, str):
                out[key] = _named(name, v)
            elif isinstance(v, dict | list | tuple):
                out[key] = redact_value(v, within=name if _holds_secrets(name) else None)
            else:
                out[key] = v
        return out
    if isinstance(value, list | tuple):
        if len(value) == 2 and all(isinstance(v, str) for v in value):  # ["DB_PASSWORD", "…"]
            name = _pair_key(value[0])
            if _secret_name(name):
                return [redact(value[0]), _named(name, value[1])]
        return [redact_value(v, within=within) for v in value]
    return value


# What a list or an object under a name holds when the name ends in a secret's word:
# passwords, tokens, keys, credentials, cookies (not "token_usage", nor a session or a
# signature: an object under "worktreeSession" holds its ids).
_HOLDS_SECRETS: Final = re.compile(
    rf"(?i)(?:^|[_.-]|(?-i:(?<=[a-z])(?=[A-Z])))(?:secret|token|passw(?:or)?d|passwd|passphrase"
    rf"|pwd|pass|key|apikey|credentials?|creds|auth|cookie)s?{_NAME_SUFFIX}$"
)
# A key that only says which one (an environment, a version): the key above says what it is.
_ENVIRONMENT: Final = re.compile(
    r"(?i)prod|production|dev|development|live|test|staging|stage|local|old|new|backup|primary"
    r"|secondary|default|current|previous|next|v?\d+"
)


def _holds_secrets(name: str) -> bool:
    return bool(_HOLDS_SECRETS.search(name.strip("\"'-"))) and _secret_name(name)


# A name/value pair: how settings and environments are written as JSON (an ECS task's
# environment, a CloudFormation parameter, a Kubernetes env entry, an SSM parameter).
_PAIR_NAMES: Final = ("name", "key", "parametername", "parameterkey", "optionname")
_PAIR_VALUES: Final = frozenset({"value", "parametervalue", "optionvalue"})


def _pair_name(record: dict[Any, Any]) -> str | None:
    """The name a pair's value goes by: the first of its names that names a secret (``{"name":
    "app-config", "key": "db_password", …}``), else the first it has."""
    if not any(str(k).lower() in _PAIR_VALUES for k in record):
        return None
    lower = {str(k).lower(): v for k, v in record.items()}
    names = [_pair_key(v) for k in _PAIR_NAMES if isinstance(v := lower.get(k), str)]
    return next((n for n in names if _secret_name(n)), names[0] if names else None)


def _pair_key(name: str) -> str:
    """A parameter's name as a key: the last part of a path (``/prod/db/password``)."""
    return name.rstrip("/").rsplit("/", 1)[-1]


# Keys of Cortex's own records and of most structured data that name an identifier, not a
# secret: a lesson's "key" is a hash that makes two lessons one.
_RECORD_KEYS: Final = frozenset({"key", "keys", "id"})
# A store's token (the briefing cache keeps one): counters, not a secret.
_STORE_TOKEN: Final = re.compile(r"[0-9:|-]+")


def _named(name: str, value: str) -> str:
    """``value`` redacted, and as the value of ``name`` when that names a secret: a key and
    its value are separate strings in JSON, and a password is known by its name ("password":
    "Xk9mPq2vLz77" says nothing on its own)."""
    clean = redact(value)
    if clean != value or name.lower() in _RECORD_KEYS or not _secret_name(name):
        return clean
    if name.lower() in ("token", "tokens") and _STORE_TOKEN.fullmatch(value):
        return clean
    pair = json.dumps({name: value})
    said = redact(pair)
    if said == pair:
        return clean
    try:
        return str(json.loads(said)[name])
    except (ValueError, KeyError, TypeError):
        return MARK.format("assignment")


def redact_json_text(text: str) -> str | None:
    """``text`` redacted as the JSON object or list it holds, each string in it, so it stays
    readable JSON (``text`` itself when nothing in it changes); None when it holds none."""
    if text.lstrip()[:1] not in ("[", "{"):
        return None
    try:
        parsed = json.loads(text)
    except ValueError:
        return None
    clean = redact_value(parsed)
    if clean == parsed:
        return text
    out = json.dumps(clean, ensure_ascii=False)
    # A lone surrogate (``"\\udce9"``, a cut emoji's half) stays the escape it was: written
    # as a character it is no UTF-8 at all.
    out = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", out)
    return out + ("\n" if text.endswith("\n") else "")


_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def redact_memory(memory: Memory) -> Memory:
    """The memory as it may be stored: content, summary and tags redacted, and where it came
    from (a branch, a folder or a session can be named with a key: ``rotate/ghp_…``)."""
    content, summary = redact(memory.content), redact(memory.summary)
    tags = tuple(redact_tag(t) for t in memory.tags)
    where, session = memory.source_context, _maybe(memory.source_session)
    context = replace(where, branch=_maybe(where.branch), cwd=_maybe(where.cwd))
    if (content, summary, tags, context, session) == (
        memory.content, memory.summary, memory.tags, where, memory.source_session,
    ):  # fmt: skip
        return memory
    return memory.with_changes(
        content=content, summary=summary, tags=tags, source_context=context,
        source_session=session,
    )  # fmt: skip


def redact_event(event: Event) -> Event:
    """The event as it may be stored: its content, payload and provenance redacted."""
    content, payload = redact(event.content), redact_value(event.payload)
    was = event.provenance
    where = replace(
        was, session_id=_maybe(was.session_id), transcript_path=_maybe(was.transcript_path),
        branch=_maybe(was.branch),
    )  # fmt: skip
    if content == event.content and payload == event.payload and where == was:
        return event
    return replace(event, content=content, payload=payload, provenance=where)


def redact_source(episode: Episode) -> Episode:
    """An episode's provenance redacted (its text is redacted as it is cut, in ``episodes``)."""
    session, path = _maybe(episode.session_id), _maybe(episode.transcript_path)
    branch, document = _maybe(episode.branch), _maybe(episode.document)
    if (session, path, branch, document) == (
        episode.session_id, episode.transcript_path, episode.branch, episode.document,
    ):  # fmt: skip
        return episode
    return replace(
        episode, session_id=session, transcript_path=path, branch=branch, document=document
    )


def redact_observation(observation: Observation) -> Observation:
    """A tool call's record redacted: its tool's names (an MCP tool is named by its server),
    what it was about, its command's form and the branch."""
    o = observation
    clean = replace(
        o, tool=redact(o.tool), prev_tool=_maybe(o.prev_tool), prev2_tool=_maybe(o.prev2_tool),
        detail=_maybe(o.detail), command=_maybe(o.command), branch=_maybe(o.branch),
    )  # fmt: skip
    return o if clean == o else clean


def _maybe(text: str | None) -> str | None:
    return redact(text) if text else text
