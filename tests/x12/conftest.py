"""X12 test fixtures: a check runner."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from pytest_verial.testing import run_check


def score(source: Any, assertion: dict[str, Any]) -> dict[str, Any]:
    """Run ``x12-response`` through the engine: the criterion run (score, status, details...)."""
    return run_check("x12-response", assertion, {"x12": source})


@pytest.fixture
def run_x12() -> Callable[[Any, dict[str, Any]], dict[str, Any]]:
    """``run_x12(source, assertion_without_assert_key)``."""
    return score
