"""Sessions that do not run every criterion: -k deselection, a crashed worker, Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from core_support import (
    LazyRuns,
    Project,
    child_env,
    crash_project,
    criterion_runs,
    interruptible_pytest,
    only_run,
    portal_criterion,
    run_subprocess,
    shared_project,
    task_runs,
    voice_criterion,
)

WORKERS = pytest.mark.parametrize("workers", [0, 2], ids=["n0", "n2"])

GREETS = {"voice/turns.json": [{"speaker": "agent", "text": "Good morning, Valley Health."}]}


# -- -k deselection ------------------------------------------------------------------------


@WORKERS
def test_deselecting_a_criterion_makes_its_task_incomplete(
    pytester: pytest.Pytester, workers: int
) -> None:
    project = Project(pytester.path)
    project.benchmark(
        "pa",
        {
            "tasks": [
                {
                    "id": "pa",
                    "criteria": [
                        portal_criterion(
                            "status-ok",
                            "prior_auth_requests",
                            None,
                            None,
                            [{"path": "status", "expected": "submitted"}],
                        ),
                        portal_criterion(
                            "cpt-ok",
                            "prior_auth_requests",
                            None,
                            None,
                            [{"path": "cpt", "expected": "72148"}],
                        ),
                    ],
                },
                {
                    "id": "greeting",
                    "criteria": [voice_criterion("greets", contains=["good morning"])],
                },
            ]
        },
    )
    project.sandbox(
        "pa", {"portal/prior_auth_requests.json": [{"status": "draft", "cpt": "72148"}]}
    )
    project.sandbox("greeting", GREETS)
    args = ("-k", "not cpt", "--verial-report", "report.json")
    if workers:
        code, output = run_subprocess(pytester.path, "-n", "2", *args)
    else:
        result = pytester.runpytest(*args)
        code, output = int(result.ret), result.stdout.str()
    # xdist's summary line does not count deselections made on the workers
    assert ("1 failed, 1 passed" + ("" if workers else ", 1 deselected")) in output, output[-2000:]
    report = project.read_report()
    tasks = task_runs(report)
    pa = tasks["pa.verial.yaml::pa"]
    assert pa["status"] == "incomplete"
    assert pa["verdict"] is None  # scored on part of its criteria: neither passed nor failed
    assert pa["counts"]["deselected"] == 1
    assert criterion_runs(report)["pa.verial.yaml::pa::cpt-ok"]["status"] == "deselected"
    run = only_run(report)
    assert run["score"] == 1.0  # the incomplete task (score 0) is left out of the mean
    assert run["counts"]["incomplete"] == 1
    assert report["session"]["warnings"] == [
        "task run pa.verial.yaml::pa is incomplete (1 criterion "
        "deselected): left out of the run score"
    ]
    assert "warning: task run pa.verial.yaml::pa is incomplete" in output
    assert code == 1


# -- a worker that dies --------------------------------------------------------------------


@pytest.fixture(scope="module")
def crashed(shared_base: Path) -> tuple[int, str, dict]:  # type: ignore[type-arg]
    result = LazyRuns(shared_project(shared_base, "crash", crash_project)).get(2)
    return result.code, result.output, result.report


def test_crashed_criterion_is_an_error_with_score_0(crashed: tuple[int, str, dict]) -> None:  # type: ignore[type-arg]
    code, output, report = crashed
    boom = criterion_runs(report)["crashy.verial.yaml::crashy::boom"]
    assert (boom["status"], boom["score"], boom["passed"]) == ("error", 0.0, False)
    assert "crashed" in boom["details"]
    assert boom["axis"] == "safety"  # identity kept from the plan
    assert code == 1


def test_other_criteria_keep_their_results_after_a_crash(
    crashed: tuple[int, str, dict],  # type: ignore[type-arg]
) -> None:
    _, output, report = crashed
    runs = criterion_runs(report)
    assert runs["crashy.verial.yaml::crashy::before"]["status"] == "passed"
    assert runs["crashy.verial.yaml::steady::greets"]["status"] == "passed"
    assert runs["crashy.verial.yaml::crashy::after"]["status"] == "passed", output[-3000:]
    tasks = task_runs(report)
    assert tasks["crashy.verial.yaml::crashy"]["status"] == "completed"
    assert tasks["crashy.verial.yaml::crashy"]["score"] == pytest.approx(3 / 4)
    assert tasks["crashy.verial.yaml::steady"]["verdict"] == "pass"
    assert report["session"]["counts"]["criteria_error"] == 1
    assert "verial summary" in output


# -- Ctrl-C --------------------------------------------------------------------------------

SLOW_CHECK = """
import time
from pathlib import Path
from typing import Literal

from pydantic import Field

from pytest_verial import AssertionSpec, CheckOutcome, CheckSpec

HERE = Path(__file__).parent


class Note(AssertionSpec):
    kind: Literal["note"] = Field(alias="assert")


class Slow(AssertionSpec):
    kind: Literal["slow"] = Field(alias="assert")


def note(spec, ctx):
    return CheckOutcome(1.0, "noted")


def slow(spec, ctx):
    # wait until the controller holds the first task's three criterion runs: its journal
    # (a header line, then one line per criterion run received) says so, with no guessed sleep
    journal = HERE / "report.json.journal.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        lines = journal.read_text().splitlines() if journal.exists() else []
        if sum(1 for line in lines if line.startswith('{"nodeid"') and "::first::" in line) >= 3:
            break
        time.sleep(0.05)
    (HERE / "marker").write_text("1")
    time.sleep(20)  # far shorter than the test's wait: a lost signal ends the run, not the test
    return CheckOutcome(1.0, "slept")


