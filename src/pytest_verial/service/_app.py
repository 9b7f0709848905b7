"""The service's FastAPI application: :func:`create_app`.

Routes: ``GET /healthz``, ``GET /readyz``, ``POST /v1/verify-task`` (PRD-103), and the three
levels read back (``/v1/benchmark-runs``, ``/v1/task-runs/{id}``, ``/v1/criterion-runs/{id}``,
``/v1/benchmark-runs/{id}/report``). Every ``/v1`` route needs ``Authorization: Bearer KEY``.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import ExitStack, asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Header, Query, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, model_validator
from sqlalchemy import Connection, select

from .. import __version__
from .._errors import BenchmarkFileError, RunConfigError, UsageError, VerialError
from .._inline import verify_task
from .._loader import BenchmarkPlan, TaskPlan, is_benchmark_file, load_benchmark
from .._nodeids import benchmark_run_id, task_nodeid
from .._results import (
    BenchmarkRun,
    Generator,
    Report,
    RunCounts,
    RunInfo,
    RunStatus,
    Session,
    TaskRun,
)
from .._runinfo import RunDir
from .._scoring import verdict_threshold
from .._secrets import redact_json
from ..checks import default_registry
from ..reporting._build import benchmark_info
from ..store import StoreError, open_store
from ..store._core import revisions
from ..store._tables import metadata
from ._http import MAX_BODY, BodyGuard, Problem, document_errors, install_problem_handlers, problems
from ._jobs import Claimed, JobRunner, enqueue, job_location, read_job
from ._keys import ApiKey, authenticate
from ._limits import ServiceLimits
from ._runs import (
    Replay,
    find_replay,
    list_benchmark_runs,
    read_benchmark_run,
    read_criterion_run,
    read_report,
    read_task_run,
    request_hash,
    store_verified,
)
from ._sandboxes import RunConfigs, SandboxIn, TaskFolder, task_folder
from ._schemas import (
    BenchmarkRunOut,
    CreatedRun,
    CriterionRunOut,
    Health,
    JobAccepted,
    JobOut,
    Ready,
    RunPage,
    StartedTaskRun,
    TaskRunOut,
    answers,
)
from ._views import install_views

__all__ = ["create_app", "load_benchmarks"]

_IDEMPOTENCY = re.compile(r"[\x21-\x7e]{1,255}")
#: the errors of a read by id, and of a change to a run or task run (OpenAPI ``responses``)
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
CHANGE = (400, 401, 403, 404, 409, 413, 503)


_log = logging.getLogger("pytest_verial.service")


def store_unavailable(exc: StoreError) -> Problem:
    """A 503 for a store error: its one line goes to the server's log (the URL's password
    masked), the client learns only that the store is unavailable."""
    _log.error("%s", exc)
    return Problem(503, "the results store is unavailable; try again")


# -- benchmarks the server was started with ------------------------------------------------------
@dataclass
class Benchmarks:
    """``slug@version`` (and ``slug`` when only one version is loaded) -> its loaded plans."""

    plans: dict[str, tuple[str, BenchmarkPlan, BenchmarkPlan]] = field(default_factory=dict)

    def get(self, ref: str) -> tuple[str, BenchmarkPlan, BenchmarkPlan]:
        found = self.plans.get(ref)
        if found is None:
            known = ", ".join(sorted(self.plans)) or "none"
            raise Problem(
                400, f"body benchmark: unknown benchmark {ref!r} (this server has: {known})"
            )
        return found


def _benchmark_files(paths: Sequence[str | Path]) -> list[Path]:
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*") if p.is_file() and is_benchmark_file(p)))
        elif path.is_file():
            files.append(path)
        else:
            raise ValueError(f"{raw}: no such benchmark file or folder")
    return files


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def load_benchmarks(paths: Sequence[str | Path]) -> Benchmarks:
    """Load every benchmark file (ValueError with one line naming the file when one is bad)."""
    registry = default_registry()
    found = Benchmarks()
    by_slug: dict[str, list[str]] = {}
    for path in _benchmark_files(paths):
        display = _display(path)
        try:
            plan = load_benchmark(path, registry, display=display)
            scored = load_benchmark(path, registry, display=display, scored=True)
        except BenchmarkFileError as exc:
            raise ValueError(str(exc).splitlines()[0]) from None
        info = benchmark_info(display, plan)
        if info.ref in found.plans:
            raise ValueError(f"{display}: benchmark {info.ref} is also {found.plans[info.ref][0]}")
        found.plans[info.ref] = (display, plan, scored)
        by_slug.setdefault(info.slug, []).append(info.ref)
    for slug, refs in by_slug.items():
        if len(refs) == 1 and slug not in found.plans:
            found.plans[slug] = found.plans[refs[0]]
    return found


# -- request bodies ------------------------------------------------------------------------------
class TaskConfig(BaseModel):
    """This task run's facts (what run.yaml would say; they replace its ``tasks.<key>``) and
    the verdict threshold. Judge settings (model, endpoint, key) are the server's, never a
    caller's."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # "Infinity" too (issue 31)
    cost: float | None = Field(default=None, ge=0, description="the agent's cost for this task")
    task_type: str | None = Field(default=None, max_length=100)
    skip_verification: bool | None = None
    executor_model: str | None = Field(
        default=None, max_length=300, description="the agent's model (never the judge's)"
    )
    pass_threshold: float | None = Field(default=None, ge=0, le=1)

    def options(self, benchmark_threshold: float | None) -> dict[str, Any]:
        """The config of ``verify_task``: its threshold is the benchmark's, else the caller's
        (``verify_task`` puts the task's own first: the chain pytest resolves)."""
        values = self.model_dump(exclude_none=True)
        threshold = verdict_threshold(None, benchmark_threshold, self.pass_threshold)
        values["pass_threshold"] = float(threshold)
        return values


