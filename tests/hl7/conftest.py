"""HL7 test fixtures: corpus paths, a check runner, and the live capture server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_verial.checks import CheckContext
from pytest_verial.checks.hl7 import CHECK
from pytest_verial.errors import CriterionError
from pytest_verial.hl7.fixtures import verial_hl7_capture  # noqa: F401 - fixture under test
from pytest_verial.models import Criterion, Task

CORPUS = Path(__file__).parent / "corpus"


@pytest.fixture
def corpus() -> Path:
    """tests/hl7/corpus."""
    return CORPUS


def score(source: Any, assertion: dict[str, Any]) -> dict[str, Any]:
    """Run ``hl7-structural`` as the engine does: ``{score, details, evidence, status}``."""
    assertion = {"assert": "hl7-structural", **assertion}
    spec = CHECK.model.model_validate(assertion)
    criterion = Criterion(id="c1", assertion=assertion)
    ctx = CheckContext(
        sources={"hl7": source}, task=Task(id="t1", criteria=[criterion]), task_key="t1",
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
def run_hl7() -> Callable[[Any, dict[str, Any]], dict[str, Any]]:
    """``run_hl7(source, assertion_without_assert_key)``."""
    return score
