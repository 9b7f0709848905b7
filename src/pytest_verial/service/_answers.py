"""The answers, built once from the stored results (:mod:`pytest_verial.store._repo_runs`) into
the models of :mod:`._schemas`.

A scored run's rubric (criterion labels, check types, details, evidence, the task snapshot, the
retry feedback) is left out of the answers an agent gets (verify-task's and complete's of a
scored run) and of everything a solver key or run token reads; an org key reads it whole
(``GET /criterion-runs/{id}``), as Verial keeps it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from types import NoneType, UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import MISSING, BaseModel
from pydantic.fields import FieldInfo
from typing_extensions import TypeAliasType

from .._results import CriterionRun, TaskRun, TaskStatus
from ..store._repo_runs import RunListRow, StoredBenchmarkRun, StoredTaskRun
from ._schemas import (
    BenchmarkRunOut,
    CompletedTaskRunOut,
    CreatedRun,
    CriterionRunOut,
    Json,
    RunSummary,
    StartedTaskRun,
    TaskRunLink,
    TaskRunOut,
)

#: what a scored run hides: per criterion run, and per task run
CRITERION_RUBRIC = ("assert", "label", "details", "evidence")
TASK_RUBRIC = ("snapshot", "feedback")


def confidence(run: TaskRun) -> float | None:
    """How sure the verdict is: the task run's own (when the engine gives one), else the lowest
    confidence a judge criterion reported, 1.0 when only deterministic criteria ran (a check
    is certain), None when nothing was scored."""
    own = getattr(run, "confidence", None)
    if isinstance(own, int | float) and not isinstance(own, bool):
        return float(own)
    values = []
    for c in run.criterion_runs:
        if c.judge and c.evidence is not None:
            value = c.evidence.model_dump(mode="json").get("confidence")
            if isinstance(value, int | float) and not isinstance(value, bool):
                values.append(float(value))
    if values:
        return min(values)
    return 1.0 if run.status is TaskStatus.COMPLETED else None


def criterion_data(
    cr_id: str, run: CriterionRun, task_run_id: str, benchmark_run_id: str, *, elide: bool
) -> dict[str, Any]:
    data = run.to_json()
    data.update(id=cr_id, task_run_id=task_run_id, benchmark_run_id=benchmark_run_id)
    if elide:
        for key in CRITERION_RUBRIC:
            data[key] = None
    return data


def criterion_out(
    cr_id: str, run: CriterionRun, task_run_id: str, benchmark_run_id: str, *, elide: bool
) -> CriterionRunOut:
    """A Criterion Run as answered."""
    data = criterion_data(cr_id, run, task_run_id, benchmark_run_id, elide=elide)
    return CriterionRunOut.model_validate(data)


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _criterion_json(
    cr_id: str, data: dict[str, Any], task_run_id: str, benchmark_run_id: str, *, elide: bool
) -> dict[str, Any]:
    """:func:`criterion_data` of a criterion run's JSON form (copied, not changed)."""
    out = {**data, "id": cr_id, "task_run_id": task_run_id, "benchmark_run_id": benchmark_run_id}
    if elide:
        for key in CRITERION_RUBRIC:
            out[key] = None
    return out


def _criteria(stored: StoredTaskRun, *, elide: bool) -> list[dict[str, Any]]:
    """The task run's criterion runs as answered: from its JSON form when the writer made it
    (the same values ``to_json()`` gives), else from each typed run."""
    tid, bid, ids = stored.id, stored.benchmark_run_id, stored.criterion_run_ids
    if stored.json is not None:
        forms = stored.json["criterion_runs"]
        return [
            _criterion_json(i, c, tid, bid, elide=elide) for i, c in zip(ids, forms, strict=True)
        ]
    runs = stored.run.criterion_runs
    return [criterion_data(i, c, tid, bid, elide=elide) for i, c in zip(ids, runs, strict=True)]


def task_data(stored: StoredTaskRun, *, elide: bool) -> dict[str, Any]:
    run = stored.run
    if stored.json is not None:
        data = {k: v for k, v in stored.json.items() if k != "criterion_runs"}
    else:
        data = run.model_dump(mode="json", by_alias=True, exclude={"criterion_runs"})
    data["report_id"] = data.pop("id")
    if elide:
        for key in TASK_RUBRIC:
            data[key] = None
    return {
        **data,
        "id": stored.id,
        "task_run_id": stored.id,
        "benchmark_run_id": stored.benchmark_run_id,
        "phase": stored.phase,
        "started_at": _iso(stored.started_at),
        "confidence": confidence(run),
        "criterion_runs": _criteria(stored, elide=elide),
    }


