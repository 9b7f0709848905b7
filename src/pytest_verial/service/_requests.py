"""What the service takes: the request bodies, each refusing a field it does not know.

Every rule of a body is in its schema, so /openapi.json states it: ``sandbox`` is exactly one of
``run_dir``, ``archive`` or ``files`` (a ``oneOf``, :mod:`._sandboxes`), a verify-task body names
``benchmark`` and ``task_id`` or gives ``task`` (another ``oneOf``). A body that breaks its
schema is a 400; one that keeps it but names what the server cannot use (an unknown benchmark
or task, a missing run folder, an archive that does not unpack) is a 422.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .._scoring import verdict_threshold
from ._sandboxes import SandboxIn
from ._schemas import Json

#: an Idempotency-Key: 1-255 printable ASCII characters
IDEMPOTENCY_PATTERN = r"^[\x21-\x7e]{1,255}$"
#: an id or filter that the URL carries (never a NUL, which text columns refuse)
TEXT_PATTERN = r"^[^\x00]*$"


class TaskConfig(BaseModel):
    """This task run's facts (what run.yaml would say; they replace its ``tasks.<key>``) and
    the verdict threshold. Judge settings (model, endpoint, key) are the server's, never a
    caller's."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # "Infinity" too
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


def _given(prop: dict[str, Any]) -> dict[str, Any]:
    """A property's schema once given: never null."""
    kinds = [k for k in prop.get("anyOf", []) if k.get("type") != "null"]
    if len(kinds) != 1:
        return prop
    rest = {k: v for k, v in prop.items() if k not in ("anyOf", "default")}
    return {**rest, **kinds[0]}


def _one_task_schema(schema: dict[str, Any]) -> None:
    """State "benchmark and task_id, or task" as a ``oneOf`` of the two bodies."""
    props = schema["properties"]
    common = {k: props[k] for k in ("sandbox", "config", "scored")}
    task_id = _given(props["task_id"])
    named = {"benchmark": _given(props["benchmark"]), "task_id": task_id, **common}
    inline = {"task": _given(props["task"]), "task_id": task_id, **common}
    schema["oneOf"] = [
        {
            "title": "a task of a benchmark this server was started with",
            "type": "object",
            "properties": named,
            "required": ["benchmark", "task_id", "sandbox"],
            "additionalProperties": False,
        },
        {
            "title": "a task given in the request",
            "type": "object",
            "properties": inline,
            "required": ["task", "sandbox"],
            "additionalProperties": False,
        },
    ]


class VerifyTaskIn(BaseModel):
    """``POST /verify-task``: one task, its sandbox and this task run's facts."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_one_task_schema)
    benchmark: str | None = Field(
        default=None,
        min_length=1,
        max_length=300,
        pattern=TEXT_PATTERN,
        description="slug@version (or slug) of a benchmark the server was started with",
    )
    task_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=300,
        pattern=TEXT_PATTERN,
        description="task id or task key",
    )
    task: dict[str, Json] | None = Field(
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
        description="related task runs, each with its own name; the last is the anchor the "
        "check is stored under",
    )
    principles: list[Annotated[str, Field(min_length=1, max_length=2000)]] | None = Field(
        default=None, max_length=20, description="what must agree (default: shared facts)"
    )
    label: str | None = Field(default=None, max_length=500)
    config: TaskConfig = Field(default_factory=TaskConfig)
    scored: bool = False


class CreateRunIn(BaseModel):
    """``POST /v1/benchmark-runs`` and ``POST /benchmark-runs``."""

    model_config = ConfigDict(extra="forbid")
    benchmark: str = Field(
        min_length=1,
        max_length=300,
        pattern=TEXT_PATTERN,
        description="slug@version (or slug) of a benchmark the server was started with",
    )
    scored: bool = Field(
        default=False,
        description="completion answers leave out details and evidence (an org key reads "
        "them with GET /criterion-runs/{id})",
    )
    agent: str | None = Field(default=None, max_length=300, pattern=TEXT_PATTERN)


class CompleteIn(BaseModel):
    """``POST /v1/task-runs/{id}/complete``: the task's sandbox."""

    model_config = ConfigDict(extra="forbid")
    sandbox: SandboxIn
    config: TaskConfig = Field(default_factory=TaskConfig)


__all__ = [
    "IDEMPOTENCY_PATTERN",
    "CompleteIn",
    "ConsistencyIn",
    "CreateRunIn",
    "RelatedTaskIn",
    "TaskConfig",
    "VerifyTaskIn",
]
