"""Score one assertion against source objects, outside a benchmark file: for check tests.

``run_check("x12-response", {...}, {"x12": source})`` validates the assertion and scores it
through :func:`pytest_verial._engine.run_criterion`, exactly as a criterion item does, and
returns the criterion run (``score``, ``passed``, ``status``, ``details``, ``evidence``...).
Useful to authors testing a check they register through ``pytest_verial_checks`` too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._engine import run_criterion
from ._loader import CriterionPlan, TaskPlan
from ._models import Criterion, Task
from .checks import CheckRegistry, default_registry


def run_check(
    name: str,
    assertion: Mapping[str, Any],
    sources: Mapping[str, Any],
    registry: CheckRegistry | None = None,
    options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The criterion run of ``{"assert": name, **assertion}`` scored on ``sources``."""
    check = (registry or default_registry()).get(name)
    if check is None:
        raise ValueError(f"no check registered for assert {name!r}")
    raw = {"assert": name, **assertion}
    criterion = Criterion(id="c1", assertion=raw)
    check.model.model_validate(raw)  # a bad assertion raises here, as before
    plan = CriterionPlan("c1", criterion, raw, check)
    task = TaskPlan("t1", Task(id="t1", criteria=[criterion]), None, (plan,))
    return run_criterion(plan, task, sources, options=options).to_json()
