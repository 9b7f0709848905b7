"""The v1 flow (Verial's, for a solver key or the run's bearer token): create a benchmark run,
start and complete its task runs one at a time, read the run (its aggregate and a summary of
each task run), list runs, read its report. The run finalizes when its last task run
completes."""

from __future__ import annotations

import base64
import binascii
import json
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request, Response
from fastapi.responses import JSONResponse

from ..._secrets import redact_json
from ...store._repo_idempotency import Replay
from ...store._repo_runs import (
    complete_task,
    list_benchmark_runs,
    pending_task,
    read_benchmark_run,
    read_report,
    start_task,
)
from .._answers import benchmark_out, completed_out, elide_report, started_out, summaries
from .._deps import (
    IdempotencyKeyDep,
    KeyDep,
    PrincipalDep,
    StoreDep,
    VerifierDep,
    answer_with,
    replay,
    request_hash,
)
from .._http import Problem, problems
from .._requests import TEXT_PATTERN, CompleteIn, CreateRunIn
from .._schemas import BenchmarkRunOut, CompletedTaskRunOut, CreatedRun, RunPage, StartedTaskRun
from .benchmark_runs import CHANGE, cancel, create

router = APIRouter(tags=["v1"])

Id = Annotated[str, Path(max_length=100, pattern=TEXT_PATTERN)]
READ = problems(400, 401, 404, 503)
#: the report route's two forms (``?format=junit``)
REPORT: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "the JSON report (as --verial-report writes it), or JUnit XML",
        "content": {
            "application/json": {"schema": {"type": "object"}},
            "application/xml": {"schema": {"type": "string"}},
        },
    }
}


@router.post(
    "/v1/benchmark-runs",
    status_code=201,
    response_model=CreatedRun,
    responses=problems(400, 401, 403, 413, 422, 503),
)
def create_benchmark_run(
    body: CreateRunIn,
    key: KeyDep,
    store: StoreDep,
    verifier: VerifierDep,
    request: Request,
    response: Response,
    idempotency_key: IdempotencyKeyDep = None,
) -> CreatedRun:
    """Create a benchmark run of a benchmark this server was started with: every task run in
    phase ``created`` with its ``start_url`` and ``complete_url``, and the run's bearer token
    (``vrl_run_...``: this run only, until ``bearer_token_expires_at``). A replay with the
    same Idempotency-Key answers the same run with a fresh bearer token."""
    base = str(request.base_url).rstrip("/")
    return create(store, verifier, key, body, "/v1/benchmark-runs", base, idempotency_key, response)