class VerifyTaskIn(BaseModel):
    """``POST /v1/verify-task``."""

    model_config = ConfigDict(extra="forbid")
    benchmark: str | None = Field(
        default=None, min_length=1, max_length=300, description="slug@version (or slug)"
    )
    task_id: str | None = Field(
        default=None, min_length=1, max_length=300, description="task id or task key"
    )
    task: dict[str, Any] | None = Field(
        default=None, description="a task itself (as in a benchmark file), instead of benchmark"
    )
    sandbox: SandboxIn
    config: TaskConfig = Field(default_factory=TaskConfig)
    scored: bool = False

    @model_validator(mode="after")
    def _one_task(self) -> VerifyTaskIn:
        if self.task is None and (self.benchmark is None or self.task_id is None):
            raise ValueError("give benchmark and task_id, or task")
        if self.task is not None and self.benchmark is not None:
            raise ValueError("give benchmark and task_id, or task, not both")
        return self


class RelatedTaskIn(BaseModel):
    """One related task run of a consistency check: its name and its sandbox."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(
        min_length=1,
        max_length=200,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$",
        description="the task's name, as the judge's prompt shows it",
    )
    sandbox: SandboxIn


class ConsistencyIn(BaseModel):
    """``POST /v1/consistency-checks`` (PRD-103 §10)."""

    model_config = ConfigDict(extra="forbid")
    tasks: list[RelatedTaskIn] = Field(
        min_length=2,
        max_length=20,
        description="related task runs; the last is the anchor the check is stored under",
    )
    principles: list[Annotated[str, Field(min_length=1, max_length=2000)]] | None = Field(
        default=None, max_length=20, description="what must agree (default: shared facts)"
    )
    label: str | None = Field(default=None, max_length=500)
    config: TaskConfig = Field(default_factory=TaskConfig)
    scored: bool = False


class CreateRunIn(BaseModel):
    """``POST /v1/benchmark-runs``."""

    model_config = ConfigDict(extra="forbid")
    benchmark: str = Field(min_length=1, max_length=300, description="slug@version (or slug)")
    scored: bool = False
    agent: str | None = Field(default=None, max_length=300)


class CompleteIn(BaseModel):
    """``POST /v1/task-runs/{id}/complete``: the task's sandbox."""

    model_config = ConfigDict(extra="forbid")
    sandbox: SandboxIn
    config: TaskConfig = Field(default_factory=TaskConfig)


