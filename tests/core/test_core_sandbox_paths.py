"""Checks name files relative to the task's sandbox folder, never by where it sits: details,
evidence (``source``, HL7/X12 ``origin``, the files and messages read), feedback and error
messages, in the plugin's report and in ``verify_task``'s answer."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from core_support import REPO, Project, example_output

from pytest_verial import verify_task

EXAMPLES = REPO / "example_benchmarks"


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *_strings(v))]
    return []


def _said(run: dict[str, Any]) -> list[str]:
    """Everything a task run's criterion runs and feedback say."""
    texts = [run.get("feedback") or ""]
    for crit in run["criterion_runs"]:
        texts += [crit.get("details") or "", *_strings(crit.get("evidence"))]
    return texts


# -- the plugin's report ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def flawed_report(example_runs: Path) -> dict[str, Any]:
    """The example benchmarks scored on flawed-agent (``example_runs``' session, shared with
    the compare, HTML and benchmark-run tests)."""
    code, output = example_output(example_runs, "flawed-agent")
    assert code == 1, output[-3000:]
    data: dict[str, Any] = json.loads((example_runs / "flawed-agent.json").read_text("utf-8"))
    return data


def test_the_report_names_no_absolute_path(flawed_report: dict[str, Any]) -> None:
    run_folder = str(EXAMPLES / "runs" / "flawed-agent")
    tasks = [t for r in flawed_report["benchmark_runs"] for t in r["task_runs"]]
    for task in tasks:
        for text in _said(task):
            assert run_folder not in text and str(REPO) not in text, (task["id"], text)
    evidence = {
        (c["assert"], c["criterion_id"]): c["evidence"] for t in tasks for c in t["criterion_runs"]
    }
    origins = [
        e[noun]["origin"]
        for (kind, _), e in evidence.items()
        for noun in ("message", "transaction")
        if kind in ("hl7-structural", "x12-response") and (e or {}).get(noun)
    ]
    assert origins and all(not o.startswith("/") for o in origins), origins
    assert any(o.startswith("hl7_outbound/") for o in origins)
    assert any(o.startswith("x12/") for o in origins)
    sources = [e["source"] for (kind, _), e in evidence.items() if kind == "sftp-file-present"]
    assert sources and set(sources) == {"sftp/"}


# -- errors, in the plugin and inline ------------------------------------------------------------
def _bad_hl7(project: Project) -> None:
    project.benchmark(
        "interop",
        {
            "benchmark": "interop",
            "version": 1,
            "tasks": [
                {
                    "id": "send-a04",
                    "criteria": [
                        {
                            "id": "a04-sent",
                            "assertion": {
                                "assert": "hl7-structural",
                                "correlate_by": {"MSH.9.2": "A04"},
                                "fields": [{"path": "PID.5.1", "expected": "CHEN"}],
                            },
                        }
                    ],
                }
            ],
        },
    )
    project.sandbox("send-a04", {"hl7_outbound/broken.hl7": "PID|1||123\r"})


def test_an_error_names_the_file_relative_to_the_task_folder(
    project: Project, pytester: pytest.Pytester
) -> None:
    _bad_hl7(project)
    result = pytester.runpytest("--verial-report", "report.json", "-p", "no:randomly")
    result.assert_outcomes(failed=1)
    (crit,) = project.read_report()["benchmark_runs"][0]["task_runs"][0]["criterion_runs"]
    assert crit["status"] == "error"
    assert "hl7_outbound/broken.hl7" in crit["details"], crit["details"]
    assert str(project.path) not in crit["details"]
    shown = [line for line in result.outlines if "broken.hl7" in line]  # as pytest shows it
    assert shown and not any(str(project.path) in line for line in shown), shown


def _task(project: Project) -> dict[str, Any]:
    data = yaml.safe_load((project.path / "interop.verial.yaml").read_text(encoding="utf-8"))
    task: dict[str, Any] = data["tasks"][0]
    return task


def test_verify_task_names_files_relative_to_the_sandbox_however_reached(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The task folder given absolute, relative to the working directory, or through a link
    to its run folder: the file is named the same, from the task folder."""
    _bad_hl7(project)
    os.symlink(project.path / "sandbox", project.path / "latest")
    monkeypatch.chdir(project.path)
    forms = [
        project.path / "sandbox" / "send-a04",
        Path("sandbox/send-a04"),
        project.path / "latest" / "send-a04",
    ]
    for where in forms:
        (crit,) = verify_task(_task(project), where).criterion_runs
        assert crit.details is not None
        assert crit.details.startswith("invalid HL7: hl7_outbound/broken.hl7"), crit.details
        assert str(project.path) not in crit.details and "sandbox/" not in crit.details


def test_a_file_elsewhere_in_the_run_folder_is_named_from_the_task_folder(
    project: Project,
) -> None:
    """A live events file run.yaml names (relative to the run folder) reads ``../name``."""
    _bad_hl7(project)
    project.run_yaml({"sources": {"hl7": {"events": "captured.jsonl"}}})
    (project.path / "sandbox" / "captured.jsonl").write_text("not json\n", encoding="utf-8")
    (crit,) = verify_task(_task(project), project.path / "sandbox" / "send-a04").criterion_runs
    assert crit.status == "error" and crit.details is not None
    assert crit.details.startswith("../captured.jsonl:1: "), crit.details
    assert str(project.path) not in crit.details
