"""What the service answers, as OpenAPI schemas (``responses=`` of each route).

The models name the fields a client relies on and allow more (``extra="allow"``: a task run
carries every field of the JSON report's task run, and those grow), so /openapi.json states
what every success body holds and schemathesis checks each answer against it
(tests/service/test_service_fuzz.py). The answers themselves are built in :mod:`.runs` and
:mod:`.runapi`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .._scoring import Verdict


class _Out(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class ProblemOut(_Out):
    type: str
    title: str
    status: int
    detail: str


class CriterionRunOut(_Out):
    id: str
    criterion_id: str
    status: str
    passed: bool
    score: float | None = None
    weight: float


class TaskRunOut(_Out):
    """A task run with its criterion runs (verify-task's answer, ``GET /v1/task-runs/{id}``)."""

    id: str
    task_run_id: str
    benchmark_run_id: str
    task_id: str
    task_key: str
    status: str
    verdict: Verdict | None = None
    score: float | None = None
    confidence: float | None = None
    feedback: str | None = None
    criterion_runs: list[CriterionRunOut]


class JobAccepted(_Out):
    id: str
    status: Literal["queued"]
    location: str


class JobOut(_Out):
    id: str
    status: Literal["queued", "running", "done", "failed"]
    attempts: int
    created_at: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    result: TaskRunOut | None = None
    error: ProblemOut | None = None


class RunSummary(_Out):
    id: str
    created_at: str
    benchmark_ref: str
    status: str
    score: float | None = None
    verdict: Verdict | None = None


class RunPage(_Out):
    data: list[RunSummary]
    next_cursor: str | None = None


class Progress(_Out):
    task_runs: int
    done: int
    running: int
    cancelled: int
    fraction: float | None = None


class TaskRunSummary(_Out):
    id: str
    task_id: str
    task_key: str
    status: str
    verdict: Verdict | None = None
    score: float | None = None


class BenchmarkRunOut(_Out):
    id: str
    report_id: str
    status: str
    score: float | None = None
    verdict: Verdict | None = None
    progress: Progress
    task_runs: list[TaskRunSummary]


class PendingTaskRun(_Out):
    id: str
    task_id: str
    task_key: str
    phase: Literal["pending", "started", "completed"]
    status: str
    start_url: str
    complete_url: str


class CreatedRun(_Out):
    id: str
    benchmark: str
    status: str
    scored: bool
    run_token: str
    run_token_expires_at: str
    task_runs: list[PendingTaskRun]


class StartedTaskRun(PendingTaskRun):
    benchmark_run_id: str
    started_at: str
    task_item: Any = None


class Health(_Out):
    status: Literal["ok"]


class Ready(_Out):
    status: Literal["ready"]
    schema_: str = Field(alias="schema")
    tables: int


def answers(
    status: int, model: type[BaseModel], description: str = ""
) -> dict[int | str, dict[str, Any]]:
    """``responses=`` entry documenting a success body."""
    return {status: {"model": model, "description": description or "OK"}}


__all__ = [
    "BenchmarkRunOut",
    "CreatedRun",
    "Health",
    "JobAccepted",
    "JobOut",
    "Ready",
    "RunPage",
    "StartedTaskRun",
    "TaskRunOut",
    "answers",
]
