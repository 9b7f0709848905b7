"""PRD-103's verify-task and cross-task consistency checks: one task (or related task runs)
scored on the sandbox the request brings, stored as a benchmark run with one task run, and
answered 201 with the task run (``Location: /task-runs/{id}``); ``?async=true`` answers 202
and a job to poll instead (:mod:`.jobs`)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import JSONResponse
from sqlalchemy import Connection

from ...store import Store
from ...store._repo_idempotency import Replay
from ...store._repo_jobs import Claimed, enqueue
from ...store._repo_keys import ApiKey, key_active
from ...store._repo_runs import StoredTaskRun, store_verified
from .._answers import task_answer
from .._deps import (
    IdempotencyKeyDep,
    KeyDep,
    StoreDep,
    VerifierDep,
    VerifyingKeyDep,
    answer_with,
    check_in,
    check_now,
    replay,
    request_hash,
)
from .._http import Problem, problems
from .._jobs import accepted, job_location
from .._requests import ConsistencyIn, VerifyTaskIn
from .._schemas import JobAccepted, TaskRunOut
from .._verifier import Verifier

router = APIRouter(tags=["verify"])

#: the path every verify-task request is bound to for its Idempotency-Key (both paths)
VERIFY_PATH = "/v1/verify-task"


def task_location(body: dict[str, Any]) -> str:
    """Where the task run an answer holds is read (with an org key)."""
    return f"/task-runs/{body['task_run_id']}"


def _answer(answer: Replay, response: Response) -> Any:
    if answer.status == 202:
        body = JobAccepted.model_validate(answer.body).model_dump(mode="json")
        return JSONResponse(body, status_code=202, headers={"Location": job_location(body["id"])})
    answer_with(response, answer, task_location(answer.body))
    return TaskRunOut.model_validate(answer.body)


def _made(answer: Replay) -> JSONResponse:
    """An answer made by this request: its body is a :class:`TaskRunOut` as the response
    model serializes it already, so it is sent as it is (not validated and dumped again)."""
    return JSONResponse(
        answer.body, status_code=answer.status, headers={"Location": task_location(answer.body)}
    )


def _stored(scored: bool) -> Callable[[StoredTaskRun], Replay]:
    """verify-task's answer from its stored task run (a scored run's rubric left out)."""
    return lambda stored: Replay(201, task_answer(stored, elide=scored))


@router.post(
    "/verify-task",
    status_code=201,
    response_model=TaskRunOut,
    responses={
        202: {"model": JobAccepted, "description": "queued (?async=true): poll the Location"},
        **problems(400, 401, 403, 413, 422, 503),
    },
)
@router.post(
    VERIFY_PATH,
    status_code=201,
    response_model=TaskRunOut,
    responses={
        202: {"model": JobAccepted, "description": "queued (?async=true): poll the Location"},
        **problems(400, 401, 403, 413, 422, 503),
    },
)
def verify_task(
    body: VerifyTaskIn,
    key: VerifyingKeyDep,
    store: StoreDep,
    verifier: VerifierDep,
    request: Request,
    response: Response,
    idempotency_key: IdempotencyKeyDep = None,
    run_async: Annotated[
        bool,
        Query(alias="async", description="answer 202 at once with a job to poll (its Location)"),
    ] = False,
) -> Any:
    """Score one task (of a benchmark this server was started with, or given inline) on its
    sandbox (a run folder under ``--runs-root``, an archive or inline files), store it, and
    answer its verdict, score, axes and criterion runs (a scored run's details and evidence
    left out). ``verdict`` is null when criteria the verifier could not evaluate could still
    change it (``verification: incomplete``, ``not_evaluated``). With ``?async=true``: 202 and
    a job, scored by any server over the store."""
    digest = ""  # what an Idempotency-Key is bound to: only made when there is one
    if idempotency_key is not None or run_async:
        check_now(request, store)  # a key kept unchecked: read before a replay or a job
        data = body.model_dump(mode="json")
        digest = request_hash("POST", VERIFY_PATH + ("?async=true" if run_async else ""), data)
    earlier = replay(store, key, idempotency_key, digest)
    if earlier is not None:
        return _answer(earlier, response)
    if run_async:
        verifier.resolve(body)  # an unknown benchmark or task is refused now, not in the job
        queued = enqueue(store, key, data, accepted, idem=idempotency_key, digest=digest)
        request.app.state.jobs.wake()
        return _answer(queued, response)
    try:
        report = verifier.verify(body)
    except Exception:
        check_now(request, store)  # a revoked key learns only that it is refused
        raise
    made = store_verified(
        store,
        key,
        report,
        _stored(body.scored),
        idem=idempotency_key,
        digest=digest,
        then=check_in(request, store),  # the key's row, read in the transaction storing it
    )
    return _made(made)


@router.post(
    "/v1/consistency-checks",
    status_code=201,
    response_model=TaskRunOut,
    responses=problems(400, 401, 403, 413, 422, 503),
)
def consistency_check(
    body: ConsistencyIn,
    key: KeyDep,
    store: StoreDep,
    verifier: VerifierDep,
    response: Response,
    idempotency_key: IdempotencyKeyDep = None,
) -> Any:
    """Cross-task consistency (PRD-103 §10): the server's judge compares the outputs of related
    task runs (each with its sandbox) for contradictions on facts they share. Stored as a task
    run of the last task named, whose one criterion is ``output-consistency``; answered like
    verify-task."""
    digest = request_hash("POST", "/v1/consistency-checks", body.model_dump(mode="json"))
    earlier = replay(store, key, idempotency_key, digest)
    if earlier is not None:
        return _answer(earlier, response)
    report = verifier.consistency(body)
    made = store_verified(
        store, key, report, _stored(body.scored), idem=idempotency_key, digest=digest
    )
    return _answer(made, response)


def job_worker(
    store: Store, verifier: Verifier
) -> Callable[[Claimed, Callable[[Connection, Replay], None]], None]:
    """What the job runner does with a claimed verify-task: score it, store it with the job
    marked done in the same transaction."""

    def run(job: Claimed, done: Callable[[Connection, Replay], None]) -> None:
        if not key_active(store, job.owner):  # revoked while its job waited: nothing is run
            raise Problem(401, f"job {job.id}: the key that queued it was revoked")
        body = VerifyTaskIn.model_validate(job.request)
        report = verifier.verify(body)
        owner = ApiKey(  # the key that queued it owns the run (only its id is used)
            id=job.owner, scope="solver", name=None, created_at=datetime.now(UTC), revoked_at=None
        )
        store_verified(store, owner, report, _stored(body.scored), idem=None, digest="", then=done)

    return run
