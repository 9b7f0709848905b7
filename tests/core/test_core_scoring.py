"""Scoring (README, "Scoring") as pure functions, plus the no-criteria rule end to end."""

from __future__ import annotations

import math

import pytest
from core_support import Project, criterion_runs, portal_criterion, task_runs
from hypothesis import assume, given, settings
from hypothesis import strategies as st

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._scoring import (
    DEFAULT_AXIS,
    TOLERANCE,
    Scored,
    axes,
    passed,
    resolve_threshold,
    run_score,
    task_score,
    verdict,
    verdict_threshold,
)

scores = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
weights = st.floats(min_value=1e-3, max_value=1e3, allow_nan=False, allow_infinity=False)
axis_names = st.sampled_from([None, "correctness", "safety", "efficiency"])
items = st.lists(st.builds(Scored, scores, weights, axis_names), min_size=1, max_size=20)


# -- the Verial docs example ---------------------------------------------------------------


def test_verial_docs_example_task_score_axes_and_verdict() -> None:
    criteria = [Scored(1.0, 2, "correctness"), Scored(0.0, 1, "safety")]
    score = task_score(criteria)
    assert score == pytest.approx(2 / 3)
    assert verdict(score) == "partial"
    assert axes(criteria) == {
        "correctness": {"score": 1.0, "weight": 2},
        "safety": {"score": 0.0, "weight": 1},
    }


def test_criteria_without_axis_go_to_the_default_bucket() -> None:
    result = axes([Scored(1.0, 1, None), Scored(0.5, 3, None), Scored(0.0, 1, "safety")])
    assert result[DEFAULT_AXIS] == {"score": pytest.approx(2.5 / 4), "weight": 4}
    assert result["safety"] == {"score": 0.0, "weight": 1}


def test_task_without_criteria_scores_zero_and_fails() -> None:
    assert task_score([]) == 0.0
    assert verdict(task_score([]), has_criteria=False) == "fail"
    # even a (meaningless) perfect score does not pass a task without criteria
    assert verdict(1.0, has_criteria=False) == "fail"


@pytest.mark.parametrize(
    ("score", "expected"),
    [
        (0.0, "fail"),
        (1e-12, "fail"),
        (0.01, "partial"),
        (0.8999, "partial"),
        (0.9 - 1e-10, "pass"),
        (0.9, "pass"),
        (1.0, "pass"),
    ],
)
def test_verdict_thresholds_with_tolerance(score: float, expected: str) -> None:
    assert verdict(score) == expected


def test_tolerance_at_a_custom_threshold() -> None:
    assert verdict(0.75 - TOLERANCE / 2, threshold=0.75) == "pass"
    assert verdict(0.75 - 10 * TOLERANCE, threshold=0.75) == "partial"
    assert passed(1.0 - TOLERANCE / 2)
    assert not passed(1.0 - 10 * TOLERANCE)
    # float drift from summed weights does not flip a verdict: 0.1+0.2 style sums
    drift = task_score([Scored(1.0, 0.1, None), Scored(1.0, 0.2, None), Scored(0.7, 0.7, None)])
    assert drift == pytest.approx(0.79)
    assert verdict(0.3 * 3, threshold=0.9) == "pass"  # 0.8999999999999999


def test_run_score_is_the_unweighted_mean_of_task_scores() -> None:
    assert run_score([1.0, 0.5, 0.0]) == pytest.approx(0.5)
    assert run_score([]) == 0.0


def test_threshold_hierarchy_most_specific_wins() -> None:
    # criterion > task > benchmark > ini/CLI > default
    assert resolve_threshold(0.5, 0.6, 0.7, 0.8, default=0.9) == 0.5
    assert resolve_threshold(None, 0.6, 0.7, 0.8, default=0.9) == 0.6
    assert resolve_threshold(None, None, 0.7, 0.8, default=0.9) == 0.7
    assert resolve_threshold(None, None, None, 0.8, default=0.9) == 0.8
    assert resolve_threshold(None, None, None, None, default=0.9) == 0.9
    # a threshold of 0 is a real value, not "unset"
    assert resolve_threshold(None, 0.0, 0.7, default=0.9) == 0.0


def test_verdict_threshold_task_then_benchmark_then_configured_then_default() -> None:
    assert verdict_threshold(0.6, 0.7, 0.8) == 0.6
    assert verdict_threshold(None, 0.7, 0.8) == 0.7
    assert verdict_threshold(None, None, 0.8) == 0.8
    assert verdict_threshold() == 0.9
    assert verdict_threshold(None, 0.0, 0.8) == 0.0


