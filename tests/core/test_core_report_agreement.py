"""Issue 31: a report's seal is not its only guard. Every reader scores a report's task runs
again from their criterion runs, and its benchmark runs from their task runs, and refuses a
figure that differs in one line naming it, sealed, signed or not: an edit that keeps the
criterion runs (a failed criterion still failed) and is sealed anew is refused by show, report,
compare, merge, resume and import (the store's side: tests/store/test_store_agreement.py)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from core_support import run_subprocess, write_sealed
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_verial import BenchmarkRun, CriterionRun, Report, Status, TaskRun

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._results import Generator, RunInfo, Session, task_figures
from pytest_verial.cli import main

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.reporting._json_report import load_report, write_json_report

KEY = {"VERIAL_SIGNING_KEY": "k-31-agreement-5e1c"}

BENCHMARK = """\
benchmark: agree
version: 1
tasks:
  - id: t1
    criteria:
      - id: said-hello
        axis: manners
        assertion: {assert: output-match, contains: [hello]}
      - id: said-bye
        weight: 3
        assertion: {assert: output-match, contains: [goodbye]}
  - id: t2
    criteria:
      - id: said-hello
        assertion: {assert: output-match, contains: [hello]}
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project whose t1 fails one criterion of two (score 0.25, partial) and t2 passes;
    its report written by a real session, once for the module (plain and signed)."""
    path = tmp_path_factory.mktemp("agree")
    (path / "pytest.ini").write_text("[pytest]\n")
    (path / "agree.verial.yaml").write_text(BENCHMARK)
    for task, text in (("t1", "hello"), ("t2", "hello")):
        (path / "sandbox" / task).mkdir(parents=True)
        (path / "sandbox" / task / "output.md").write_text(text)
    code, output = run_subprocess(path, "--verial-report", "report.json", "--verial-store", "none")
    assert code == 1, output[-2000:]
    code, output = run_subprocess(
        path, "--verial-report", "signed.json", "--verial-store", "none", env=KEY
    )
    assert code == 1, output[-2000:]
    return path


def _forged(report: dict[str, Any]) -> dict[str, Any]:
    """The issue's forgery: t1 and the run made to pass, its criterion runs left as they are
    (said-bye still failed)."""
    forged = copy.deepcopy(report)
    run = forged["benchmark_runs"][0]
    t1 = next(t for t in run["task_runs"] if t["task_key"] == "t1")
    t1.update(score=1.0, verdict="pass", all_passed=True)
    run.update(score=1.0, verdict="pass", strict_success=1.0)
    run["counts"]["verdicts"] = {"pass": 2, "partial": 0, "fail": 0}
    return forged


def _cli(*args: str) -> tuple[int, str]:
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(list(args))
    return code, err.getvalue()


def _refused_line(text: str, name: str) -> str:
    lines = [line for line in text.splitlines() if "do not agree" in line]
    assert len(lines) == 1, text
    assert name in lines[0] and "Traceback" not in text
    assert (
        "benchmark_runs[0].task_runs[0].score (task t1) is 1; its criterion runs give 0.25"
        in (lines[0])
    )
    return lines[0]


def test_the_written_report_is_read_by_every_reader(project: Path) -> None:
    report = load_report(project / "report.json")
    assert report.benchmark_runs[0].score == pytest.approx(0.625)
    assert _cli("show", str(project / "report.json"))[0] == 0
    assert _cli("compare", str(project / "report.json"), str(project / "report.json"))[0] == 0


@pytest.mark.parametrize("signed", [False, True], ids=["plain-digest", "signed"])
def test_an_edited_report_sealed_again_is_refused_by_every_reader(
    project: Path, signed: bool, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    if signed:  # whoever holds the key can sign anything: the figures are still checked
        monkeypatch.setenv(*next(iter(KEY.items())))
    source = "signed.json" if signed else "report.json"
    original = json.loads((project / source).read_text())
    forged = write_sealed(tmp_path / "forged.json", _forged(original))
    with pytest.raises(ValueError) as refused:
        load_report(forged, sealed=True)
    _refused_line(str(refused.value), "forged.json")
    for command in (
        ["show", str(forged)],
        ["report", str(forged)],
        ["compare", str(project / source), str(forged)],
        ["merge", "-o", str(tmp_path / "merged.json"), str(forged)],
        ["import", "--store", f"sqlite:///{tmp_path / 'store.db'}", str(forged)],
    ):
        code, err = _cli(*command)
        assert code != 0, command
        _refused_line(err, "forged.json")
    assert not (tmp_path / "merged.json").exists()


def test_resume_refuses_a_report_whose_figures_were_edited(project: Path, tmp_path: Path) -> None:
    original = json.loads((project / "report.json").read_text())
    write_sealed(project / "forged-resume.json", _forged(original))
    code, output = run_subprocess(
        project, "--verial-resume", "forged-resume.json", "--verial-store", "none"
    )
    assert code == 4, output[-2000:]
    _refused_line(output, "forged-resume.json")


@pytest.mark.parametrize(
    "edit, field",
    [
        (lambda r: r["benchmark_runs"][0]["task_runs"][0].update(verdict="pass"),
         "task_runs[0].verdict (task t1) is \"pass\"; its criterion runs give \"partial\""),
        (lambda r: r["benchmark_runs"][0]["task_runs"][0]["counts"].update(failed=0, passed=2),
         "task_runs[0].counts (task t1)"),
        (lambda r: r["benchmark_runs"][0]["task_runs"][0]["axes"]["manners"].update(score=0.5),
         "task_runs[0].axes (task t1)"),
        (lambda r: r["benchmark_runs"][0]["task_runs"][1].update(status="cancelled"),
         "task_runs[1].status (task t2) is \"cancelled\"; its criterion runs give \"completed\""),
        (lambda r: r["benchmark_runs"][0].update(score=0.7), "benchmark_runs[0].score is 0.7"),
        (lambda r: r["benchmark_runs"][0].update(strict_success=1.0),
         "benchmark_runs[0].strict_success is 1; its task runs give 0.5"),
        (lambda r: r["benchmark_runs"][0]["counts"].update(criteria_failed=0),
         "benchmark_runs[0].counts is"),
        (lambda r: r["session"]["counts"].update(criteria_passed=3), "session.counts is"),
    ],
)  # fmt: skip
def test_each_figure_is_checked_and_named(
    project: Path, tmp_path: Path, edit: Any, field: str
) -> None:
    report = json.loads((project / "report.json").read_text())
    edit(report)
    path = write_sealed(tmp_path / "edited.json", report)
    with pytest.raises(ValueError) as refused:
        load_report(path)
    message = str(refused.value)
    assert field in message and len(message.splitlines()) == 1, message
    assert message.startswith(f"{path}: its figures do not agree with its criterion runs: ")
    code, err = _cli("compare", str(path), str(project / "report.json"))  # the scores' reader
    assert code == 2 and err == f"verial compare: {message}\n"


def test_an_unsealed_report_is_checked_as_well(project: Path, tmp_path: Path) -> None:
    text = (project / "report.json").read_text()
    report = json.loads(text)
    report.pop("integrity")
    (tmp_path / "unsealed.json").write_text(json.dumps(_forged(report)))
    code, err = _cli("show", str(tmp_path / "unsealed.json"))
    assert code == 2
    _refused_line(err, "unsealed.json")


def test_criterion_runs_have_the_fields_the_figures_check_knows() -> None:
    """The readers score a report again from each criterion run's status, passed, score,
    pass_threshold, axis, weight, points, critical, judge and not_evaluated
    (reporting/_agreement.py and the
    score views of reporting/_scores.py). A field added to CriterionRun that scoring reads
    must be added there too; then here."""
    assert set(CriterionRun.model_fields) == {
        *("criterion_id", "status", "passed", "score", "pass_threshold", "axis", "weight"),
        *("points", "critical", "judge", "not_evaluated"),  # what scoring reads; below, not
        *("label", "assertion", "met", "task_key", "task_id", "entity", "details", "evidence"),
        *("started_at", "completed_at", "duration", "line", "nodeid", "task_run", "file"),
        *("benchmark", "run", "outcome"),
    }


# -- a report the writer wrote is read: any criterion runs, any statuses, points or weights -----
@st.composite
def criterion_runs(draw: st.DrawFn, points: bool) -> list[CriterionRun]:
    runs = []
    for n in range(draw(st.integers(0, 4))):
        status = draw(st.sampled_from(list(Status)))
        score = draw(st.sampled_from([0.0, 0.25, 0.5, 1.0, 0.3333333333333333]))
        identity: dict[str, Any] = {
            "criterion_id": f"c{n}",
            "axis": draw(st.sampled_from([None, "a", "b"])),
            "critical": draw(st.booleans()),
        }
        if points:
            identity["points"] = draw(st.sampled_from([-3, -1, 1, 2, 5]))
        else:
            identity["weight"] = draw(st.sampled_from([0.5, 1.0, 3.0]))
        if status in (Status.DESELECTED, Status.NOT_RUN):
            runs.append(CriterionRun(**identity, status=status))
        elif status is Status.ERROR and draw(st.booleans()):
            # the verifier could not evaluate it: out of the mean, the verdict maybe null
            runs.append(CriterionRun.unverified(identity, "judge unreachable", "not evaluated"))
        else:
            passed = status is Status.PASSED
            runs.append(CriterionRun(**identity, status=status, passed=passed, score=score))
    return runs


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.booleans().flatmap(criterion_runs), min_size=0, max_size=5),
    st.sampled_from([["r1"], ["r1", "r2"]]),
    st.sampled_from(["completed", "cancelled", "running"]),
    st.sampled_from([0.5, 0.9, 1.0]),
)
def test_any_report_the_writer_writes_is_read_back(
    tmp_path_factory: pytest.TempPathFactory,
    tasks: list[list[CriterionRun]],
    labels: list[str],
    status: str,
    threshold: float,
) -> None:
    """The readers' arithmetic is the writer's: whatever its criterion runs, a report built by
    the result types' own aggregation is read by load_report and compare (no false refusal)."""
    task_runs = [
        TaskRun.aggregate(
            runs, threshold, status == "running", id=f"t{n}", task_id=f"t{n // len(labels)}",
            task_key=f"t{n // len(labels)}", run=labels[n % len(labels)],
        )
        for n, runs in enumerate(tasks)
    ]  # fmt: skip
    run = BenchmarkRun.aggregate(
        task_runs,
        threshold,
        running=status == "running",
        interrupted=status == "cancelled",
        id="b",
        benchmark={"slug": "b", "ref": "b@1", "file": "b.verial.yaml"},
        runs=[RunInfo(label=label, path=label) for label in labels],
    )
    session = Session(
        status=run.status,
        phase="started" if status == "running" else "completed",
        started_at="2026-11-27T00:00:00+00:00",
        duration=1.0,
        counts=run.counts,
    )
    report = Report(
        generator=Generator(name="pytest-verial", version="0"), session=session,
        benchmark_runs=[run],
    )  # fmt: skip
    path = tmp_path_factory.mktemp("written") / "r.json"
    write_json_report(path, report)
    read = load_report(path, sealed=True)
    assert read.benchmark_runs[0].score == run.score
    code, err = _cli("compare", str(path), str(path))
    assert "do not agree" not in err and code != 2, err


