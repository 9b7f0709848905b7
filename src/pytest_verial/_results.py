"""The result model: criterion runs, task runs, benchmark runs (Verial's three levels).

Every result the plugin produces is one of these types, built by one constructor per case and
aggregated by one path:

- :class:`CriterionRun` is what one criterion scored. :meth:`CriterionRun.scored` (a check ran),
  :meth:`~CriterionRun.errored`, :meth:`~CriterionRun.gated`, :meth:`~CriterionRun.skipped`,
  :meth:`~CriterionRun.deselected` and :meth:`~CriterionRun.not_run` are its only constructors.
- :meth:`TaskRun.aggregate` turns a task run's criterion runs into its score, axes and verdict:
  the pytest report and :func:`pytest_verial.verify_task` both call it.
- :meth:`BenchmarkRun.aggregate` turns the task runs of one benchmark on one agent's run folder
  (or its trials) into the run score, axes, verdict and strict success rate.
- :class:`Report` is the JSON report: a ``session`` block and its ``benchmark_runs``. Its JSON
  Schema (``verial schema report``) is generated from these types, so it cannot drift.

One JSON form crosses xdist, goes into the report and comes back from ``verify_task``:
:meth:`CriterionRun.to_json` and :meth:`CriterionRun.from_json`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ._scoring import (
    DEFAULT_AXIS,
    DEFAULT_VERDICT_THRESHOLD,
    VERDICTS,
    Pointed,
    Scored,
    Verdict,
    clamp,
    points_axes,
    points_score,
    run_score,
    task_score,
    trial_stats,
    verdict,
)
from ._scoring import axes as axis_scores

SCHEMA_ID = "pytest-verial/report/v2"

#: Any JSON value. Values reach these types already as strict JSON (the engine makes evidence
#: strict, the reader parses JSON), and pydantic's Json validates every nested value in
#: Python: a third of the per-criterion cost. Its schema is the same ({}: any value).
Json = Any


class Status(StrEnum):
    """What happened to one criterion run."""

    PASSED = "passed"
    FAILED = "failed"
    #: the criterion could not be scored (bad data, an unusable source, a crashed worker)
    ERROR = "error"
    #: a judge criterion not asked because a deterministic criterion of its task failed
    GATED = "gated"
    #: not verified on purpose (``skip_verification``, a cheap task's bypass)
    SKIPPED = "skipped"
    #: left out of this session by ``-k``, ``-m`` or node ids
    DESELECTED = "deselected"
    #: selected but never run (the session was interrupted, or is still running)
    NOT_RUN = "not_run"


#: statuses whose score counts in the task's weighted mean
COUNTED = frozenset({Status.PASSED, Status.FAILED, Status.ERROR, Status.GATED})
#: statuses whose score does not count: not verified, left out, never run (JUnit's skipped)
UNCOUNTED = frozenset(Status) - COUNTED
#: counted statuses that did not pass: listed as failing, and they close the judge's gate
FAILING = COUNTED - {Status.PASSED}


def counts_against(status: str, points: int | None, met: bool | None) -> bool:
    """Whether a criterion run counts against its task (listed as failing): failed, error or
    gated, or a penalty applied. A penalty whose behaviour was absent (its check failed) is the
    good outcome and is not listed. Takes the JSON form's fields, so JUnit reads it too."""
    penalty = points is not None and points < 0
    if penalty and status == Status.FAILED:
        return False
    return status in FAILING or bool(penalty and met)


class TaskStatus(StrEnum):
    """What happened to one task run."""

    COMPLETED = "completed"
    #: some criteria deselected: scored on the rest, left out of the run score
    INCOMPLETE = "incomplete"
    CANCELLED = "cancelled"
    RUNNING = "running"
    #: nothing verified (``skip_verification``)
    SKIPPED = "skipped"


class RunStatus(StrEnum):
    """What happened to a benchmark run, or to the session."""

    COMPLETED = "completed"
    CANCELLED = "cancelled"
    RUNNING = "running"


