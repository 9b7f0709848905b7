"""Secrets echoed back in every form, and scored runs that must not quote what they expect
(issue 9, items 4 and 5).

The echo cases: run.yaml names the variable holding a partner's key
(``sources.partner.api_key_env``); a benchmark-local check plays a server that echoes the key
in an error, in one form per case. The check never registers the key: the plugin does when the
session starts, so ``says`` holds the masked form (``***``) and the key itself cannot be there.
Absence of the key from every other artifact is tested in ``tests/core/test_core_secret_forms.py``
and ``tests/judge/test_judge_secrets.py`` (a case checks one line).

The scored cases: a collection error or a node id in a scored run names the criterion by id or
position and withholds quoted values (``'…'``). Their absence everywhere is tested in
``tests/core/test_core_scored_leaks.py``.
"""

from __future__ import annotations

import base64
import json

from bad_input_case import Case

KEY = "sk-case-Wf3/Hq8+Zr2=Lp6"

ECHO_CONFTEST = """
import base64, html, json, os
from typing import Literal
from urllib.parse import quote, quote_plus
from pydantic import Field
from pytest_verial import AssertionSpec, CheckOutcome, CheckSpec

class Echo(AssertionSpec):
    kind: Literal["echo"] = Field(alias="assert")
    form: str

FORMS = {
    "plain": lambda k: f"server said: bad key {k.strip()}",
    "repr": lambda k: f"server said: bad key {k!r}",
    "header": lambda k: f"Illegal header value {('Bearer ' + k).encode()!r}",
    "json": lambda k: "server said: " + json.dumps({"error": k.strip()}),
    "percent": lambda k: "GET /v1?api_key=" + quote(k.strip(), safe=""),
    "percent-lower": lambda k: "GET /v1?api_key=" + quote(k.strip(), safe="").lower(),
    "form": lambda k: "POST body client_secret=" + quote_plus(k.strip()),
    "basic": lambda k: "sent Basic " + base64.b64encode(f"client:{k.strip()}".encode()).decode(),
    "jwt": lambda k: "token eyJhbGciOiJub25lIn0." + base64.urlsafe_b64encode(
        json.dumps({"sub": k.strip()}).encode()).decode().rstrip("=") + ".",
    "escaped-newline": lambda k: "token " + k.strip()[:10] + "\\\\n" + k.strip()[10:],
    "truncated": lambda k: f"body: {k.strip()[:12]!r}...",
    "tail": lambda k: f"key ending {k.strip()[-12:]} was revoked",
    "spaced": lambda k: "key " + " ".join(k.strip()),
    "html": lambda k: "<p>" + html.escape(k.strip()) + "</p>",
}

def echo(spec, ctx):
    name = ctx.options["sandbox"].settings("partner")["api_key_env"]
    return CheckOutcome(0.0, FORMS[spec.form](os.environ[name]), {"form": spec.form})

def pytest_verial_checks():
    return [CheckSpec("echo", Echo, echo)]
"""

RUN_YAML = "sources:\n  partner: {api_key_env: VERIAL_CASE_PARTNER_KEY}\n"


def _nested(case_id: str, files: dict[str, str]) -> dict[str, str]:
    """A case with ``env`` runs in a session of the cases with the same environment: one more
    folder named after it keeps its node ids under ``<case id>/`` as the runner expects of
    criterion cases, whether its session holds it alone or beside others."""
    return {f"{case_id}/{path}": content for path, content in files.items()}


def _echo(form: str, says: str, key: str = KEY) -> Case:
    """A partner server echoing the key in ``form``; ``says`` is the masked line."""
    benchmark = (
        "tasks:\n- id: t\n  criteria:\n"
        f"  - id: echo\n    assertion: {{assert: echo, form: {form}}}\n"
    )
    case_id = f"secret-echo-{form}"
    return Case(
        id=case_id,
        kind="secrets",
        files=_nested(
            case_id,
            {
                "conftest.py": ECHO_CONFTEST,
                "b.verial.yaml": benchmark,
                "sandbox/run.yaml": RUN_YAML,
                "sandbox/t/.keep": "",
            },
        ),
        says=says,
        criterion="t::echo",
        env={"VERIAL_CASE_PARTNER_KEY": key},
    )


def _basic_says() -> str:
    """``client:`` is 7 bytes: 9 base64 characters are its own, the 10th mixes in the key."""
    encoded = base64.b64encode(f"client:{KEY}".encode()).decode()
    return f"sent Basic {encoded[:10]}***"


WEIRD_KEY = 'sk-"odd"\\key with space'

