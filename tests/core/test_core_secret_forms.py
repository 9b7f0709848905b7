"""A secret never reaches an artifact in any form (issue 9, item 4; issue 18, class 3).

Unit tests of :mod:`pytest_verial._secrets`: the forms a server or library echoes a secret in,
and a hypothesis property on :func:`~pytest_verial._secrets.redact` (random keys, several
registered at once, each written whole in one encoding: case changes, ``_`` as ``-``,
percent-encoding per byte in either case, JSON ``\\uXXXX``, Python ``\\xNN`` and ``\\_``-style
escapes, HTML references, hex, base64 and base64url at 3 offsets with and without padding; or
with every character encoded its own way). Then sessions: child sessions at ``-n 0`` and
``-n 2`` where a check echoes a key that only run.yaml names, in every channel pytest has
(details, evidence, stdout, logs, warnings, a traceback with locals), and one real session in
which the agent wrote every encoded form of the judge key and of a run.yaml key into its
sandbox: no form survives in any artifact.
"""

from __future__ import annotations

import base64
import json
import socket
import sqlite3
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest
from core_support import DEFAULT_STORE, Project, criterion_runs, run_subprocess
from hypothesis import given, settings
from hypothesis import strategies as st

# private: the masker's process-wide registry and a secret's derived forms have no public face
from pytest_verial import _secrets as secrets

KEY = "sk-live-Q7m2/xVb9+LpT4=kR"


@pytest.fixture
def only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This test's secrets only (the registry is process-wide)."""
    monkeypatch.setattr(secrets, "_SECRETS", set())
    monkeypatch.setattr(secrets, "_PATTERN", None)
    monkeypatch.setattr(secrets, "_MEMO", {})
    monkeypatch.setattr(secrets, "_PREFILTER_OF", -1)
    yield


ECHOES = {
    "as read": lambda k: f"bad key {k}",
    "trailing newline stripped": lambda k: f"bad key {k}.",
    "repr (httpx header)": lambda k: "Illegal header value " + repr(f"Bearer {k}\n".encode()),
    "json escaped": lambda k: json.dumps({"error": f'key "{k}" revoked'}),
    "url-encoded": lambda k: f"GET /x?api_key={quote(k, safe='')}",
    "url-encoded, lower-case hex": lambda k: "q=" + quote(k, safe="").lower(),
    "form-encoded": lambda k: "client_secret=" + quote_plus(k),
    "basic auth": lambda k: "Basic " + base64.b64encode(f"client-id:{k}".encode()).decode(),
    "basic auth, 1-byte offset": lambda k: "Basic " + base64.b64encode(f"id:{k}".encode()).decode(),
    "url-safe base64": lambda k: base64.urlsafe_b64encode(f"xx{k}".encode()).decode(),
    "wrapped line": lambda k: "\n    ".join(textwrap.wrap(f"the server refused {k} today", 20)),
    "split by an escaped newline": lambda k: f"{k[:9]}\\n{k[9:]}",
    "truncated snippet": lambda k: f"'...body: {k[:11]}...'",
    "last half": lambda k: f"tail {k[-12:]} end",
    "one space between every character": lambda k: "key " + " ".join(k),
    "html escaped": lambda k: "<p>" + k.replace("+", "&#43;").replace("/", "/") + "</p>",
}


@pytest.mark.parametrize("echo", ECHOES.values(), ids=list(ECHOES))
def test_every_echoed_form_of_a_secret_is_masked(only: None, echo: object) -> None:
    secrets.register(KEY + "\n")  # as an env value often is
    text = echo(KEY)  # type: ignore[operator]
    masked = secrets.redact(text)
    assert "***" in masked
    # no run of 8 characters of the key (or of a form of it) survives
    for form in secrets.forms(KEY):
        for i in range(len(form) - 7):
            assert form[i : i + 8] not in masked, (form[i : i + 8], masked)


