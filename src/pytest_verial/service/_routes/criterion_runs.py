"""``GET /criterion-runs/{id}`` and ``GET /criterion-runs?task_run_id=`` (an organization key):
the authoritative record of how a criterion scored, its evidence whole, a scored run's too."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Annotated

from fastapi import APIRouter, Path, Query

from ...store._repo_runs import list_criterion_runs, read_criterion_run
from .._answers import criterion_out
from .._deps import OrgViewerDep, StoreDep
from .._http import Problem, problems
from .._requests import TEXT_PATTERN
from .._schemas import CriterionRunOut, CriterionRunPage

router = APIRouter(tags=["internal"])

Text = Annotated[str, Path(max_length=100, pattern=TEXT_PATTERN)]


#: the largest position a cursor may name (PostgreSQL's integer; SQLite's is wider)
MAX_POSITION = 2**31 - 1


def _cursor(task_run_id: str, position: int) -> str:
    text = json.dumps([task_run_id, position])
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _after(cursor: str, task_run_id: str) -> int:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        owner, position = json.loads(raw)
        if owner != task_run_id or not isinstance(position, int) or isinstance(position, bool):
            raise ValueError
        if not 0 <= position <= MAX_POSITION:  # a forged one past what a store's integer holds
            raise ValueError
    except (ValueError, TypeError, binascii.Error, json.JSONDecodeError, UnicodeDecodeError):
        raise Problem(422, "query cursor: not a cursor of this task run's listing") from None
    return position


@router.get(
    "/criterion-runs", response_model=CriterionRunPage, responses=problems(400, 401, 404, 422, 503)
)
def list_runs(
    key: OrgViewerDep,
    store: StoreDep,
    task_run_id: Annotated[str, Query(max_length=100, pattern=TEXT_PATTERN)],
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
    cursor: Annotated[str | None, Query(max_length=500, pattern=TEXT_PATTERN)] = None,
) -> CriterionRunPage:
    """A task run's criterion runs in order: ``{data, next_cursor}``."""
    after = _after(cursor, task_run_id) if cursor else None
    found, more = list_criterion_runs(store, key, task_run_id, limit=limit, after=after)
    data = [
        criterion_out(c.id, c.run, c.task_run_id, c.benchmark_run_id, elide=False) for c in found
    ]
    start = after if after is not None else -1
    next_cursor = _cursor(task_run_id, start + len(found)) if more else None
    return CriterionRunPage(data=data, next_cursor=next_cursor)


@router.get(
    "/criterion-runs/{criterion_run_id}",
    response_model=CriterionRunOut,
    responses=problems(400, 401, 404, 503),
)
def get_criterion_run(
    criterion_run_id: Text, key: OrgViewerDep, store: StoreDep
) -> CriterionRunOut:
    """One criterion run: ``passed``, ``score``, ``details`` and its ``evidence`` in full (a
    scored run's too); an organization key only (any other key: 404)."""
    found = read_criterion_run(store, key, criterion_run_id)
    return criterion_out(
        found.id, found.run, found.task_run_id, found.benchmark_run_id, elide=False
    )