class Result(BaseModel):
    """Base of the result types: unknown fields refused, assignment validated."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_assignment=False)


#: one set of explicitly set field names per distinct set, shared by the runs that have it
_FIELDS_SETS: dict[frozenset[str], set[str]] = {}


def _share_fields_set(model: BaseModel) -> None:
    """Give ``model`` the shared copy of its set of explicitly set field names.

    pydantic keeps that set on every instance (2.3 KB for a criterion run's 28 names, a
    quarter of what a session keeps per criterion: BENCHMARKS.md, "cost at scale"). Nothing
    here reads it: no ``exclude_unset`` dump, no ``model_copy``; equality and the JSON form
    ignore it. A later assignment adds its name to the shared set, which nothing reads either.
    """
    names = model.__pydantic_fields_set__
    shared = _FIELDS_SETS.setdefault(frozenset(names), names)
    object.__setattr__(model, "__pydantic_fields_set__", shared)


def _absent(value: object) -> bool:
    """Left out of the JSON form: a key the check did not write."""
    return value is None


class FieldResult(BaseModel):
    """One expected / actual row of a check's evidence (``field_results``)."""

    model_config = ConfigDict(extra="allow")

    path: str | None = None
    expected: Json = None
    actual: Json = None
    op: str | None = Field(default=None, exclude_if=_absent)
    passed: bool = False
    message: str | None = Field(default=None, exclude_if=_absent)


class Evidence(BaseModel):
    """What a check saw. Rows of fields are typed; each check may add its own keys."""

    model_config = ConfigDict(extra="allow")

    field_results: list[FieldResult] | None = Field(default=None, exclude_if=_absent)
    assertion_results: list[FieldResult] | None = Field(default=None, exclude_if=_absent)
    error: str | None = Field(default=None, exclude_if=_absent)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON types: the rows and every key the check added."""
        return self.model_dump(mode="json", by_alias=True)


class CriterionRun(Result):
    """One criterion scored against one task run's sandbox (Verial's Criterion Run, plus ours)."""

    criterion_id: str
    label: str | None = None
    assertion: str | None = Field(default=None, alias="assert")
    axis: str | None = None
    weight: float = 1.0
    #: our extension: the task scores by points (non-zero; negative for a penalty)
    points: int | None = None
    #: a points criterion that counted: whether it was met (its check passed). For a penalty
    #: (negative points) met means the undesirable behaviour was found and the penalty applied.
    met: bool | None = None
    #: our extension: the task fails when this criterion does not pass
    critical: bool = False
    judge: bool = False
    task_key: str | None = None
    task_id: str | None = None
    entity: str | None = None
    pass_threshold: float | None = None
    passed: bool = False
    score: float | None = None
    status: Status
    details: str | None = None
    evidence: Evidence | None = None
    started_at: str | None = None
    completed_at: str | None = None
    duration: float | None = None
    #: the criterion's line in its benchmark file
    line: int | None = None
    #: where the run sits: pytest node ids, the benchmark file and the run folder's label
    nodeid: str | None = None
    task_run: str | None = None
    file: str | None = None
    benchmark: str | None = None
    run: str | None = None
    #: pytest's outcome of the item (passed, failed, skipped)
    outcome: str | None = None

    @model_validator(mode="after")
    def _met(self) -> CriterionRun:
        """``met`` follows from the status: a counted points criterion is met when it passed
        (error and gated: not met); skipped, deselected and not run: None (not counted)."""
        counted = self.points is not None and self.status in COUNTED
        self.met = self.passed if counted else None
        _share_fields_set(self)
        return self

    @property
    def penalty_applied(self) -> bool:
        """A penalty criterion (negative points) that was met."""
        return bool(self.met) and (self.points or 0) < 0

    @property
    def against(self) -> bool:
        """Whether this run counts against its task (:func:`counts_against`)."""
        return counts_against(self.status, self.points, self.met)

    # -- constructors, one per case ---------------------------------------------------------
    @classmethod
    def scored(
        cls, identity: Mapping[str, Any], score: float, passed: bool, **result: Any
    ) -> CriterionRun:
        """A check ran: its score in [0, 1] and whether it reached its threshold."""
        status = Status.PASSED if passed else Status.FAILED
        return cls(**identity, score=clamp(score), passed=passed, status=status, **result)

    @classmethod
    def errored(cls, identity: Mapping[str, Any], details: str, **result: Any) -> CriterionRun:
        """The criterion could not be scored: score 0, counted in the task's mean."""
        result.setdefault("evidence", {})
        return cls(
            **identity, score=0.0, passed=False, status=Status.ERROR, details=details, **result
        )

    @classmethod
    def gated(cls, identity: Mapping[str, Any], details: str, **result: Any) -> CriterionRun:
        """A judge criterion not asked: a deterministic criterion of its task failed."""
        return cls(
            **identity, score=0.0, passed=False, status=Status.GATED, details=details, **result
        )

    @classmethod
    def skipped(cls, identity: Mapping[str, Any], details: str, **result: Any) -> CriterionRun:
        """Not verified on purpose; left out of the task's mean."""
        return cls(
            **identity, score=0.0, passed=False, status=Status.SKIPPED, details=details, **result
        )

    @classmethod
    def deselected(cls, identity: Mapping[str, Any]) -> CriterionRun:
        """Left out of the session (``-k``, ``-m``, node ids)."""
        return cls(**identity, status=Status.DESELECTED)

    @classmethod
    def not_run(cls, identity: Mapping[str, Any]) -> CriterionRun:
        """Selected and never run (interrupted, crashed or still running)."""
        return cls(**identity, status=Status.NOT_RUN)

    # -- the one JSON form --------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """Plain JSON types, with the report's key names (``assert``)."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CriterionRun:
        """Back from :meth:`to_json` (xdist, a journal, a saved report)."""
        return cls.model_validate(data)

    def __getitem__(self, key: str) -> Any:
        """A field by its report key (``run["assert"]``), as in the JSON form."""
        return self.to_json()[key]

    @property
    def counted(self) -> bool:
        """Whether the score counts in the task's weighted mean."""
        return self.status in COUNTED

    @property
    def critical_failure(self) -> bool:
        """A critical criterion that ran (or should have) and did not pass."""
        return self.critical and self.status in COUNTED and not self.passed