def _inline_plan(task: dict[str, Any], scored: bool) -> BenchmarkPlan:
    """A task given in the request, loaded (and checked) as a benchmark file of its own."""
    import json
    import tempfile

    with tempfile.TemporaryDirectory(prefix="verial-serve-") as tmp:
        path = Path(tmp) / "inline.verial.json"
        path.write_text(json.dumps(task), encoding="utf-8")
        try:
            return load_benchmark(path, default_registry(), display="body task", scored=scored)
        except BenchmarkFileError as exc:
            raise Problem(400, str(exc).splitlines()[0]) from None


def _task(plan: BenchmarkPlan, task_id: str, ref: str) -> TaskPlan:
    for task in plan.tasks:
        if task.key == task_id:
            return task
    matches = [t for t in plan.tasks if t.task.id == task_id]
    if len(matches) == 1:
        return matches[0]
    if matches:
        keys = ", ".join(t.key for t in matches)
        raise Problem(400, f"body task_id: {task_id!r} has several task runs in {ref}: {keys}")
    raise Problem(400, f"body task_id: no task {task_id!r} in benchmark {ref}")


def principal(
    request: Request,
    authorization: Annotated[str | None, Header(include_in_schema=False)] = None,
) -> ApiKey:
    challenge = {"WWW-Authenticate": "Bearer"}
    if not authorization:
        raise Problem(401, "missing Authorization: Bearer KEY", headers=challenge)
    scheme, _, token = authorization.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or " " in token:
        raise Problem(401, "malformed Authorization: use 'Bearer KEY'", headers=challenge)
    try:
        key = authenticate(request.app.state.store, token)
    except StoreError as exc:
        raise store_unavailable(exc) from None
    if key is None:
        raise Problem(401, "unknown or revoked key", headers=challenge)
    return key


Key = Annotated[ApiKey, Depends(principal)]