# -- properties ----------------------------------------------------------------------------


@given(items)
def test_task_score_is_within_bounds(criteria: list[Scored]) -> None:
    score = task_score(criteria)
    assert 0.0 <= score <= 1.0
    lo, hi = min(c.score for c in criteria), max(c.score for c in criteria)
    assert lo - 1e-9 <= score <= hi + 1e-9


@given(items, st.floats(min_value=1e-3, max_value=1e3))
def test_scaling_every_weight_leaves_scores_unchanged(criteria: list[Scored], k: float) -> None:
    scaled = [Scored(c.score, c.weight * k, c.axis) for c in criteria]
    assert task_score(scaled) == pytest.approx(task_score(criteria), abs=1e-9)
    assert verdict(task_score(scaled)) == verdict(task_score(criteria)) or math.isclose(
        task_score(criteria), 0.9, abs_tol=1e-8
    )
    for name, value in axes(scaled).items():
        assert value["score"] == pytest.approx(axes(criteria)[name]["score"], abs=1e-9)
        assert value["weight"] == pytest.approx(axes(criteria)[name]["weight"] * k)


@given(scores, scores, st.floats(min_value=0.05, max_value=1.0))
def test_verdict_is_monotonic_in_score(a: float, b: float, threshold: float) -> None:
    rank = {"fail": 0, "partial": 1, "pass": 2}
    low, high = sorted((a, b))
    assert rank[verdict(low, threshold)] <= rank[verdict(high, threshold)]


@given(st.floats(min_value=0.05, max_value=1.0), st.floats(min_value=0, max_value=0.99e-9))
def test_tolerance_at_the_threshold(threshold: float, below: float) -> None:
    assert verdict(threshold - below, threshold) == "pass"
    assume(threshold - 2e-9 > 1e-9)
    assert verdict(threshold - 2e-9, threshold) == "partial"


@given(st.lists(scores, min_size=1, max_size=30))
def test_run_score_is_the_mean(task_scores: list[float]) -> None:
    assert run_score(task_scores) == pytest.approx(sum(task_scores) / len(task_scores), abs=1e-12)


@given(items)
def test_task_score_is_the_weight_of_axes_combined(criteria: list[Scored]) -> None:
    """The task score equals the weighted mean of the per-axis scores (axes partition it)."""
    per_axis = axes(criteria)
    total = sum(v["weight"] for v in per_axis.values())
    combined = sum(v["score"] * v["weight"] for v in per_axis.values()) / total
    assert task_score(criteria) == pytest.approx(combined, abs=1e-9)


@settings(max_examples=50)
@given(st.lists(st.one_of(st.none(), scores), min_size=5, max_size=5))
def test_threshold_hierarchy_picks_the_first_given(levels: list[float | None]) -> None:
    chosen = resolve_threshold(*levels[:4], default=levels[4] if levels[4] is not None else 0.9)
    given_levels = [lv for lv in levels[:4] if lv is not None]
    assert chosen == (
        given_levels[0] if given_levels else (levels[4] if levels[4] is not None else 0.9)
    )


# -- end to end ---------------------------------------------------------------------------


DOCS_EXAMPLE = {
    "benchmark": "docs",
    "tasks": [
        {
            "id": "docs-example",
            "criteria": [
                {
                    "id": "right",
                    "weight": 2,
                    "axis": "correctness",
                    "assertion": {
                        "assert": "portal-state-match",
                        "correlate_by": {
                            "resource": "prior_auth_requests",
                            "key": "request_id",
                            "value": "PA-1",
                        },
                        "assertions": [{"path": "status", "expected": "submitted"}],
                    },
                },
                {
                    "id": "unsafe",
                    "weight": 1,
                    "axis": "safety",
                    "assertion": {
                        "assert": "voice-transcript",
                        "speaker": "agent",
                        "not_contains": ["social security number"],
                    },
                },
            ],
        },
        {"id": "empty-task", "name": "A task nobody wrote criteria for"},
    ],
}


