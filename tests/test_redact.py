"""Secrets are redacted by shape; look-alikes that are knowledge survive.

The secret values are generated at run time, so no real-looking credential sits in the repo.
"""

from __future__ import annotations

import json
import random
import re
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cortexmem.core import redact as R
from cortexmem.core.redact import redact, redact_value

rng = random.Random(1234)
ALNUM = string.ascii_letters + string.digits


def rand(n: int, alphabet: str = ALNUM) -> str:
    # always mix letters and digits, like real keys
    body = "".join(rng.choice(alphabet) for _ in range(n - 2))
    return body + "7" + "q"


def b64url(n: int) -> str:
    return rand(n, ALNUM + "-_")


SECRETS = {
    "anthropic": "sk-ant-api03-" + b64url(90),
    "openai-project": "sk-proj-" + b64url(100),
    "openai-legacy": "sk-" + rand(48),
    "github-classic": "ghp_" + rand(36),
    "github-fine": "github_pat_" + rand(22) + "_" + rand(59),
    "gitlab": "glpat-" + b64url(20),
    "slack": "xoxb-" + "".join(rng.choice(string.digits) for _ in range(12)) + "-" + rand(24),
    "aws": "AKIA" + "".join(rng.choice(string.ascii_uppercase + string.digits) for _ in range(16)),
    "google": "AIza" + b64url(35),
    "stripe": "sk_live_" + rand(24),
    "npm": "npm_" + rand(36),
    "huggingface": "hf_" + rand(34),
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0." + b64url(43),
}


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_provider_tokens_are_redacted_in_context(name):
    secret = SECRETS[name]
    text = f"I exported the key {secret} and then ran the deploy."
    out = redact(text)
    assert secret not in out
    assert "[REDACTED:" in out and out.startswith("I exported the key ")
    assert out.endswith(" and then ran the deploy.")