def task_out(stored: StoredTaskRun, *, elide: bool) -> TaskRunOut:
    """A Task Run with its criterion runs as answered."""
    return TaskRunOut.model_validate(task_data(stored, elide=elide))


def task_answer(stored: StoredTaskRun, *, elide: bool) -> dict[str, Any]:
    """``task_out(stored, elide=elide).model_dump(mode="json")``, made without validating
    what the writer just made: from the task run's JSON form (:attr:`StoredTaskRun.json`) by
    :func:`project`; from the typed run through the model when the writer made none."""
    if stored.json is None:
        return task_out(stored, elide=elide).model_dump(mode="json")
    return answer_of(TaskRunOut, task_data(stored, elide=elide))


def answer_of(model: type[BaseModel], data: Mapping[str, Any]) -> dict[str, Any]:
    """``model.model_validate(data).model_dump(mode="json")``: by :func:`project` when the
    model's declarations allow it (:func:`projectable`), else through the model."""
    if projectable(model):
        return project(model, data)
    return model.model_validate(data).model_dump(mode="json")


#: the validators :func:`project` stands for, each with why: CriterionRunOut's picks the
#: evidence's model by the criterion's check; the engine wrote that evidence by the same model
#: (``Evidence.to_json``), so its dump is the JSON it was read from and is answered as it is
#: (tests/service/test_service_lean.py compares both for every example and fixture task run)
PROJECTED: dict[Callable[..., Any], str] = {
    CriterionRunOut._evidence_of_its_check.__func__: "picks the evidence's model",
}
#: what a model's dump keeps as validated: values of these types are answered as they are
_PLAIN = (str, int, float, bool, NoneType, object)
#: configuration that changes a value between validation and dump
_CHANGING = (
    "str_strip_whitespace",
    "str_to_lower",
    "str_to_upper",
    "coerce_numbers_to_str",
    "use_enum_values",
    "ser_json_timedelta",
    "ser_json_bytes",
    "ser_json_inf_nan",
    "val_json_bytes",
)


@cache
def projectable(model: type[BaseModel]) -> bool:
    """Whether :func:`project` gives ``model``'s dump: the model and every model its fields
    hold (nested, in lists, dicts and unions, evidence included) declare no validator,
    serializer, computed field, annotated validator or serializer, value-changing
    configuration or type of their own beyond those :data:`PROJECTED` stands for. Checked once
    per model (cached); any other declaration sends its answers through the model."""
    return not declarations(model)


def declarations(model: type[BaseModel]) -> list[str]:
    """What in ``model`` (and the models its fields hold) :func:`project` cannot stand for,
    each as ``Model.name: what``; empty when it can."""
    found: list[str] = []
    _declared(model, found, set())
    return found


_DECORATORS = (
    "validators",
    "field_validators",
    "root_validators",
    "field_serializers",
    "model_serializers",
    "model_validators",
    "computed_fields",
)


def _declared(model: type[BaseModel], found: list[str], seen: set[object]) -> None:
    if model in seen:
        return
    seen.add(model)
    name = model.__name__
    decorators = model.__pydantic_decorators__
    for kind in _DECORATORS:
        for attr, decorator in getattr(decorators, kind).items():
            if getattr(decorator.func, "__func__", decorator.func) not in PROJECTED:
                found.append(f"{name}.{attr}: {kind[:-1].replace('_', ' ')}")
    for key in _CHANGING:
        if model.model_config.get(key):
            found.append(f"{name}: model_config {key}")
    for field, info in model.model_fields.items():
        where = f"{name}.{field}"
        if info.metadata:
            found.append(f"{where}: {', '.join(type(m).__name__ for m in info.metadata)}")
        _annotation(info.annotation, where, found, seen)


def _annotation(annotation: Any, where: str, found: list[str], seen: set[object]) -> None:
    """A field's type, walked: models and the types inside lists, dicts, unions and named
    aliases; every other type is one :func:`project` does not know."""
    if annotation is Json or annotation in _PLAIN or annotation is Any:
        return  # JSON as it is: kept by the dump
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        _declared(annotation, found, seen)
        return
    if isinstance(annotation, TypeAliasType) and not isinstance(annotation.__value__, str):
        if annotation not in seen:
            seen.add(annotation)
            _annotation(annotation.__value__, where, found, seen)
        return
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal:
        return
    if origin is Annotated:
        found.append(f"{where}: {', '.join(type(m).__name__ for m in annotation.__metadata__)}")
        _annotation(args[0], where, found, seen)
        return
    if origin in (Union, UnionType, list, dict, tuple):
        for arg in args:
            if arg is not Ellipsis and arg is not MISSING:  # MISSING: left out when unset
                _annotation(arg, where, found, seen)
        return
    found.append(f"{where}: type {annotation!r}")


