"""An OpenAPI a client can trust (issue 30 item 7): a Bearer security scheme on every protected
route, answers that declare every field Verial's documents name (axes as {score, weight},
criterion runs, evidence as a union keyed by its rows, the frozen task snapshot), the
sandbox's "exactly one of" as a oneOf, ``/docs`` with no third-party asset, and the TypeScript
example's types generated from the served spec with no ``unknown`` on those fields."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from typing import Any, get_args

import pytest
from service_support import ROOT, Api

#: routes anyone may call (no key)
OPEN = {("get", "/healthz"), ("get", "/readyz")}
EXAMPLE = ROOT / "examples" / "ts-client"


def _spec(api: Api) -> dict[str, Any]:
    return dict(api.client.get("/openapi.json").json())


def _schema(spec: dict[str, Any], name: str) -> dict[str, Any]:
    return dict(spec["components"]["schemas"][name])


def _ref(spec: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = spec["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
    return node


def _props(spec: dict[str, Any], name: str) -> dict[str, Any]:
    return dict(_schema(spec, name)["properties"])


def test_every_protected_route_declares_the_bearer_scheme(api: Api) -> None:
    spec = _spec(api)
    assert spec["components"]["securitySchemes"]["bearer"] == {
        **spec["components"]["securitySchemes"]["bearer"],
        "type": "http",
        "scheme": "bearer",
    }
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            if (method, path) in OPEN:
                assert "security" not in operation, path
                continue
            assert operation["security"] == [{"bearer": []}], (method, path)
            assert "401" in operation["responses"], (method, path)
            # and it is enforced: no key, a 401
            if "{" not in path:
                answer = api.client.request(method, path)
                assert answer.status_code == 401, (method, path, answer.text)


def test_the_answers_declare_the_documented_fields(api: Api) -> None:
    spec = _spec(api)
    task = _props(spec, "TaskRunOut")
    for name in ("id", "verdict", "score", "axes", "snapshot", "criterion_runs", "phase"):
        assert name in task, name
    assert set(task["phase"]["enum"]) == {"created", "started", "completed", "cancelled"}
    axis = _ref(spec, task["axes"]["additionalProperties"])
    assert {"score", "weight"} <= set(axis["required"])
    assert _ref(spec, task["criterion_runs"]["items"]) == _schema(spec, "CriterionRunOut")
    snapshot = [_ref(spec, k) for k in task["snapshot"]["anyOf"] if "$ref" in k][0]
    assert {"id", "task_item", "criteria"} <= set(snapshot["properties"])
    for name in ("verification", "not_evaluated", "confidence"):  # "could not verify"
        assert name in task, name
    crit = _props(spec, "CriterionRunOut")
    for name in ("id", "criterion_id", "passed", "score", "details", "evidence", "not_evaluated"):
        assert name in crit, name
    # evidence: the engine's models (one per check type, the report's too), whose rows are
    # exactly Verial's table
    from pytest_verial import AnyEvidence

    rows = ("fieldResults", "field_results", "assertionResults", "phraseResults", "rubric_results")
    keyed: dict[str, dict[str, Any]] = {}
    named = set()
    for variant in crit["evidence"]["anyOf"]:
        if "$ref" not in variant:
            continue
        named.add(variant["$ref"].rsplit("/", 1)[1])
        shape = _ref(spec, variant)
        for key in rows:
            if key in shape["properties"]:
                keyed[key] = shape
    assert named == {m.__name__ for m in get_args(AnyEvidence)}
    assert set(keyed) == set(rows)
    assert "FieldResultsEvidence" not in spec["components"]["schemas"]  # no second definition
    for key in ("fieldResults", "field_results", "assertionResults"):
        row = _ref(spec, keyed[key]["properties"][key]["items"])
        assert {"path", "expected", "actual", "passed"} <= set(row["properties"])
    phrase = _ref(spec, keyed["phraseResults"]["properties"]["phraseResults"]["items"])
    assert {"phrase", "found", "turn"} <= set(phrase["properties"])
    run = _props(spec, "BenchmarkRunOut")
    for name in ("benchmark_run_id", "benchmark", "scored", "phase", "status", "verdict"):
        assert name in run, name
    summary = _ref(spec, run["task_runs"]["items"])
    assert {"id", "phase", "status", "verdict", "score"} <= set(summary["properties"])
    created = _props(spec, "CreatedRun")
    for name in ("benchmark_run_id", "benchmark", "scored", "phase", "bearer_token"):
        assert name in created, name
    link = _ref(spec, created["task_runs"]["items"])
    assert {"id", "task_id", "name", "phase", "start_url", "complete_url"} <= set(
        link["properties"]
    )
    for page in ("RunPage", "CriterionRunPage"):
        assert set(_props(spec, page)) == {"data", "next_cursor"}


def test_the_sandbox_and_the_task_are_each_one_of(api: Api) -> None:
    spec = _spec(api)
    sandbox = _schema(spec, "SandboxIn")
    forms = [set(v["required"]) for v in sandbox["oneOf"]]
    assert forms == [{"run_dir"}, {"archive"}, {"files"}]
    assert all(v["additionalProperties"] is False for v in sandbox["oneOf"])
    body = [s for n, s in spec["components"]["schemas"].items() if n.startswith("VerifyTaskIn")]
    (verify,) = body
    assert [set(v["required"]) for v in verify["oneOf"]] == [
        {"benchmark", "task_id", "sandbox"},
        {"task", "sandbox"},
    ]


class _Assets(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("src", "href") and value:
                self.urls.append(value)


def test_docs_load_nothing_from_elsewhere(api: Api) -> None:
    page = api.client.get("/docs")
    if page.status_code == 404:
        pytest.skip("swagger-ui-bundle-v2 is not installed (the [serve] extra)")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    parser = _Assets()
    parser.feed(page.text)
    assert len(parser.urls) >= 3  # the script, the style sheet, the icon
    for url in parser.urls:
        assert url.startswith("/"), url
        assert api.client.get(url).status_code == 200, url
    assert not re.search(r"https?://", page.text), page.text
    assert '"validatorUrl": null' in page.text  # no badge asked of a third-party validator
    assert api.client.get("/redoc").status_code == 404  # ReDoc would load its script elsewhere


def test_the_typescript_example_is_generated_from_this_spec() -> None:
    """examples/ts-client/api.d.ts is openapi-typescript's output for the served spec, and it
    types axes, evidence and criterion runs without ``unknown`` or ``any``."""
    text = (EXAMPLE / "api.d.ts").read_text(encoding="utf-8")
    for name in (
        "TaskRunOut",
        "CompletedTaskRunOut",
        "CriterionRunOut",
        "AxisScoreOut",
        "FieldResult",
        "PhraseResult",
        "RubricResult",
        "Evidence",
        "FhirResourceStateEvidence",
        "Hl7StructuralEvidence",
        "PortalStateMatchEvidence",
        "SftpFilePresentEvidence",
        "VoiceTranscriptEvidence",
        "X12ResponseEvidence",
        "OutputEvidence",
        "LlmRubricEvidence",
        "TaskSnapshot",
        "CriterionSnapshot",
        "BenchmarkRunOut",
    ):
        block = re.search(rf"\n        {name}: (.*?)\n        }};\n", text, re.S)
        assert block is not None, name
        assert not re.search(r"\b(unknown|any)\b", block.group(1)), (name, block.group(1))
    if shutil.which("node") is None or not (EXAMPLE / "node_modules" / ".bin").exists():
        pytest.skip("node or the example's packages are missing (scripts/setup.d/70-ts-client.sh)")
    check = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "ts_client.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    built = subprocess.run(
        [str(EXAMPLE / "node_modules" / ".bin" / "tsc"), "-p", str(EXAMPLE), "--noEmit"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stdout + built.stderr