def _cursor(created_at: datetime, run_id: str) -> str:
    text = json.dumps([created_at.isoformat(), run_id])
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _after(cursor: str) -> tuple[datetime, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        when, run_id = json.loads(raw)
        parsed = datetime.fromisoformat(when)
        if not isinstance(run_id, str) or parsed.tzinfo is None:
            raise ValueError
        # in UTC here, where a forged offset that leaves datetime's range (year 1 at +23:59,
        # year 9999 at -23:59) is an OverflowError, not later in the store's query
        parsed = parsed.astimezone(UTC)
    except (
        ValueError,
        TypeError,
        OverflowError,
        binascii.Error,
        json.JSONDecodeError,
        UnicodeDecodeError,
    ):
        raise Problem(422, "query cursor: not a cursor this service returned") from None
    return parsed, run_id


@router.get("/v1/benchmark-runs", response_model=RunPage, responses=problems(400, 401, 422, 503))
def list_runs(
    key: PrincipalDep,
    store: StoreDep,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    cursor: Annotated[str | None, Query(max_length=500, pattern=TEXT_PATTERN)] = None,
    benchmark: Annotated[str | None, Query(max_length=300, pattern=TEXT_PATTERN)] = None,
    agent: Annotated[str | None, Query(max_length=300, pattern=TEXT_PATTERN)] = None,
) -> RunPage:
    """The benchmark runs this key may see, newest first: ``{data, next_cursor}`` (pass
    ``next_cursor`` as ``cursor`` for the next page)."""
    rows, more = list_benchmark_runs(
        store,
        key,
        limit=limit,
        after=_after(cursor) if cursor else None,
        benchmark=benchmark,
        agent=agent,
    )
    next_cursor = _cursor(rows[-1].created_at, rows[-1].id) if more else None
    return RunPage(data=summaries(rows), next_cursor=next_cursor)


@router.get("/v1/benchmark-runs/{run_id}", response_model=BenchmarkRunOut, responses=READ)
def get_run(run_id: Id, key: PrincipalDep, store: StoreDep) -> BenchmarkRunOut:
    """A benchmark run: its aggregate score, verdict, phase and progress, and a summary of
    every task run (``id``, ``phase``, ``status``, ``verdict``, ``score``)."""
    return benchmark_out(read_benchmark_run(store, key, run_id))


@router.get("/v1/benchmark-runs/{run_id}/report", response_model=None, responses={**REPORT, **READ})
def get_report(
    run_id: Id,
    key: PrincipalDep,
    store: StoreDep,
    format: Annotated[str, Query(pattern="^(json|junit)$")] = "json",  # noqa: A002
) -> Response:
    """The run's report: the same JSON as ``--verial-report`` (``?format=junit``: JUnit). A
    scored run's rubric is left out for any key but an org key."""
    from ...reporting._junit import build_junit

    report, scored = read_report(store, key, run_id)
    hide = scored and not key.org
    data = redact_json(report.to_json())
    if hide:
        data = elide_report(data)
    if format == "junit":
        root = build_junit(data, hide)
        ET.indent(root)
        text = ET.tostring(root, encoding="unicode", xml_declaration=False)
        return Response(
            '<?xml version="1.0" encoding="utf-8"?>\n' + text + "\n", media_type="application/xml"
        )
    return JSONResponse(data)


@router.post("/v1/task-runs/{task_run_id}/start", response_model=StartedTaskRun, responses=CHANGE)
def start_task_run(
    task_run_id: Id,
    key: PrincipalDep,
    store: StoreDep,
    request: Request,
    response: Response,
    idempotency_key: IdempotencyKeyDep = None,
) -> StartedTaskRun:
    """Move a task run from ``created`` to ``started`` and answer the task as the agent needs
    it (its ``task_item``, never its criteria). Only one task run of a benchmark run is
    ``started`` at a time (409 while another is); starting it again answers its first start."""
    base = str(request.base_url).rstrip("/")
    digest = request_hash("POST", f"/v1/task-runs/{task_run_id}/start", None)
    made = replay(store, key, idempotency_key, digest)
    if made is None:
        made = start_task(
            store,
            key,
            task_run_id,
            lambda stored: Replay(200, started_out(stored, base).model_dump(mode="json")),
            idem=idempotency_key,
            digest=digest,
        )
    return StartedTaskRun.model_validate(answer_with(response, made))


@router.post(
    "/v1/task-runs/{task_run_id}/complete", response_model=CompletedTaskRunOut, responses=CHANGE
)
def complete_task_run(
    task_run_id: Id,
    body: CompleteIn,
    key: PrincipalDep,
    store: StoreDep,
    verifier: VerifierDep,
    response: Response,
    idempotency_key: IdempotencyKeyDep = None,
) -> Any:
    """Score a task run on its sandbox (verification runs now), store it and answer its
    verdict, score, axes and criterion runs; a scored run's details and evidence are left out
    (an org key reads them with ``GET /criterion-runs/{id}``). The benchmark run finalizes when
    its last task run completes. A task run completed without a start starts now (409 while
    another one is started); completing it again is a 409, unless the same Idempotency-Key and
    body replay the first answer."""
    digest = request_hash(
        "POST", f"/v1/task-runs/{task_run_id}/complete", body.model_dump(mode="json")
    )
    earlier = replay(store, key, idempotency_key, digest)
    if earlier is not None:
        return CompletedTaskRunOut.model_validate(answer_with(response, earlier))
    pending = pending_task(store, key, task_run_id)
    display, plan, task = verifier.task_of_run(pending.run, pending.task, task_run_id)
    scored = verifier.score(display, plan, task, body.sandbox, body.config, label=pending.task.run)
    elide = pending.run.scored
    made = complete_task(
        store,
        key,
        pending,
        scored.task_run,
        lambda t, r: Replay(200, completed_out(t, r, elide=elide).model_dump(mode="json")),
        idem=idempotency_key,
        digest=digest,
    )
    # made now: its body is the response model's serialization already, sent as it is
    return JSONResponse(made.body, status_code=made.status)


@router.post("/v1/benchmark-runs/{run_id}/cancel", response_model=BenchmarkRunOut, responses=CHANGE)
def cancel_benchmark_run(
    run_id: Id,
    key: PrincipalDep,
    store: StoreDep,
    response: Response,
    idempotency_key: IdempotencyKeyDep = None,
) -> BenchmarkRunOut:
    """Cancel a running benchmark run (its bearer token, the key that created it, or an org
    key): the task runs not completed become ``cancelled``; completed ones are kept."""
    path = f"/v1/benchmark-runs/{run_id}/cancel"
    return cancel(store, key, run_id, path, idempotency_key, response)