@dataclass(frozen=True)
class _Field:
    key: str
    name: str
    default: Callable[[], Any]
    exclude_if: Callable[[Any], bool] | None
    #: "model", "list" or "dict" of ``model``; "float" (an int made a float); "" as it is
    kind: str
    model: type[BaseModel] | None


def _kind(annotation: Any) -> tuple[str, type[BaseModel] | None]:
    """How a field's value is answered: a nested answer (one, a list, a dict of them), a
    float, or as it is (JSON, a literal, a union of several models such as evidence)."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (Union, UnionType):
        members = [a for a in args if a is not type(None)]
        return _kind(members[0]) if len(members) == 1 else ("", None)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "model", annotation
    if annotation is float:
        return "float", None
    if origin is list and args and isinstance(args[0], type) and issubclass(args[0], BaseModel):
        return "list", args[0]
    if origin is dict and isinstance(args[-1], type) and issubclass(args[-1], BaseModel):
        return "dict", args[-1]
    return "", None


def _default(info: FieldInfo) -> Callable[[], Any]:
    def default() -> Any:
        value = info.get_default(call_default_factory=True)
        return value.model_dump(mode="json") if isinstance(value, BaseModel) else value

    return default


@cache
def _fields(model: type[BaseModel]) -> tuple[tuple[_Field, ...], frozenset[str], bool, bool]:
    """A model's fields as :func:`project` reads them, the keys it declares, whether it keeps
    other keys (``extra="allow"``) and whether it reads a field by its name too."""
    fields = []
    for name, info in model.model_fields.items():
        kind, nested = _kind(info.annotation)
        key = info.alias or name
        fields.append(_Field(key, name, _default(info), info.exclude_if, kind, nested))
    by_name = bool(model.model_config.get("populate_by_name"))
    known = {f.key for f in fields} | ({f.name for f in fields} if by_name else set())
    return tuple(fields), frozenset(known), model.model_config.get("extra") == "allow", by_name


def project(model: type[BaseModel], data: Mapping[str, Any]) -> dict[str, Any]:
    """``model.model_validate(data).model_dump(mode="json")`` for data made from the engine's
    JSON forms, without validating it: each declared field in order under its key, an absent
    one its default, one excluded when absent left out, other keys kept only where the model
    keeps them (after the declared ones), nested answers projected the same way, an int where
    a float is declared made a float, every other value (evidence, task items) as it is.
    tests/service/test_service_lean.py proves it equal to the model's for every example task
    run, scored and not, and the report fixture's judge evidence."""
    fields, known, extra, by_name = _fields(model)
    out: dict[str, Any] = {}
    for f in fields:
        if f.key in data:
            value = data[f.key]
        elif by_name and f.name in data:
            value = data[f.name]
        else:
            value = f.default()
        if f.exclude_if is not None and f.exclude_if(value):
            continue
        if value is not None and f.kind:
            if f.kind == "float":
                value = float(value) if type(value) is int else value
            elif f.kind == "model":
                value = project(f.model, value)  # type: ignore[arg-type]
            elif f.kind == "list":
                value = [project(f.model, v) for v in value]  # type: ignore[arg-type]
            else:
                value = {k: project(f.model, v) for k, v in value.items()}  # type: ignore[arg-type]
        out[f.key] = value
    if extra:
        out.update((k, v) for k, v in data.items() if k not in known)
    return out


def completed_out(
    stored: StoredTaskRun, run: StoredBenchmarkRun, *, elide: bool
) -> CompletedTaskRunOut:
    """``complete``'s answer: the task run scored and where its benchmark run stands."""
    data = task_data(stored, elide=elide)
    data.update(benchmark_run_status=str(run.run.status), benchmark_run_phase=run.phase)
    return CompletedTaskRunOut.model_validate(data)


