"""The terminal summary a new user reads: capped like pytest's ``-r`` summary (the rest named,
and listed with ``-v``), reasons cut at a word boundary, no internal names."""

from __future__ import annotations

import pytest

from pytest_verial import (
    BenchmarkInfo,
    BenchmarkRun,
    CriterionRun,
    Generator,
    Report,
    RunInfo,
    RunStatus,
    Session,
    TaskRun,
)

# private module: unit test of the terminal summary's caps and cuts
from pytest_verial.reporting._terminal import (
    MAX_FAILING,
    MAX_TASK_ROWS,
    _cut,
    describe_failure,
    summary_lines,
)


def _report(tasks: int, failing_per_task: int = 1) -> Report:
    task_runs = []
    for n in range(tasks):
        key = f"task-{n:03d}"
        criteria = [
            CriterionRun.scored(
                {"criterion_id": f"c{k}", "task_key": key, "assert": "output-match"},
                0.0,
                False,
                details="the expected CPT code 72148 was not found in the letter",
            )
            for k in range(failing_per_task)
        ]
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
            status=RunStatus.COMPLETED, phase="completed", started_at="2026-01-01", duration=0
        ),
        benchmark_runs=[run],
    )


def test_600_tasks_fit_on_a_screen_and_name_what_was_left_out() -> None:
    lines = "\n".join(summary_lines(_report(600))).splitlines()
    assert len(lines) < 200  # was 1,231 lines for 600 tasks
    text = "\n".join(lines)
    assert f"... and {600 - MAX_TASK_ROWS} more task runs:" in text
    assert f"... and {600 - MAX_FAILING} more failing criteria:" in text
    assert "verial show REPORT" in text


@pytest.mark.parametrize("verbosity, capped", [(0, True), (-1, True), (1, False)])
def test_caps_and_minus_v(verbosity: int, capped: bool) -> None:
    text = "\n".join(summary_lines(_report(120), verbosity=verbosity))
    assert ("task-119" not in text.split("failing criteria:")[0]) is capped
    more_tasks = f"... and {120 - MAX_TASK_ROWS} more task runs:"
    more_failing = f"... and {120 - MAX_FAILING} more failing criteria:"
    assert (more_tasks in text) is capped
    assert (more_failing in text) is capped
    assert ("task-119::c0" in text) is not capped


def test_a_short_run_is_not_capped() -> None:
    text = "\n".join(summary_lines(_report(3, failing_per_task=2)))
    assert "more:" not in text and text.count("::c") == 6


def test_reasons_are_cut_at_a_word_boundary() -> None:
    line = "    the expected CPT code 72148 was not found in the letter to the payer"
    cut = _cut(line, 40)
    assert len(cut) <= 40 and cut.endswith("...")
    assert line.startswith(cut[:-3]) and line[len(cut) - 3] == " "  # ends on a whole word
    assert _cut("x" * 80, 40) == "x" * 37 + "..."  # one long word: cut where it must


def test_no_internal_names_reach_the_terminal() -> None:
    run = CriterionRun.scored(
        {"criterion_id": "c", "assert": "fhir-state"},
        0.0,
        False,
        evidence={"field_results": [{"path": "status", "expected": "F", "quantifier": "all"}]},
    )
    text = describe_failure(run, False)
    assert "__default__" not in text and "None" not in text
    assert "(all)" in text


def test_a_task_without_axes_shows_no_internal_axis_key() -> None:
    text = "\n".join(summary_lines(_report(2)))
    assert "__default__" not in text and "(no axis) 0.50" in text
