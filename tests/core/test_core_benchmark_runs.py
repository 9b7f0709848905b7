"""Benchmark runs (issue 10): one per benchmark per run folder, trials of one agent, critical
criteria, strict success, and whole reports equal at ``-n 0`` and ``-n 2``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from core_support import (
    REPO,
    Project,
    all_task_runs,
    crash_project,
    criterion_runs,
    example_output,
    run_inprocess,
    run_subprocess,
    strip_timing,
    voice_criterion,
)

EXAMPLES = REPO / "example_benchmarks"
WORKERS = pytest.mark.parametrize("workers", ["0", "2"], ids=["n0", "n2"])

GOOD = [{"speaker": "agent", "text": "Good morning! Your date of birth, please?"}]
HALF = [{"speaker": "agent", "text": "Good morning!"}]
CALL = {
    "benchmark": "calls",
    "version": 1,
    "pass_threshold": 0.9,
    "tasks": [
        {
            "id": "call",
            "criteria": [
                voice_criterion("greets", contains=["good morning"]),
                voice_criterion("asks-dob", contains=["date of birth"]),
            ],
        }
    ],
}


def _report(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text(encoding="utf-8")))


def test_example_benchmarks_give_five_benchmark_runs_each_scored_on_its_own(
    example_runs: Path,
) -> None:
    """The example benchmarks on good-agent and flawed-agent: one benchmark run per file, each
    the mean of its own tasks, with its own verdict under its own threshold (the sessions are
    ``example_runs``', shared with the compare and HTML tests)."""
    for agent in ("good-agent", "flawed-agent"):
        code, output = example_output(example_runs, agent)
        assert code in (0, 1), output[-3000:]
        report = _report(example_runs / f"{agent}.json")
        runs = report["benchmark_runs"]
        assert len(runs) == 5, [r["id"] for r in runs]
        assert len({r["benchmark"]["file"] for r in runs}) == 5
        for run in runs:
            scored = [t["score"] for t in run["task_runs"] if t["status"] == "completed"]
            assert run["score"] == pytest.approx(sum(scored) / len(scored)), run["id"]
            threshold = run["benchmark"]["pass_threshold"] or 0.9
            assert run["pass_threshold"] == threshold
            want = "pass" if run["score"] >= threshold else "partial" if run["score"] else "fail"
            assert run["verdict"] == want, run["id"]
            assert [r["label"] for r in run["runs"]] == [agent]
        if agent == "good-agent":
            assert {r["verdict"] for r in runs} == {"pass"}
        else:
            assert "partial" in {r["verdict"] for r in runs}
            assert "benchmark run" in output and output.count("run score") >= 5


def _run(pytester: pytest.Pytester, workers: str, *args: str) -> tuple[int, str]:
    """At -n 0 in this process (``run_inprocess``: these projects crash nothing and register
    no secret), at -n 2 a child session with its workers."""
    if workers == "0":
        return run_inprocess(pytester, "-n", "0", *args)
    return run_subprocess(pytester.path, "-n", workers, *args)


def _two_runs(project: Project, agent_a: str | None, agent_b: str | None) -> None:
    project.benchmark("calls", CALL)
    project.sandbox("call", {"voice/turns.json": GOOD}, run="run-a")
    project.sandbox("call", {"voice/turns.json": HALF}, run="run-b")
    if agent_a:
        project.run_yaml({"agent": agent_a}, run="run-a")
    if agent_b:
        project.run_yaml({"agent": agent_b}, run="run-b")


@WORKERS
def test_two_agents_are_never_averaged_together(pytester: pytest.Pytester, workers: str) -> None:
    project = Project(pytester.path)
    _two_runs(project, "bot-a", "bot-b")
    code, output = _run(
        pytester,
        workers,
        "--verial-run",
        "run-a",
        "--verial-run",
        "run-b",
        "--verial-report",
        "report.json",
    )
    assert code == 1, output[-3000:]
    runs = project.read_report()["benchmark_runs"]
    assert [(r["id"], r["score"], r["verdict"], r["trials"]) for r in runs] == [
        ("calls.verial.yaml@run-a", 1.0, "pass", None),
        ("calls.verial.yaml@run-b", 0.5, "partial", None),
    ]
    assert output.count("benchmark run calls@1 on") == 2


@pytest.mark.parametrize(
    ("workers", "how"),
    # same-agent at -n 2 is test_reports_equal_for_trials: this project, its report at -n 2
    # equal to the -n 0 one checked here (the trial lines are printed from that report)
    [("0", "same-agent"), ("0", "--verial-trials"), ("2", "--verial-trials")],
    ids=["n0-same-agent", "n0---verial-trials", "n2---verial-trials"],
)
def test_one_agents_run_folders_are_trials(
    pytester: pytest.Pytester, workers: str, how: str
) -> None:
    project = Project(pytester.path)
    if how == "same-agent":
        _two_runs(project, "bot", "bot")
        extra: tuple[str, ...] = ()
    else:
        _two_runs(project, None, None)
        extra = ("--verial-trials",)
    args = ("--verial-run", "run-a", "--verial-run", "run-b", "--verial-report", "report.json")
    code, output = _run(pytester, workers, *args, *extra)
    assert code == 1, output[-3000:]
    (run,) = project.read_report()["benchmark_runs"]
    assert run["id"] == "calls.verial.yaml@run-a+run-b"
    assert run["score"] == pytest.approx(0.75)  # the mean of both trials' task runs
    trials = run["trials"]
    assert (trials["k"], trials["scores"], trials["runs"]) == (2, [1.0, 0.5], ["run-a", "run-b"])
    assert (trials["pass_k"], trials["pass_rate"]) == (False, 0.5)
    low, high = trials["ci95"]
    assert low < 0.75 < high
    assert "trials of the run: k=2 mean 0.750 pass^k no" in output


def test_fail_under_applies_to_every_benchmark_run(pytester: pytest.Pytester) -> None:
    """At -n 0: the gate is the controller's (the recorder's), read from its report. At -n 2
    that report is test_two_agents_are_never_averaged_together's, and the gate's exit codes
    there test_core_fail_under.py's n2 cases."""
    project = Project(pytester.path)
    _two_runs(project, "bot-a", "bot-b")
    args = ("--verial-run", "run-a", "--verial-run", "run-b", "--verial-fail-under", "0.6")
    code, output = _run(pytester, "0", *args)
    assert code == 1, output[-3000:]
    assert "run score of calls.verial.yaml@run-a 1.000 reached" in output
    assert "run score of calls.verial.yaml@run-b 0.500 NOT reached -> exit 1" in output
    code, output = _run(pytester, "0", *args[:2], *args[4:])
    assert code == 0, output[-3000:]


CRITICAL = {
    "benchmark": "safety",
    "pass_threshold": 0.5,
    "tasks": [
        {
            "id": "call",
            "criteria": [
                {**voice_criterion("greets", contains=["good morning"]), "weight": 9},
                {
                    **voice_criterion("no-ssn", not_contains=["social security"]),
                    "critical": True,
                },
            ],
        },
        {
            "id": "quiet",
            "criteria": [
                {**voice_criterion("greets", contains=["good morning"]), "critical": True},
                voice_criterion("asks-dob", contains=["date of birth"]),
            ],
        },
    ],
}


@WORKERS
def test_a_critical_criterion_that_fails_fails_the_task(
    pytester: pytest.Pytester, workers: str
) -> None:
    """The score stays the weighted mean; the verdict is fail (a disclosed SSN is not averaged
    away). A critical criterion that passes changes nothing."""
    project = Project(pytester.path)
    project.benchmark("safety", CRITICAL)
    said = [{"speaker": "agent", "text": "Good morning! Your social security number?"}]
    project.sandbox("call", {"voice/turns.json": said})
    project.sandbox("quiet", {"voice/turns.json": HALF})
    code, output = _run(pytester, workers, "--verial-report", "report.json")
    assert code == 1, output[-3000:]
    report = project.read_report()
    call, quiet = all_task_runs(report)
    assert (call["score"], call["verdict"], call["critical_failed"]) == (0.9, "fail", ["no-ssn"])
    assert call["all_passed"] is False
    assert (quiet["score"], quiet["verdict"], quiet["critical_failed"]) == (0.5, "pass", [])
    assert criterion_runs(report)["safety.verial.yaml::call::no-ssn"]["critical"] is True
    (run,) = report["benchmark_runs"]
    assert run["strict_success"] == 0.0
    assert run["counts"]["verdicts"] == {"pass": 1, "partial": 0, "fail": 1}
    assert "critical failed: no-ssn" in output


def test_strict_success_is_the_share_of_tasks_with_every_criterion_passed(
    pytester: pytest.Pytester,
) -> None:
    project = Project(pytester.path)
    bench = {**CALL, "tasks": [{**CALL["tasks"][0], "id": i} for i in ("a", "b", "c", "d")]}
    project.benchmark("calls", bench)
    for task, turns in zip("abcd", (GOOD, GOOD, GOOD, HALF), strict=True):
        project.sandbox(task, {"voice/turns.json": turns})
    pytester.runpytest("--verial-report", "report.json")
    (run,) = project.read_report()["benchmark_runs"]
    assert run["strict_success"] == 0.75
    assert [t["all_passed"] for t in run["task_runs"]] == [True, True, True, False]
    assert run["score"] == pytest.approx(3.5 / 4)


# -- whole reports equal at -n 0 and -n 2 ------------------------------------------------------

JUDGED = {
    "benchmark": "judged",
    "tasks": [
        {
            "id": "letter",
            "criteria": [
                voice_criterion("greets", contains=["good morning"]),
                {
                    "id": "tone",
                    "assertion": {
                        "assert": "llm-rubric",
                        "target": "voice",
                        "principles": ["is polite"],
                    },
                },
            ],
        },
        {"id": "other", "criteria": [voice_criterion("asks-dob", contains=["date of birth"])]},
    ],
}


def _normalised(report: dict[str, Any]) -> Any:
    return strip_timing({**report, "session": {**report["session"], "exit_status": None}})


def _both(pytester: pytest.Pytester, *args: str) -> tuple[dict[str, Any], dict[str, Any]]:
    out = []
    for workers in ("0", "2"):
        name = f"report-{workers}.json"
        code, output = _run(pytester, workers, *args, "--verial-report", name)
        assert code in (0, 1), output[-3000:]
        out.append(_report(pytester.path / name))
    return out[0], out[1]


def test_reports_equal_with_k_deselecting_judge_criteria(pytester: pytest.Pytester) -> None:
    """``-k`` deselects a judge criterion: its deselected run says ``judge: true`` at both
    worker counts (the controller loads the plans with the same check registry)."""
    project = Project(pytester.path)
    project.benchmark("judged", JUDGED)
    project.sandbox("letter", {"voice/turns.json": GOOD})
    project.sandbox("other", {"voice/turns.json": GOOD})
    one, two = _both(pytester, "-k", "not tone")
    assert _normalised(one) == _normalised(two)
    tone = criterion_runs(one)["judged.verial.yaml::letter::tone"]
    assert (tone["status"], tone["judge"]) == ("deselected", True)


def test_reports_equal_for_trials(pytester: pytest.Pytester) -> None:
    project = Project(pytester.path)
    _two_runs(project, "bot", "bot")
    one, two = _both(pytester, "--verial-run", "run-a", "--verial-run", "run-b")
    assert _normalised(one) == _normalised(two)
    assert one["benchmark_runs"][0]["trials"]["k"] == 2


def test_reports_equal_after_a_crashed_worker(pytester: pytest.Pytester) -> None:
    """A worker dies in a check: the reports at -n 1 and -n 2 agree (at -n 0 there is no
    worker: the process itself dies, and the journal recovers its report; see the faults
    tests). Only the crashed worker's name differs in the crash's details."""
    crash_project(pytester.path)
    out = []
    for workers in ("1", "2"):
        name = f"report-{workers}.json"
        code, output = run_subprocess(pytester.path, "-n", workers, "--verial-report", name)
        assert code == 1, output[-3000:]
        text = re.sub(r"\bgw\d+\b", "gw?", (pytester.path / name).read_text(encoding="utf-8"))
        out.append(json.loads(text))
    assert _normalised(out[0]) == _normalised(out[1])
    boom = criterion_runs(out[0])["crashy.verial.yaml::crashy::boom"]
    assert boom["status"] == "error" and "crashed" in boom["details"]