def benchmark_out(stored: StoredBenchmarkRun) -> BenchmarkRunOut:
    """A Benchmark Run with its progress and a summary of each task run."""
    run = stored.run
    data = run.model_dump(mode="json", by_alias=True, exclude={"task_runs", "runs", "trials"})
    data["report_id"] = data.pop("id")
    counts = run.counts
    done = counts.completed + counts.incomplete + counts.skipped
    return BenchmarkRunOut.model_validate(
        {
            **data,
            "id": stored.id,
            "benchmark_run_id": stored.id,
            "phase": stored.phase,
            "progress": {
                "task_runs": counts.task_runs,
                "done": done,
                "running": counts.running,
                "cancelled": counts.cancelled,
                "fraction": done / counts.task_runs if counts.task_runs else None,
            },
            "task_runs": [
                {
                    "id": ref.id,
                    "task_id": ref.run.task_id,
                    "task_key": ref.run.task_key,
                    "name": ref.run.name,
                    "phase": ref.phase,
                    "status": str(ref.run.status),
                    "verdict": ref.run.verdict,
                    "score": ref.run.score,
                }
                for ref in stored.task_runs
            ],
        }
    )


def links(stored: StoredBenchmarkRun, base: str) -> list[TaskRunLink]:
    """Each task run with where to start and complete it."""
    return [
        TaskRunLink(
            id=ref.id,
            task_id=ref.run.task_id,
            task_key=ref.run.task_key,
            name=ref.run.name,
            phase=ref.phase,  # type: ignore[arg-type]
            status=str(ref.run.status),
            start_url=f"{base}/v1/task-runs/{ref.id}/start",
            complete_url=f"{base}/v1/task-runs/{ref.id}/complete",
        )
        for ref in stored.task_runs
    ]


def created_data(stored: StoredBenchmarkRun, base: str) -> dict[str, Any]:
    """A new benchmark run with its task runs, as kept for its Idempotency-Key: everything
    :class:`~._schemas.CreatedRun` holds but the bearer token, which is never stored."""
    run = stored.run
    return {
        "id": stored.id,
        "benchmark_run_id": stored.id,
        "benchmark": run.benchmark.model_dump(mode="json"),
        "scored": run.scored,
        "phase": stored.phase,
        "status": str(run.status),
        "task_runs": [link.model_dump(mode="json") for link in links(stored, base)],
    }


def created_out(data: dict[str, Any], token: str, expires: datetime) -> CreatedRun:
    """The answer to a created run: its data and its bearer token."""
    return CreatedRun.model_validate(
        {**data, "bearer_token": token, "bearer_token_expires_at": expires.isoformat()}
    )


def started_out(stored: StoredTaskRun, base: str) -> StartedTaskRun:
    """A started task run: the task as the agent needs it (its ``task_item``, never its
    criteria)."""
    run = stored.run
    snapshot = run.snapshot or {}
    return StartedTaskRun.model_validate(
        {
            "id": stored.id,
            "task_id": run.task_id,
            "task_key": run.task_key,
            "name": run.name,
            "phase": stored.phase,
            "status": str(run.status),
            "start_url": f"{base}/v1/task-runs/{stored.id}/start",
            "complete_url": f"{base}/v1/task-runs/{stored.id}/complete",
            "benchmark_run_id": stored.benchmark_run_id,
            "entity": run.entity,
            "started_at": _iso(stored.started_at),
            "task_item": snapshot.get("task_item"),
        }
    )


def summaries(rows: Sequence[RunListRow]) -> list[RunSummary]:
    """A listing's benchmark runs."""
    return [
        RunSummary.model_validate(
            {
                **{k: getattr(r, k) for k in RunSummary.model_fields if hasattr(r, k)},
                "benchmark_run_id": r.id,
                "created_at": r.created_at.isoformat(),
            }
        )
        for r in rows
    ]


def elide_report(data: dict[str, Any]) -> dict[str, Any]:
    """A report's JSON with every scored run's rubric removed."""
    for run in data.get("benchmark_runs") or []:
        if not run.get("scored"):
            continue
        for task in run.get("task_runs") or []:
            for key in TASK_RUBRIC:
                task[key] = None
            for crit in task.get("criterion_runs") or []:
                for key in CRITERION_RUBRIC:
                    crit[key] = None
    return data


__all__ = [
    "benchmark_out",
    "completed_out",
    "confidence",
    "created_data",
    "answer_of",
    "created_out",
    "criterion_out",
    "declarations",
    "elide_report",
    "started_out",
    "project",
    "projectable",
    "summaries",
    "task_answer",
    "task_out",
]
