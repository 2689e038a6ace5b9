"""A generated corpus of fake secrets (random, valid-shaped, never real) and look-alikes.

``secrets(seed)`` yields ``Secret`` records: the kind, the value, the text that holds it
(shell command, .env line, JSON, YAML, prose, URL, config file ...), and the parts that must
never reach an artefact (the value's first and last 12 characters past its well-known prefix).
``straddle(text, value, cut)`` pads a text so the value straddles a clip point (300 for
commands, 120 for plan steps). ``LOOK_ALIKES`` must come out of redaction unchanged.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass

UP, LOW, DIG = string.ascii_uppercase, string.ascii_lowercase, string.digits
ALNUM = UP + LOW + DIG
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"


@dataclass(frozen=True)
class Secret:
    kind: str
    value: str
    text: str
    skip: int = 0  # a well-known prefix (AKIA, ghp_ ...) that is not itself secret

    @property
    def parts(self) -> tuple[str, ...]:
        body = self.value[self.skip :]
        if len(body) <= 12:
            return (body,)
        return (body[:12], body[-12:])


class Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def s(self, n: int, alphabet: str = ALNUM) -> str:
        # at least one digit and one letter, like real keys (and unlike words)
        while True:
            out = "".join(self.rng.choice(alphabet) for _ in range(n))
            mixed = set(alphabet) & set(DIG) and set(alphabet) & set(UP + LOW)
            if not mixed or (any(c.isdigit() for c in out) and any(c.isalpha() for c in out)):
                return out

    def pick(self, items: list[str]) -> str:
        return self.rng.choice(items)


# kind -> (value maker, skip) ; contexts are chosen per kind below
def _values(g: Gen) -> dict[str, tuple[Callable[[], str], int]]:
    return {
        "aws-access-key": (lambda: g.pick(["AKIA", "ASIA"]) + g.s(16, UP + DIG), 4),
        "google-api-key": (lambda: "AIza" + g.s(34, URLSAFE) + g.pick(["-", "_", "Q"]), 4),
        "github-pat": (lambda: g.pick(["ghp_", "gho_", "ghs_"]) + g.s(36), 4),
        "github-fine-pat": (lambda: "github_pat_" + g.s(22) + "_" + g.s(59), 11),
        "gitlab-pat": (lambda: "glpat-" + g.s(20, URLSAFE), 6),
        "slack-token": (lambda: "xoxb-" + g.s(12, DIG) + "-" + g.s(12, DIG) + "-" + g.s(24), 5),
        "stripe-key": (lambda: g.pick(["sk_live_", "rk_live_"]) + g.s(24), 8),
        "openai-key": (lambda: "sk-proj-" + g.s(64, URLSAFE), 8),
        "anthropic-key": (lambda: "sk-ant-api03-" + g.s(93, URLSAFE) + "AA", 13),
        "twilio-key": (lambda: "SK" + g.s(32, HEX), 2),
        "sendgrid-key": (lambda: "SG." + g.s(22, URLSAFE) + "." + g.s(43, URLSAFE), 3),
        "npm-token": (lambda: "npm_" + g.s(36), 4),
        "pypi-token": (lambda: "pypi-AgEIcHlwaS5vcmc" + g.s(70, URLSAFE), 20),
        "jwt": (
            lambda: (
                "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ"
                + g.s(40, URLSAFE)
                + "."
                + g.s(43, URLSAFE)
            ),
            37,
        ),
    }


def _contexts(g: Gen, value: str) -> list[str]:
    name = g.pick(["API_KEY", "TOKEN", "DEPLOY_SECRET", "SERVICE_CREDENTIALS", "KEY"])
    return [
        f"export {name}={value}",
        f'curl -s -H "X-Api-Key: {value}" https://api.internal.test/v1/items',
        f"{name}={value}",
        f'{{"service": "billing", "key": "{value}", "retries": 3}}',
        f"auth:\n  key: {value}\n  region: eu-west-1",
        f"I pasted the key {value} into the CI settings and the deploy went green.",
        f"deploy --with {value} --region eu",
    ]


def _fixed(g: Gen) -> list[Secret]:
    """Kinds whose shape is their context."""
    out: list[Secret] = []
    pw = lambda: g.s(14, ALNUM + "!#%+") + "9"  # noqa: E731
    b64 = g.s(86, B64) + "=="
    out.append(Secret("azure-storage-key", b64,
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=" + b64
        + ";EndpointSuffix=core.windows.net"))  # fmt: skip
    secret40 = g.s(40, B64)
    out.append(Secret("aws-secret-key", secret40, f"aws_secret_access_key = {secret40}"))
    out.append(Secret("aws-secret-key", (v := g.s(40, B64)), f"AWS_SECRET_ACCESS_KEY={v}"))
    for scheme in ("postgres", "postgresql", "mongodb+srv", "redis", "mysql", "amqp"):
        p = g.s(16, ALNUM)
        user = "" if scheme == "redis" else "app"
        out.append(Secret("url-password", p, f"{scheme}://{user}:{p}@db.internal:5432/prod"))
    p = pw()
    out.append(Secret("netrc", p, f"machine api.heroku.com\n  login me@acme.test\n  password {p}"))
    p = pw()
    out.append(Secret("netrc", p, f"machine github.com login me password {p}"))
    p = g.s(14)
    out.append(Secret("mysql-password", p, f"mysql -h db -u root -p{p} payments < dump.sql"))
    p = g.s(14)
    out.append(Secret("mysql-password", p, f"mysqldump --user=root --password={p} payments"))
    p = g.s(20)
    out.append(Secret("docker-login", p, f"docker login -u deploy -p {p} registry.acme.test"))
    p = g.s(20)
    out.append(Secret("docker-login", p, f"docker login --username ci --password {p} ghcr.io"))
    t = g.s(32, URLSAFE)
    out.append(Secret("authorization", t, f"curl -H 'Authorization: Bearer {t}' https://x.test"))
    t = g.s(24, B64) + "=="
    out.append(Secret("authorization", t, f"Authorization: Basic {t}"))
    key = "\n".join(g.s(64, B64) for _ in range(6))
    out.append(Secret("private-key", key.splitlines()[0],
        f"-----BEGIN RSA PRIVATE KEY-----\n{key}\n-----END RSA PRIVATE KEY-----"))  # fmt: skip
    for name in ("ENCRYPTION_KEY", "SIGNING_KEY", "DB_PASSWORD", "SMTP_PASS", "ADMIN_PWD",
                 "WEBHOOK_SECRET", "session_token", "clientSecret", "MASTER_PASSWORD_HASH_SALT",
                 "credentials", "JWT_SECRET_KEY", "REFRESH_TOKEN"):  # fmt: skip
        v = g.s(24, ALNUM + "_-") if "PASS" not in name.upper() else pw()
        for form in (f"{name}={v}", f'{name}: "{v}"', f'"{name}": "{v}"', f"{name} = '{v}'"):
            out.append(Secret("generic-assignment", v, form))
    sid = "AC" + g.s(32, HEX)
    out.append(Secret("twilio-key", sid, f"TWILIO_ACCOUNT_SID={sid}", 2))
    hook = "T" + g.s(8, UP + DIG) + "/B" + g.s(8, UP + DIG) + "/" + g.s(24)
    out.append(
        Secret("slack-webhook", hook, f"curl -X POST https://hooks.slack.com/services/{hook}")
    )
    return out


def secrets(seed: int = 7, per_kind: int = 3) -> Iterator[Secret]:
    g = Gen(seed)
    for kind, (make, skip) in _values(g).items():
        for _ in range(per_kind):
            value = make()
            for text in _contexts(g, value):
                yield Secret(kind, value, text, skip)
    yield from _fixed(g)


FILLER = (
    "cd /srv/app && make build && ./scripts/check.sh --all && echo done && git status "
    "&& ls -la build/ && du -sh build && "
)


def straddle(text: str, value: str, cut: int, into: int) -> str:
    """``text`` padded in front so that ``value`` starts ``into`` characters before ``cut``."""
    at = text.index(value)
    need = cut - into - at
    if need <= 0:
        return text
    pad = (FILLER * (need // len(FILLER) + 1))[: need - 1] + " "
    return pad + text


LOOK_ALIKES: list[str] = [
    "SECRET_NAME = 'db-password'",
    "SECRET_NAME='stripe-api-key'",
    "MAX_TOKENS=4096",
    "max_tokens: 8192",
    "token_count: 1500",
    "PASSWORD_MIN_LENGTH=12",
    "password=settings.DB_PASSWORD",
    "password = config.get('db', 'password')",
    'api_key=os.environ["OPENAI_API_KEY"]',
    "api_key = os.getenv('ANTHROPIC_API_KEY')",
    "token = request.headers.get('X-Token')",
    "<token>",
    "${API_KEY}",
    "export GITHUB_TOKEN=${{ secrets.GITHUB_TOKEN }}",
    "OPENAI_API_KEY=${OPENAI_API_KEY}",
    "API_KEY=<your-api-key>",
    "Authorization: Bearer <token>",
    "Authorization: Bearer $TOKEN",
    "password: changeme",
    "TOKENIZER_PATH=/models/tokenizer.json",
    "SSH_KEY_PATH=~/.ssh/id_ed25519",
    "AUTH_URL=https://auth.acme.test/login",
    "KEY_ID=primary",
    "secret_ref: vault/payments/stripe",
    "primary_key = 'id'",
    "cache_key = f'{user}:{id}'",
    "sort_key: created_at",
    "The ghp_ prefix marks GitHub classic tokens; eyJ starts a JWT header.",
    "Reset the password via the forgot-password form; secrets live in Vault.",
    "We rotate the signing key every 90 days and keep the previous one for a day.",
    "git clone git@github.com:acme/payments.git",
    "https://github.com/acme/payments/blob/main/src/app/auth.py",
    "uv run pytest tests/test_auth.py -k token -q",
    "mysql -u root -p payments",
    "docker login -u deploy registry.acme.test",
    "ruff check src/ && mypy --strict src/",
]


def generated_look_alikes(seed: int = 11, n: int = 300) -> list[str]:
    """Look-alikes in bulk: UUIDs, git SHAs, paths, numbers and names next to secret words."""
    g = Gen(seed)
    out = list(LOOK_ALIKES)
    words = ["db", "stripe", "api", "deploy", "signing", "webhook", "payments", "primary"]
    while len(out) < n:
        uuid = "-".join(g.s(k, HEX) for k in (8, 4, 4, 4, 12))
        sha = g.s(40, HEX)
        name = "-".join(g.rng.sample(words, 2))
        out += [
            f"request {uuid} failed with 502; retried after 30 s",
            f"commit {sha} fixed the token refresh",
            f"git show {sha[:12]} -- src/auth.py",
            f"SECRET_NAME = '{name}-secret'",
            f"TOKEN_TTL_SECONDS={g.rng.randint(60, 99999)}",
            f"see src/{name.replace('-', '_')}/keys.py line {g.rng.randint(1, 900)}",
            f"session_id: {uuid}",
            f"password_file: /run/secrets/{name}",
            f"Bearer <{name}-token> goes in the header",
            f"{name.upper().replace('-', '_')}_KEY_NAME=projects/acme/keys/{name}",
        ]
    return out[:n]
