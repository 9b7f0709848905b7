"""``GET /v1/jobs/{id}``: an async verify-task, read by the key that queued it or an org key."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Path, Response

from ...store._repo_jobs import read_job
from ...store._repo_runs import NotVisible
from .._deps import PrincipalDep, StoreDep
from .._http import problems
from .._requests import TEXT_PATTERN
from .._schemas import JobOut

router = APIRouter(tags=["verify"])


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


@router.get("/v1/jobs/{job_id}", response_model=JobOut, responses=problems(400, 401, 404, 503))
def get_job(
    job_id: Annotated[str, Path(max_length=100, pattern=TEXT_PATTERN)],
    key: PrincipalDep,
    store: StoreDep,
    response: Response,
) -> JobOut:
    """An async verify-task: ``status`` queued, running, done (``result``: the answer the
    synchronous request gives) or failed (``error``: its problem). ``Retry-After: 1`` until it
    is done or failed."""
    job = read_job(store, key, job_id)
    if job is None:
        raise NotVisible("job", job_id)
    if job.status not in ("done", "failed"):
        response.headers["Retry-After"] = "1"
    return JobOut.model_validate(
        {
            "id": job.id,
            "status": job.status,
            "attempts": job.attempts,
            "created_at": _iso(job.created_at),
            "started_at": _iso(job.started_at),
            "finished_at": _iso(job.finished_at),
            "result": job.response if job.status == "done" else None,
            "error": job.response if job.status == "failed" else None,
        }
    )