@pytest.mark.parametrize("name", sorted(set(SECRETS) - {"jwt", "openai-legacy"}))
@pytest.mark.parametrize("ellipsis", ["…", "..."])
def test_a_token_cut_short_is_still_redacted(name, ellipsis):
    """Clipped before it was redacted (an older Cortex did; a tool shortens its own output):
    the prefix says what it is, and what is left of the key is most of one."""
    secret = SECRETS[name]
    cut = secret[: max(12, len(secret) // 2)]
    out = redact(f"the refused call was `deploy --token {cut}{ellipsis}`")
    assert cut[:10] not in out and re.search(rf"\[REDACTED:[\w-]+\]{re.escape(ellipsis)}`$", out)


@pytest.mark.parametrize(
    "text",
    ["set npm_config_... variables", "call hf_hub_download... to fetch", "ghp_xxxxxxxx...",
     "sk-proj-abcdefgh... is the form of a key"],
)  # fmt: skip
def test_names_and_placeholders_cut_short_survive(text):
    assert redact(text) == text


def test_private_key_blocks_whole_and_truncated():
    body = "\n".join(b64url(64) for _ in range(5))
    block = f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----"
    out = redact(f"key file:\n{block}\ndone")
    assert body.splitlines()[0] not in out and out.endswith("done")
    cut = redact(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body[:100]}")
    assert body[:40] not in cut


@pytest.mark.parametrize(
    "text, secret",
    [
        ("postgres://app:S3cr3t-pa55@db.internal:5432/prod", "S3cr3t-pa55"),
        ("redis://:hunter2hunter2@cache:6379/0", "hunter2hunter2"),
        ("export DATABASE_PASSWORD=Tr0ub4dor&3", "Tr0ub4dor&3"),
        ("OPENAI_API_KEY='abc123def456ghi789'", "abc123def456ghi789"),
        ('{"api_key": "Zx9-long-random-value-42"}', "Zx9-long-random-value-42"),
        ("client_secret: 9f8e7d6c5b4a39281706", "9f8e7d6c5b4a39281706"),
        ("curl -H 'Authorization: Bearer abcDEF123456ghiJKL'", "abcDEF123456ghiJKL"),
        ("mysql -u root --password=Sup3rS3cret!", "Sup3rS3cret!"),
        ("Server=db;User Id=sa;Password=Pa55w0rd2024;", "Pa55w0rd2024"),
        ("SECRET_KEY = 'django-insecure-8h3k2l1m0n9b8v7c'", "django-insecure-8h3k2l1m0n9b8v7c"),
        ("PASS: hunter2hunter2", "hunter2hunter2"),
        ("--- PASS: hunter2hunter2", "hunter2hunter2"),  # not a Go test's name
        ("password = 'my (very) secret words'", "my (very) secret words"),
        ("api_key = a8Fk2LmQ9xZ3vB7nR1tY(", "a8Fk2LmQ9xZ3vB7nR1tY"),
        ('API_KEY="9f8e7d6c5b4a39281716a5f4e3d2c1b0 (production)"', "9f8e7d6c5b4a39281716"),
        ('AUTH_TOKEN="Bearer 7fA9qLmZ2xR8tY4wBn6cJd3h (expires 2025-01-01)"', "7fA9qLmZ2xR8"),
        ('JWT_SECRET="my super (very) secret signing string 8f3k2Lq9"', "signing string"),
        ("DB_PASSWORD=hUnTeRtWo(2)", "hUnTeRtWo"),
        # a parenthesis inside a value unquoted is part of it, not where it ends
        ("DB_PASSWORD=hunter2(2)", "(2)"),
        ("export DB_PASSWORD=abc(def)ghi", "def)ghi"),
        ("DB_PASSWORD=p@ss(w0rd)!", "w0rd"),
        ("password=foo(bar", "foo(bar"),
        # an independent review's leaks: JSON inside JSON, quotes and escapes inside a value,
        # Python's b'…', a suffix after the secret word, a call that is no call, an @ in a
        # URL's password, a key cut short, a value given apart from its name, a YAML block,
        # a password with spaces, sshpass, gh secret, a private key's body without its head
        (
            '"SecretString": "{\\"username\\":\\"admin\\",\\"password\\":\\"Xk9#mPq2!vLz\\"}"',
            "Xk9#mPq2",
        ),
        ('password = "it\'s-a-secret-99"', "secret-99"),
        ('password = "p\\"ssw0rd123"', "ssw0rd123"),
        ("app.secret_key = b'_5#y2L\"F4Q8z\\n\\xec]/'", "F4Q8z"),
        ("DB_PASS_PROD=Xk9mPq2vLz", "Xk9mPq2vLz"),
        ("STRIPE_KEY_LIVE=Zk3QxP9vLm2RtY8wQe7", "Zk3QxP9vLm2RtY8wQe7"),
        ("ENCRYPTION_KEY_1=Zk3QxP9vLm2RtY8wQe7", "Zk3QxP9vLm2RtY8wQe7"),
        ("DB_PASSWORD=Summer(2024)", "Summer"),
        ("DB_PASSWORD=p@ss[w0rd]", "w0rd"),
        ("DB_PASSWORD=Xk9mPq2[vLz]", "vLz"),
        ("postgresql://admin:Xk9mPq@q2vLz@db:5432/app", "q2vLz"),
        ("API_KEY=Zk3QxP9vLm2RtY8wQe7...", "Zk3QxP9vLm2RtY8wQe7"),
        ('t.Setenv("API_KEY", "Zk3QxP9vLm2RtY8wQe7")', "Zk3QxP9vLm2RtY8wQe7"),
        ('os.environ["API_KEY"] = "Zk3QxP9vLm2RtY8wQe7"', "Zk3QxP9vLm2RtY8wQe7"),
        ("- name: DB_PASSWORD\n  value: Xk9mPq2vLz", "Xk9mPq2vLz"),
        ('{"name":"DB_PASSWORD","value":"Xk9mPq2vLz"}', "Xk9mPq2vLz"),
        ("db:\n  password: |\n    Xk9#mPq2!vLz", "Xk9#mPq2"),
        ('--password "Xk9 mPq2vLz"', "mPq2vLz"),
        ("sshpass -p Xk9mPq2vLz ssh host", "Xk9mPq2vLz"),
        # a second review's: what the first fixes' exemptions let through, and gaps
        ('  postmark:\n    key: "9f3a7c1e-44b2-4d0a-b6e5-2c8f91d07a33"', "9f3a7c1e-44b2"),
        ("KEY=Xk9mP-q2vLz-R7tYw-8QeZ3", "R7tYw"),
        ("key: sk-lf-9f3a7c1e-44b2-4d0a-b6e5-2c8f91d07a33", "9f3a7c1e-44b2"),
        ('curl -b "session=Zk3QxP9vLm2R/tY8wQe7Hn4Jd6Kf1Ab" https://x', "tY8wQe7"),
        ("SESSION=eyJ1c2VyIjoxfQ/Zk3QxP9vLm2R", "Zk3QxP9vLm2R"),
        ('auth: { user: "me@gmail.com", pass: "Xk9 mPq2vLz!" }', "mPq2vLz"),
        ("sshpass -p 'Xk9mPq2vLz' ssh h", "Xk9mPq2vLz"),
        # a third review's: a type between the name and its value, a default in the code,
        # SQL, a value ended by an escaped newline, a dotted key, a private key cut short
        ('API_KEY: str = "a1B2c3D4e5F6g7H8i9J0"', "a1B2c3D4e5F6g7H8i9J0"),
        ('api_token_for_user="Zk3QxP9vLm2RtY8wQe7"', "Zk3QxP9vLm2RtY8wQe7"),  # not r"…"
        # a transcript's JSON line quoted in another: escaped twice over
        ('{"content": "{\\\\\\"password\\\\\\":\\\\\\"Xk9#mPq2!vLz\\\\\\"}"}', "Xk9#mPq2"),
        # setters, XML, a program's own password flag
        ("define('DB_PASSWORD', 'Zq8vXk9mPq2');", "Zq8vXk9mPq2"),
        ('props.put("password", "Zq8vXk9mPq2");', "Zq8vXk9mPq2"),
        ('ds.setPassword("Zq8vXk9mPq2");', "Zq8vXk9mPq2"),
        ("client.apiKey('Zk3QxP9vLm2RtY8wQe7')", "Zk3QxP9vLm2RtY8wQe7"),
        ("<password>Zq8vXk9mPq2</password>", "Zq8vXk9mPq2"),
        ('<add key="ApiKey" value="Zk3QxP9vLm2RtY8wQe7"/>', "Zk3QxP9vLm2RtY8wQe7"),
        ("redis-cli -h host -a Zq8vXk9mPq2 ping", "Zq8vXk9mPq2"),
        ("sqlcmd -S srv -U sa -P Zq8vXk9mPq2", "Zq8vXk9mPq2"),
        ("ldapsearch -x -D cn=admin -w Zq8vXk9mPq2", "Zq8vXk9mPq2"),
        ("keytool -list -keystore k.jks -storepass Zq8vXk9mPq2", "Zq8vXk9mPq2"),
        ("openssl pkcs12 -export -passout pass:Zq8vXk9mPq2 -out x.p12", "Zq8vXk9mPq2"),
        ('requests.get(url, auth=HTTPBasicAuth("bob", "Zq8vXk9mPq2"))', "Zq8vXk9mPq2"),
        ('requests.get(url, auth=("bob", "Zq8vXk9mPq2"))', "Zq8vXk9mPq2"),
        ('DriverManager.getConnection(url, "app", "Zq8vXk9mPq2");', "Zq8vXk9mPq2"),
        ('sql.Open("mysql", "root:Zq8vXk9mPq2@tcp(127.0.0.1:3306)/app")', "Zq8vXk9mPq2"),
        ('headers = {"Authorization": f"Bearer a1B2c3D4e5F6g7H8i9J0k1L2"}', "a1B2c3D4e5F6g7H8"),
        ("{headers: {Authorization: `Bearer a1B2c3D4e5F6g7H8i9J0k1L2`}}", "a1B2c3D4e5F6g7H8"),
        ('const API_TOKEN: string = "a1B2c3D4e5F6g7H8i9J0";', "a1B2c3D4e5F6g7H8i9J0"),
        ('os.environ.get("SECRET_KEY", "a1B2c3D4e5F6g7H8i9J0")', "a1B2c3D4e5F6g7H8i9J0"),
        ('os.getenv("API_TOKEN", "a1B2c3D4e5F6g7H8i9J0")', "a1B2c3D4e5F6g7H8i9J0"),
        ('const s = process.env.JWT_SECRET || "a1B2c3D4e5F6g7H8i9J0";', "a1B2c3D4e5F6g7H8i9J0"),
        ("CREATE USER 'app'@'%' IDENTIFIED BY 'Zq8vXk9mPq2';", "Zq8vXk9mPq2"),
        ("ALTER USER app WITH PASSWORD 'Zq8vXk9mPq2';", "Zq8vXk9mPq2"),
        (
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ7a9LmKp2\\n"
            "aws_session_token = FwoGZXIvYXdzEBYaDHk9mPq2vLz",
            "wJalrXUtnFEMI",
        ),
        ("MAPBOX_SECRET_TOKEN=sk.eyJ1IjoibWFwYm94In0.Zk3QxP9vLm2RtY8wQe7", "Zk3QxP9vLm2RtY8wQe7"),
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7",
            "MIIEvQIBADANBgkq",
        ),
        ('gh secret set API_KEY --repo org/repo --body "Zk3QxP9vLm2RtY8wQe7"', "Zk3QxP9vLm2"),
        ('gh secret set API_KEY -b"Zk3QxP9vLm2RtY8wQe7"', "Zk3QxP9vLm2"),
        ("- Name: DB_PASSWORD\n  Value: Xk9$mPq2vL", "mPq2vL"),
        ('{\\"name\\":\\"DB_PASSWORD\\",\\"value\\":\\"Xk9mPq2vLz\\"}', "Xk9mPq2vLz"),
        (
            'curl -X POST -d \'{"a":"' + "x" * 500 + "\"}' -u ops-bot:Xk9mPq2vLzR7 https://x",
            "Xk9mPq2vLzR7",
        ),
        ("gh secret set API_TOKEN --body Zk3QxP9vLm2RtY8wQe7", "Zk3QxP9vLm2RtY8wQe7"),
        (
            "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n"
            "MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu\n"
            "-----END PRIVATE KEY-----",
            "MzEfYyjiWA4R4",
        ),
        ("SECRET_KEY=xKqPzRmWvLtNbYhJfGdSaQwErTy(prod)", "xKqPzRmWvLtNbYhJfGdSaQwErTy"),
        ('TOKEN="xKqPzRmWvLtNbYhJ(a) note"', "xKqPzRmWvLtNbYhJ"),
        ("--- PASS: Test1234", "Test1234"),  # no duration: not Go's report
        ("--- PASS: TestLogin/sk_9fA3kQ2LmZx8Rt", "sk_9fA3kQ2LmZx8Rt"),
        ('client_secret: "Zk3QxP9vLm2RtY8wBn4cJd7h (rotated 2024-05)"', "Zk3QxP9vLm2RtY8w"),
        # Oracle's user/password before the connect identifier (a fourth review)
        ("sqlplus -s system/Xk9mPq2vLz@//db:1521/XE @run.sql", "Xk9mPq2vLz"),
        ("expdp userid=system/Oracle_123@pdb1 directory=dp", "Oracle_123"),
        ("SQL> conn sys/Adm1n#2024 as sysdba", "Adm1n#2024"),
        ("rman target sys/Rm4n_pw@cdb", "Rm4n_pw"),
        ("rman target sys/Welc0me1@prod catalog rcat/Cat4l0g99@rcat", "Cat4l0g99"),
        ('expdp \\"sys/Welc0me1@orcl as sysdba\\" directory=DP', "Welc0me1"),
        ('sqlplus scott/"p@ssw0rd1"@orcl', "p@ssw0rd1"),
        ("sqlplus -s -R 3 scott/Welc0me1@orcl", "Welc0me1"),
        ('sqlplus -s -M "csv on" scott/Welc0me1@orcl', "Welc0me1"),
        # where only a password can stand and prose puts no word, a plain word or a number
        ("git clone https://bob:letmein@github.com/org/repo", "letmein"),
        ("postgres://app:4711@db/app", "4711"),
        ("mysql -u app -papppass app", "apppass"),
        ("CREATE USER app IDENTIFIED BY 'tiger'", "tiger"),
    ],
)
def test_passwords_in_urls_assignments_headers_and_flags(text, secret):
    out = redact(text)
    assert secret not in out, out
    assert "[REDACTED:" in out


@pytest.mark.parametrize(
    "text",
    [
        "MAX_TOKENS=4096",
        "token_count: 1500",
        "PASSWORD_MIN_LENGTH=12",
        "password = settings.DB_PASSWORD",
        "api_key = os.environ.get",
        "OPENAI_API_KEY=${OPENAI_API_KEY}",
        "API_KEY=<your-api-key>",
        "password: changeme",
        "export TOKEN=$GITHUB_TOKEN",
        "TOKENIZER_PATH=/models/tokenizer.json",
        "AUTH_URL=https://auth.example.com/login",
        "we use scikit-learn (sk-learn) and a task-runner for risk-management",
        "The ghp_ prefix marks GitHub classic tokens; eyJ starts a JWT header.",
        "https://github.com/org/repo/blob/main/src/a.py",
        "git clone git@github.com:org/repo.git",
        "Reset the password via the forgot-password form; secrets live in Vault.",
        "session_id: 2f1c9a7e-3b4d-4e5f-8a9b-0c1d2e3f4a5b",
        "commit 4f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 fixed the token refresh",
        # Go's test report names the tests that passed
        "=== RUN   TestResetCmd\n--- PASS: TestResetCmd (0.05s)\n"
        "    --- PASS: TestResetCmd/no_git_repo (0.01s)\nPASS",
        "--- PASS: ExampleParse (0.00s)",
        # code: a call assigned, a signature described
        "enhanced_sessions = _get_enhanced_session_navigation(session_id, cache_manager)",
        "result.ArchivedSessions = s.readArchivedSessionsFromSummary(checkpointTree, summary)",
        "usage, tokenErr := geminicli.CalculateTokenUsageFromFile(ctx.transcriptPath, start)",
        "auth=HTTPBasicAuth(user,pw)",
        "password=getpass()",
        "--- PASS: TestIsShadowBranch/prefix_only_(5_chars) (0.00s)",
        # and the look-alikes it found marked in the shared sessions
        "--- PASS: TestIsShadowBranch/old_format:_7_hex_chars (0.00s)\n--- PASS: TestX/#00 (0.00s)",
        "PASS: tests/unit/auth.test.js",
        "tokenUsage := &agent.TokenUsage{",
        "git fetch origin entire/sessions:entire/sessions; Session: 2025-12-10-xyz789",
        "key: setup-uv-1-x86_64-unknown-linux-gnu-f6c65b0a51",
        "src/tokenizer.css:ul#models {",
        "sessions: Dict[str, SessionCache] = {}",
        "uuid_to_session: Dict[str, str] = {}",
        "All tests pass: `mise run test:ci`",
        'password = get_password(user); password = os.environ["DB"]',
        't.Setenv("HOME", "/tmp/home"); os.environ["TOKEN_PATH"] = "/etc/token"',
        "- name: API_KEY_NAME\n  value: my-key",
        "description: |\n  This explains the token refresh flow.",
        'gh pr create --title x --body "Fix #12: retry 3 times"',
        'api_key: "sk-..."',
        "password = sys.argv[1]; db_password = parts[2]; password := os.Args[1]",
        "BasicAuth(username=auth[0], password=auth[1])",
        "pwd = os.path.dirname(os.path.abspath(__file__))",
        "self.passwords: Dict[str, AuthInfo] = {}",
        't.Setenv("GITHUB_TOKEN", os.Getenv("GH_TOKEN"))',
        'os.environ["HF_TOKEN"] = token.strip()',
        "signature: >\n  Returns the number of tokens in the text.",
        'password: "can\'t be blank"',
        'passwordMismatch: "Passwords don\'t match"',
        'curl -u "$USER:$TOKEN" https://x',
        '"""The file starts with -----BEGIN RSA PRIVATE KEY----- and then base64.\nMore."""',
        "jsonnet_token = r'[^\\W\\d]\\w*'",
        "AWS_SIGNATURE_V2 = 'AWS_SIGNATURE_V2'",
        'no_certs_key = "Don\'t embed data in the PKCS7 structure"',
        "password = get_auth_from_url(new_proxies[scheme])",
        "password=PasswordProperty(hashfunc=sha256)",
        "key: Callable[[int], str]",
        'token = os.getenv("API_TOKEN", default_token)',
        "ab-cd-ef-gh-ij key=x",
        "mongo --host h -u admin -p --authenticationDatabase admin",
        'config.set("theme", "dark-mode"); ds.setPassword(password); reset("token_cache")',
        "<password>${DB_PASSWORD}</password>",
        'props.put("password", System.getenv("PW"))',
        'auth=HTTPBasicAuth(user, password); auth = ("bob", os.environ["PW"])',
        'dsn := "root:@tcp(127.0.0.1:3306)/app"',
        "- Signature: `flatten(nested: list) -> list`",
        "sqlplus / as sysdba; rman target /",
        "connect the src/Foo2 module; we connect src/a.py@v2 to b",
        "Connect frontend/backend services",
        "the build target src/Main2 needs a connection; a catalog app/Models2 over it",
        "Improve performance of the catalog api/v2Beta3 endpoint; auxiliary scripts/build2Fast",
        "CONNECT system/&&password_system@&&connect_string\nconn hr/&hr_pass",
        # where only a password goes, what documents put there instead of one
        "https://user:password@host/db\nmysql -u root -ppassword\nredis-cli -a secret",
        'f"postgresql://{user}:{password}@{host}"; mysql -u root -p$MYSQL_PWD app',
        "password: str; password hashing uses bcrypt; --token my-token-name",
        # a flag's value after a space may be a word of the text around it
        "add a reset-password page; the forgot-password flow sends an email",
        "POST /api/reset-password returns 204; set the db-password field in the config",
        "the --password flag is deprecated\n  --password TEXT   The database password",
        "redis-cli -a is deprecated; sshpass -p is unsafe",
        "RUN apt-get install -y curl\ndocker run -u 1000:1000 app",
        "docker run --name mongo -p 8081 -d mongo\nmongo-express -p 8081",
        "skopeo inspect docker://alpine:3.19@sha256:0123abcd; docker://nginx:latest@sha256:ff",
    ],
)
def test_look_alikes_survive(text):
    assert redact(text) == text


def test_redact_value_walks_json():
    secret = SECRETS["github-classic"]
    value = {"cmd": f"gh auth login --with-token {secret}", "n": 3, "list": [secret, None]}
    out = redact_value(value)
    assert secret not in repr(out) and out["n"] == 3 and out["list"][1] is None


@given(st.text(max_size=300))
def test_redaction_is_idempotent_and_total(text):
    once = redact(text)
    assert redact(once) == once


def test_every_rule_but_the_key_body_runs_only_on_texts_with_its_keywords():
    """A rule with no keyword runs on every text: two rules whose keywords were given beside
    them, where the central table overwrote them, ran on every text Cortex stores (redacting
    a real session's records took 60% longer)."""
    assert [r.kind for r in R.all_rules() if not r.keywords] == ["key-body-lines"]
    assert {"cut-token", "oracle-password"} <= set(R._OWN_KEYWORDS)


# A long text is searched for the rules' keywords in one pass (a trie pattern), a short one
# keyword by keyword; both must choose the same rules, or a secret in a long tool output
# would be missed.
_KEYWORD_FRAGMENTS = st.sampled_from(
    ["sk-", "sk", "ghp_", "xoxb-", "akia", "eyj", "key", "secret", "token", "hf_", "://", "ac",
     "pass", "npm_", "glpat-", "AIza", "ſecret", "K", " ", "=", "_", "-", "\n"]
)  # fmt: skip


@given(st.lists(st.one_of(_KEYWORD_FRAGMENTS, st.text(max_size=8)), max_size=80))
def test_one_pass_keyword_search_chooses_the_same_rules(parts):
    from cortexmem.core.redact import _folded, _keyword_index, _keyword_pass

    lower = _folded("".join(parts))
    words, by_word, always = _keyword_index()
    one_by_one = set(always).union(*(by_word[w] for w in words if w in lower))
    pattern, implied = _keyword_pass()
    one_pass = set(always).union(*(implied[m.group(1)] for m in pattern.finditer(lower)))
    assert one_pass == one_by_one


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_secrets_deep_in_a_long_tool_output_are_redacted(name):
    filler = "ok  \tentire.io/cli/cmd/entire/cli/paths\t1.049s\n" * 60  # over 2,000 characters
    text = f"{filler}export TOKEN={SECRETS[name]}\n{filler}"
    assert SECRETS[name] not in redact(text)


@given(
    st.text(alphabet="aZ_.-9 \t\"'", max_size=12),
    st.sampled_from(["secret", "Token", "PASS", "pwd", "api_key", "Cookie", "SESSION", "ſalt"]),
    st.text(alphabet="aZ_.-9\"' \t", max_size=12),
    st.sampled_from([":=", "=>", "?=", ":", "=", " = ", ": "]),
    st.text(alphabet=ALNUM + "\"'`/+-_", min_size=4, max_size=40),
)
def test_the_assignment_prefilter_passes_every_text_the_rule_matches(head, word, tail, op, value):
    from cortexmem.core.redact import _folded, all_rules

    rule = next(r for r in all_rules() if r.kind == "assignment")
    text = f"{head}{word}{tail}{op}{value}"
    if rule.pattern().search(text):
        assert rule.prefilter is not None and rule.prefilter(_folded(text))


# gitleaks' "generic" rules name their provider before the assignment; each gets a prefilter
# that asks for one of those names first. Any text the rule matches must pass it.
_NAMED = [r for r in R.gitleaks_rules() if r.prefilter and R._NAMED_RULE.match(r.regex)]


@given(
    st.sampled_from(_NAMED),
    st.sampled_from(["", "my_", "export ", '"', "API."]),
    st.sampled_from(["key", "_token", "secret", ""]),
    st.sampled_from([" = ", "=", ": ", ':"', " => ", "='"]),
    st.text(alphabet=ALNUM + "_-", min_size=8, max_size=90),
    st.booleans(),
)
def test_a_named_rules_prefilter_passes_every_text_the_rule_matches(
    rule, head, tail, op, value, named
):
    from cortexmem.core.redact import _NAMED_RULE, _folded

    names = _NAMED_RULE.match(rule.regex).group(1).split("|")
    word = names[len(value) % len(names)] if named else "unrelated"
    text = f"{head}{word}{tail}{op}{value}"
    if rule.pattern().search(text):
        assert rule.prefilter is not None and rule.prefilter(_folded(text))
    if named:
        assert rule.prefilter is not None and rule.prefilter(_folded(text))


@pytest.mark.parametrize(
    "text",
    [
        'curl -H "Authorization: Bearer Zk3QxP9vLm2RtY8wQe7" https://x',
        'curl https://x --header "X-Api-Key: Zk3QxP9vLm2RtY8wQe7"',
        "curl -u ops:Xk9mPq2vLzR7 https://x",
        "curl --user=ops:Xk9mPq2vLzR7 https://x",
    ],
)
def test_the_curl_rules_read_only_texts_with_their_flag_and_miss_none(text):
    rules = {r.kind: r for r in R.gitleaks_rules() if r.kind.startswith("curl-auth-")}
    matched = [r for r in rules.values() if r.pattern().search(text)]
    assert matched and all(r.prefilter(R._folded(text)) for r in matched)
    assert not any(r.prefilter(R._folded("curl " * 50)) for r in rules.values())
    assert "Zk3QxP9vLm2RtY8wQe7" not in redact(text) and "Xk9mPq2vLzR7" not in redact(text)


def test_rules_searched_without_their_leading_context_find_the_same_secrets():
    """gitleaks' rules match up to 100 characters of context before a name; compiled without
    it (only a group is the secret) they must find exactly the values the rule as written
    finds, with context before the name or not."""
    rng = random.Random(7)
    lead_free = [r for r in R.all_rules() if r.group > 0 and r.pattern().pattern != r.regex]
    assert len(lead_free) > 50
    for rule in lead_free:
        name = rule.keywords[0]
        for alphabet in (string.ascii_letters + string.digits, "abcdef0123456789"):
            value = "".join(rng.choice(alphabet) for _ in range(40))
            text = (f'export my_{name}_token="{value}"\n{name.upper()}_API_KEY: {value[:32]}\n'
                    f"x.{name}-secret = {value[:24]}")  # fmt: skip
            as_written = re.compile(rule.regex, rule.flags)
            found = [m.group(rule.group) for m in rule.pattern().finditer(text)]
            assert found == [m.group(rule.group) for m in as_written.finditer(text)], rule.kind


# --------------------------------------------------------------- cut only after redaction
# Every place that keeps the head of a long text redacts what reaches the cut first: a token
# the cut went through would keep most of itself, and no rule knows a token by its first half.


def _straddling(limit: int) -> tuple[str, str]:
    token = SECRETS["github-classic"]  # cut 30 characters in: too short for its rule
    return "x" * (limit - 31) + f" {token} and more", token[:20]


def test_a_long_tool_result_is_redacted_before_it_is_cut():
    from cortexmem.hosts.claude_code.transcript import MAX_RESULT_CHARS, parse_record

    text, head = _straddling(MAX_RESULT_CHARS)
    record = {
        "type": "user",
        "timestamp": "2026-01-01T00:00:00Z",
        "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": text}]},
    }  # fmt: skip
    entry = parse_record(record, 1)
    assert entry is not None and "more characters]" in repr(entry)
    assert head not in repr(entry)