@pytest.mark.parametrize("secret", ["pw9!x2", "two words here", 'q"uo\\te&<x>'])
def test_short_and_odd_secrets_are_found_by_the_prefilter(only: None, secret: str) -> None:
    secrets.register(secret)
    for text in (f"[{secret}]", json.dumps(secret), repr(secret), quote_plus(secret)):
        assert secret not in secrets.redact(text), text
        assert "***" in secrets.redact(text), text


def test_text_without_the_secret_is_left_alone(only: None) -> None:
    secrets.register(KEY)
    text = "sk-live is a prefix; Q7m2 x LpT4 kR are short pieces; base64 aGVsbG8= stays"
    assert secrets.redact(text) == text
    assert secrets.redact_json({"a": [text, 1, None]}) == {"a": [text, 1, None]}


def test_keys_of_json_objects_are_masked_too(only: None) -> None:
    secrets.register(KEY)
    assert secrets.redact_json({KEY: {"v": [KEY]}}) == {"***": {"v": ["***"]}}


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("token_env", True),
        ("client_secret_env", True),
        ("api_key_env", True),
        ("password_env", True),
        ("access_token_env", True),
        ("base_url_env", False),
        ("token_url_env", False),
        ("client_id_env", False),
        ("database_url_env", False),
    ],
)
def test_which_env_settings_hold_secrets(name: str, secret: bool) -> None:
    assert secrets.is_secret_setting(name) is secret


def test_a_url_setting_is_not_a_secret_but_its_password_is(only: None) -> None:
    secrets.register_setting("base_url_env", "https://fhir.example.org/r4\n")
    assert not secrets.registered()
    secrets.register_setting("database_url_env", "postgres://app:Pa55-w0rd-xyz@db:5432/x")
    text = "cannot connect to postgres://app:Pa55-w0rd-xyz@db:5432/x"
    assert secrets.redact(text) == "cannot connect to postgres://app:***@db:5432/x"


ECHO_CONFTEST = """
import json, logging, os, warnings
from typing import Literal
from urllib.parse import quote_plus
from pydantic import Field
from pytest_verial import AssertionSpec, CheckOutcome, CheckSpec

class Echo(AssertionSpec):
    kind: Literal["echo"] = Field(alias="assert")
    how: str = "details"

def echo(spec, ctx):
    name = ctx.options["sandbox"].settings("partner")["api_key_env"]
    key = os.environ[name]  # not registered here: the plugin did at start
    if spec.how == "crash":
        raise RuntimeError(f"partner rejected {key!r}")
    print(f"stdout: {key}")
    logging.getLogger("partner").warning("log: %s", key)
    warnings.warn(f"warning: {key.strip()}")
    wrapped = key.strip()[:10] + "\\n   " + key.strip()[10:]
    return CheckOutcome(
        0.0,
        f"server said {key!r}; form {quote_plus(key.strip())}; wrapped {wrapped}",
        {"body": json.dumps({"echo": key})},
    )

def pytest_verial_checks():
    return [CheckSpec("echo", Echo, echo)]
"""


def _echo_project(path: Path) -> Project:
    project = Project(path)
    project.conftest(ECHO_CONFTEST)
    project.benchmark(
        "b",
        {
            "tasks": [
                {
                    "id": "t",
                    "criteria": [
                        {"id": "c", "assertion": {"assert": "echo"}},
                        {"id": "crash", "assertion": {"assert": "echo", "how": "crash"}},
                    ],
                }
            ]
        },
    )
    project.sandbox("t", {"output.md": "x"})
    project.run_yaml({"sources": {"partner": {"api_key_env": "PARTNER_KEY_9"}}})
    return project


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_key_named_by_run_yaml_is_masked_in_every_output(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, workers: str
) -> None:
    project = _echo_project(pytester.path)
    monkeypatch.setenv("PARTNER_KEY_9", KEY + "\n")
    code, output = run_subprocess(
        project.path,
        "-n",
        workers,
        "-rA",
        "-l",
        "--tb=long",
        "--verial-report",
        "report.json",
        "--verial-junit",
        "j.xml",
        "--junitxml",
        "p.xml",
        "--log-file",
        "log.txt",
        "--log-cli-level",
        "WARNING",
    )
    assert code == 1, output
    names = ("report.json", "j.xml", "p.xml", "log.txt")
    files = {name: (project.path / name).read_text() for name in names}
    for where, text in {"terminal": output, **files}.items():
        for form in secrets.forms(KEY):
            assert form[:8] not in text and form[-8:] not in text, (where, form)
        assert "***" in text or where == "log.txt" and workers == "2", where
    runs = criterion_runs(json.loads(files["report.json"]))
    assert runs["b.verial.yaml::t::c"]["details"].startswith("server said '***")
    assert "stdout: ***" in output and "log: ***" in output and "warning: ***" in output
    assert "partner rejected '***" in output


