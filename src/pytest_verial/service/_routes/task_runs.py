"""``GET /task-runs/{id}`` (an organization key): a task run's verdict, score, axes, the frozen
task snapshot and its criterion runs, a scored run's included."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path

from ...store._repo_runs import read_task_run
from .._answers import task_out
from .._deps import OrgViewerDep, StoreDep
from .._http import problems
from .._requests import TEXT_PATTERN
from .._schemas import TaskRunOut

router = APIRouter(tags=["internal"])


@router.get(
    "/task-runs/{task_run_id}", response_model=TaskRunOut, responses=problems(400, 401, 404, 503)
)
def get_task_run(
    task_run_id: Annotated[str, Path(max_length=100, pattern=TEXT_PATTERN)],
    key: OrgViewerDep,
    store: StoreDep,
) -> TaskRunOut:
    """One task run with its criterion runs (``id``, ``passed``, ``score`` and the rest); an
    organization key only (any other key: 404)."""
    return task_out(read_task_run(store, key, task_run_id), elide=False)
