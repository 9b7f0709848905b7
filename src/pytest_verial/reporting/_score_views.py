"""The score views of a report: ids, statuses, scores, verdicts and the figures they are computed
from, no evidence (what ``verial compare`` and the store read of a report of 60,000 task runs).

Read and checked by :mod:`._scores`; their agreement with the criterion runs is checked by
:mod:`._agreement`. Both import the views from here, so neither imports the other's checks.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from .._results import COUNTED, BenchmarkInfo, Report, RunInfo, RunStatus, Status, TaskStatus
from .._scoring import Verdict


class _View(BaseModel):
    """Only the fields named; the report's other fields are read past (checked by load_report)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True, from_attributes=True)


def _json(value: Any) -> Any:
    """A figure of a typed report (a model, or a mapping of models) as the JSON it is written
    as: views hold figures as plain JSON, from a file or a report already read alike."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    if isinstance(value, dict) and any(isinstance(v, BaseModel) for v in value.values()):
        return {k: _json(v) for k, v in value.items()}
    return value


_Figures = BeforeValidator(_json)


class CriterionScore(_View):
    criterion_id: str
    status: Status
    passed: bool = False
    score: float | None = None
    pass_threshold: float | None = None
    #: what its task run's figures are computed from (:mod:`._agreement`); every field of a
    #: criterion run that is not here is one scoring never reads (a test pins the list)
    axis: str | None = None
    weight: float = 1.0
    points: int | None = None
    critical: bool = False
    judge: bool = False
    #: a criterion the verifier could not check is left out of the score
    not_evaluated: str | None = None

    @property
    def counted(self) -> bool:
        """Whether the score counts in the task's weighted mean."""
        return self.status in COUNTED and self.not_evaluated is None


class TaskScore(_View):
    """A task run's scores, and the figures it states (dropped once checked)."""

    id: str
    task_key: str
    run: str
    status: TaskStatus
    verdict: Verdict | None = None
    score: float | None = None
    pass_threshold: float
    criterion_runs: list[CriterionScore] = Field(default_factory=list)
    #: the other figures its criterion runs give (None: not read, as from the store)
    #: as plain JSON (axis -> {score, weight, ...}, status -> count): models (or a validator
    #: of each) would double the cost of reading 60,000 task runs for figures only compared
    axes: dict[str, Any] | None = None
    all_passed: bool | None = None
    critical_failed: list[str] | None = None
    points_earned: int | None = None
    points_possible: int | None = None
    penalties_applied: list[str] | None = None
    counts: dict[str, Any] | None = None

    @classmethod
    def of(cls, task: Any) -> TaskScore:
        """The view of a typed task run (its figures as JSON)."""
        values = {name: getattr(task, name) for name in cls.model_fields}
        values.update(axes=_json(task.axes), counts=_json(task.counts))
        values["criterion_runs"] = [
            CriterionScore.model_validate(c, from_attributes=True) for c in task.criterion_runs
        ]
        return _stated_as(cls.model_validate(values), task)

    def checked(self) -> None:
        """Drop the stated figures once checked (:func:`._agreement.check_task`): 60,000
        task runs' axes and counts would stay alive for nothing. Straight into the fields'
        storage: the view's own assignment would validate each."""
        vars(self).update(axes=None, counts=None, critical_failed=None, penalties_applied=None)


class BenchmarkRunScores(_View):
    id: str
    benchmark: BenchmarkInfo
    runs: list[RunInfo]
    status: RunStatus
    score: float | None = None
    verdict: Verdict | None = None
    pass_threshold: float
    verification: Literal["complete", "incomplete"] = "complete"
    task_runs: list[TaskScore] = Field(default_factory=list)
    #: the other figures its task runs give (None: not read)
    scored: bool = False
    axes: Annotated[dict[str, Any] | None, _Figures] = None
    strict_success: float | None = None
    counts: Annotated[dict[str, Any] | None, _Figures] = None
    trials: Annotated[dict[str, Any] | None, _Figures] = None


class SessionScores(_View):
    counts: Annotated[dict[str, Any] | None, _Figures] = None


class ReportScores(_View):
    #: v2 files are read as they are: the scores did not change shape (only evidence did)
    schema_: Literal["pytest-verial/report/v2", "pytest-verial/report/v3"] = Field(alias="schema")
    benchmark_runs: list[BenchmarkRunScores]
    session: SessionScores | None = None

    @classmethod
    def of(cls, report: Report) -> ReportScores:
        """The scores of a report already read (a stored run, a merged report)."""
        runs = []
        for run in report.benchmark_runs:
            values = {name: getattr(run, name) for name in BenchmarkRunScores.model_fields}
            values["task_runs"] = [TaskScore.of(task) for task in run.task_runs]
            view = BenchmarkRunScores.model_validate(values)
            runs.append(_stated_as(view, run))
        session = _stated_as(
            SessionScores.model_validate(report.session, from_attributes=True), report.session
        )
        return cls.model_validate(
            {"schema": report.schema_, "benchmark_runs": runs, "session": session}
        )


def _stated_as(view: _V, source: BaseModel) -> _V:
    """``view`` with the fields its source was given (read from a file, or built), so that a
    figure a report leaves out (written by hand) is not taken as a figure it states."""
    view.__pydantic_fields_set__ = set(source.model_fields_set) & set(type(view).model_fields)
    return view


_V = TypeVar("_V", bound=BaseModel)
