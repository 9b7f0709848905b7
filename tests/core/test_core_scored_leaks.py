"""A scored run leaks no expected value through any output pytest has (issue 9, item 5).

One project whose expected values are unique canaries (in fields, labels, patterns, expected
ids, rubric principles, a check's locals and a skip reason) is run scored, in child processes,
across verbosity and traceback styles, at ``-n 0`` and ``-n 2``; no canary may appear in the
terminal, the task JUnit or pytest's ``--junitxml``. The JSON report keeps the details.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from core_support import Project, run_subprocess

CANARIES = (
    "zqlabelcanary",  # a label (criterion ids are generated from labels)
    "zqfieldcanary",  # an expected phrase
    "zqidcanary",  # an expected identifier in a field row
    "zqregexcanary",  # a valid pattern that does not match
    "zqprinciplecanary",  # a rubric principle
    "zqlocalcanary",  # in a check that raises: its message and its locals (-l)
    "zqskipcanary",  # in the reason of a skipped criterion
    "zqpatterncanary",  # an invalid regex: a collection error quotes it
    "zqbrokenlabelcanary",  # the label of the criterion with that invalid regex
)

CONFTEST = """
from typing import Literal
from pydantic import Field
from pytest_verial import AssertionSpec, CheckOutcome, CheckSpec

class Probe(AssertionSpec):
    kind: Literal["probe"] = Field(alias="assert")
    expected: str
    mode: str

def probe(spec, ctx):
    expected_value = spec.expected
    if spec.mode == "raise":
        raise ValueError(f"cannot compare with {expected_value}")
    return CheckOutcome(0.0, f"not applicable: {expected_value}", {}, passed=False,
                        status="skipped")

def pytest_verial_checks():
    return [CheckSpec("probe", Probe, probe)]
"""


def build(path: Path, run_yaml_scored: bool) -> Project:
    """The scored project: one good file with every kind of criterion, one broken file."""
    project = Project(path)
    project.conftest(CONFTEST)
    project.benchmark(
        "good",
        {
            "benchmark": "leaks",
            "tasks": [
                {
                    "id": "t",
                    "criteria": [
                        {
                            "label": "Output names zqlabelcanary",
                            "assertion": {"assert": "output-match", "contains": ["zqfieldcanary"]},
                        },
                        {
                            "label": "Patient id",
                            "assertion": {
                                "assert": "output-match",
                                "fields": [{"path": "patient.id", "expected": "zqidcanary"}],
                            },
                        },
                        {
                            "id": "pattern",
                            "assertion": {
                                "assert": "output-match",
                                "regex": ["zqregexcanary-[0-9]+"],
                            },
                        },
                        {
                            "id": "raises",
                            "assertion": {
                                "assert": "probe",
                                "expected": "zqlocalcanary",
                                "mode": "raise",
                            },
                        },
                        {
                            "id": "skips",
                            "assertion": {
                                "assert": "probe",
                                "expected": "zqskipcanary",
                                "mode": "skip",
                            },
                        },
                        {
                            "id": "judged",
                            "assertion": {
                                "assert": "llm-rubric",
                                "principles": ["Mentions zqprinciplecanary."],
                            },
                        },
                    ],
                }
            ],
        },
    )
    project.benchmark(
        "broken",
        {
            "benchmark": "broken",
            "tasks": [
                {
                    "id": "t",
                    "criteria": [
                        {
                            "label": "Checks zqbrokenlabelcanary",
                            "assertion": {"assert": "output-match", "regex": ["zqpatterncanary(["]},
                        },
                    ],
                }
            ],
        },
    )
    project.sandbox("t", {"output.json": json.dumps({"patient": {"id": "p-1"}, "note": "x"})})
    project.run_yaml({"agent": "a", "scored": True} if run_yaml_scored else {"agent": "a"})
    return project


STYLES = [
    ("-q",),
    ("-q", "-rA", "-l", "--tb=long"),
    ("-v", "-rA", "-l", "--tb=short"),
    ("-vv", "-rA", "-l", "--tb=native"),
    ("-vv", "-rA", "-l", "--tb=line"),
]


@pytest.mark.parametrize("workers", ["0", "2"])
@pytest.mark.parametrize(
    "style", STYLES, ids=["-".join(s).replace("--tb=", "tb-").lstrip("-") for s in STYLES]
)
def test_a_scored_run_shows_no_expected_value_anywhere(
    pytester: pytest.Pytester, style: tuple[str, ...], workers: str
) -> None:
    by_run_yaml = style[0] == "-v"  # one style per worker count: scored: true in run.yaml
    project = build(pytester.path, run_yaml_scored=by_run_yaml)
    flags = () if by_run_yaml else ("--verial-scored",)
    code, output = run_subprocess(
        project.path,
        *flags,
        *style,
        "-n",
        workers,
        "--verial-report",
        "report.json",
        "--verial-junit",
        "task.xml",
        "--junitxml",
        "pytest.xml",
    )
    assert code == 1, output[-3000:]
    assert "verial summary" in output, output[-3000:]
    texts = {
        "terminal": output,
        "task.xml": (project.path / "task.xml").read_text(encoding="utf-8"),
        "pytest.xml": (project.path / "pytest.xml").read_text(encoding="utf-8"),
    }
    leaks = {where: [c for c in CANARIES if c in text] for where, text in texts.items()}
    assert leaks == {where: [] for where in texts}, output[-4000:]
    # the outputs are the real thing: they name the criteria (by position when generated)
    assert "criterion-1" in texts["task.xml"] and "raises" in texts["pytest.xml"]
    assert "broken.verial.yaml" in output and "zq" not in output
    # the JSON report keeps what the terminal and JUnit withhold
    report = (project.path / "report.json").read_text(encoding="utf-8")
    for canary in ("zqfieldcanary", "zqidcanary", "zqlocalcanary", "zqskipcanary"):
        assert canary in report, canary


EXIT_CONFTEST = """
import os
from typing import Literal
from pydantic import Field
from pytest_verial import AssertionSpec, CheckSpec

