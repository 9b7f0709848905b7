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

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final, Literal, Protocol, cast, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    SerializeAsAny,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema
from pydantic_core import core_schema as core_schema_of

from ._evidence import (
    REPORT_V2,
    REPORT_V3,
    AnyEvidence,
    Evidence,
    FieldResult,
    evidence_schema_rules,
    parse_evidence,
    report_from_v2,
)
from ._record import COUNTED, FAILING, UNCOUNTED, CriterionRecord, Status, counts_against
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

SCHEMA_ID: Final = REPORT_V3
#: the schema ids a reader accepts: v3, and v2 (the keys before Verial's table), converted on
#: read by :func:`._evidence.evidence_from_v2`
SCHEMA_IDS = (REPORT_V2, SCHEMA_ID)


def unknown_schema(schema: object) -> str:
    """Why a report with this schema id cannot be read (one line)."""
    return (
        f"schema {schema!r} is not one this version reads ({' or '.join(SCHEMA_IDS)}): "
        "read it with the version that wrote it"
    )


#: Any JSON value. Values reach these types already as strict JSON (the engine makes evidence
#: strict, the reader parses JSON), and pydantic's Json validates every nested value in
#: Python: a third of the per-criterion cost. Its schema is the same ({}: any value).
Json = Any


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

    model_config = ConfigDict(
        extra="forbid", populate_by_name=True, validate_assignment=False, defer_build=True
    )


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
    #: why the verifier could not evaluate this criterion (its judge absent, unreachable, slow
    #: or unparseable): status ``error``, left out of the task's mean, never the agent's failure
    not_evaluated: str | None = None
    details: str | None = None
    #: what the check saw, in the keys of its ``assert`` (:mod:`pytest_verial._evidence`): the
    #: model of its check type, serialized as that model; the schema names the union
    evidence: SerializeAsAny[Evidence] | None = None
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

    @field_validator("evidence", mode="before")
    @classmethod
    def _evidence(cls, value: object, info: ValidationInfo) -> Evidence | None:
        """The evidence as the model of this criterion's ``assert`` (``EVIDENCE_MODELS``)."""
        return parse_evidence(info.data.get("assertion"), value)

    @model_validator(mode="after")
    def _met(self) -> CriterionRun:
        """``met`` follows from the status: a counted points criterion is met when it passed
        (error and gated: not met); skipped, deselected, not run and not evaluated: None (not
        counted)."""
        self.met = self.passed if self.points is not None and self.counted else None
        _share_fields_set(self)
        return self

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        """``evidence`` as the union of the check types' models (:data:`AnyEvidence`), and a
        rule per built-in ``assert`` naming its own: the report's schema and the service's
        OpenAPI both say which evidence goes with which check. (At run time the field is the
        base :class:`Evidence`, each value its own model: a union costs twice as much.)"""
        schema = handler(core_schema)
        target = handler.resolve_ref_schema(schema)
        models = get_args(AnyEvidence)
        choices: list[CoreSchema | tuple[CoreSchema, str]] = []
        for model in models:
            core = model.__pydantic_core_schema__
            if "ref" not in core:  # a model used nowhere else: give it a definition of its own
                core = {**core, "ref": f"{model.__module__}.{model.__qualname__}:{id(model)}"}
            choices.append(cast(CoreSchema, core))
        union = handler(core_schema_of.nullable_schema(core_schema_of.union_schema(choices)))
        members = union["anyOf"][: len(models)]
        refs = dict(zip(models, members, strict=True))
        if not all("$ref" in r for r in refs.values()):
            raise RuntimeError("evidence models must be $refs in the report's schema")
        evidence = target["properties"]["evidence"]
        target["properties"]["evidence"] = {
            **{k: v for k, v in evidence.items() if k not in ("anyOf", "$ref")},
            **union,
        }
        target["allOf"] = evidence_schema_rules(refs)
        return schema

    @property
    def penalty_applied(self) -> bool:
        """A penalty criterion (negative points) that was met."""
        return bool(self.met) and (self.points or 0) < 0

    @property
    def against(self) -> bool:
        """Whether this run counts against its task (:func:`counts_against`)."""
        return counts_against(self.status, self.points, self.met, self.not_evaluated)

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
    def unverified(
        cls, identity: Mapping[str, Any], reason: str, details: str, **result: Any
    ) -> CriterionRun:
        """The verifier could not evaluate the criterion (``reason``: its judge not configured,
        unreachable, timed out, answered unparseably): an error left out of the task's mean,
        which neither fails nor passes the agent."""
        result.setdefault("evidence", {})
        return cls(
            **identity,
            score=None,
            passed=False,
            status=Status.ERROR,
            not_evaluated=reason,
            details=details,
            **result,
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

    @classmethod
    def of(cls, run: CriterionRun | CriterionRecord) -> CriterionRun:
        """The typed run of a plain record (the engine's), validated; a typed run as it is."""
        return run if isinstance(run, CriterionRun) else cls.from_json(run.to_json())

    def __getitem__(self, key: str) -> Any:
        """A field by its report key (``run["assert"]``), as in the JSON form."""
        return self.to_json()[key]

    @property
    def counted(self) -> bool:
        """Whether the score counts in the task's weighted mean (a criterion the verifier
        could not evaluate does not)."""
        return self.status in COUNTED and self.not_evaluated is None

    @property
    def critical_failure(self) -> bool:
        """A critical criterion that ran (or should have) and did not pass."""
        return self.critical and self.counted and not self.passed


class AxisScore(Result):
    """One axis of a task run or a benchmark run. On a task scored by points, ``weight`` is the
    axis's Σ positive points and the two point sums are given."""

    score: float
    weight: float
    points_earned: int | None = Field(default=None, exclude_if=_absent)
    points_possible: int | None = Field(default=None, exclude_if=_absent)


class TaskCounts(Result):
    """Criterion runs of a task run by status (``not_evaluated``: the errors among them that
    the verifier could not evaluate)."""

    passed: int = 0
    failed: int = 0
    error: int = 0
    gated: int = 0
    skipped: int = 0
    deselected: int = 0
    not_run: int = 0
    not_evaluated: int = 0


class NotEvaluated(Result):
    """A criterion the verifier could not evaluate, and why (no URL, path, key or advice)."""

    criterion_id: str
    reason: str


#: ``complete``: every criterion that counts was evaluated; ``incomplete``: some could not be
#: (their judge absent, unreachable, slow or unparseable), so the verdict may be unknown
Verification = Literal["complete", "incomplete"]


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
    #: whether every criterion that counts was evaluated; with ``incomplete`` the verdict is
    #: null unless the criteria evaluated already decide it (README, "Could not verify")
    verification: Verification = "complete"
    #: the criteria the verifier could not evaluate, and why
    not_evaluated: list[NotEvaluated] = Field(default_factory=list)
    #: how sure the verdict is: the lowest confidence a judge reported (1.0 for checks alone),
    #: times the share of the weight that was evaluated; None with nothing scored
    confidence: float | None = None
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

    @model_validator(mode="after")
    def _confidence(self) -> TaskRun:
        """A task run read from a report that predates ``confidence`` gets it from its runs."""
        if "confidence" not in self.model_fields_set:
            self.confidence = task_confidence(self.criterion_runs, self.status)
        return self

    @classmethod
    def aggregate(
        cls,
        criterion_runs: Sequence[CriterionRun | CriterionRecord],
        pass_threshold: float,
        running: bool = False,
        kept: Sequence[CriterionRun] | None = None,
        **identity: Any,
    ) -> TaskRun:
        """The task run from its criterion runs: its figures are :func:`task_figures`' (the
        one place a task is scored, which the report's readers run too).

        ``criterion_runs`` may be plain records (the session's, :mod:`._record`): every figure
        reads only what a record holds too. The task run keeps ``kept`` as its criterion runs
        (default: all of them, typed): a light report's task run keeps the ones its summary
        lists and is scored on all (``reporting._build._task_run``), so no typed run is built
        for the others.

        Score: the weighted mean of the counted criterion runs. Verdict: ``pass`` at or above
        the threshold, ``fail`` at 0, with no criteria, or when a critical criterion did not
        pass, else ``partial``. A task run with deselected criteria is ``incomplete`` (the
        score of the rest, no verdict, left out of the run score); one with criteria never run
        is ``cancelled``
        (or ``running`` while the session lives); one with every criterion skipped is
        ``skipped``, with no score.

        Criteria the verifier could not evaluate leave the mean; the task run's
        ``verification`` is then ``incomplete`` and its verdict is the one the evaluated
        criteria force whatever the others would score (:func:`forced_verdict`), else null.
        """
        figures = task_figures(criterion_runs, pass_threshold, running)
        by_points: dict[str, Any] = (
            {
                "points_earned": figures.points_earned,
                "points_possible": figures.points_possible,
                "penalties_applied": figures.penalties_applied,
            }
            if figures.by_points
            else {}
        )
        unverified = [c for c in criterion_runs if c.not_evaluated is not None]
        return cls(
            **identity,
            status=figures.status,
            verdict=figures.verdict,
            score=figures.score,
            pass_threshold=pass_threshold,
            verification="incomplete" if unverified else "complete",
            not_evaluated=[
                NotEvaluated(criterion_id=c.criterion_id, reason=c.not_evaluated or "")
                for c in unverified
            ],
            confidence=task_confidence(criterion_runs, figures.status),
            axes={name: _axis_score(axis) for name, axis in figures.axes.items()},
            all_passed=figures.all_passed,
            critical_failed=figures.critical_failed,
            **by_points,
            counts=TaskCounts.model_validate(figures.counts),
            criterion_runs=(
                [CriterionRun.of(c) for c in criterion_runs] if kept is None else list(kept)
            ),
        )

    def rescored(self, **extra: Any) -> TaskRun:
        """This task run scored again from its criterion runs, no longer running (shards
        merged, a run cancelled), with what names it (:data:`TASK_IDENTITY`) and ``extra``."""
        identity = self.model_dump(include=set(TASK_IDENTITY))
        return TaskRun.aggregate(self.criterion_runs, self.pass_threshold, **identity, **extra)


class CriterionRow(Protocol):
    """What scoring reads of a criterion run: a :class:`CriterionRun`, or a reader's lighter
    view of one (``reporting._score_views.CriterionScore``)."""

    @property
    def criterion_id(self) -> str: ...
    @property
    def status(self) -> Status: ...
    @property
    def passed(self) -> bool: ...
    @property
    def score(self) -> float | None: ...
    @property
    def weight(self) -> float: ...
    @property
    def axis(self) -> str | None: ...
    @property
    def points(self) -> int | None: ...
    @property
    def critical(self) -> bool: ...
    @property
    def not_evaluated(self) -> str | None: ...
    @property
    def counted(self) -> bool: ...


#: an axis of a task or benchmark run: score, weight, points earned, points possible
Axis = tuple[float, float, int | None, int | None]


@dataclass
class TaskFigures:
    """What a task run's criterion runs give (:func:`task_figures`)."""

    status: TaskStatus
    score: float | None
    verdict: Verdict | None
    axes: dict[str, Axis]
    all_passed: bool | None
    critical_failed: list[str]
    #: scored by points: some criterion has points (the three below are then its figures)
    by_points: bool
    points_earned: int | None
    points_possible: int | None
    penalties_applied: list[str]
    counts: dict[str, int]
    statuses: list[Status] = field(default_factory=list)
    #: every figure in the form a report writes it (``reporting._agreement``)
    key: tuple[Any, ...] | None = None


def _met(c: CriterionRow) -> bool:
    """A counted points criterion is met when it passed (CriterionRun's ``met``)."""
    return c.passed if c.points is not None and c.counted else False


def task_status(statuses: AbstractSet[Status], running: bool) -> TaskStatus:
    """A task run's status from its criterion runs' statuses: ``incomplete`` with criteria
    deselected, ``cancelled`` (``running`` while the session lives) with criteria never run,
    ``skipped`` when every criterion was, else ``completed``."""
    if Status.DESELECTED in statuses:
        return TaskStatus.INCOMPLETE
    if Status.NOT_RUN in statuses:
        return TaskStatus.RUNNING if running else TaskStatus.CANCELLED
    if statuses == {Status.SKIPPED}:
        return TaskStatus.SKIPPED
    return TaskStatus.COMPLETED


def task_figures(
    criteria: Sequence[CriterionRow], threshold: float, running: bool = False
) -> TaskFigures:
    """A task run's figures from its criterion runs: the only place a task is scored, for
    the writer (:meth:`TaskRun.aggregate`) and every reader (``reporting._agreement``).

    Score: the weighted mean of the counted criterion runs (by points: earned / possible).
    Verdict: ``pass`` at or above the threshold, ``fail`` at 0, with no criteria, or when a
    critical criterion did not pass, else ``partial``; none unless the task run completed (an
    incomplete one has the score of the criteria it ran but no verdict: no surface may show it
    passed or failed on a part of its criteria). Criteria the verifier could not evaluate leave
    the mean; the verdict is then the one the evaluated criteria force (:func:`forced_verdict`),
    else null.
    """
    status = task_status({c.status for c in criteria}, running)
    counted = [c for c in criteria if c.counted]
    unverified = [c for c in criteria if c.not_evaluated is not None]
    items = [Scored(float(c.score or 0.0), c.weight, c.axis) for c in counted]
    # nothing evaluated and something that could not be: no score to give
    has_scores = status in (TaskStatus.COMPLETED, TaskStatus.INCOMPLETE) and (
        bool(counted) or not unverified
    )
    score = task_score(items) if has_scores else None
    axes: dict[str, Axis] = (
        {k: (v["score"], v["weight"], None, None) for k, v in axis_scores(items).items()}
        if has_scores
        else {}
    )
    by_points = any(c.points is not None for c in criteria)
    pointed = [Pointed(c.points or 0, _met(c), c.axis) for c in counted] if by_points else []
    tally = points_score(pointed) if by_points else None
    if tally is not None and has_scores:
        score = tally.score
        axes = {
            name: (t.score, float(t.possible), t.earned, t.possible)
            for name, t in points_axes(pointed).items()
        }
    critical = [c.criterion_id for c in criteria if c.critical and c.counted and not c.passed]
    task_verdict: Verdict | None = None
    if score is not None and status is TaskStatus.COMPLETED:
        task_verdict = "fail" if critical else verdict(score, threshold, bool(items))
        if unverified and not critical:
            evaluated = pointed if by_points else items
            task_verdict = forced_verdict(evaluated, unverified, threshold)
    against = any(counts_against(c.status, c.points, _met(c)) for c in counted)
    tally_of = Counter(c.status for c in criteria)
    return TaskFigures(
        status=status,
        score=score,
        verdict=task_verdict,
        axes=axes,
        # every criterion that counts passed (a bypassed judge criterion does not count); by
        # points: every positive criterion met and no penalty applied; unknown while a
        # criterion could not be evaluated and none of the others failed
        all_passed=(
            None
            if not has_scores or (unverified and not against)
            else bool(counted) and not against
        ),
        critical_failed=critical,
        by_points=by_points,
        points_earned=tally.earned if tally is not None else None,
        points_possible=tally.possible if tally is not None else None,
        penalties_applied=[c.criterion_id for c in counted if _met(c) and (c.points or 0) < 0],
        counts={
            **{s.value: tally_of.get(s, 0) for s in Status},
            "not_evaluated": len(unverified),
        },
        statuses=[c.status for c in criteria],
    )


def _axis_score(axis: Axis) -> AxisScore:
    """An axis of :func:`task_figures` as the report writes it (point sums by points only)."""
    score, weight, earned, possible = axis
    if earned is None:
        return AxisScore(score=score, weight=weight)
    return AxisScore(score=score, weight=weight, points_earned=earned, points_possible=possible)


def _weight(run: CriterionRow) -> float:
    """A criterion's share of its task: its weight, or the size of its points."""
    return float(abs(run.points)) if run.points is not None else run.weight


def task_confidence(
    runs: Sequence[CriterionRun | CriterionRecord], status: TaskStatus
) -> float | None:
    """How sure a task run's verdict is: :func:`confidence_of` with the ``confidence`` each
    counted judge criterion's evidence reports."""
    reported = [reported_confidence(c.evidence) for c in runs if c.counted and c.judge]
    return confidence_of(runs, reported, status)


def reported_confidence(evidence: object) -> object:
    """The ``confidence`` a judge criterion's evidence reports: its model's attribute, or the
    key of its JSON form (a plain record's evidence), which holds the same value (a key the
    check did not write is absent from both: None, or the model's unset marker, is no
    number and is left out by :func:`confidence_of`)."""
    if isinstance(evidence, dict):
        return evidence.get("confidence")
    return getattr(evidence, "confidence", None)


def confidence_of(
    runs: Sequence[CriterionRow], reported: Iterable[object], status: TaskStatus
) -> float | None:
    """How sure a task run's verdict is: the lowest confidence its evaluated judge criteria
    ``reported`` (1.0 when only checks counted: a check is certain), times the share of the
    counting weight that was evaluated; None when the task run was not scored. A reported
    value that is not a number is left out."""
    counted = [c for c in runs if c.counted]
    unverified = [c for c in runs if c.not_evaluated is not None]
    values = [
        clamp(float(v)) for v in reported if isinstance(v, int | float) and not isinstance(v, bool)
    ]
    if values:
        base = min(values)
    elif status is TaskStatus.COMPLETED:
        base = 1.0
    else:
        return None
    total = sum(_weight(c) for c in (*counted, *unverified))
    missing = sum(_weight(c) for c in unverified)
    return clamp(base * (1.0 - missing / total)) if total > 0 else base


def forced_verdict(
    evaluated: Sequence[Scored] | Sequence[Pointed],
    unverified: Sequence[CriterionRow],
    threshold: float,
) -> Verdict | None:
    """The verdict a task run has whatever its criteria not evaluated would score, or None.

    The worst case scores each of them 0 (a penalty applied, a critical one failed), the best
    case 1 (a penalty not applied); when both give the same verdict the evaluated criteria
    decide it (a failed critical criterion is handled by the caller: ``fail``)."""
    if any(c.points is not None for c in unverified):  # a task scored by points
        pointed = [i for i in evaluated if isinstance(i, Pointed)]
        worst = points_score(
            pointed + [Pointed(c.points or 0, (c.points or 0) < 0, c.axis) for c in unverified]
        ).score
        best = points_score(
            pointed + [Pointed(c.points or 0, (c.points or 0) > 0, c.axis) for c in unverified]
        ).score
    else:
        scored = [i for i in evaluated if isinstance(i, Scored)]
        worst = task_score(scored + [Scored(0.0, c.weight, c.axis) for c in unverified])
        best = task_score(scored + [Scored(1.0, c.weight, c.axis) for c in unverified])
    low = "fail" if any(c.critical for c in unverified) else verdict(worst, threshold, True)
    high = verdict(best, threshold, True)
    return low if low == high else None


#: the fields of a task run that name it, not score it
TASK_IDENTITY = frozenset(
    {"id", "task_id", "task_key", "entity", "name", "benchmark", "file", "run", "snapshot"}
)


class InlineTaskRun(TaskRun):
    """What :func:`pytest_verial.verify_task` returns: a task run plus its verification
    summary (judge calls and cost), which the pytest report keeps in ``session.verification``."""

    verification_summary: dict[str, Json] = Field(default_factory=dict)

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
    #: completed task runs whose verification is incomplete (left out of the run score)
    unverified: int = 0
    verdicts: Verdicts = Field(default_factory=Verdicts)
    criteria: int = 0
    criteria_passed: int = 0
    criteria_failed: int = 0
    criteria_error: int = 0
    criteria_gated: int = 0
    criteria_skipped: int = 0
    criteria_deselected: int = 0
    criteria_not_run: int = 0
    #: criterion runs the verifier could not evaluate (counted among ``criteria_error`` too)
    criteria_not_evaluated: int = 0

    @classmethod
    def of(cls, task_runs: Sequence[TaskRun], light: bool = False) -> RunCounts:
        """Count task runs by status and verdict, criterion runs by status (one pass over
        the criterion runs: the store counts a running session's at every batch).

        ``light``: the task runs keep only some of their criterion runs (the session's end
        streams the report: ``reporting._build.LightReport``); their criterion runs are
        counted from each task run's ``counts``, which :func:`task_figures` made from all of
        them (the same numbers)."""
        completed = [t for t in task_runs if t.status is TaskStatus.COMPLETED]
        tasks = Counter(t.status for t in task_runs)
        verdicts = Counter(t.verdict for t in completed)
        criteria: Counter[Status] = Counter()
        not_evaluated = 0
        for t in task_runs:
            if light:
                for s in Status:
                    criteria[s] += getattr(t.counts, s.value)
                not_evaluated += t.counts.not_evaluated
                continue
            for c in t.criterion_runs:
                criteria[c.status] += 1
                not_evaluated += c.not_evaluated is not None
        return cls.model_validate(
            {
                "task_runs": len(task_runs),
                **{s.value: tasks[s] for s in TaskStatus},
                "completed": len(completed),
                "unverified": sum(1 for t in completed if t.verification == "incomplete"),
                "verdicts": {v: verdicts[v] for v in VERDICTS},
                "criteria": sum(criteria.values()),
                **{f"criteria_{s.value}": criteria[s] for s in Status},
                "criteria_not_evaluated": not_evaluated,
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
    #: ``incomplete`` when a completed task run's verification is: its verdict is then null,
    #: and its score the mean of the verified task runs (``counts.unverified`` are left out)
    verification: Verification = "complete"
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
        light: bool = False,
        **identity: Any,
    ) -> BenchmarkRun:
        """The benchmark run from its task runs (the only place a run is scored).

        Score: the unweighted mean of the completed task runs' scores. Axes: per axis, the
        mean of the completed task runs that have it. With several run folders (trials), the
        run score per trial with its mean, pass^k and 95 % interval. A completed task run the
        verifier could not fully evaluate is left out of all of these, and the run's verdict
        is null (``verification: incomplete``): it could still go either way. ``light``: as
        :meth:`RunCounts.of`.
        """
        unverified = [
            t
            for t in task_runs
            if t.status is TaskStatus.COMPLETED and t.verification == "incomplete"
        ]
        completed = [
            t
            for t in task_runs
            if t.status is TaskStatus.COMPLETED
            and t.score is not None
            and t.verification == "complete"
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
            verdict=verdict(score, pass_threshold, True)
            if score is not None and not unverified
            else None,
            pass_threshold=pass_threshold,
            verification="incomplete" if unverified else "complete",
            axes=axes,
            strict_success=(
                sum(1 for t in completed if t.all_passed) / len(completed) if completed else None
            ),
            counts=RunCounts.of(task_runs, light),
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

    #: which shape the file has: v3 (Verial's evidence keys); a v2 report is converted as it
    #: is read (:func:`pytest_verial._evidence.report_from_v2`), any other id refused
    schema_: Literal["pytest-verial/report/v3"] = Field(default=SCHEMA_ID, alias="schema")
    generator: Generator
    session: Session
    benchmark_runs: list[BenchmarkRun] = Field(default_factory=list)
    #: what ``pytest_verial_report`` hooks add (any JSON, by the hook's own key)
    extensions: dict[str, Json] = Field(default_factory=dict)
    #: set when read from a file: the seal it carried (the writer writes a new one)
    integrity: Integrity | None = Field(default=None, exclude_if=_absent)

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, data: Any) -> Any:
        """A report of the previous shape (v2) converted whole; an unknown schema id refused."""
        if not isinstance(data, Mapping):
            return data
        schema = data.get("schema", SCHEMA_ID)
        if schema == REPORT_V2:
            return report_from_v2(data)
        if schema != SCHEMA_ID:
            raise ValueError(unknown_schema(schema))
        return data

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
    "NotEvaluated",
    "Report",
    "RunStatus",
    "Session",
    "Status",
    "TaskRun",
    "TaskStatus",
    "report_schema",
]