ECHOES: list[Case] = [
    _echo("plain", "server said: bad key ***"),
    _echo("repr", "server said: bad key '***\\n'", key=KEY + "\n"),
    _echo("header", "Illegal header value b'Bearer ***\\n'", key=KEY + "\n"),
    _echo("json", 'server said: {"error": "***"}', key=WEIRD_KEY),
    _echo("percent", "GET /v1?api_key=***"),
    _echo("percent-lower", "GET /v1?api_key=***"),
    _echo("form", "POST body client_secret=***", key=WEIRD_KEY),
    _echo("basic", _basic_says()),
    _echo("jwt", "token eyJhbGciOiJub25lIn0.eyJzdWIiOiAi***"),
    _echo("escaped-newline", "token ***"),
    _echo("truncated", "body: '***'..."),
    _echo("tail", "key ending *** was revoked"),
    _echo("spaced", "key ***"),
    _echo("html", "<p>***</p>", key=WEIRD_KEY),
]

FHIR_CRITERION = (
    "tasks:\n- id: t\n  criteria:\n  - id: patient\n    assertion:\n"
    "      assert: fhir-resource-state\n      resource_type: Patient\n"
    "      search: {name: chen}\n      fields: [{path: id, expected: p1}]\n"
)

NOT_SECRET: list[Case] = [
    # a server URL read from base_url_env is not a secret: the error names the server
    Case(
        id="secret-base-url-env-is-named",
        kind="secrets",
        files=_nested(
            "secret-base-url-env-is-named",
            {
                "b.verial.yaml": FHIR_CRITERION,
                "sandbox/run.yaml": (
                    "sources:\n  fhir: {base_url_env: VERIAL_CASE_FHIR_URL, retries: 0, "
                    "timeout: 5}\n"
                ),
                "sandbox/t/.keep": "",
            },
        ),
        says="http://127.0.0.1:9/fhir/Patient",
        criterion="t::patient",
        env={"VERIAL_CASE_FHIR_URL": "http://127.0.0.1:9/fhir"},
    ),
    # a token read from token_env is: the same error never shows it
    Case(
        id="secret-token-env-unset-names-the-variable",
        kind="secrets",
        files={
            "b.verial.yaml": FHIR_CRITERION,
            "sandbox/run.yaml": (
                "sources:\n  fhir: {base_url: 'http://127.0.0.1:9/fhir', "
                "token_env: VERIAL_CASE_UNSET_TOKEN}\n"
            ),
            "sandbox/t/.keep": "",
        },
        says="environment variable $VERIAL_CASE_UNSET_TOKEN is not set",
        criterion="t::patient",
    ),
]


def _scored(
    case_id: str, benchmark: str, says: str, where: str = "collect", by_run_yaml: bool = False
) -> Case:
    """A scored run (``--verial-scored``, or ``scored: true`` in run.yaml)."""
    files = {f"{case_id}.verial.yaml": benchmark, "sandbox/t/output.md": "hello\n"}
    if by_run_yaml:
        files["sandbox/run.yaml"] = "scored: true\n"
    return Case(
        id=case_id,
        kind="scored",
        files=files,
        says=says,
        where=where,  # type: ignore[arg-type]
        args=() if by_run_yaml else ("--verial-scored",),
    )


def _criterion(body: str, label: str | None = None, crit_id: str | None = None) -> str:
    head = "tasks:\n- id: t\n  criteria:\n  - "
    lines = []
    if crit_id:
        lines.append(f"id: {crit_id}")
    if label:
        lines.append(f"label: {json.dumps(label)}")
    lines.append(f"assertion: {body}")
    return head + "\n    ".join(lines) + "\n"


SCORED: list[Case] = [
    _scored(
        "scored-invalid-regex-is-not-quoted",
        _criterion("{assert: output-match, regex: ['zq-expected-pattern([']}", crit_id="re"),
        says="criterion 're', field 'assertion': Value error, invalid regex '…'",
    ),
    _scored(
        "scored-run-yaml-invalid-regex-is-not-quoted",
        _criterion("{assert: output-match, regex: ['zq-expected-(pattern']}", crit_id="re"),
        says="invalid regex '…'",
        by_run_yaml=True,
    ),
    _scored(
        "scored-label-never-names-a-broken-criterion",
        _criterion(
            "{assert: output-match, contains: zq-expected, bogus: 1}",
            label="Says zq-expected-phrase",
        ),
        says="criterion '#1'",
    ),
    _scored(
        "scored-generated-id-is-positional",
        _criterion(
            "{assert: output-match, contains: [zq-expected-phrase]}",
            label="Names zq-expected-phrase",
        ),
        says="::t::criterion-1",
        where="output",
    ),
    _scored(
        "scored-bad-json-schema-is-not-quoted",
        _criterion(
            "{assert: output-json-schema, schema: {type: object, properties: "
            "{mrn: {const: zq-expected-mrn, type: zq-expected-type}}}}",
            crit_id="schema",
        ),
        says="not a valid JSON Schema at properties/mrn/type: '…' is not valid",
    ),
]

CASES: list[Case] = [*ECHOES, *NOT_SECRET, *SCORED]
