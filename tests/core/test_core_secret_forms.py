"""A secret never reaches an artifact in any form (issue 9, item 4).

Unit tests of :mod:`pytest_verial._secrets` (the forms a server or library echoes a secret in),
then child sessions at ``-n 0`` and ``-n 2`` where a check echoes a key that only run.yaml names,
in every channel pytest has: details, evidence, stdout, logs, warnings, a traceback with locals.
"""

from __future__ import annotations

import base64
import json
import socket
import textwrap
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest
from core_support import Project, criterion_runs, run_subprocess

# private module: unit test of secret masking's encoded forms
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