def pytest_verial_checks():
    return [CheckSpec(name="note", model=Note, run=note),
            CheckSpec(name="slow", model=Slow, run=slow)]
"""


@WORKERS
def test_ctrl_c_keeps_completed_tasks_and_cancels_the_run(tmp_path: Path, workers: int) -> None:
    project = Project(tmp_path)
    project.conftest(SLOW_CHECK)
    project.benchmark(
        "interrupt",
        {
            "tasks": [
                {
                    "id": "first",
                    "criteria": [
                        voice_criterion("greets", contains=["good morning"], weight=3),
                        voice_criterion("asks-dob", contains=["date of birth"]),
                        {"id": "noted", "assertion": {"assert": "note"}},
                    ],
                },
                {
                    "id": "second",
                    "criteria": [
                        {"id": "waits", "assertion": {"assert": "slow"}},
                        voice_criterion("later", contains=["good morning"]),
                    ],
                },
            ]
        },
    )
    project.sandbox("first", GREETS)
    project.sandbox("second", GREETS)
    proc = subprocess.Popen(
        interruptible_pytest("-n", str(workers), "--verial-report", "report.json"),
        cwd=tmp_path,
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "marker").exists():
            assert proc.poll() is None, proc.communicate()[0][-3000:]
            assert time.monotonic() < deadline, "the slow check never started"
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)
        output, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, output[-3000:]
    assert (tmp_path / "report.json").exists(), output[-3000:]
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    run = only_run(report)
    assert run["status"] == "cancelled"
    assert report["session"]["phase"] == "completed"
    tasks = task_runs(report)
    first = tasks["interrupt.verial.yaml::first"]
    assert first["status"] == "completed", output[-3000:]
    assert first["score"] == pytest.approx(4 / 5)
    assert first["verdict"] == "partial"
    assert tasks["interrupt.verial.yaml::second"]["status"] == "cancelled"
    assert tasks["interrupt.verial.yaml::second"]["score"] is None
    assert run["score"] == pytest.approx(4 / 5)  # completed tasks only


# -- a session stopped early ---------------------------------------------------------------


def test_exitfirst_cancels_the_tasks_not_run(pytester: pytest.Pytester) -> None:
    project = Project(pytester.path)
    project.benchmark(
        "stop",
        {
            "tasks": [
                {
                    "id": "first",
                    "criteria": [
                        voice_criterion("greets", contains=["good morning"]),
                        voice_criterion(
                            "asks-dob", contains=["date of birth"]
                        ),  # fails: -x stops here
                    ],
                },
                {
                    "id": "second",
                    "criteria": [voice_criterion("greets", contains=["good morning"])],
                },
            ]
        },
    )
    project.sandbox("first", GREETS)
    project.sandbox("second", GREETS)
    result = pytester.runpytest("-x", "--verial-report", "report.json")
    result.assert_outcomes(passed=1, failed=1)
    report = project.read_report()
    tasks = task_runs(report)
    assert tasks["stop.verial.yaml::first"]["status"] == "completed"
    assert tasks["stop.verial.yaml::first"]["score"] == 0.5
    second = tasks["stop.verial.yaml::second"]
    assert (second["status"], second["score"], second["verdict"]) == ("cancelled", None, None)
    assert second["criterion_runs"][0]["status"] == "not_run"
    run = only_run(report)
    assert (run["status"], run["score"]) == ("cancelled", 0.5)
    result.stdout.fnmatch_lines(["second *-*cancelled*"])


# -- skip_verification -----------------------------------------------------------------------


def test_skip_verification_skips_every_criterion_of_the_task(pytester: pytest.Pytester) -> None:
    """PRD-103 §8: ``skip_verification: true`` means no verification at all, not only no judge:
    the task's deterministic criteria are skipped too; other tasks are scored as usual."""
    project = Project(pytester.path)
    says_hello = voice_criterion("greets", "agent", contains=["good morning"])
    project.benchmark(
        "pa",
        {
            "tasks": [
                {"id": "trusted", "criteria": [says_hello]},
                {"id": "checked", "criteria": [says_hello]},
            ]
        },
    )
    for task in ("trusted", "checked"):
        project.sandbox(task, {"voice/turns.json": [{"speaker": "agent", "text": "Hello."}]})
    project.run_yaml({"tasks": {"trusted": {"skip_verification": True}}})
    result = pytester.runpytest("--verial-report", "report.json")
    result.assert_outcomes(skipped=1, failed=1)
    runs = criterion_runs(project.read_report())
    trusted = runs["pa.verial.yaml::trusted::greets"]
    assert trusted["status"] == "skipped"
    assert "skip_verification" in trusted["details"]
    assert runs["pa.verial.yaml::checked::greets"]["status"] == "failed"
    tasks = task_runs(project.read_report())
    assert tasks["pa.verial.yaml::trusted"]["status"] == "skipped"
    assert tasks["pa.verial.yaml::trusted"]["verdict"] is None  # not a fail: never verified
    assert project.read_report()["benchmark_runs"][0]["score"] == 0.0  # the mean of 'checked' alone