class AxisScore(Result):
    """One axis of a task run or a benchmark run. On a task scored by points, ``weight`` is the
    axis's Σ positive points and the two point sums are given."""

    score: float
    weight: float
    points_earned: int | None = Field(default=None, exclude_if=_absent)
    points_possible: int | None = Field(default=None, exclude_if=_absent)


class TaskCounts(Result):
    """Criterion runs of a task run by status."""

    passed: int = 0
    failed: int = 0
    error: int = 0
    gated: int = 0
    skipped: int = 0
    deselected: int = 0
    not_run: int = 0


class TaskRun(Result):
    """One task scored on one run folder: Verial's Task Run, plus our facts."""

    id: str
    task_id: str
    task_key: str
    entity: str | None = None
    name: str | None = None
    benchmark: str | None = None
    file: str | None = None
    run: str
    status: TaskStatus
    verdict: Verdict | None = None
    score: float | None = None
    pass_threshold: float
    axes: dict[str, AxisScore] = Field(default_factory=dict)
    #: every criterion passed (the strict success healthcare benchmarks publish)
    all_passed: bool | None = None
    #: critical criteria that did not pass: the verdict is ``fail`` whatever the score
    critical_failed: list[str] = Field(default_factory=list)
    #: a task scored by points: Σ points of the met criteria, Σ positive points, and the
    #: penalty criteria (negative points) that were met; None / empty for a weighted task
    points_earned: int | None = None
    points_possible: int | None = None
    penalties_applied: list[str] = Field(default_factory=list)
    counts: TaskCounts = Field(default_factory=TaskCounts)
    snapshot: dict[str, Json] | None = None
    feedback: str | None = None
    criterion_runs: list[CriterionRun] = Field(default_factory=list)

    @classmethod
    def aggregate(
        cls,
        criterion_runs: Sequence[CriterionRun],
        pass_threshold: float,
        running: bool = False,
        **identity: Any,
    ) -> TaskRun:
        """The task run from its criterion runs (the only place a task is scored).

        Score: the weighted mean of the counted criterion runs. Verdict: ``pass`` at or above
        the threshold, ``fail`` at 0, with no criteria, or when a critical criterion did not
        pass, else ``partial``. A task run with deselected criteria is ``incomplete`` (the
        score of the rest, no verdict, left out of the run score); one with criteria never run
        is ``cancelled``
        (or ``running`` while the session lives); one with every criterion skipped is
        ``skipped``, with no score.
        """
        statuses = {c.status for c in criterion_runs}
        if Status.DESELECTED in statuses:
            status = TaskStatus.INCOMPLETE
        elif Status.NOT_RUN in statuses:
            status = TaskStatus.RUNNING if running else TaskStatus.CANCELLED
        elif statuses == {Status.SKIPPED}:
            status = TaskStatus.SKIPPED
        else:
            status = TaskStatus.COMPLETED
        counted = [c for c in criterion_runs if c.counted]
        items = [Scored(float(c.score or 0.0), c.weight, c.axis) for c in counted]
        has_scores = status in (TaskStatus.COMPLETED, TaskStatus.INCOMPLETE)
        score = task_score(items) if has_scores else None
        axes = (
            {
                k: AxisScore(score=v["score"], weight=v["weight"])
                for k, v in axis_scores(items).items()
            }
            if has_scores
            else {}
        )
        by_points: dict[str, Any] = {}
        if any(c.points is not None for c in criterion_runs):
            pointed = [Pointed(c.points or 0, bool(c.met), c.axis) for c in counted]
            tally = points_score(pointed)
            by_points = {
                "points_earned": tally.earned,
                "points_possible": tally.possible,
                "penalties_applied": [c.criterion_id for c in counted if c.penalty_applied],
            }
            if has_scores:
                score = tally.score
                axes = {
                    name: AxisScore(
                        score=t.score,
                        weight=float(t.possible),
                        points_earned=t.earned,
                        points_possible=t.possible,
                    )
                    for name, t in points_axes(pointed).items()
                }
        critical = [c.criterion_id for c in criterion_runs if c.critical_failure]
        task_verdict: Verdict | None = None
        # an incomplete task run (criteria deselected by -k or -m) has the score of the
        # criteria it ran but no verdict: it is not scored as a task, and no surface may show
        # it as passed (or failed) on a part of its criteria
        if score is not None and status is TaskStatus.COMPLETED:
            task_verdict = "fail" if critical else verdict(score, pass_threshold, bool(items))
        counts = TaskCounts.model_validate(
            {s.value: sum(1 for c in criterion_runs if c.status is s) for s in Status}
        )
        return cls(
            **identity,
            status=status,
            verdict=task_verdict,
            score=score,
            pass_threshold=pass_threshold,
            axes=axes,
            # every criterion that counts passed (a bypassed judge criterion does not count);
            # by points: every positive criterion met and no penalty applied
            all_passed=bool(counted) and not any(c.against for c in counted)
            if has_scores
            else None,
            critical_failed=critical,
            **by_points,
            counts=counts,
            criterion_runs=list(criterion_runs),
        )

    def rescored(self, **extra: Any) -> TaskRun:
        """This task run scored again from its criterion runs, no longer running (shards
        merged, a run cancelled), with what names it (:data:`TASK_IDENTITY`) and ``extra``."""
        identity = self.model_dump(include=set(TASK_IDENTITY))
        return TaskRun.aggregate(self.criterion_runs, self.pass_threshold, **identity, **extra)


