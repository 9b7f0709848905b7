"""Benchmark, task and criterion models (Verial's wire format), and result records.

Criteria use Verial's criterion object unchanged: ``id``, ``label``, ``assertion`` (a tagged
object on its ``assert`` key), ``weight`` and ``axis``. The assertion is validated against the
check registry by the loader (:mod:`pytest_verial._loader`), so a conftest can add new ``assert``
types; here it is kept as the raw mapping. Models are frozen and reject unknown fields, so a
typo in a benchmark file is an error rather than a silently ignored key.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator


class Model(BaseModel):
    """Base of every spec model: frozen, unknown fields rejected, and every number finite (a
    NaN, an Infinity or text such as ``"1e999"`` that would parse to one is refused naming its
    field: it equals nothing and is not JSON)."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", populate_by_name=True, allow_inf_nan=False
    )


class Entity(BaseModel):
    """A DatasetEntity binding: an ``id`` plus any fields, used by ``{entity.<field>}``."""

    model_config = ConfigDict(frozen=True, extra="allow")

    id: str

    def fields(self) -> dict[str, Any]:
        """All fields of the entity, ``id`` included."""
        return {"id": self.id, **(self.model_extra or {})}


class Criterion(Model):
    """One typed assertion of a task, with its weight and optional axis."""

    id: str | None = None
    label: str | None = None
    assertion: dict[str, Any]
    weight: float = Field(default=1.0, gt=0, allow_inf_nan=False)
    axis: str | None = None
    #: our extension, not Verial's: the task's verdict is ``fail`` when this does not pass
    critical: bool = False
    #: our extension, not Verial's: the task scores by points (README "Points and penalties"),
    #: a non-zero integer; negative for behaviour that must not happen
    points: int | None = None
    input_entity_id: str | None = None
    pass_threshold: float | None = Field(default=None, ge=0, le=1)
    # Verial API fields, accepted as they come back from GET /tasks/{id}.
    task_id: str | None = None
    created_at: str | None = None
    updated_at: str | None = None

    @field_validator("points", mode="before")
    @classmethod
    def _points(cls, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(
                f"points must be a non-zero integer (negative for a penalty), "
                f"found {type(value).__name__}"
            )
        if value == 0:
            raise ValueError("points must be a non-zero integer (negative for a penalty), found 0")
        return value

    @field_validator("assertion")
    @classmethod
    def _has_assert(cls, value: dict[str, Any]) -> dict[str, Any]:
        tag = value.get("assert")
        if not isinstance(tag, str) or not tag:
            raise ValueError("assertion needs an 'assert' key naming the check, a string")
        return value


class Task(Model):
    """One job given to an agent, with its criteria (Verial's Task object)."""

    id: str
    name: str | None = None
    description: str | None = None
    task_item: dict[str, Any] | None = None
    scenario: dict[str, Any] | list[Any] | None = None
    entities: list[Entity | str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    timeout: float | None = Field(default=None, gt=0)
    criteria: list[Criterion] = Field(default_factory=list)
    pass_threshold: float | None = Field(default=None, ge=0, le=1)
    # PRD-103 verification settings; normally per run in run.yaml, allowed here as defaults.
    task_type: str | None = None
    skip_verification: bool | None = None
    # Verial API fields.
    task_id: str | None = None
    benchmark_id: str | None = None
    created_at: str | None = None
    updated_at: str | None = None


class Benchmark(Model):
    """A versioned set of tasks (``slug@version``)."""

    benchmark: str | None = None
    version: int | str | None = None
    name: str | None = None
    description: str | None = None
    pass_threshold: float | None = Field(default=None, ge=0, le=1)
    entities: dict[str, dict[str, JsonValue]] = Field(default_factory=dict)
    #: validate resources matched by fhir-resource-state with fhir.resources (R4B or R5)
    fhir_validation: Literal["R4B", "R5"] | None = None
    tasks: list[Task] = Field(default_factory=list)
    consistency: list[dict[str, Any]] = Field(default_factory=list)