def test_what_a_warning_records_of_a_call_is_redacted_before_it_is_cut():
    from cortexmem.core.lessons.facts import Action

    text, head = _straddling(200)
    for action in (Action(tool="shell", kind="shell", command=f"echo {text}"),
                   Action(tool="edit", kind="edit", path="a.py", text=text)):  # fmt: skip
        assert head not in action.describe()


def test_a_refusals_words_are_redacted_before_they_are_cut():
    from cortexmem.hosts.claude_code.transcript import REFUSALS, refusal_reason

    text, head = _straddling(1_000)
    said = f"{REFUSALS[0]}. To tell you how to proceed, the user said:\n{text}"
    reason = refusal_reason(said)
    assert reason and head not in reason


def test_where_a_record_came_from_is_redacted_too():
    """A branch, a folder, a session or a tool can be named with a key (``rotate/ghp_…``,
    an MCP server's tool); what is stored about where a record came from is redacted."""
    from cortexmem.core.redact import redact_event, redact_memory, redact_observation
    from cortexmem.model import Event, Memory, Observation, Provenance, SourceContext

    token = SECRETS["github-classic"]
    memory = redact_memory(
        Memory("x", source_context=SourceContext(branch=f"rotate/{token}", cwd=f"/w/{token}"))
    )
    event = redact_event(Event("command", "ran it", provenance=Provenance(branch=token)))
    observed = redact_observation(
        Observation(
            session_id="s", tool=f"mcp__vault__{token}", ok=True, at="2026-01-01T00:00:00.000000Z"
        )
    )
    assert token not in repr((memory, event, observed))
    assert memory.source_context.branch.startswith("rotate/")
    plain = Memory("x", source_context=SourceContext(branch="feature/login", cwd="/w/app"))
    assert redact_memory(plain) is plain