class Exit(AssertionSpec):
    kind: Literal["exit-process"] = Field(alias="assert")

def exit_process(spec, ctx):
    os._exit(3)

def pytest_verial_checks():
    return [CheckSpec("exit-process", Exit, exit_process)]
"""


def test_a_crashed_scored_run_is_recovered_under_its_positional_ids(tmp_path: Path) -> None:
    """The journal remembers that the file was loaded for a scored run, so recovery generates
    the same ids as the session did and finds its criterion runs."""
    project = Project(tmp_path)
    project.conftest(EXIT_CONFTEST)
    project.benchmark(
        "crash",
        {
            "tasks": [
                {
                    "id": "first",
                    "criteria": [
                        {
                            "label": "Says zqlabelcanary",
                            "assertion": {"assert": "output-match", "contains": ["hello"]},
                        }
                    ],
                },
                {"id": "second", "criteria": [{"assertion": {"assert": "exit-process"}}]},
            ]
        },
    )
    for task in ("first", "second"):
        project.sandbox(task, {"output.md": "hello\n"})
    code, output = run_subprocess(
        tmp_path,
        "--verial-scored",
        "-n",
        "0",
        "-p",
        "no:randomly",
        "--verial-report",
        "report.json",
    )
    journal = tmp_path / "report.json.journal.jsonl"
    assert journal.exists(), output[-3000:]
    proc = subprocess.run(
        [sys.executable, "-m", "pytest_verial.cli", "report", "--recover", str(journal)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    first = next(
        t
        for t in [t for r in report["benchmark_runs"] for t in r["task_runs"]]
        if t["task_id"] == "first"
    )
    runs = [(c["criterion_id"], c["status"]) for c in first["criterion_runs"]]
    assert runs == [("criterion-1", "passed")]
    assert "zqlabelcanary" not in json.dumps(runs)