def test_docs_example_and_no_criteria_end_to_end(pytester: pytest.Pytester) -> None:
    project = Project(pytester.path)
    project.benchmark("docs", DOCS_EXAMPLE)
    project.sandbox(
        "docs-example",
        {
            "portal/prior_auth_requests.json": [{"request_id": "PA-1", "status": "submitted"}],
            "voice/turns.json": [
                {"speaker": "agent", "text": "What is your Social Security number?"}
            ],
        },
    )
    result = pytester.runpytest("--verial-report", "report.json")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        [
            "docs-example*0.667*partial*correctness 1.00 (w2)*safety 0.00 (w1)*",
            "empty-task*0.000*fail*",
            "FAILED docs.verial.yaml::empty-task::no-criteria - task 'empty-task' has no c*",
        ]
    )
    runs = task_runs(project.read_report())
    docs = runs["docs.verial.yaml::docs-example"]
    assert docs["score"] == pytest.approx(2 / 3)
    assert docs["verdict"] == "partial"
    assert docs["axes"] == {
        "correctness": {"score": 1.0, "weight": 2},
        "safety": {"score": 0.0, "weight": 1},
    }
    empty = runs["docs.verial.yaml::empty-task"]
    assert (empty["score"], empty["verdict"], empty["criterion_runs"]) == (0.0, "fail", [])
    run = project.read_report()["benchmark_runs"][0]
    assert run["score"] == pytest.approx((2 / 3 + 0.0) / 2)  # the empty task counts in the mean


def test_threshold_hierarchy_end_to_end(pytester: pytest.Pytester) -> None:
    """Benchmark threshold beats the CLI; a task's own threshold beats the benchmark's."""
    project = Project(pytester.path)
    crit = [
        {
            "id": "ok",
            "weight": 3,
            "assertion": {"assert": "voice-transcript", "contains": ["hello"]},
        },
        {
            "id": "miss",
            "weight": 1,
            "assertion": {"assert": "voice-transcript", "contains": ["goodbye"]},
        },
    ]  # task score 0.75
    project.benchmark(
        "levels",
        {
            "benchmark": "levels",
            "pass_threshold": 0.7,
            "tasks": [
                {"id": "bench-level", "criteria": crit},
                {"id": "task-level", "pass_threshold": 0.8, "criteria": crit},
            ],
        },
    )
    project.benchmark("cli", {"benchmark": "cli", "tasks": [{"id": "cli-level", "criteria": crit}]})
    turns = {"voice/turns.json": [{"speaker": "agent", "text": "Hello there"}]}
    for key in ("bench-level", "task-level", "cli-level"):
        project.sandbox(key, turns)
    pytester.runpytest("--verial-report", "report.json", "--verial-pass-threshold", "0.75")
    runs = task_runs(project.read_report())
    assert runs["levels.verial.yaml::bench-level"]["verdict"] == "pass"  # 0.75 >= 0.7
    assert runs["levels.verial.yaml::task-level"]["verdict"] == "partial"  # 0.75 < 0.8
    assert runs["cli.verial.yaml::cli-level"]["verdict"] == "pass"  # 0.75 >= CLI 0.75
    assert {r["pass_threshold"] for r in runs.values()} == {0.7, 0.8, 0.75}


def test_deterministic_criterion_threshold_defaults_to_one_and_can_be_lowered(
    pytester: pytest.Pytester,
) -> None:
    """A deterministic criterion passes only when every field holds, whatever the task's
    threshold; its own ``pass_threshold`` lowers that (README, "Scoring")."""
    fields = [{"path": "status", "expected": "submitted"}, {"path": "cpt", "expected": "72148"}]
    half = portal_criterion("half", "requests", "id", "PA-1", fields)  # one field of two: 0.5
    project = Project(pytester.path)
    project.benchmark(
        "levels",
        {
            "tasks": [
                {"id": "strict", "criteria": [half]},
                {
                    "id": "lowered",
                    "pass_threshold": 0.8,
                    "criteria": [{**half, "pass_threshold": 0.5}],
                },
            ]
        },
    )
    rows = {"portal/requests.json": [{"id": "PA-1", "status": "submitted", "cpt": "99999"}]}
    for key in ("strict", "lowered"):
        project.sandbox(key, rows)
    pytester.runpytest("--verial-report", "report.json", "--verial-pass-threshold", "0.5")
    runs = criterion_runs(project.read_report())
    strict, lowered = (
        runs["levels.verial.yaml::strict::half"],
        runs["levels.verial.yaml::lowered::half"],
    )
    assert (strict["score"], strict["pass_threshold"], strict["passed"]) == (0.5, 1.0, False)
    assert (lowered["score"], lowered["pass_threshold"], lowered["passed"]) == (0.5, 0.5, True)
