"""The terminal summary a new user reads: capped like pytest's ``-r`` summary (the rest named,
and listed with ``-v``), reasons cut at a word boundary, no internal names.

Read as users meet it: ``verial report`` on a written report, and the ``verial summary``
section of sessions at ``-q``, default verbosity and ``-v``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from core_support import Project, voice_criterion

from pytest_verial import BenchmarkRun, CriterionRun, Report, TaskRun

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._results import BenchmarkInfo, Generator, RunInfo, RunStatus, Session
from pytest_verial.cli import main

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.reporting._json_report import write_json_report

#: task rows, and failing criteria of one benchmark run, shown before "... and N more"
MAX_TASK_ROWS = 50
MAX_FAILING = 20


def _failing(key: str, k: int) -> CriterionRun:
    return CriterionRun.scored(
        {"criterion_id": f"c{k}", "task_key": key, "assert": "output-match"},
        0.0,
        False,
        details="the expected CPT code 72148 was not found in the letter",
    )


def _report(
    tasks: int,
    failing_per_task: int = 1,
    failing: Callable[[str, int], CriterionRun] = _failing,
) -> Report:
    task_runs = []
    for n in range(tasks):
        key = f"task-{n:03d}"
        criteria = [failing(key, k) for k in range(failing_per_task)]
        criteria.append(CriterionRun.scored({"criterion_id": "ok", "task_key": key}, 1.0, True))
        task_runs.append(
            TaskRun.aggregate(
                criteria, 0.9, id=f"b.verial.yaml::{key}", task_id=key, task_key=key, run="r"
            )
        )
    run = BenchmarkRun.aggregate(
        task_runs,
        0.9,
        running=False,
        interrupted=False,
        id="b.verial.yaml@r",
        benchmark=BenchmarkInfo(slug="b", ref="b@1", file="b.verial.yaml"),
        runs=[RunInfo(label="r", path="/runs/r")],
    )
    return Report(
        generator=Generator(name="pytest-verial", version="test"),
        session=Session(
            status=RunStatus.COMPLETED,
            phase="completed",
            started_at="2026-01-01",
            duration=0,
            counts=run.counts,  # the run's: readers check a report's counts
        ),
        benchmark_runs=[run],
    )


def _printed(report: Report, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """What ``verial report`` prints for ``report``."""
    path = tmp_path / "report.json"
    write_json_report(path, report)
    assert main(["report", str(path)]) == 0
    return capsys.readouterr().out


def _session_summary(pytester: pytest.Pytester, *args: str) -> str:
    """The ``verial summary`` section of a session of the project in ``pytester``."""
    result = pytester.runpytest("-p", "no:randomly", "--tb=no", "-rN", *args)
    assert result.ret == 1, result.outlines[-20:]
    lines = result.outlines[
        result.outlines.index(next(x for x in result.outlines if "verial summary" in x)) + 1 :
    ]
    return "\n".join(x for x in lines if not x.startswith("="))


@pytest.fixture
def capped_project(pytester: pytest.Pytester) -> Project:
    """120 tasks, each with one failing and one passing criterion."""
    project = Project(pytester.path)
    tasks = [
        {
            "id": f"task-{n:03d}",
            "criteria": [
                voice_criterion("c0", contains=["CPT 72148"]),
                voice_criterion("ok", contains=["letter"]),
            ],
        }
        for n in range(120)
    ]
    project.benchmark("b", {"tasks": tasks})
    for task in tasks:
        turns = [{"speaker": "agent", "text": "the letter is sent"}]
        project.sandbox(task["id"], {"voice/turns.json": turns})
    return project


def test_600_tasks_fit_on_a_screen_and_name_what_was_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _printed(_report(600), tmp_path, capsys).splitlines()
    assert len(lines) < 200  # was 1,231 lines for 600 tasks
    text = "\n".join(lines)
    assert f"... and {600 - MAX_TASK_ROWS} more task runs:" in text
    assert f"... and {600 - MAX_FAILING} more failing criteria:" in text
    assert "verial show REPORT" in text


@pytest.mark.parametrize("verbosity, capped", [(0, True), (-1, True), (1, False)])
def test_caps_and_minus_v(
    pytester: pytest.Pytester, capped_project: Project, verbosity: int, capped: bool
) -> None:
    text = _session_summary(pytester, *{0: [], -1: ["-q"], 1: ["-v"]}[verbosity])
    assert ("task-119" not in text.split("failing criteria:")[0]) is capped
    more_tasks = f"... and {120 - MAX_TASK_ROWS} more task runs:"
    more_failing = f"... and {120 - MAX_FAILING} more failing criteria:"
    assert (more_tasks in text) is capped
    assert (more_failing in text) is capped
    assert ("task-119::c0" in text) is not capped


def test_a_short_run_is_not_capped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = _printed(_report(3, failing_per_task=2), tmp_path, capsys)
    assert "more:" not in text and text.count("::c") == 6


SAYS_CHECK = """
from typing import Literal
from pydantic import Field
from pytest_verial import AssertionSpec, CheckOutcome, CheckSpec

