"""HL7 test fixtures: corpus paths, a check runner, and the live capture server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_verial.testing import run_check

CORPUS = Path(__file__).parent / "corpus"


@pytest.fixture
def corpus() -> Path:
    """tests/hl7/corpus."""
    return CORPUS


def score(source: Any, assertion: dict[str, Any]) -> dict[str, Any]:
    """Run ``hl7-structural`` through the engine: the criterion run (score, status, details...)."""
    return run_check("hl7-structural", assertion, {"hl7": source})


@pytest.fixture
def run_hl7() -> Callable[[Any, dict[str, Any]], dict[str, Any]]:
    """``run_hl7(source, assertion_without_assert_key)``."""
    return score