# -- the one scoring of a task run (writer and readers), on plain rows ---------------------------
def _row(cid: str, status: Status, score: float | None = None, **more: Any) -> CriterionRun:
    passed = status is Status.PASSED
    return CriterionRun(criterion_id=cid, status=status, passed=passed, score=score, **more)


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        # weighted mean 0.75, under the 0.9 threshold: partial
        (
            [_row("a", Status.PASSED, 1.0, weight=3.0), _row("b", Status.FAILED, 0.0)],
            ("completed", 0.75, "partial", False, [], None),
        ),
        # a critical criterion failed: fail whatever the score
        (
            [
                _row("a", Status.PASSED, 1.0, weight=9.0),
                _row("b", Status.FAILED, 0.0, critical=True),
            ],
            ("completed", 0.9, "fail", False, ["b"], None),
        ),
        # by points: 2 of 2 earned, a penalty of 1 met: 1 / 2
        (
            [_row("a", Status.PASSED, 1.0, points=2), _row("p", Status.PASSED, 1.0, points=-1)],
            ("completed", 0.5, "partial", False, [], (1, 2, ["p"])),
        ),
        # a criterion deselected: the score of the rest, no verdict
        (
            [_row("a", Status.PASSED, 1.0), CriterionRun(criterion_id="b", status="deselected")],
            ("incomplete", 1.0, None, True, [], None),
        ),
        # not evaluated (weight 1 of 10): the evaluated 9 force pass whatever it would score
        (
            [
                _row("a", Status.PASSED, 1.0, weight=9.0),
                CriterionRun.unverified({"criterion_id": "j"}, "judge unreachable", "x"),
            ],
            ("completed", 1.0, "pass", None, [], None),
        ),
    ],
)  # fmt: skip
def test_task_figures_score_a_task_run_as_its_report_states_it(
    rows: list[CriterionRun], expected: tuple[Any, ...]
) -> None:
    """task_figures is the one place a task run is scored: TaskRun.aggregate (the writer)
    states exactly what it gives, and its rules hold on plain rows."""
    figures = task_figures(rows, 0.9)
    points = (figures.points_earned, figures.points_possible, figures.penalties_applied)
    got = (
        figures.status, figures.score, figures.verdict, figures.all_passed,
        figures.critical_failed, points if figures.by_points else None,
    )  # fmt: skip
    assert got == expected
    task = TaskRun.aggregate(rows, 0.9, id="t", task_id="t", task_key="t", run="r")
    assert (task.status, task.score, task.verdict, task.all_passed) == expected[:4]
    assert task.counts.model_dump() == figures.counts
