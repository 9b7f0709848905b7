"""An ``assert`` no check knows (issue 34): Verial's semantics (the criterion fails with
``unsupported assertion: X``, score 0), but pytest warns of it at collection with the nearest
known name, the verial summary counts it apart, and ``--verial-strict`` (ini
``verial_strict``) makes it a collection error."""

from __future__ import annotations

import pytest
from core_support import Project, criterion_runs, voice_criterion

TYPO = "voice-transcrpt"
SAYS = (
    f"field 'assertion.assert': unknown check '{TYPO}' (it fails with score 0); "
    "did you mean 'voice-transcript'?"
)


def _project(project: Project) -> None:
    typo = voice_criterion("no-ssn", not_contains=["social security number"])
    typo["assertion"]["assert"] = TYPO
    project.benchmark(
        "pa",
        {
            "benchmark": "pa",
            "version": 1,
            "tasks": [
                {"id": "t1", "criteria": [voice_criterion("hello", contains=["hello"]), typo]}
            ],
        },
    )
    project.benchmark(
        "other",
        {
            "benchmark": "other",
            "tasks": [{"id": "t2", "criteria": [voice_criterion("hi", contains=["hello"])]}],
        },
    )
    turns = {"voice/turns.json": [{"speaker": "agent", "text": "Hello!"}]}
    project.sandbox("t1", turns)
    project.sandbox("t2", turns)


def test_an_unknown_assert_is_warned_at_collection_and_counted_apart(
    pytester: pytest.Pytester, project: Project
) -> None:
    _project(project)
    result = pytester.runpytest("--verial-report", "report.json", "--verial-store", "none")
    result.assert_outcomes(passed=2, failed=1, warnings=1)
    out = result.stdout.str()
    # pytest's warnings summary, at the criterion's line
    result.stdout.fnmatch_lines(
        [f"*pa.verial.yaml:*: VerialWarning: pa.verial.yaml: task t1: criterion no-ssn: {SAYS}"]
    )
    # the verial summary: counted apart from the agent's failures, and the same warning
    words = " ".join(out.split())  # the summary wraps at the terminal's width
    assert "criteria: 1 passed, 1 failed (1 unsupported assertion), 0 errors" in words
    assert f"warning: pa.verial.yaml: task t1: criterion no-ssn: {SAYS}" in words
    report = project.read_report()
    assert f"pa.verial.yaml: task t1: criterion no-ssn: {SAYS}" in report["session"]["warnings"]
    run = criterion_runs(report)["pa.verial.yaml::t1::no-ssn"]
    assert (run["status"], run["score"], run["details"]) == (
        "failed",
        0.0,
        f"unsupported assertion: {TYPO}",
    )


@pytest.mark.parametrize("how", ["option", "ini"])
def test_strict_makes_it_a_collection_error(
    pytester: pytest.Pytester, project: Project, how: str
) -> None:
    _project(project)
    if how == "ini":
        (project.path / "pytest.ini").write_text("[pytest]\nverial_strict = true\n")
        args: tuple[str, ...] = ()
    else:
        args = ("--verial-strict",)
    result = pytester.runpytest(*args, "--verial-store", "none")
    result.assert_outcomes(passed=1, errors=1)  # the other benchmark file still runs
    result.stdout.fnmatch_lines(
        [
            "1 problem in benchmark file (--verial-strict):",
            f"pa.verial.yaml: task t1: criterion no-ssn: {SAYS}",
        ]
    )
    assert "Traceback" not in result.stdout.str()


def test_the_warning_is_the_same_under_xdist(pytester: pytest.Pytester, project: Project) -> None:
    """The xdist controller collects nothing: it finds the unknown assert when it loads the
    file the workers collected, and the report's warning is the one of -n 0."""
    pytest.importorskip("xdist")
    _project(project)
    result = pytester.runpytest_subprocess(
        "-p", "xdist", "-n", "2", "--verial-report", "report.json", "--verial-store", "none"
    )
    result.assert_outcomes(passed=2, failed=1)
    warnings = project.read_report()["session"]["warnings"]
    assert f"pa.verial.yaml: task t1: criterion no-ssn: {SAYS}" in warnings
    assert "failed (1 unsupported assertion)" in " ".join(result.stdout.str().split())
