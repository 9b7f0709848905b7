"""The example benchmark scores as intended on both captured runs (loader + sources + check)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_verial import CheckContext, load_benchmark

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._config.run_folder import RunDir
from pytest_verial._errors import CriterionError
from pytest_verial.checks import default_registry
from pytest_verial.sources import Sandbox

EXAMPLES = Path(__file__).resolve().parents[2] / "example_benchmarks"


def _scores(run: str) -> dict[str, float | str]:
    plan = load_benchmark(EXAMPLES / "files.verial.yaml", default_registry())
    run_dir = RunDir(EXAMPLES / "runs" / run)
    scores: dict[str, float | str] = {}
    for task in plan.tasks:
        sandbox = Sandbox(run_dir, task.task, task.key, task.entity)
        for criterion in task.criteria:
            assert criterion.check is not None and criterion.spec is not None
            ctx = CheckContext(
                sources={"files": sandbox.source("files")},
                task=task.task,
                task_key=task.key,
                criterion=criterion.criterion,
                criterion_id=criterion.id,
                entity=task.entity,
                pass_threshold=1.0,
            )
            key = f"{task.key}::{criterion.id}"
            try:
                scores[key] = criterion.check.run(criterion.spec, ctx).score
            except CriterionError as exc:
                scores[key] = f"error: {exc}"
    return scores


def test_good_agent_passes_every_criterion() -> None:
    scores = _scores("good-agent")
    assert len(scores) == 8
    assert all(s == 1.0 for s in scores.values()), scores


def test_flawed_agent_gets_partial_and_failing_scores() -> None:
    scores = _scores("flawed-agent")
    assert scores == {
        "sftp-referral-packet::packet-dropped": 0.0,  # two packets, max_count 1
        "sftp-referral-packet::packet-content": pytest.approx(4 / 6),
        "sftp-referral-packet::cover-letter": pytest.approx(2 / 4),
        "sftp-claims-batch::one-batch": 1.0,
        "sftp-claims-batch::batch-rows": pytest.approx(3 / 5),
        "sftp-claims-batch::manifest": 0.0,
        "sftp-claims-batch::audit-log": 0.5,
        "sftp-claims-batch::inbox-archived": 0.0,
    }
