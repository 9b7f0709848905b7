"""Helpers for the output checks: a sandbox with one output file and a hand-built context."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_verial import CheckContext, CheckOutcome, Task

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._models import Criterion
from pytest_verial.checks import default_registry

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.sources._output import OutputSnapshot


@pytest.fixture
def run_check(tmp_path: Path) -> Callable[..., CheckOutcome]:
    """``run_check(assertion, text, name="output.md")`` -> the check's outcome."""
    registry = default_registry()

    def run(assertion: dict[str, Any], text: str | None, name: str = "output.md") -> CheckOutcome:
        sandbox = tmp_path / "sandbox"
        sandbox.mkdir(exist_ok=True)
        if text is not None:
            (sandbox / name).write_text(text, encoding="utf-8")
        check = registry.get(assertion["assert"])
        assert check is not None
        spec = check.model.model_validate(assertion)
        criterion = Criterion(id="c", assertion=assertion)
        ctx = CheckContext(
            sources={"output": OutputSnapshot(sandbox)},
            task=Task(id="t", criteria=[criterion]),
            task_key="t",
            criterion=criterion,
            criterion_id="c",
            entity=None,
            pass_threshold=1.0,
        )
        return check.run(spec, ctx)

    return run
