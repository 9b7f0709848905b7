"""How a criterion the verifier could not evaluate is scored (README, "Could not verify"): out
of the task's mean, a verdict only when the evaluated criteria decide it, confidence lowered,
the benchmark run without a verdict; shown by ``verial show`` and held against a ``compare``
HEAD. Pure units on the result types; the judge faults themselves are in
tests/judge/test_not_evaluated.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_verial import BenchmarkRun, CriterionRun, Report, TaskRun

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._results import BenchmarkInfo, Generator, RunInfo, RunStatus, Session
from pytest_verial.cli import main

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.reporting._diff import compare_reports
from pytest_verial.reporting._json_report import write_json_report


def scored(cid: str, score: float, **extra: Any) -> CriterionRun:
    return CriterionRun.scored({"criterion_id": cid, **extra}, score, score >= 1.0)


def unverified(cid: str, **extra: Any) -> CriterionRun:
    return CriterionRun.unverified(
        {"criterion_id": cid, "judge": True, **extra},
        "judge unreachable",
        "not evaluated: judge unreachable (3 attempts)",
    )


def task(key: str, *runs: CriterionRun) -> TaskRun:
    return TaskRun.aggregate(list(runs), 0.9, id=f"b.verial.yaml::{key}", task_id=key,
                             task_key=key, run="r")  # fmt: skip


def test_a_criterion_not_evaluated_is_an_error_without_a_score() -> None:
    run = unverified("judged")
    assert (run.status, run.score, run.passed) == ("error", None, False)
    assert not run.counted and not run.against and not run.critical_failure


def test_its_weight_leaves_the_mean_and_the_verdict_waits() -> None:
    t = task("t", scored("a", 1.0, weight=2), unverified("j"))
    assert t.score == 1.0 and t.verdict is None  # 2/3 (partial) .. 1.0 (pass)
    assert t.verification == "incomplete"
    assert [n.model_dump() for n in t.not_evaluated] == [
        {"criterion_id": "j", "reason": "judge unreachable"}
    ]
    assert t.confidence == pytest.approx(2 / 3)
    assert t.all_passed is None and t.counts.error == 1 and t.counts.not_evaluated == 1
    assert t.axes["__default__"].weight == 2.0


@pytest.mark.parametrize(
    ("evaluated", "weight", "critical", "verdict"),
    [
        ([(1.0, 9)], 1, False, "pass"),  # 0.9 .. 1.0
        ([(1.0, 9)], 1, True, None),  # the critical one could fail the task
        ([(0.5, 1)], 1, False, "partial"),  # 0.25 .. 0.75
        ([(0.0, 9)], 1, False, None),  # 0 (fail) .. 0.1 (partial)
        ([(1.0, 1), (0.0, 1)], 1, False, "partial"),  # 0.33 .. 0.67
    ],
)
def test_the_verdict_is_kept_when_the_rest_cannot_change_it(
    evaluated: list[tuple[float, int]], weight: int, critical: bool, verdict: str | None
) -> None:
    runs = [scored(f"c{i}", s, weight=w) for i, (s, w) in enumerate(evaluated)]
    t = task("t", *runs, unverified("j", weight=weight, critical=critical))
    assert t.verdict == verdict


def test_a_failed_critical_criterion_fails_the_task_whatever_was_not_evaluated() -> None:
    t = task("t", scored("c", 0.5, critical=True, weight=9), unverified("j"))
    assert t.verdict == "fail" and t.critical_failed == ["c"]


def test_points_the_worst_and_best_case_decide_it() -> None:
    """By points: a penalty not evaluated could be applied (worst) or not (best)."""
    nothing_met = task("t", scored("a", 0.0, points=5), unverified("p", points=-3))
    assert nothing_met.score == 0.0 and nothing_met.verdict == "fail"  # 0 either way
    all_met = task("t", scored("a", 1.0, points=5), unverified("p", points=-3))
    assert all_met.score == 1.0 and all_met.verdict is None  # 0.4 .. 1.0
    assert all_met.points_earned == 5 and all_met.points_possible == 5


def test_nothing_evaluated_has_no_score_and_no_confidence() -> None:
    t = task("t", unverified("j"))
    assert (t.score, t.verdict, t.confidence) == (None, None, 0.0)
    assert t.status == "completed" and t.verification == "incomplete"


def _run(*tasks: TaskRun, label: str = "r") -> BenchmarkRun:
    return BenchmarkRun.aggregate(
        list(tasks),
        0.9,
        running=False,
        interrupted=False,
        id=f"b.verial.yaml@{label}",
        benchmark=BenchmarkInfo(slug="b", ref="b@1", file="b.verial.yaml"),
        runs=[RunInfo(label=label, path=f"/runs/{label}")],
    )


def _report(run: BenchmarkRun) -> Report:
    return Report(
        generator=Generator(name="pytest-verial", version="test"),
        session=Session(  # its counts as the plugin writes them (every reader checks them)
            status=RunStatus.COMPLETED,
            phase="completed",
            started_at="2026-01-01",
            duration=0,
            counts=run.counts,
        ),
        benchmark_runs=[run],
    )


def test_the_benchmark_run_scores_its_verified_task_runs_and_waits_for_a_verdict() -> None:
    run = _run(
        task("a", scored("c", 1.0)),
        task("b", scored("c", 0.5)),
        task("c", scored("c", 1.0), unverified("j")),
    )
    assert run.score == pytest.approx(0.75) and run.verdict is None
    assert run.verification == "incomplete" and run.counts.unverified == 1
    assert run.counts.criteria_not_evaluated == 1 and run.counts.criteria_error == 1
    verified = _run(task("a", scored("c", 1.0)), task("b", scored("c", 0.5)))
    assert verified.verdict == "partial" and verified.verification == "complete"


def test_compare_holds_an_unverified_head_against_it() -> None:
    base = _report(_run(task("a", scored("c", 1.0)), task("c", scored("c", 1.0))))
    head = _report(_run(task("a", scored("c", 1.0)), task("c", scored("c", 1.0), unverified("j"))))
    diff = compare_reports(base, head)
    (delta,) = diff.benchmark_runs
    assert delta.unverified and delta.regression and diff.exit_status == 1
    assert any("verification incomplete" in note for note in delta.notes)
    assert compare_reports(head, base).exit_status == 0  # BASE's own gaps are not HEAD's


def test_show_says_what_was_not_evaluated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "report.json"
    write_json_report(path, _report(_run(task("t", scored("c", 1.0, weight=2), unverified("j")))))
    assert main(["show", str(path), "t"]) == 0
    out = capsys.readouterr().out
    assert "verdict -" in out and "all passed: -" in out
    assert "verification incomplete (confidence 0.667): not evaluated j (judge unreachable)" in out
    data = json.loads(path.read_text(encoding="utf-8"))
    crit = data["benchmark_runs"][0]["task_runs"][0]["criterion_runs"][1]
    assert crit["not_evaluated"] == "judge unreachable" and crit["score"] is None