# -- the app ---------------------------------------------------------------------------------------
def create_app(
    store_url: str,
    benchmark_paths: Sequence[str | Path] = (),
    runs_root: str | Path = ".",
    *,
    max_body: int = MAX_BODY,
    judge: Mapping[str, str] | None = None,
    limits: ServiceLimits | None = None,
) -> FastAPI:
    """The service over the store at ``store_url`` (opened, created and migrated now), scoring
    the benchmarks in ``benchmark_paths`` on run folders under ``runs_root``. ``judge``: the
    server's judge settings (``judge_model``, ``judge_base_url``, ``judge_api_key_env``), used
    for every judge criterion; a caller never chooses the judge.

    Raises StoreError or ValueError (one line) when the store or a benchmark is unusable."""
    store = open_store(store_url)
    try:
        benchmarks = load_benchmarks(benchmark_paths)
    except BaseException:
        store.close()
        raise
    judge = dict(judge or {})
    root = Path(runs_root).resolve()
    if not root.is_dir():
        store.close()
        raise ValueError(f"--runs-root {runs_root}: no such folder")
    limits = limits or ServiceLimits()  # what one request may cost (issue 31: _limits.py)
    run_configs = RunConfigs(limits, root)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        runner.start()  # async verify-task jobs, claimed from the store (:mod:`.jobs`)
        try:
            yield
        finally:
            runner.stop()
            store.close()

    app = FastAPI(
        lifespan=lifespan,
        title="pytest-verial service",
        version=__version__,
        description="The verification engine of pytest-verial over HTTP (PRD-103, issue 20).",
    )
    app.state.store = store
    app.state.benchmarks = benchmarks
    app.state.runs_root = root
    install_problem_handlers(app)
    stock_openapi = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = document_errors(stock_openapi())
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    app.add_middleware(BodyGuard, limit=max_body)

    @app.get("/healthz", tags=["health"], responses=answers(200, Health))
    async def healthz() -> dict[str, str]:
        """The process is up."""
        return {"status": "ok"}

    @app.get("/readyz", tags=["health"], responses={**answers(200, Ready), **problems(503)})
    def readyz() -> Any:
        """The store is reachable and its schema is this version's."""
        from ..store._core import _VERSION

        head = revisions()[-1]

        def work(conn: Connection) -> str | None:
            value = conn.execute(select(_VERSION.c.version_num)).scalar()
            return None if value is None else str(value)

        try:
            rev = store.read("check the schema", work)
        except StoreError as exc:
            raise store_unavailable(exc) from None
        if rev != head:
            raise Problem(503, f"store schema {rev} is not this version's {head}")
        return {"status": "ready", "schema": head, "tables": len(metadata.tables)}

    @app.post(
        "/v1/verify-task",
        status_code=201,
        tags=["verify"],
        responses={
            **answers(201, TaskRunOut, "scored and stored"),
            **answers(202, JobAccepted, "queued (?async=true): poll the Location"),
            **problems(400, 401, 403, 413, 422, 503),
        },
    )
    def verify(
        body: VerifyTaskIn,
        key: Key,
        idempotency_key: Annotated[str | None, Header(alias="Idempotency-Key")] = None,
        run_async: Annotated[
            bool,
            Query(
                alias="async",
                description="answer 202 at once with a job to poll (GET Location) instead",
            ),
        ] = False,
    ) -> Any:
        """Score one task (of a benchmark this server was started with, or given inline) on
        its sandbox (a run folder under ``--runs-root``, an archive or inline files), store
        it, and answer its verdict, score, axes and criterion runs (a scored run's details
        and evidence elided). With ``?async=true``: 202 and a job, scored by any worker."""
        if key.run_id is not None:
            raise Problem(403, "a run token completes its run's task runs; verify-task needs a key")
        if idempotency_key is not None and not _IDEMPOTENCY.fullmatch(idempotency_key):
            raise Problem(400, "header Idempotency-Key: 1-255 printable ASCII characters")
        request = body.model_dump(mode="json")
        path = "/v1/verify-task?async=true" if run_async else "/v1/verify-task"
        digest = request_hash("POST", path, request)
        try:
            if idempotency_key is not None:
                earlier = find_replay(store, key, idempotency_key, digest)
                if earlier is not None:
                    return _answer(earlier)
            if run_async:
                _resolve(body)  # an unknown benchmark or task is a 400 now, not in the job
                queued = enqueue(store, key, request, idem=idempotency_key, digest=digest)
                runner.wake()
                return _answer(queued)
            report = _verify(body)
            answer = store_verified(
                store, key, report, idem=idempotency_key, digest=digest, elide=body.scored
            )
        except StoreError as exc:
            raise store_unavailable(exc) from None
        return JSONResponse(answer.body, status_code=answer.status)

    def _score(
        display: str,
        plan: BenchmarkPlan,
        task: TaskPlan,
        sandbox: SandboxIn,
        config: TaskConfig,
        *,
        label: str | None = None,
    ) -> tuple[TaskRun, RunInfo, dict[str, Any]]:
        """Score ``task`` on its sandbox (:mod:`.sandboxes`) with the inline engine."""
        with task_folder(sandbox, root, task.key, task.task.id, limits) as where:
            return _score_in(display, plan, task, where, config, f"sandbox.{sandbox.form}", label)

    def _score_in(
        display: str,
        plan: BenchmarkPlan,
        task: TaskPlan,
        where: TaskFolder,
        config: TaskConfig,
        field: str,
        label: str | None = None,
    ) -> tuple[TaskRun, RunInfo, dict[str, Any]]:
        try:
            run = (
                run_configs.run_dir(where.run_folder, where.label)
                if where.kept
                else RunDir(where.run_folder, label=where.label)
            )
            inline = verify_task(
                task,
                where.run_folder / task.key,
                # the server's judge (model, endpoint, key variable); the caller's facts
                {**judge, **config.options(plan.benchmark.pass_threshold)},
                run_dir=run,
            )
        except (RunConfigError, UsageError) as exc:
            raise Problem(400, f"body {field}: {str(exc).splitlines()[0]}") from None
        except VerialError as exc:
            raise Problem(400, str(exc).splitlines()[0]) from None
        fields = {name: getattr(inline, name) for name in TaskRun.model_fields}
        fields.update(
            id=task_nodeid(display, task.key),
            run=label or run.label,
            benchmark=plan.slug,
            file=display,
            snapshot=task.task.model_dump(mode="json", exclude_none=True),
        )
        info = RunInfo(
            label=run.label,
            path=where.shown,
            id=run.config.id,
            agent=run.config.agent,
            executor_model=run.config.executor_model,
            scored=bool(run.config.scored),
        )
        # validated already (an InlineTaskRun is a TaskRun): built, not validated again
        return TaskRun.model_construct(**fields), info, dict(inline.verification)

    def _run_job(job: Claimed, done: Callable[[Connection, Replay], None]) -> None:
        """Score a queued verify-task and store it with the job marked done (:mod:`.jobs`)."""
        body = VerifyTaskIn.model_validate(job.request)
        report = _verify(body)
        owner = ApiKey(  # the key that queued it owns the run (only its id is used)
            id=job.owner, scope="solver", name=None, created_at=datetime.now(UTC), revoked_at=None
        )
        digest = request_hash("POST", "/v1/verify-task?async=true", job.request)
        store_verified(store, owner, report, idem=None, digest=digest, elide=body.scored, then=done)

    install_views(app, store)  # the browser's pages: runs, a run, two runs, a trend
    runner = JobRunner(store, _run_job)
    app.state.jobs = runner

    @app.get("/v1/jobs/{job_id}", tags=["verify"], responses={**answers(200, JobOut), **READ})
    def get_job(job_id: str, key: Key) -> Any:
        """An async verify-task: ``status`` queued, running, done (``result``: the answer
        the synchronous request gives) or failed (``error``: its problem)."""
        job = _stored(lambda: read_job(store, key, job_id))
        headers = {} if job["status"] in ("done", "failed") else {"Retry-After": "1"}
        return JSONResponse(job, headers=headers)

    def _resolve(body: VerifyTaskIn) -> tuple[str, BenchmarkPlan, TaskPlan]:
        if body.task is not None:
            display = "inline"
            limits.check_inline_task(body.task)
            plan = _inline_plan(body.task, body.scored)
            if body.task_id is not None:
                task = _task(plan, body.task_id, "the inline task")
            elif len(plan.tasks) == 1:
                task = plan.tasks[0]
            else:
                keys = ", ".join(t.key for t in plan.tasks)
                raise Problem(400, f"body task_id: the inline task has several task runs: {keys}")
        else:
            assert body.benchmark is not None and body.task_id is not None
            display, plain, scored_plan = benchmarks.get(body.benchmark)
            plan = scored_plan if body.scored else plain
            task = _task(plan, body.task_id, body.benchmark)
        return display, plan, task

    def _verify(body: VerifyTaskIn) -> Report:
        display, plan, task = _resolve(body)
        started = datetime.now(UTC)
        scored = _score(display, plan, task, body.sandbox, body.config)
        limits.check_answer(scored[0])  # a 413 before anything is stored
        return _one_task(display, plan, scored, body.config, body.scored, started)

    def _one_task(
        display: str,
        plan: BenchmarkPlan,
        scored_task: tuple[TaskRun, RunInfo, dict[str, Any]],
        config: TaskConfig,
        scored: bool,
        started: datetime,
    ) -> Report:
        """The report of one task scored by the service: one benchmark run, one task run."""
        task_run, run, verification = scored_task
        # the benchmark run's chain: no task around it (its task run resolved its own)
        threshold = verdict_threshold(None, plan.benchmark.pass_threshold, config.pass_threshold)
        bench = BenchmarkRun.aggregate(
            [task_run],
            float(threshold),
            running=False,
            interrupted=False,
            id=benchmark_run_id(display, [run.label]),
            benchmark=benchmark_info(display, plan),
            runs=[run.model_copy(update={"scored": scored or run.scored})],
            scored=scored or run.scored,
        )
        ended = datetime.now(UTC)
        session = Session(
            status=RunStatus.COMPLETED,
            phase="completed",
            scored=bench.scored,
            started_at=started.isoformat(),
            completed_at=ended.isoformat(),
            duration=(ended - started).total_seconds(),
            counts=RunCounts.of([task_run]),
            verification=verification or None,
        )
        return Report(
            generator=Generator(name="pytest-verial", version=__version__),
            session=session,
            benchmark_runs=[bench],
        )

    @app.post(
        "/v1/consistency-checks",
        status_code=201,
        tags=["verify"],
        responses={**answers(201, TaskRunOut), **problems(400, 401, 403, 413, 422, 503)},
    )
    def consistency_check(
        body: ConsistencyIn,
        key: Key,
        idempotency_key: Annotated[str | None, Header(alias="Idempotency-Key")] = None,
    ) -> Any:
        """Cross-task consistency (PRD-103 §10): the judge compares the outputs of related
        task runs (each with its sandbox) for contradictions on facts they share. Stored as a
        task run of the last task named, whose one criterion is ``output-consistency``; the
        answer has the shape of verify-task's."""
        if key.run_id is not None:
            raise Problem(403, "a run token completes its run's task runs; this needs a key")
        if idempotency_key is not None and not _IDEMPOTENCY.fullmatch(idempotency_key):
            raise Problem(400, "header Idempotency-Key: 1-255 printable ASCII characters")
        digest = request_hash("POST", "/v1/consistency-checks", body.model_dump(mode="json"))
        try:
            if idempotency_key is not None:
                earlier = find_replay(store, key, idempotency_key, digest)
                if earlier is not None:
                    return _answer(earlier)
            report = _consistency(body)
            answer = store_verified(
                store, key, report, idem=idempotency_key, digest=digest, elide=body.scored
            )
        except StoreError as exc:
            raise store_unavailable(exc) from None
        return _answer(answer)

    def _consistency(body: ConsistencyIn) -> Report:
        names = [t.name for t in body.tasks]
        if len(set(names)) != len(names):
            raise Problem(400, "body tasks: each related task run needs its own name")
        *others, anchor = names
        assertion: dict[str, Any] = {"assert": "output-consistency", "tasks": others}
        if body.principles:
            assertion["principles"] = body.principles
        criterion = {"id": "consistency", "assertion": assertion}
        if body.label:
            criterion["label"] = body.label
        plan = _inline_plan({"id": anchor, "criteria": [criterion]}, body.scored)
        started = datetime.now(UTC)
        with ExitStack() as stack:
            run_folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="verial-")))
            for related in body.tasks:
                where = stack.enter_context(
                    task_folder(related.sandbox, root, related.name, related.name, limits)
                )
                source = where.run_folder / related.name
                if source.is_dir():
                    shutil.copytree(source, run_folder / related.name, symlinks=False)
                else:
                    (run_folder / related.name).mkdir()
            together = TaskFolder(run_folder, "consistency", "related task runs")
            scored = _score_in("consistency", plan, plan.tasks[0], together, body.config, "tasks")
        return _one_task("consistency", plan, scored, body.config, body.scored, started)

    @app.get(
        "/v1/benchmark-runs",
        tags=["read"],
        responses={**answers(200, RunPage), **problems(400, 401, 503)},
    )
    def list_runs(
        key: Key,
        limit: Annotated[int, Query(ge=1, le=500)] = 50,
        cursor: Annotated[str | None, Query(max_length=500)] = None,
        benchmark: Annotated[str | None, Query(max_length=300)] = None,
        agent: Annotated[str | None, Query(max_length=300)] = None,
    ) -> Any:
        """Benchmark runs newest first: ``{data, next_cursor}``."""
        return _stored(
            lambda: list_benchmark_runs(
                store, key, limit=limit, cursor=cursor, benchmark=benchmark, agent=agent
            )
        )

    @app.get(
        "/v1/benchmark-runs/{run_id}",
        tags=["read"],
        responses={**answers(200, BenchmarkRunOut), **READ},
    )
    def get_run(run_id: str, key: Key) -> Any:
        """One benchmark run with its progress and task runs."""
        return _stored(lambda: read_benchmark_run(store, key, run_id))

    @app.get(
        "/v1/benchmark-runs/{run_id}/report",
        tags=["read"],
        responses={**REPORT, **READ},
    )
    def get_report(
        run_id: str,
        key: Key,
        format: Annotated[str, Query(pattern="^(json|junit)$")] = "json",  # noqa: A002
    ) -> Any:
        """The run's report: the same JSON as ``--verial-report`` (``?format=junit``: JUnit)."""
        from ..reporting._junit import build_junit

        report, hide = _stored(lambda: read_report(store, key, run_id))
        data = redact_json(report.to_json())
        if hide:
            from ._runs import elide_report

            data = elide_report(data)
        if format == "junit":
            root_el = build_junit(data, hide)
            ET.indent(root_el)
            text = ET.tostring(root_el, encoding="unicode", xml_declaration=False)
            return Response(
                '<?xml version="1.0" encoding="utf-8"?>\n' + text + "\n",
                media_type="application/xml",
            )
        return JSONResponse(data)

    @app.get(
        "/v1/task-runs/{task_run_id}",
        tags=["read"],
        responses={**answers(200, TaskRunOut), **READ},
    )
    def get_task_run(task_run_id: str, key: Key) -> Any:
        """One task run with its criterion runs."""
        return _stored(lambda: read_task_run(store, key, task_run_id))

    @app.get(
        "/v1/criterion-runs/{criterion_run_id}",
        tags=["read"],
        responses={**answers(200, CriterionRunOut), **READ},
    )
    def get_criterion_run(criterion_run_id: str, key: Key) -> Any:
        """One criterion run (its evidence in full to an org key)."""
        return _stored(lambda: read_criterion_run(store, key, criterion_run_id))

    @app.post(
        "/v1/benchmark-runs",
        status_code=201,
        tags=["runs"],
        responses={**answers(201, CreatedRun), **problems(400, 401, 403, 413, 503)},
    )
    def create_benchmark_run(body: CreateRunIn, key: Key, request: Request) -> Any:
        """A benchmark run with every task run pending: its id, a run token (``vrl_run_...``,
        this run only, expiring) and each task run's ``complete_url``."""
        from .._engine import identity
        from .._results import CriterionRun
        from ..store._ids import new_id
        from ._runapi import create_run

        if key.run_id is not None:
            raise Problem(403, "a run token cannot create benchmark runs")
        display, plain, scored_plan = benchmarks.get(body.benchmark)
        plan = scored_plan if body.scored else plain
        label = body.agent or "service"
        threshold = float(verdict_threshold(None, plan.benchmark.pass_threshold))
        tasks = []
        for task in plan.tasks:
            pending = [CriterionRun.not_run(identity(c, task)) for c in task.criteria]
            tasks.append(
                TaskRun.aggregate(
                    pending,
                    float(
                        verdict_threshold(task.task.pass_threshold, plan.benchmark.pass_threshold)
                    ),
                    running=True,
                    id=task_nodeid(display, task.key),
                    task_id=task.task.id,
                    task_key=task.key,
                    entity=task.entity.id if task.entity else None,
                    name=task.task.name,
                    benchmark=plan.slug,
                    file=display,
                    run=label,
                    snapshot=task.task.model_dump(mode="json", exclude_none=True),
                )
            )
        bench = BenchmarkRun.aggregate(
            tasks,
            threshold,
            running=True,
            interrupted=False,
            id=benchmark_run_id(display, [label]),
            benchmark=benchmark_info(display, plan),
            runs=[
                RunInfo(
                    label=label, path="", id=new_id("run"), agent=body.agent, scored=body.scored
                )
            ],
            scored=body.scored,
        )
        report = Report(
            generator=Generator(name="pytest-verial", version=__version__),
            session=Session(
                status=RunStatus.RUNNING,
                phase="started",
                scored=body.scored,
                started_at=datetime.now(UTC).isoformat(),
                duration=0.0,
                counts=RunCounts.of(tasks),
            ),
            benchmark_runs=[bench],
        )
        base = str(request.base_url).rstrip("/")
        return _stored(lambda: create_run(store, key, report, base))

    @app.post(
        "/v1/task-runs/{task_run_id}/start",
        tags=["runs"],
        responses={**answers(200, StartedTaskRun), **problems(*CHANGE)},
    )
    def start_task_run(task_run_id: str, key: Key, request: Request) -> Any:
        """Mark a pending task run started; the task as the agent needs it (its
        ``task_item``, never its criteria)."""
        from ._runapi import start_task

        base = str(request.base_url).rstrip("/")
        return _stored(lambda: start_task(store, key, task_run_id, base))

    @app.post(
        "/v1/task-runs/{task_run_id}/complete",
        tags=["runs"],
        responses={**answers(200, TaskRunOut), **problems(*CHANGE)},
    )
    def complete_task_run(task_run_id: str, body: CompleteIn, key: Key) -> Any:
        """Score a pending task run on its sandbox, store it, and finalize the benchmark run
        when it was the last one; the criterion runs (a scored run's details elided)."""
        from ._runapi import complete_task, pending_task

        pending = _stored(lambda: pending_task(store, key, task_run_id))
        found = benchmarks.plans.get(pending.run.benchmark.ref)
        if found is None:
            raise Problem(
                409, f"{task_run_id}: benchmark {pending.run.benchmark.ref} is not served here"
            )
        display, plain, scored_plan = found
        plan = scored_plan if pending.run.scored else plain
        task = next((t for t in plan.tasks if t.key == pending.task.task_key), None)
        if task is None:
            raise Problem(409, f"{task_run_id}: task {pending.task.task_key} is no longer served")
        scored_task, _run, _ = _score(
            display, plan, task, body.sandbox, body.config, label=pending.task.run
        )
        return _stored(
            lambda: complete_task(store, key, pending, scored_task, elide=pending.run.scored)
        )

    @app.post(
        "/v1/benchmark-runs/{run_id}/cancel",
        tags=["runs"],
        responses={**answers(200, BenchmarkRunOut), **problems(*CHANGE)},
    )
    def cancel_benchmark_run(run_id: str, key: Key) -> Any:
        """Cancel a running benchmark run; completed task runs are kept."""
        from ._runapi import cancel_run

        _stored(lambda: cancel_run(store, key, run_id, TaskRun.rescored))
        return _stored(lambda: read_benchmark_run(store, key, run_id))

    return app


def _answer(answer: Replay) -> JSONResponse:
    """A stored answer as a response: 202 (an async job) with the ``Location`` to poll."""
    headers = {"Location": job_location(answer.body["id"])} if answer.status == 202 else None
    return JSONResponse(answer.body, status_code=answer.status, headers=headers)


def _stored(work: Any) -> Any:
    try:
        return work()
    except StoreError as exc:
        raise store_unavailable(exc) from None


def app_from_env() -> FastAPI:
    """The app ``verial serve`` starts in each uvicorn worker (configured by environment)."""
    return create_app(
        os.environ["VERIAL_SERVE_STORE"],
        [p for p in os.environ.get("VERIAL_SERVE_BENCHMARKS", "").split(os.pathsep) if p],
        os.environ.get("VERIAL_SERVE_RUNS_ROOT", "."),
        judge=json.loads(os.environ.get("VERIAL_SERVE_JUDGE") or "{}"),
        limits=ServiceLimits.from_env(),
    )
