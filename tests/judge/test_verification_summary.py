"""The verification summary and its terminal lines, from typed task runs."""

from __future__ import annotations

import pytest

from pytest_verial import TaskRun

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.judge._report import task_feedback, verification_lines, verification_summary


def task(**fields):
    """A task run as a report holds it, from the fields a test cares about."""
    runs = [{"criterion_id": f"c{i}", **c} for i, c in enumerate(fields.pop("criterion_runs"))]
    base = {"id": "t", "task_id": "t", "task_key": "t", "run": "r", "status": "completed"}
    return TaskRun.model_validate({**base, "pass_threshold": 0.9, **fields, "criterion_runs": runs})


def judged(status, calls=1, cost=0.0, cached=False):
    return {
        "judge": True,
        "status": status,
        "evidence": {
            "judge": {
                "model": "gpt-4o-mini",
                "executor_model": "claude-sonnet-4-5",
                "calls": calls,
                "cost": cost,
                "cached": cached,
                "called": calls > 0,
                "cost_known": True,
            }
        },
    }


def test_over_budget_warns():
    tasks = [
        task(
            task_key="t1",
            criterion_runs=[
                judged("passed", calls=2, cost=0.004),
                judged("gated", calls=0),
                {"judge": False, "status": "passed"},
            ],
        )
    ]
    summary = verification_summary(tasks, {("r", "t1"): 0.02}, budget=0.15)
    assert summary["judge_calls"] == 2 and summary["saved_by_gating"] == 1
    assert summary["cost_share"] == pytest.approx(0.2) and summary["over_budget"]
    lines = verification_lines(summary)
    assert lines[1] == "verification cost $0.0040 = 20.0% of task cost $0.0200 (budget 15%)"
    assert lines[2] == ("warning: verification cost is 20.0% of task cost, above the 15% budget")


def test_unknown_task_cost_and_cache_hits():
    tasks = [
        task(
            task_key="t1",
            criterion_runs=[judged("passed", calls=0, cached=True), judged("skipped", calls=0)],
        )
    ]
    summary = verification_summary(tasks, {("r", "t1"): None})
    assert summary["cached"] == 1 and summary["saved_by_bypass"] == 1
    assert summary["cost_share"] is None
    assert "task cost unknown" in verification_lines(summary)[1]


def test_no_judge_criteria_no_lines():
    summary = verification_summary([task(criterion_runs=[])], {})
    assert verification_lines(summary) == []


def test_feedback_includes_low_rated_principles_of_a_passing_criterion():
    partial = task(
        verdict="partial",
        score=0.8,
        criterion_runs=[
            {
                "criterion_id": "judged",
                "assert": "llm-rubric",
                "status": "passed",
                "score": 0.75,
                "details": "mean 0.75",
                "evidence": {
                    "rubric_results": [
                        {"principle": "Cites therapy", "rating": 5, "reasoning": "yes"},
                        {
                            "principle": "No invented findings",
                            "rating": 2,
                            "reasoning": "mentions an MRI from last year absent from the chart",
                        },
                    ]
                },
            }
        ],
    )
    text = task_feedback(partial)
    assert "principle No invented findings: rated 2/5 - mentions an MRI" in text
    assert "Cites therapy" not in text
    assert task_feedback(partial.model_copy(update={"verdict": "pass"})) is None
