"""X12 test fixtures: a check runner."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from pytest_verial.checks import CheckContext
from pytest_verial.checks.x12 import CHECK
from pytest_verial.errors import CriterionError
from pytest_verial.models import Criterion, Task


def score(source: Any, assertion: dict[str, Any]) -> dict[str, Any]:
    """Run ``x12-response`` as the engine does: ``{score, details, evidence, status}``."""
    assertion = {"assert": "x12-response", **assertion}
    spec = CHECK.model.model_validate(assertion)
    criterion = Criterion(id="c1", assertion=assertion)
    ctx = CheckContext(
        sources={"x12": source}, task=Task(id="t1", criteria=[criterion]), task_key="t1",
        criterion=criterion, criterion_id="c1", entity=None, pass_threshold=1.0,
    )
    try:
        outcome = CHECK.run(spec, ctx)
    except CriterionError as exc:
        return {"score": 0.0, "details": str(exc), "evidence": {}, "status": "error"}
    status = "passed" if outcome.score >= 1.0 - 1e-9 else "failed"
    return {"score": outcome.score, "details": outcome.details, "evidence": outcome.evidence,
            "status": status}


@pytest.fixture
def run_x12() -> Callable[[Any, dict[str, Any]], dict[str, Any]]:
    """``run_x12(source, assertion_without_assert_key)``."""
    return score
