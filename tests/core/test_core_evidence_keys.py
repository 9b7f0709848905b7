"""Evidence in exactly the keys of Verial's documented table, per check type, wherever a run is
written: the JSON report (and its schema), the JUnit file and the results store.

Verial's verification page: fhir-resource-state ``fieldResults``, hl7-structural
``field_results`` (snake_case, as documented), portal-state-match ``assertionResults``,
sftp-file-present ``fieldResults`` plus the matched paths, voice-transcript ``phraseResults:
[{phrase, found, turn}]``, x12-response ``fieldResults``; our output checks ``fieldResults``
and the judge's ``rubric_results``."""

from __future__ import annotations

import json
import sqlite3
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from core_support import DOCUMENTED, REPO, run_subprocess

from pytest_verial import EVIDENCE_MODELS

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._results import report_schema

EXAMPLES = REPO / "example_benchmarks"

#: every row key: a criterion's evidence holds its own and none of the others
ROW_KEYS = {
    *DOCUMENTED.values(),
    "assertion_results",
    "phrase_results",
}
#: the keys of one row, by check type (Verial's; ours may add snake_case keys)
ROW_FIELDS = {
    "phraseResults": {"phrase", "found", "turn"},
    "rubric_results": {"principle", "rating", "reasoning"},
}
FIELD_ROW = {"path", "expected", "actual", "passed"}


@pytest.fixture(scope="module")
def flawed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The example benchmarks scored on the flawed run: report, JUnit file and store."""
    out = tmp_path_factory.mktemp("evidence-keys")
    paths = {
        "report": out / "report.json",
        "junit": out / "task.xml",
        "store": out / "results.db",
    }
    code, output = run_subprocess(
        REPO,
        str(EXAMPLES),
        "-n",
        "0",
        "--tb=no",
        "-q",
        "--verial-run",
        str(EXAMPLES / "runs" / "flawed-agent"),
        "--verial-report",
        str(paths["report"]),
        "--verial-junit",
        str(paths["junit"]),
        "--verial-store",
        f"sqlite:///{paths['store']}",
    )
    assert code == 1, output[-3000:]
    return paths


def _check_keys(assertion: str, evidence: dict[str, Any], where: str) -> bool:
    """Whether ``evidence`` has its check type's rows; fails when it has another's."""
    key = DOCUMENTED[assertion]
    assert ROW_KEYS & set(evidence) <= {key}, (where, assertion, sorted(evidence))
    rows = evidence.get(key)
    if not rows:
        return False
    wanted = ROW_FIELDS.get(key, FIELD_ROW)
    for row in rows:
        assert wanted <= set(row), (where, assertion, row)
    return True


def test_the_report_has_each_check_types_documented_keys(flawed: dict[str, Path]) -> None:
    report = json.loads(flawed["report"].read_text(encoding="utf-8"))
    assert report["schema"] == "pytest-verial/report/v3"
    with_rows = set()
    for run in report["benchmark_runs"]:
        for task in run["task_runs"]:
            for crit in task["criterion_runs"]:
                if crit["evidence"] and _check_keys(crit["assert"], crit["evidence"], "report"):
                    with_rows.add(crit["assert"])
    # every check type the examples use showed its rows (the judge's are bypassed there)
    assert with_rows == set(DOCUMENTED) - {"llm-rubric", "output-consistency"}


def test_sftp_evidence_names_the_matched_paths(flawed: dict[str, Path]) -> None:
    report = json.loads(flawed["report"].read_text(encoding="utf-8"))
    sftp = [
        c["evidence"]
        for r in report["benchmark_runs"]
        for t in r["task_runs"]
        for c in t["criterion_runs"]
        if c["assert"] == "sftp-file-present"
    ]
    assert sftp and all(isinstance(e["matched_paths"], list) for e in sftp)
    assert any(e["matched_paths"] for e in sftp)


def test_the_schema_ties_each_assert_to_its_evidence_model() -> None:
    schema = report_schema()
    rules = schema["$defs"]["CriterionRun"]["allOf"]
    tied = {
        rule["if"]["properties"]["assert"]["const"]: rule["then"]["properties"]["evidence"][
            "anyOf"
        ][0]["$ref"]
        for rule in rules
    }
    assert tied == {a: f"#/$defs/{m.__name__}" for a, m in EVIDENCE_MODELS.items()}
    assert set(tied) == set(DOCUMENTED)
    for assertion, key in DOCUMENTED.items():
        model = schema["$defs"][EVIDENCE_MODELS[assertion].__name__]
        assert key in model["properties"], assertion
        assert not (ROW_KEYS - {key}) & set(model["properties"]), assertion


def test_the_junit_failures_carry_the_documented_keys(flawed: dict[str, Path]) -> None:
    root = ET.parse(flawed["junit"]).getroot()
    seen = set()
    for suite in root.iter("testsuite"):
        props = {p.get("name"): p.get("value") for p in suite.iter("property")}
        for case in suite.iter("testcase"):
            failure = case.find("failure")
            if failure is None or not failure.text:
                continue
            assertion = props[f"criterion.{case.get('name')}.assert"]
            assert assertion is not None
            if _check_keys(assertion, json.loads(failure.text), "junit"):
                seen.add(assertion)
    assert {"fhir-resource-state", "hl7-structural", "portal-state-match"} <= seen
    assert {"sftp-file-present", "voice-transcript", "x12-response", "output-match"} <= seen


def test_the_store_keeps_the_documented_keys(flawed: dict[str, Path]) -> None:
    db = sqlite3.connect(flawed["store"])
    seen = set()
    for assertion, evidence in db.execute("select assertion, evidence from criterion_runs"):
        if evidence and _check_keys(assertion, json.loads(evidence), "store"):
            seen.add(assertion)
    assert seen == set(DOCUMENTED) - {"llm-rubric", "output-consistency"}
    (schema,) = db.execute("select data from sessions").fetchone()
    assert json.loads(schema)["schema"] == "pytest-verial/report/v3"
