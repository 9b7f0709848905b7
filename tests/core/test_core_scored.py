"""Scored runs: nothing an agent could read shows what the criteria expect; the JSON keeps it."""

from __future__ import annotations

from pathlib import Path

import pytest
from core_support import (
    EXPECTED_STRINGS,
    LazyRuns,
    Project,
    build_prior_auth_project,
    criterion_runs,
    portal_criterion,
    shared_project,
    strip_timing,
)

#: words that only appear in details and evidence rows, never in scores or verdicts
DETAIL_MARKERS = (
    "invalid JSON",
    "assertions passed",
    "phrase checks passed",
    "FAIL\n",
    "unsupported assertion",
)


@pytest.fixture(scope="module")
def scored(shared_base: Path) -> dict[str, LazyRuns]:
    cli = shared_project(shared_base, "scored-cli", build_prior_auth_project)
    yaml_flag = shared_project(
        shared_base,
        "scored-run-yaml",
        lambda path: build_prior_auth_project(path).run_yaml({"agent": "pa-bot", "scored": True}),
    )
    return {"cli": LazyRuns(cli, "--verial-scored"), "run-yaml": LazyRuns(yaml_flag)}


CASES = pytest.mark.parametrize(
    ("mode", "workers"), [("cli", 0), ("cli", 2), ("run-yaml", 0), ("run-yaml", 2)]
)


def _leaks(text: str) -> list[str]:
    low = text.lower()
    return [s for s in EXPECTED_STRINGS if s.lower() in low]


@CASES
def test_terminal_shows_no_expected_values(
    scored: dict[str, LazyRuns], mode: str, workers: int
) -> None:
    result = scored[mode].get(workers)
    assert "verial summary" in result.output, result.output[-2000:]
    assert _leaks(result.output) == []
    assert [m for m in DETAIL_MARKERS if m in result.output] == []
    # scores and verdicts are still there
    assert "pa-lumbar-mri[john-smith]   0.250  partial" in result.output
    assert "Traceback" not in result.output


@CASES
def test_junit_files_show_no_expected_values(
    scored: dict[str, LazyRuns], mode: str, workers: int
) -> None:
    result = scored[mode].get(workers)
    for path in (result.junit, result.pytest_junit):
        text = path.read_text(encoding="utf-8")
        assert "pa-lumbar-mri" in text  # the file is the real thing
        assert _leaks(text) == [], path.name
        assert [m for m in DETAIL_MARKERS if m in text] == [], path.name


@CASES
def test_json_report_keeps_details_and_evidence(
    scored: dict[str, LazyRuns], mode: str, workers: int
) -> None:
    result = scored[mode].get(workers)
    report = result.report
    assert report["session"]["scored"] is True
    text = result.report_path.read_text(encoding="utf-8")
    assert sorted(set(_leaks(text))) == sorted(EXPECTED_STRINGS)
    john = criterion_runs(report)["pa.verial.yaml::pa-lumbar-mri[john-smith]::pa-submitted"]
    assert john["details"] and john["evidence"]["assertionResults"][0]["expected"] == (
        "submitted-quokka"
    )


@pytest.mark.parametrize("mode", ["cli", "run-yaml"])
def test_scored_reports_of_n0_and_n2_are_equal_apart_from_timing(
    scored: dict[str, LazyRuns], mode: str
) -> None:
    one, two = scored[mode].get(0).report, scored[mode].get(2).report
    assert strip_timing(one) == strip_timing(two)


@pytest.mark.parametrize("verbosity", ["-q", "-v", "-rA", "--tb=long"])
def test_labels_that_quote_the_expected_value_stay_hidden(
    pytester: pytest.Pytester, verbosity: str
) -> None:
    """Verial's own example label ("...with Dr. Rivera") repeats what the criterion expects."""
    project = Project(pytester.path)
    crit = portal_criterion(
        "booked",
        "appointments",
        None,
        None,
        [{"path": "practitioner", "expected": "Dr. Quokkarivera"}],
        label="Appointment booked with Dr. Quokkarivera",
    )
    project.benchmark("label", {"tasks": [{"id": "t", "criteria": [crit]}]})
    project.sandbox("t", {"portal/appointments.json": [{"practitioner": "Dr. Smith"}]})
    result = pytester.runpytest(verbosity, "--verial-scored", "--junitxml", "j.xml")
    result.assert_outcomes(failed=1)
    assert "quokkarivera" not in result.stdout.str().lower()
    assert "quokkarivera" not in (pytester.path / "j.xml").read_text(encoding="utf-8").lower()