class Says(AssertionSpec):
    kind: Literal["says"] = Field(alias="assert")
    details: str

def says(spec, ctx):
    return CheckOutcome(0.0, spec.details)

def pytest_verial_checks():
    return [CheckSpec("says", Says, says)]
"""


#: the inner session's terminal reporter says its output is a terminal (pytester's is not)
ON_A_TERMINAL = """
import pytest


class _Terminal:
    def __bool__(self):
        return True

    def __call__(self):
        return True


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    config.pluginmanager.get_plugin("terminalreporter").isatty = _Terminal()
"""


@pytest.mark.parametrize("terminal", [True, False], ids=["terminal", "log"])
def test_reasons_are_cut_at_a_word_boundary_on_a_terminal_and_whole_in_a_log(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, terminal: bool
) -> None:
    """At ``-q`` each failing criterion's reason is one line: on a terminal cut to its width at
    a word boundary; in a log (pytester's output is not a terminal, nor is CI's) wrapped to the
    width, every word kept."""
    reason = "the expected CPT code 72148 was not found in the letter to the payer"
    project = Project(pytester.path)
    project.conftest(SAYS_CHECK + (ON_A_TERMINAL if terminal else ""))
    criteria = [
        {"id": "words", "assertion": {"assert": "says", "details": reason}},
        {"id": "word", "assertion": {"assert": "says", "details": "x" * 80}},
    ]
    project.benchmark("b", {"tasks": [{"id": "t", "criteria": criteria}]})
    project.sandbox("t", {"output.md": "x"})
    monkeypatch.setenv("COLUMNS", "40")
    printed = _session_summary(pytester, "-q")
    failing = printed.split("failing criteria:")[1].split("results store")[0].splitlines()
    line = f"    {reason}"
    if not terminal:
        assert "..." not in printed
        assert line in "\n".join(failing).replace("\n      ", " ")
        assert all(len(x) <= 40 for x in failing if "x" * 20 not in x)
        assert "    " + "x" * 80 in failing  # a word longer than the line keeps its indent
        return
    cut = next(x for x in failing if x.startswith("    the expected"))
    assert len(cut) <= 40 and cut.endswith("...")
    assert line.startswith(cut[:-3]) and line[len(cut) - 3] == " "  # ends on a whole word
    # one long word: cut where it must
    assert "    " + "x" * 33 + "..." in failing


def test_no_internal_names_reach_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def failing(key: str, k: int) -> CriterionRun:
        return CriterionRun.scored(
            {"criterion_id": "c", "task_key": key, "assert": "fhir-state"},
            0.0,
            False,
            evidence={"field_results": [{"path": "status", "expected": "F", "quantifier": "all"}]},
        )

    text = _printed(_report(1, failing=failing), tmp_path, capsys)
    text = text.split("failing criteria:")[1]  # the failure as described
    assert "__default__" not in text and "None" not in text
    assert "(all)" in text


def test_a_task_without_axes_shows_no_internal_axis_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = _printed(_report(2), tmp_path, capsys)
    assert "__default__" not in text and "(no axis) 0.50" in text