def _listening_socket() -> socket.socket:
    """A port that accepts connections and never answers (enough for httpx to send)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    return sock


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_server_url_from_env_is_named_and_a_quoted_token_is_masked(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, workers: str
) -> None:
    sock = _listening_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}/fhir"
    project = Project(pytester.path)
    project.benchmark(
        "b",
        {
            "tasks": [
                {
                    "id": "t",
                    "criteria": [
                        {
                            "id": "c",
                            "assertion": {
                                "assert": "fhir-resource-state",
                                "resource_type": "Patient",
                                "search": {"name": "x"},
                                "fields": [{"path": "id", "expected": "p1"}],
                            },
                        }
                    ],
                }
            ]
        },
    )
    project.sandbox("t", {"output.md": "x"})
    project.run_yaml(
        {
            "sources": {
                "fhir": {
                    "base_url_env": "FHIR_URL_9",
                    "token_env": "FHIR_TOKEN_9",
                    "timeout": 5,
                    "retries": 0,
                }
            }
        }
    )
    monkeypatch.setenv("FHIR_URL_9", base + "\n")
    monkeypatch.setenv("FHIR_TOKEN_9", KEY + "\n")  # httpx refuses it, quoting it
    try:
        code, output = run_subprocess(
            project.path,
            "-n",
            workers,
            "--verial-report",
            "report.json",
            "--verial-junit",
            "j.xml",
            "--junitxml",
            "p.xml",
        )
    finally:
        sock.close()
    details = criterion_runs(project.read_report())["b.verial.yaml::t::c"]["details"]
    assert base in details, details  # the server is named, not masked
    assert "Bearer ***" in details, details
    for name in ("report.json", "j.xml", "p.xml"):
        text = (project.path / name).read_text()
        assert KEY[:8] not in text and KEY[-8:] not in text, name
    assert KEY[:8] not in output and KEY[-8:] not in output


# -- every reversible encoding, whole or per character (issue 18, class 3) -------------------


def _b64(offset: int, url: bool, pad: bool) -> Callable[[str], str]:
    def encode(key: str) -> str:
        raw = b"ab"[:offset] + key.encode()
        text = (base64.urlsafe_b64encode if url else base64.b64encode)(raw).decode()
        return text if pad else text.rstrip("=")

    return encode


ENCODINGS: dict[str, Callable[[str], str]] = {
    "verbatim": lambda k: k,
    "upper": str.upper,
    "lower": str.lower,
    "swapcase": str.swapcase,
    "underscore as dash": lambda k: k.replace("_", "-"),
    "dashes, upper": lambda k: k.replace("_", "-").upper(),
    "percent, upper hex": lambda k: "".join(f"%{b:02X}" for b in k.encode()),
    "percent, lower hex": lambda k: "".join(f"%{b:02x}" for b in k.encode()),
    "json \\u": lambda k: "".join(f"\\u{ord(c):04x}" for c in k),
    "json \\u, upper hex": lambda k: "".join(f"\\u{ord(c):04X}" for c in k),
    "python \\x": lambda k: "".join(f"\\x{b:02x}" for b in k.encode()),
    "bytes repr": lambda k: repr(k.encode())[2:-1],
    "backslash escapes": lambda k: "".join("\\" + c if not c.isalnum() else c for c in k),
    "json dumps": lambda k: json.dumps(k)[1:-1],
    "html references": lambda k: "".join(f"&#{ord(c)};" for c in k),
    "hex": lambda k: k.encode().hex(),
    "HEX": lambda k: k.encode().hex().upper(),
    **{
        f"base64{'url' if url else ''} +{offset}{'' if pad else ' unpadded'}": _b64(
            offset, url, pad
        )
        for offset in range(3)
        for url in (False, True)
        for pad in (False, True)
    },
}
#: one character, encoded its own way (a partly encoded key)
CHAR_WAYS: list[Callable[[str], str]] = [
    lambda c: c,
    str.upper,
    str.lower,
    lambda c: "".join(f"%{b:02X}" for b in c.encode()),
    lambda c: "".join(f"%{b:02x}" for b in c.encode()),
    lambda c: f"\\u{ord(c):04x}",
    lambda c: "".join(f"\\x{b:02x}" for b in c.encode()),
    lambda c: "\\" + c if not c.isalnum() else c,
    lambda c: "-" if c == "_" else c,
    lambda c: f"&#x{ord(c):x};",
]

KEY_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./+=:~"
keys = st.text(alphabet=KEY_ALPHABET, min_size=16, max_size=48).filter(lambda k: len(set(k)) >= 8)
#: text around a key: words that are not a key's fragment
words = st.text(alphabet="xyz ,;!", max_size=12)


@contextmanager
def registered(*values: str) -> Iterator[None]:
    """Only ``values`` registered (the registry is process-wide: restored after)."""
    saved = set(secrets._SECRETS)
    secrets.reset()
    try:
        for value in values:
            secrets.register(value)
        yield
    finally:
        secrets.reset()
        for value in saved:
            secrets.register(value)


def _survivors(encoded: str, masked: str) -> list[str]:
    """Runs of 8 characters of ``encoded`` still in ``masked``."""
    return [encoded[i : i + 8] for i in range(len(encoded) - 7) if encoded[i : i + 8] in masked]


@settings(max_examples=60, deadline=None)
@given(
    keys=st.lists(keys, min_size=1, max_size=4, unique_by=str.lower),
    before=words,
    after=words,
)
def test_every_encoding_of_every_registered_key_is_masked(
    keys: list[str], before: str, after: str
) -> None:
    with registered(*keys):
        for key in keys:
            for name, encode in ENCODINGS.items():
                encoded = encode(key)
                masked = secrets.redact(f"{before}<{encoded}>{after}")
                assert "***" in masked, (name, key, encoded)
                assert _survivors(encoded, masked) == [], (name, key, masked)
                if not name.startswith("base64"):  # base64 edges depend on the neighbours
                    assert f"<{secrets.MASK}>" in masked, (name, key, masked)


@settings(max_examples=80, deadline=None)
@given(data=st.data(), key=keys)
def test_a_key_with_each_character_encoded_its_own_way_is_masked(
    data: st.DataObject, key: str
) -> None:
    ways = data.draw(st.lists(st.sampled_from(CHAR_WAYS), min_size=len(key), max_size=len(key)))
    encoded = "".join(way(c) for way, c in zip(ways, key, strict=True))
    with registered(key):
        masked = secrets.redact(f"row: <{encoded}> end")
    assert masked == "row: <***> end", (key, encoded)


@pytest.mark.parametrize(
    "text",
    [
        "plain words, nothing secret here at all",
        "%41%42 \\u0041 \\x41 &#65; &amp; \\_ 4142434445464748",
        "aGVsbG8gd29ybGQ= ordinary base64 of hello world",
    ],
)
def test_text_without_a_key_is_unchanged(text: str) -> None:
    with registered("sk_live_9fK2mQ7pX4vB8nR1"):
        assert secrets.redact(text) == text


JUDGE_KEY = "sk_judge_Zq81_Lm0Pw7Ty5Rc"
PARTNER_KEY = "pk-partner_Hv6Nb3_Xw9Ds2Kf"


def _artifact_texts(root: Path) -> dict[str, str]:
    texts = {}
    kinds = {".json", ".xml", ".md", ".html", ".txt", ".jsonl"}
    for path in sorted(root.rglob("*")):
        # the agent's own files in its sandbox hold the key, of course
        if path.is_file() and path.suffix in kinds and "sandbox" not in path.parts:
            texts[str(path.relative_to(root))] = path.read_text(encoding="utf-8")
    db = root / ".verial" / "results.db"
    assert db.exists()
    with sqlite3.connect(db) as conn:
        texts["store"] = "\n".join(conn.iterdump())
    return texts


def test_no_encoded_key_reaches_any_artifact_of_a_session(tmp_path: Path) -> None:
    """The agent wrote each form of both keys into its output; every criterion shows it."""
    forms = {
        f"{who} {name}": encode(key)
        for who, key in (("judge", JUDGE_KEY), ("partner", PARTNER_KEY))
        for name, encode in ENCODINGS.items()
    }
    project = Project(tmp_path)
    fields = [{"path": f"rows.{i}", "expected": "redacted"} for i in range(len(forms))]
    project.benchmark(
        "b",
        {
            "benchmark": "keys",
            "tasks": [
                {
                    "id": "t",
                    "criteria": [
                        {
                            "id": "rows",
                            "assertion": {"assert": "output-match", "fields": fields},
                        },
                        {"id": "says", "assertion": {"assert": "output-match", "contains": ["x"]}},
                    ],
                }
            ],
        },
    )
    project.sandbox("t", {"output.json": json.dumps({"rows": list(forms.values())})})
    project.run_yaml({"agent": "a", "sources": {"partner": {"api_key_env": "PARTNER_KEY_7"}}})
    code, output = run_subprocess(
        tmp_path,
        "-n",
        "0",
        "-vv",
        "-rA",
        "--verial-report",
        "report.json",
        "--verial-junit",
        "task.xml",
        "--junitxml",
        "pytest.xml",
        "--verial-markdown",
        "summary.md",
        "--verial-html",
        "page.html",
        env={
            "OPENAI_API_KEY": JUDGE_KEY + "\n",
            "PARTNER_KEY_7": PARTNER_KEY,
            "GITHUB_STEP_SUMMARY": str(tmp_path / "step.md"),
            "VERIAL_STORE": DEFAULT_STORE,  # the store is one of the artifacts searched
        },
    )
    assert code == 1, output[-3000:]
    texts = {"terminal": output, **_artifact_texts(tmp_path)}
    assert {"report.json", "task.xml", "pytest.xml", "summary.md", "step.md", "page.html"} <= set(
        texts
    )
    report = json.loads(texts["report.json"])
    rows = report["benchmark_runs"][0]["task_runs"][0]["criterion_runs"][0]["evidence"]
    actual = [r["actual"] for r in rows["fieldResults"]]
    assert actual.count("***") >= len(forms) // 2, actual  # the rows reached the report, masked
    leaks = {
        where: [name for name, encoded in forms.items() if _survivors(encoded, text)]
        for where, text in texts.items()
    }
    assert leaks == {where: [] for where in texts}


def test_the_mask_lands_on_the_key_whatever_is_around_it() -> None:
    """Characters whose lower case is longer (U+0130), escapes and breaks around or inside the
    key: the mask covers the key's span in the original text, nothing else."""
    key = "sk_live_9fK2mQ7pX4vB8nR1"
    with registered(key):
        assert secrets.redact(f"\u0130\u0130 {key} \u0130") == "\u0130\u0130 *** \u0130"
        assert secrets.redact(f"%41 \\u0042 {key[:10]}\\n   {key[10:]} &amp;") == (
            "%41 \\u0042 *** &amp;"
        )
        assert secrets.redact(f"a-b {key.upper().replace('_', '-')}-tail") == "a-b ***-tail"
