"""``--verial-fail-under``: exit 0 iff the run score reaches it and nothing errored."""

from __future__ import annotations

import pytest
from core_support import Project, portal_criterion, run_subprocess, voice_criterion

WORKERS = pytest.mark.parametrize("workers", [0, 2], ids=["n0", "n2"])


def _project(pytester: pytest.Pytester, corrupt: bool = False) -> Project:
    project = Project(pytester.path)
    project.benchmark(
        "gate",
        {
            "tasks": [
                {
                    "id": "perfect",
                    "criteria": [voice_criterion("greets", contains=["good morning"])],
                },
                {
                    "id": "half",
                    "criteria": [
                        voice_criterion("greets", contains=["good morning"]),
                        portal_criterion(
                            "submitted",
                            "prior_auth_requests",
                            "request_id",
                            "PA-1",
                            [{"path": "status", "expected": "submitted"}],
                        ),
                    ],
                },
            ]
        },
    )
    turns = {"voice/turns.json": [{"speaker": "agent", "text": "Good morning!"}]}
    project.sandbox("perfect", turns)
    rows = '[{"request_id": "PA-1"' if corrupt else '[{"request_id": "PA-1", "status": "draft"}]'
    project.sandbox("half", {**turns, "portal/prior_auth_requests.json": rows})
    return project  # run score (1.0 + 0.5) / 2 = 0.75


def _run(pytester: pytest.Pytester, workers: int, *args: str) -> tuple[int, str]:
    if workers:
        return run_subprocess(pytester.path, "-n", str(workers), *args)
    result = pytester.runpytest(*args)
    return int(result.ret), result.stdout.str() + result.stderr.str()


@WORKERS
def test_exit_0_when_the_score_reaches_the_gate(pytester: pytest.Pytester, workers: int) -> None:
    _project(pytester)
    code, output = _run(pytester, workers, "--verial-fail-under", "0.75")
    assert code == 0, output[-2000:]  # a criterion failed, but the run reached 0.75
    assert "1 failed, 2 passed" in output
    assert "fail-under 0.75: run score 0.750 reached -> exit 0" in output


@WORKERS
def test_exit_1_when_the_score_is_below_the_gate(pytester: pytest.Pytester, workers: int) -> None:
    _project(pytester)
    code, output = _run(pytester, workers, "--verial-fail-under", "0.76")
    assert code == 1, output[-2000:]
    assert "fail-under 0.76: run score 0.750 NOT reached -> exit 1" in output


def test_exit_1_when_a_criterion_errored(pytester: pytest.Pytester) -> None:
    _project(pytester, corrupt=True)
    code, output = _run(pytester, 0, "--verial-fail-under", "0.5")
    assert code == 1
    assert "fail-under 0.5: run score 0.750 reached, 1 error -> exit 1" in output


def test_without_the_gate_failed_criteria_fail_the_session(pytester: pytest.Pytester) -> None:
    _project(pytester)
    code, _ = _run(pytester, 0)
    assert code == 1


def test_the_gate_from_the_ini_file(pytester: pytest.Pytester) -> None:
    _project(pytester)
    (pytester.path / "pytest.ini").write_text(
        "[pytest]\nverial_fail_under = 0.7\n", encoding="utf-8"
    )
    code, output = _run(pytester, 0)
    assert code == 0, output[-2000:]


def test_a_collection_error_fails_the_gate(pytester: pytest.Pytester) -> None:
    _project(pytester)
    Project(pytester.path).benchmark("broken", "tasks: [\n")
    code, output = _run(
        pytester, 0, "--verial-fail-under", "0.1", "--continue-on-collection-errors"
    )
    assert code == 1
    assert "1 error ->" in output  # counted as an error by the gate


@pytest.mark.parametrize("value", ["1.5", "-0.1", "most"])
def test_a_bad_gate_value_is_a_usage_error(pytester: pytest.Pytester, value: str) -> None:
    _project(pytester)
    result = pytester.runpytest("--verial-fail-under", value)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--verial-fail-under*"])