#: the fields of a task run that name it, not score it
TASK_IDENTITY = frozenset(
    {"id", "task_id", "task_key", "entity", "name", "benchmark", "file", "run", "snapshot"}
)


class InlineTaskRun(TaskRun):
    """What :func:`pytest_verial.verify_task` returns: a task run plus its verification
    summary (judge calls and cost), which the pytest report keeps in ``session``."""

    verification: dict[str, Json] = Field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types (the report's form of a task run)."""
        return self.model_dump(mode="json", by_alias=True)


class BenchmarkInfo(Result):
    """The benchmark a benchmark run scored."""

    slug: str
    version: int | str | None = None
    name: str | None = None
    ref: str
    file: str
    pass_threshold: float | None = None
    #: SHA-256 of the benchmark file's text when it was scored (merge and resume compare it)
    sha256: str | None = Field(default=None, exclude_if=_absent)


class RunInfo(Result):
    """One run folder (an agent's rollout) and what its run.yaml says."""

    label: str
    path: str
    id: str | None = None
    agent: str | None = None
    executor_model: str | None = None
    scored: bool = False


class Verdicts(Result):
    """Completed task runs by verdict."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    pass_: int = Field(default=0, alias="pass")
    partial: int = 0
    fail: int = 0


class RunCounts(Result):
    """Task runs and criterion runs of a benchmark run (or the session) by status."""

    task_runs: int = 0
    completed: int = 0
    incomplete: int = 0
    cancelled: int = 0
    running: int = 0
    skipped: int = 0
    verdicts: Verdicts = Field(default_factory=Verdicts)
    criteria: int = 0
    criteria_passed: int = 0
    criteria_failed: int = 0
    criteria_error: int = 0
    criteria_gated: int = 0
    criteria_skipped: int = 0
    criteria_deselected: int = 0
    criteria_not_run: int = 0

    @classmethod
    def of(cls, task_runs: Sequence[TaskRun]) -> RunCounts:
        """Count task runs by status and verdict, criterion runs by status."""
        completed = [t for t in task_runs if t.status is TaskStatus.COMPLETED]
        criteria = [c for t in task_runs for c in t.criterion_runs]
        return cls.model_validate(
            {
                "task_runs": len(task_runs),
                **{s.value: sum(1 for t in task_runs if t.status is s) for s in TaskStatus},
                "completed": len(completed),
                "verdicts": {v: sum(1 for t in completed if t.verdict == v) for v in VERDICTS},
                "criteria": len(criteria),
                **{
                    f"criteria_{s.value}": sum(1 for c in criteria if c.status is s) for s in Status
                },
            }
        )


class TaskTrials(Result):
    """k trials of one task: mean, pass^k and a 95 % interval of the mean."""

    task_key: str
    k: int
    mean: float
    pass_k: bool
    pass_rate: float
    ci95: tuple[float, float]
    runs: list[str]


class RunTrials(Result):
    """k trials of a whole benchmark run: the run score per trial, its mean and interval."""

    k: int
    scores: list[float]
    mean: float
    pass_k: bool
    pass_rate: float
    ci95: tuple[float, float]
    runs: list[str]
    tasks: list[TaskTrials] = Field(default_factory=list)


class BenchmarkRun(Result):
    """One benchmark scored on one agent's run folder (or on k trials of one agent)."""

    id: str
    benchmark: BenchmarkInfo
    runs: list[RunInfo]
    status: RunStatus
    scored: bool = False
    score: float | None = None
    verdict: Verdict | None = None
    pass_threshold: float
    axes: dict[str, AxisScore] = Field(default_factory=dict)
    #: share of completed task runs with every criterion passed
    strict_success: float | None = None
    counts: RunCounts = Field(default_factory=RunCounts)
    trials: RunTrials | None = None
    task_runs: list[TaskRun] = Field(default_factory=list)

    @classmethod
    def aggregate(
        cls,
        task_runs: Sequence[TaskRun],
        pass_threshold: float,
        running: bool,
        interrupted: bool,
        **identity: Any,
    ) -> BenchmarkRun:
        """The benchmark run from its task runs (the only place a run is scored).

        Score: the unweighted mean of the completed task runs' scores. Axes: per axis, the
        mean of the completed task runs that have it. With several run folders (trials), the
        run score per trial with its mean, pass^k and 95 % interval.
        """
        completed = [
            t for t in task_runs if t.status is TaskStatus.COMPLETED and t.score is not None
        ]
        score = run_score(t.score for t in completed if t.score is not None) if completed else None
        status = (
            RunStatus.RUNNING
            if running
            else RunStatus.CANCELLED
            if interrupted or any(t.status is TaskStatus.CANCELLED for t in task_runs)
            else RunStatus.COMPLETED
        )
        by_axis: dict[str, list[float]] = {}
        for t in completed:
            for name, axis in t.axes.items():
                by_axis.setdefault(name, []).append(axis.score)
        axes = {
            name: AxisScore(score=run_score(scores), weight=float(len(scores)))
            for name, scores in by_axis.items()
        }
        runs: list[RunInfo] = identity["runs"]
        return cls(
            **identity,
            status=status,
            score=score,
            verdict=verdict(score, pass_threshold, True) if score is not None else None,
            pass_threshold=pass_threshold,
            axes=axes,
            strict_success=(
                sum(1 for t in completed if t.all_passed) / len(completed) if completed else None
            ),
            counts=RunCounts.of(task_runs),
            trials=_trials(completed, [r.label for r in runs], pass_threshold)
            if len(runs) > 1
            else None,
            task_runs=list(task_runs),
        )

    def rescored(
        self,
        task_runs: Sequence[TaskRun] | None = None,
        *,
        running: bool = False,
        interrupted: bool = False,
    ) -> BenchmarkRun:
        """This benchmark run scored again from ``task_runs`` (default: its own), with what
        names it (:data:`BENCHMARK_IDENTITY`): shards merged, a task run stored or cancelled."""
        identity = {name: getattr(self, name) for name in BENCHMARK_IDENTITY}
        return BenchmarkRun.aggregate(
            self.task_runs if task_runs is None else task_runs,
            self.pass_threshold,
            running=running,
            interrupted=interrupted,
            **identity,
        )


#: the fields of a benchmark run that name it, not score it
BENCHMARK_IDENTITY = frozenset({"id", "benchmark", "runs", "scored"})


def _trials(completed: Sequence[TaskRun], labels: list[str], threshold: float) -> RunTrials:
    """Trial statistics of the benchmark run and of each task."""
    tasks: dict[str, list[TaskRun]] = {}
    for t in completed:
        tasks.setdefault(t.task_key, []).append(t)
    per_task = []
    for key, runs in tasks.items():
        stats = trial_stats([float(r.score or 0) for r in runs], [r.verdict or "" for r in runs])
        per_task.append(
            TaskTrials(
                task_key=key,
                k=stats.k,
                mean=stats.mean,
                pass_k=stats.pass_all,
                pass_rate=stats.pass_rate,
                ci95=(stats.ci_low, stats.ci_high),
                runs=[r.run for r in runs],
            )
        )
    per_run = {
        label: [float(t.score or 0) for t in completed if t.run == label] for label in labels
    }
    scores = [run_score(s) for s in per_run.values() if s]
    verdicts = [verdict(s, threshold, True) for s in scores]
    stats = trial_stats(scores, verdicts)
    return RunTrials(
        k=stats.k,
        scores=scores,
        mean=stats.mean,
        pass_k=stats.pass_all,
        pass_rate=stats.pass_rate,
        ci95=(stats.ci_low, stats.ci_high),
        runs=[label for label, s in per_run.items() if s],
        tasks=per_task,
    )


class CollectionError(Result):
    """A benchmark file (or test module) that could not be collected."""

    nodeid: str
    message: str


class Generator(Result):
    """The tool that wrote the report."""

    name: str
    version: str


class Session(Result):
    """The pytest session: one per report, holding one or more benchmark runs."""

    status: RunStatus
    phase: Literal["started", "completed"]
    scored: bool = False
    started_at: str
    completed_at: str | None = None
    duration: float
    exit_status: int | None = None
    counts: RunCounts = Field(default_factory=RunCounts)
    collection_errors: list[CollectionError] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    #: the judge's calls and cost (PRD-103), when the judge extension is active
    verification: dict[str, Json] | None = None
    #: set by ``verial report --recover``: where the report was rebuilt from
    recovered: dict[str, Json] | None = None
    #: set by ``--verial-shard`` (K, N, its task runs and all of them) and ``verial merge``
    shard: dict[str, Json] | None = None
    #: set by ``--verial-resume``: the report it resumed and how many criterion runs it kept
    resumed: dict[str, Json] | None = None


class Integrity(Result):
    """The seal of a written report (:mod:`pytest_verial.reporting._seal`): the digest of the
    file's bytes before this member, ``sha256:<hex>`` or, with ``VERIAL_SIGNING_KEY`` set,
    ``hmac-sha256:<hex>``. Written last by the writer; never part of what it digests."""

    digest: str


class Report(Result):
    """The JSON report (``--verial-report``)."""

    schema_: str = Field(default=SCHEMA_ID, alias="schema")
    generator: Generator
    session: Session
    benchmark_runs: list[BenchmarkRun] = Field(default_factory=list)
    #: what ``pytest_verial_report`` hooks add (any JSON, by the hook's own key)
    extensions: dict[str, Json] = Field(default_factory=dict)
    #: set when read from a file: the seal it carried (the writer writes a new one)
    integrity: Integrity | None = Field(default=None, exclude_if=_absent)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON types, with the report's key names."""
        return self.model_dump(mode="json", by_alias=True)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Report:
        """A report read back (compare, merge, resume, show)."""
        return cls.model_validate(data)

    def task_runs(self) -> Iterable[TaskRun]:
        """Every task run of every benchmark run."""
        for run in self.benchmark_runs:
            yield from run.task_runs


def report_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the report, generated from :class:`Report`."""
    schema = Report.model_json_schema(by_alias=True, mode="serialization")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = SCHEMA_ID
    return schema


__all__ = [
    "COUNTED",
    "DEFAULT_AXIS",
    "DEFAULT_VERDICT_THRESHOLD",
    "FAILING",
    "UNCOUNTED",
    "BenchmarkRun",
    "CriterionRun",
    "Evidence",
    "FieldResult",
    "Integrity",
    "Report",
    "RunStatus",
    "Session",
    "Status",
    "TaskRun",
    "TaskStatus",
    "report_schema",
]
