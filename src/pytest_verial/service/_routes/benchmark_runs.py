"""The internal flow (Verial's, for an organization key): ``POST /benchmark-runs`` creates a
run and ``POST /benchmark-runs/{id}/cancel`` cancels one, keeping its completed task runs.
The v1 flow (:mod:`.v1_runs`) creates runs the same way for a solver key."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request, Response

from ..._results import TaskRun
from ...store import Store
from ...store._repo_idempotency import Replay
from ...store._repo_keys import ApiKey
from ...store._repo_runs import cancel_run, create_run
from .._answers import benchmark_out, created_data, created_out
from .._deps import (
    IdempotencyKeyDep,
    OrgCreatorDep,
    OrgViewerDep,
    StoreDep,
    VerifierDep,
    answer_with,
    replay,
    request_hash,
)
from .._http import problems
from .._keys import issue_run_token
from .._requests import TEXT_PATTERN, CreateRunIn
from .._schemas import BenchmarkRunOut, CreatedRun
from .._verifier import Verifier

router = APIRouter(tags=["internal"])

RunId = Annotated[str, Path(max_length=100, pattern=TEXT_PATTERN)]
#: the answers a change to a run gives besides its own
CHANGE = problems(400, 401, 403, 404, 409, 413, 422, 503)


def create(
    store: Store,
    verifier: Verifier,
    key: ApiKey,
    body: CreateRunIn,
    path: str,
    base: str,
    idem: str | None,
    response: Response,
) -> CreatedRun:
    """A new benchmark run, every task run ``created``, with a bearer token of its own. A
    replay (same Idempotency-Key and body) answers the same run with a fresh token: the store
    never keeps a token to show it again."""
    digest = request_hash("POST", path, body.model_dump(mode="json"))
    made = replay(store, key, idem, digest)
    if made is None:
        report = verifier.new_run(body)
        made = create_run(
            store,
            key,
            report,
            lambda stored: Replay(201, created_data(stored, base)),
            idem=idem,
            digest=digest,
        )
    run_id = str(made.body["benchmark_run_id"])
    token, expires = issue_run_token(store, run_id)
    return created_out(answer_with(response, made, f"/v1/benchmark-runs/{run_id}"), token, expires)


@router.post(
    "/benchmark-runs",
    status_code=201,
    response_model=CreatedRun,
    responses=problems(400, 401, 403, 413, 422, 503),
)
def create_benchmark_run(
    body: CreateRunIn,
    key: OrgCreatorDep,
    store: StoreDep,
    verifier: VerifierDep,
    request: Request,
    response: Response,
    idempotency_key: IdempotencyKeyDep = None,
) -> CreatedRun:
    """Create a benchmark run (internal flow, an organization key): every task run in phase
    ``created``, each with its ``start_url`` and ``complete_url``, and the run's bearer token
    (``vrl_run_...``, this run only, until ``bearer_token_expires_at``)."""
    base = str(request.base_url).rstrip("/")
    return create(store, verifier, key, body, "/benchmark-runs", base, idempotency_key, response)


def cancel(
    store: Store, key: ApiKey, run_id: str, path: str, idem: str | None, response: Response
) -> BenchmarkRunOut:
    """Cancel a benchmark run: its open task runs become ``cancelled``, completed ones stay."""
    digest = request_hash("POST", path, None)
    made = replay(store, key, idem, digest)
    if made is None:
        made = cancel_run(
            store,
            key,
            run_id,
            TaskRun.rescored,
            lambda stored: Replay(200, benchmark_out(stored).model_dump(mode="json")),
            idem=idem,
            digest=digest,
        )
    return BenchmarkRunOut.model_validate(answer_with(response, made))


@router.post("/benchmark-runs/{run_id}/cancel", response_model=BenchmarkRunOut, responses=CHANGE)
def cancel_benchmark_run(
    run_id: RunId,
    key: OrgViewerDep,
    store: StoreDep,
    response: Response,
    idempotency_key: IdempotencyKeyDep = None,
) -> BenchmarkRunOut:
    """Cancel a running benchmark run (an organization key): the task runs not completed
    become ``cancelled``; completed task runs and their results are kept."""
    path = f"/benchmark-runs/{run_id}/cancel"
    return cancel(store, key, run_id, path, idempotency_key, response)