@pytest.mark.parametrize("limit", [200, 20_000])
def test_a_secret_that_shrinks_the_window_leaves_no_blind_spot_at_its_end(limit):
    """A private key redacted inside the window before the cut shortens it by thousands of
    characters: the window's own end then falls inside what is kept, and a token it cut
    through kept its head (shown by an independent review)."""
    from cortexmem.core.text import REDACT_MARGIN, clip_redacted
    from cortexmem.hosts.claude_code.transcript import _cut

    at = limit + REDACT_MARGIN - 29  # where the first window ends, 29 characters into it
    # a key that fits before the token and shrinks the window by more than its margin
    body = "\n".join(b64url(64) for _ in range(min(50, (at - 200) // 65)))
    pem = f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----\n"
    assert REDACT_MARGIN < len(pem) < at
    token = SECRETS["github-classic"]
    text = pem + "y" * (at - len(pem) - 1) + " " + token + " and after\n" + "z" * 30_000
    clipped = clip_redacted(text, limit)
    assert token[:12] not in clipped and body[:40] not in clipped
    # the transcript's cut redacts only around the cut: what lies whole before it is
    # redacted when it is stored
    assert token[:12] not in _cut(text, limit)


def test_leading_blanks_do_not_shift_the_window_into_what_is_kept():
    """A progress bar's redraws: thousands of blank characters before the text. Stripped
    after the window was redacted, they moved its end into what was kept."""
    from cortexmem.core.text import REDACT_MARGIN, clip_redacted

    token = SECRETS["github-classic"]
    said = "token in use: "
    blanks = " " * (300 + REDACT_MARGIN - 29 - len(said))  # the window ends 29 into the token
    assert token[:12] not in clip_redacted(blanks + said + token + " done" * 400, 300)


def test_a_token_cut_before_the_mark_of_a_cut_is_redacted():
    """An older Cortex cut tool output raw, then wrote "\\n… [N more characters]": what is
    left of a token before that mark is a token cut short."""
    cut = SECRETS["github-classic"][:22]
    out = redact(f"echo {cut}\n… [987 more characters]")
    assert cut not in out and "[REDACTED:cut-token]" in out


def test_the_middle_of_a_key_out_of_sight_of_both_its_lines_is_redacted():
    """A key file read from an offset and cut short: neither its BEGIN nor its END line is
    within reach, and its base64 lines were kept (shown by an independent review)."""
    from cortexmem.core.text import clip_redacted

    lines = [b64url(64).replace("-", "+").replace("_", "/") for _ in range(120)]
    text = "\n".join(lines) + "\n-----END PRIVATE KEY-----\n"
    kept = clip_redacted(text[65 * 10 :], 240)
    assert lines[11][:20] not in kept and "[REDACTED:" in kept
    three = "\n".join(lines[:3])
    assert redact(f"a\n{three}\nb") == f"a\n{three}\nb"  # not four: not the shape of a key


def test_a_key_body_indented_or_in_openssh_lines_is_redacted():
    """Quoted in a YAML value or a reply (indented), or an OpenSSH key (70 to a line): the
    body rule's lines; what follows the body stays (a third review)."""
    rows = [b64url(n).replace("-", "+").replace("_", "/") for n in (64,) * 7]
    indented = "\n".join("    " + r for r in rows) + "\n    " + rows[0][:30] + "=="
    out = redact(f"values:\n{indented}\nnext: 1\ndone")
    assert not any(r[:20] in out for r in rows) and out.endswith("\nnext: 1\ndone")
    openssh = "\n".join(b64url(70).replace("-", "+").replace("_", "/") for _ in range(6))
    assert "[REDACTED:" in redact(openssh)


@pytest.mark.parametrize(
    "tag",
    ["code:src/auth/token.py::refresh", "code:password.py::hash_password",
     "code:api_key.py::ApiKey.get", "code:migrations/versions/3b2f1a9c7d4e_add_users.py::up"],
)  # fmt: skip
def test_a_code_marker_names_its_file_and_symbol_as_they_are(tag):
    """ "token.py::refresh" read as a name given a value: the deleted function's memory was
    never found again (a third review)."""
    assert R.redact_tag(tag) == tag
    assert "[REDACTED:github-token]" in R.redact_tag(f"doc:docs/{SECRETS['github-classic']}.md")


def test_a_json_value_is_redacted_by_its_key():
    """In JSON a key and its value are separate strings, and a password is known by its
    name: "DATABASE_PASSWORD": "Xk9mPq2vLz77Hq" was kept by a pass over each string alone
    (a settings.json kept in a suggestion, a third review), and a name/value pair too."""
    secret = "Xk9mPq2vLz77Hq"
    assert secret not in (R.redact_json_text(f'{{"DATABASE_PASSWORD": "{secret}"}}') or "")
    pair = redact_value({"env": [{"name": "AWS_SECRET_ACCESS_KEY", "value": secret}]})
    assert secret not in repr(pair)
    kept = {"max_tokens": "4096", "passwordHint": "your dog", "name": "db", "value": "postgres"}
    assert redact_value(kept) == kept


@pytest.mark.parametrize(
    "record",
    [
        {"Name": "DB_PASSWORD", "Value": "{s}"},  # an ECS task's environment
        {"ParameterKey": "DbPassword", "ParameterValue": "{s}"},  # a CloudFormation parameter
        {"password": ["{s}"]},
        {"api_keys": {"prod": "{s}", "name": "stripe"}},
        {"secrets": [{"name": "db", "value": "{s}"}]},
        {"token": "{s}"},
        # a second review: an SSM parameter's path, a pair as a two-item list, a pair with
        # two names of which the second says what it is
        {"Parameter": {"Name": "/prod/db/password", "Type": "SecureString", "Value": "{s}"}},
        {"Parameters": [{"Name": "/prod/stripe/api-key", "Value": "{s}"}]},
        {"env": [["DB_PASSWORD", "{s}"]]},
        {"name": "app-config", "key": "db_password", "value": "{s}"},
    ],
)
def test_a_json_secret_is_known_by_the_nearest_key_that_names_it(record):
    """A fourth review: a capitalised Name/Value pair, a list or an object under a secret's
    key, and a plain "token" kept their secret through a pass over JSON."""
    secret = "Xk9mPq2vLz77Hq"
    planted = json.loads(json.dumps(record).replace("{s}", secret))
    assert secret not in json.dumps(redact_value(planted))


def test_what_names_no_secret_stays_under_a_key_that_does():
    kept = {
        "api_keys": {"name": "stripe", "url": "https://api.stripe.com", "expires": "2026-12"},
        "environment": [{"Name": "LOG_LEVEL", "Value": "debug"}],
        "key": "3f2a9c8b7d6e5f40",  # a lesson's key: a hash that makes two lessons one
        "token": "12:40:3|5:6:7",  # a store's token, as the briefing cache keeps it
        # what a key under a secret's name says it is (a second review)
        "credentials": [{"username": "svc-deploy-01", "host": "db-primary.internal:5432"}],
        "Credentials": {"Expiration": "2024-06-01T12:00:00+00:00", "region": "us-east-1"},
        "token_usage": {"model": "claude-sonnet-4-5-20250929"},
        "secrets": [
            {"name": "DB_PASSWORD", "valueFrom": "arn:aws:ssm:us-east-1:1234:parameter/db"}
        ],
        "auth_token": {"scopes": ["admin:repo_hook", "read:org"]},
        "password_prompt": {"message": "Enter PIN:"},
        "parameters": [{"ParameterKey": "DbMasterUserPassword", "ParameterValue": "{{resolve}}"}],
    }
    assert redact_value(kept) == kept


def test_a_list_of_sessions_is_ids_but_a_session_cookie_stays_a_secret():
    """How Claude Code names a session: a lesson's list of sessions lost them on export (a
    fourth review); a UUID under "session" may be a cookie (a browser's saved state), and a
    fifth review found it kept once UUIDs were taken for ids everywhere."""
    uuid = "0a93878f-dc30-4a5d-882f-3cd81cd3d499"
    assert redact_value({"sessions": [uuid]}) == {"sessions": [uuid]}
    assert uuid not in redact(f'session = "{uuid}"') + redact(f"export SESSION={uuid}")
    jar = {"cookies": [{"name": "session", "value": uuid, "domain": "app.example.com"}]}
    assert uuid not in json.dumps(redact_value(jar))
    assert "eyJhbGci" not in redact("session=eyJhbGciOiJIUzI1NiJ9abcdefXYZ123")


def test_a_token_longer_than_the_margin_is_read_whole_before_any_cut():
    """An access token with its claims runs to 5 kB, past the 2,000 characters read beyond a
    cut: its first part was kept by a cut through it, and the end of its output by a
    command's kept end (a fifth review)."""
    import base64

    from cortexmem.core.episodes import head_and_end
    from cortexmem.core.text import clip_redacted

    claims = json.dumps({"groups": [f"g{n:04d}" for n in range(400)]}).encode()
    jwt = "eyJhbGciOiJSUzI1NiJ9." + base64.urlsafe_b64encode(claims).decode() + "." + "Sig" * 90
    output = f'{{\n  "accessToken": "{jwt}",\n  "expiresOn": "2026-01-01"\n}}'
    busy = "build output line\n" * 200 + f"token {jwt} done\n" + "tail line\n" * 20
    for kept in (clip_redacted(output, 366), head_and_end(output, 1_100),
                 head_and_end(busy, 1_100), clip_redacted("x " * 100 + jwt, 300)):  # fmt: skip
        assert jwt[30:60] not in kept and jwt[-40:] not in kept, kept
    assert head_and_end(output, 1_100) == redact(output)  # all of it fits once redacted
