"""What the service answers: one model per answer, declared field by field, so /openapi.json
states every field Verial's documents name and a client generated from it gets a type for each
(tests/service/test_service_openapi.py builds the TypeScript example from it).

Every route returns one of these, built with ``model_validate`` from the typed results
(:mod:`._answers`); FastAPI checks the answer against it. Fields not declared here are not
answered. JSON values of open shape (a check's own evidence keys, a task's ``task_item``) are
:data:`Json`, a recursive JSON type, never "any".

Evidence is the engine's (:mod:`pytest_verial._evidence`: one model per check type, keyed by
Verial's table: ``fieldResults`` (fhir-resource-state, sftp-file-present, x12-response,
output-*), ``field_results`` (hl7-structural), ``assertionResults`` (portal-state-match),
``phraseResults`` (voice-transcript), and ``rubric_results`` (llm-rubric); each may carry the
check's own snake_case keys beside its rows), one definition for the report and the service;
:func:`type_evidence` types its open JSON values in the OpenAPI.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator
from typing_extensions import TypeAliasType

from .._evidence import AnyEvidence, parse_evidence
from .._results import RunCounts, Verdicts
from .._scoring import Verdict

#: a JSON value of any shape: a named, recursive schema (``Json``), never "any"
Json = TypeAliasType(
    "Json",
    "str | int | float | bool | None | list[Json] | dict[str, Json]",
)


def _absent(value: object) -> bool:
    return value is None


Phase = Literal["created", "started", "completed", "cancelled"]


def _when_given(schema: dict[str, Any], model: type[BaseModel]) -> None:
    """Every field is in ``required`` (an answer always has it, null when it has no value),
    but those an answer leaves out when they have no value (``exclude_if``)."""
    omitted = {f.alias or n for n, f in model.model_fields.items() if f.exclude_if is not None}
    required = [n for n in schema.get("required", []) if n not in omitted]
    if required:
        schema["required"] = required
    else:
        schema.pop("required", None)


def _closed(schema: dict[str, Any], model: type[BaseModel]) -> None:
    """:func:`_when_given`; other keys are allowed, and not typed: a client generated from the
    schema sees the declared ones (openapi-typescript would add "unknown" for the rest)."""
    _when_given(schema, model)
    schema.pop("additionalProperties", None)


class _Out(BaseModel):
    """An answer: exactly its declared fields."""

    model_config = ConfigDict(
        extra="ignore",
        populate_by_name=True,
        serialize_by_alias=True,
        json_schema_serialization_defaults_required=True,
        json_schema_extra=_when_given,
    )


class _Open(BaseModel):
    """An answer that may carry more keys than it declares (a check's own evidence keys),
    each a JSON value."""

    # only the documented key is read (never its snake_case field name): what the engine
    # wrote is answered as it is
    model_config = ConfigDict(
        extra="allow",
        populate_by_name=False,
        serialize_by_alias=True,
        json_schema_serialization_defaults_required=True,
        json_schema_extra=_closed,
    )


class ProblemOut(_Out):
    """An error (RFC 9457): ``detail`` is one line naming the field or object concerned."""

    type: str
    title: str
    status: int
    detail: str


# -- evidence ------------------------------------------------------------------------------------
#: a criterion run's evidence: the engine's own models (:mod:`pytest_verial._evidence`, one per
#: check type, public), the one definition the report's JSON Schema uses too. Their open JSON
#: values are typed as :data:`Json` in the OpenAPI by :func:`type_evidence`.
Evidence = AnyEvidence
#: the evidence models and their rows, as the OpenAPI names them
EVIDENCE_SCHEMAS = frozenset(
    [m.__name__ for m in get_args(AnyEvidence)] + ["FieldResult", "PhraseResult", "RubricResult"]
)


def _typed(schema: Any, ref: dict[str, str]) -> Any:
    """``schema`` with every untyped JSON value (``{}``, an object's ``additionalProperties:
    true``) the named :data:`Json` schema instead."""
    if isinstance(schema, list):
        return [_typed(s, ref) for s in schema]
    if not isinstance(schema, dict):
        return schema
    if not schema or set(schema) <= {"title", "description", "default"} and "$ref" not in schema:
        return {**schema, **ref} if schema else dict(ref)
    out = {}
    for key, value in schema.items():
        if key == "additionalProperties" and value is True:
            out[key] = dict(ref)
        elif key in ("properties", "$defs"):
            out[key] = {name: _typed(v, ref) for name, v in value.items()}
        elif key in ("items", "anyOf", "oneOf", "allOf"):
            out[key] = _typed(value, ref)
        else:
            out[key] = value
    return out


def type_evidence(spec: dict[str, Any]) -> dict[str, Any]:
    """The OpenAPI with the engine's evidence models typed for a client: each open JSON value
    (a row's ``expected``/``actual``, a resource) is :data:`Json`, and the keys a check adds
    beyond the declared ones are not typed (``additionalProperties`` dropped, as for every
    answer here): openapi-typescript gives each field a type and no ``unknown``."""
    schemas = spec.setdefault("components", {}).setdefault("schemas", {})
    # the recursive JSON value, named once: as the answers' other open values name it (FastAPI
    # names it Json-Output when requests use it too)
    name = next((n for n in ("Json-Output", "Json") if n in schemas), "Json")
    ref = {"$ref": f"#/components/schemas/{name}"}
    if name not in schemas:
        made = TypeAdapter(Json).json_schema(ref_template="#/components/schemas/{model}")
        schemas.update(made.get("$defs", {}))
    for name in EVIDENCE_SCHEMAS & set(schemas):
        model = schemas[name]
        model.pop("additionalProperties", None)
        model["properties"] = {
            key: _typed(value, ref) for key, value in model.get("properties", {}).items()
        }
    return spec


# -- criterion runs ------------------------------------------------------------------------------
class CriterionRunOut(_Out):
    """A Criterion Run (``GET /criterion-runs/{id}``, and each of a task run's)."""

    id: str
    task_run_id: str | None = None
    benchmark_run_id: str | None = None
    criterion_id: str
    label: str | None = Field(default=None, description="null in a scored run's elided answer")
    assertion: str | None = Field(
        default=None, alias="assert", description="the check type; null when elided"
    )
    axis: str | None = None
    weight: float
    points: int | None = None
    met: bool | None = None
    critical: bool = False
    judge: bool = False
    task_key: str | None = None
    task_id: str | None = None
    entity: str | None = None
    pass_threshold: float | None = None
    passed: bool
    score: float | None = None
    status: Literal["passed", "failed", "error", "gated", "skipped", "deselected", "not_run"]
    not_evaluated: str | None = Field(
        default=None,
        description="why the verifier could not evaluate this criterion (status error); its "
        "weight is left out of the task's score",
    )
    details: str | None = Field(default=None, description="null in a scored run's elided answer")
    evidence: Evidence | None = Field(
        default=None,
        description="the check's evidence (the model of its ``assert``); null in a scored "
        "run's elided answer",
    )
    started_at: str | None = None
    completed_at: str | None = None
    duration: float | None = None
    line: int | None = None

    @model_validator(mode="before")
    @classmethod
    def _evidence_of_its_check(cls, data: Any) -> Any:
        """The evidence as the model of the criterion's ``assert`` (the union's member is
        chosen by the check, not guessed from the keys)."""
        if isinstance(data, dict) and isinstance(data.get("evidence"), dict):
            assertion = data.get("assert", data.get("assertion"))
            data = {**data, "evidence": parse_evidence(assertion, data["evidence"])}
        return data


# -- task runs -----------------------------------------------------------------------------------
class AxisScoreOut(_Out):
    """One axis: the weighted mean of its criteria and their summed weight."""

    score: float
    weight: float
    #: a task scored by points: its sums (absent otherwise)
    points_earned: int | None = Field(default=None, exclude_if=_absent)
    points_possible: int | None = Field(default=None, exclude_if=_absent)


class TaskCountsOut(_Out):
    passed: int = 0
    failed: int = 0
    error: int = 0
    gated: int = 0
    skipped: int = 0
    deselected: int = 0
    not_run: int = 0
    #: the errors among them the verifier could not evaluate
    not_evaluated: int = 0


class CriterionSnapshot(_Open):
    """A criterion as the task held it when the run was made."""

    id: str | None = None
    label: str | None = None
    assertion: dict[str, Json]
    weight: float = 1.0
    axis: str | None = None
    critical: bool = False
    points: int | None = None


class TaskSnapshot(_Open):
    """The task frozen with its task run (so a rerun is reproducible)."""

    id: str
    name: str | None = None
    description: str | None = None
    task_item: dict[str, Json] | None = None
    scenario: Json = None
    entities: list[Json] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    timeout: float | None = None
    pass_threshold: float | None = None
    criteria: list[CriterionSnapshot] = Field(default_factory=list)


class NotEvaluated(_Out):
    """A criterion the verifier could not evaluate, and why (no URL, path or key)."""

    criterion_id: str
    reason: str


class TaskRunOut(_Out):
    """A Task Run with its criterion runs: ``GET /task-runs/{id}``, verify-task's answer."""

    id: str
    task_run_id: str
    benchmark_run_id: str
    report_id: str | None = None
    task_id: str
    task_key: str
    entity: str | None = None
    name: str | None = None
    benchmark: str | None = None
    file: str | None = None
    run: str | None = None
    status: Literal["completed", "incomplete", "cancelled", "running", "skipped"]
    phase: Phase = "completed"
    verdict: Verdict | None = Field(
        default=None,
        description="pass, partial or fail; null while the task run is open, and when "
        "criteria the verifier could not evaluate could still change it (verification: "
        "incomplete)",
    )
    score: float | None = None
    pass_threshold: float | None = None
    axes: dict[str, AxisScoreOut] = Field(default_factory=dict)
    all_passed: bool | None = None
    critical_failed: list[str] = Field(default_factory=list)
    points_earned: int | None = None
    points_possible: int | None = None
    penalties_applied: list[str] = Field(default_factory=list)
    counts: TaskCountsOut = Field(default_factory=TaskCountsOut)
    snapshot: TaskSnapshot | None = Field(
        default=None, description="the frozen task; null in a scored run's elided answer"
    )
    feedback: str | None = Field(
        default=None, description="what the agent should change on a retry; null when elided"
    )
    confidence: float | None = Field(
        default=None,
        description="how sure the verdict is: the lowest confidence a judge criterion "
        "reported (1.0 for checks only), lowered by the share of weight not evaluated",
    )
    verification: Literal["complete", "incomplete"] | None = Field(
        default=None,
        description="incomplete when some criteria could not be evaluated (not_evaluated)",
    )
    not_evaluated: list[NotEvaluated] = Field(default_factory=list)
    started_at: str | None = None
    criterion_runs: list[CriterionRunOut]


class CompletedTaskRunOut(TaskRunOut):
    """``POST /v1/task-runs/{id}/complete``: the task run scored, and where its run stands."""

    benchmark_run_status: Literal["completed", "cancelled", "running"]
    benchmark_run_phase: Phase


# -- benchmark runs ------------------------------------------------------------------------------
class BenchmarkOut(_Out):
    """The benchmark a run scores."""

    slug: str
    version: int | str | None = None
    name: str | None = None
    ref: str
    file: str | None = None
    pass_threshold: float | None = None


# The engine's counts (_results.Verdicts and RunCounts) as answers, field for field: their
# fields are written there once. No docstring: it would become the published schema's
# description, and the schema is the one the TypeScript client was generated from.
class VerdictsOut(_Out, Verdicts):
    model_config = _Out.model_config


class RunCountsOut(_Out, RunCounts):
    model_config = _Out.model_config

    verdicts: VerdictsOut = Field(default_factory=VerdictsOut)


class Progress(_Out):
    task_runs: int
    done: int
    running: int
    cancelled: int
    fraction: float | None = None


class TaskRunSummary(_Out):
    """A task run as its benchmark run lists it."""

    id: str
    task_id: str
    task_key: str
    name: str | None = None
    phase: Phase
    status: str
    verdict: Verdict | None = None
    score: float | None = None


class BenchmarkRunOut(_Out):
    """A Benchmark Run: ``GET /v1/benchmark-runs/{id}``, and the answer to a cancel."""

    id: str
    benchmark_run_id: str
    report_id: str | None = None
    benchmark: BenchmarkOut
    status: Literal["completed", "cancelled", "running"]
    phase: Phase
    scored: bool
    score: float | None = Field(
        default=None, description="the mean of the task scores (of the verified task runs)"
    )
    verdict: Verdict | None = Field(
        default=None,
        description="null while a completed task run's verification is incomplete",
    )
    pass_threshold: float | None = None
    verification: Literal["complete", "incomplete"] | None = Field(
        default=None,
        description="incomplete when a task run could not be fully verified (counts.unverified)",
    )
    axes: dict[str, AxisScoreOut] = Field(default_factory=dict)
    strict_success: float | None = None
    counts: RunCountsOut = Field(default_factory=RunCountsOut)
    progress: Progress
    task_runs: list[TaskRunSummary]


class TaskRunLink(_Out):
    """A task run of a new benchmark run: where to start and complete it."""

    id: str
    task_id: str
    task_key: str
    name: str | None = None
    phase: Phase
    status: str
    start_url: str
    complete_url: str


class CreatedRun(_Out):
    """``POST /v1/benchmark-runs`` and ``POST /benchmark-runs``: the run, its bearer token
    (``vrl_run_...``: this run only, until it expires) and its task runs."""

    id: str
    benchmark_run_id: str
    benchmark: BenchmarkOut
    scored: bool
    phase: Phase
    status: str
    bearer_token: str
    bearer_token_expires_at: str
    task_runs: list[TaskRunLink]


class StartedTaskRun(TaskRunLink):
    """``POST /v1/task-runs/{id}/start``: the task as the agent needs it (never its
    criteria)."""

    benchmark_run_id: str
    entity: str | None = None
    started_at: str
    task_item: dict[str, Json] | None = None


class RunSummary(_Out):
    """A benchmark run of a listing."""

    id: str
    benchmark_run_id: str
    created_at: str
    benchmark_ref: str
    agent: str | None = None
    run_labels: str
    status: str
    phase: Phase
    scored: bool
    score: float | None = None
    verdict: Verdict | None = None
    strict_success: float | None = None
    criteria_passed: int
    criteria_failed: int
    criteria_error: int
    source: str


class RunPage(_Out):
    """A page of benchmark runs: pass ``next_cursor`` as ``cursor`` for the next one."""

    data: list[RunSummary]
    next_cursor: str | None = None


class CriterionRunPage(_Out):
    """A page of a task run's criterion runs: pass ``next_cursor`` as ``cursor`` for more."""

    data: list[CriterionRunOut]
    next_cursor: str | None = None


# -- jobs and health -----------------------------------------------------------------------------
class JobAccepted(_Out):
    id: str
    status: Literal["queued"]
    location: str


class JobOut(_Out):
    """An async verify-task: ``result`` once done (verify-task's answer), ``error`` when
    failed."""

    id: str
    status: Literal["queued", "running", "done", "failed"]
    attempts: int
    created_at: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    result: TaskRunOut | None = None
    error: ProblemOut | None = None


class Health(_Out):
    status: Literal["ok"]


class Ready(_Out):
    status: Literal["ready"]
    schema_: str = Field(alias="schema")
    tables: int


__all__ = [
    "BenchmarkRunOut",
    "CompletedTaskRunOut",
    "CreatedRun",
    "CriterionRunOut",
    "CriterionRunPage",
    "EVIDENCE_SCHEMAS",
    "Evidence",
    "Health",
    "JobAccepted",
    "JobOut",
    "Json",
    "ProblemOut",
    "Ready",
    "RunPage",
    "StartedTaskRun",
    "TaskRunOut",
    "type_evidence",
]
