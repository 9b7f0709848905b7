"""A report's figures scored again from its criterion runs, on every read (issue 31).

A seal proves the bytes are the ones some writer sealed; with a plain digest anyone can seal
an edit (README, "Sealed reports and journals"). What a forger who keeps the criterion runs
cannot also keep is the arithmetic: every task run's figures follow from its criterion runs,
every benchmark run's from its task runs, the session's counts from all of them.
:func:`check_agreement` scores each again and refuses the first figure that differs, in one
line naming it (``benchmark_runs[0].task_runs[3].score (task t1) is 1; its criterion runs give
0.25``). Every reader of a report file runs it, through the score views
(:mod:`._scores`): ``load_report`` (show, report, html, merge, resume, import) and
``load_scores`` (compare, ``--verial-baseline``).

The figures are computed here with the pure scoring functions, without building a
:class:`~pytest_verial._results.TaskRun` per task run: ``verial compare`` reads two reports of
60,000 task runs each in seconds, and the result types cost ten times this. The rules are
:meth:`TaskRun.aggregate`'s and :meth:`BenchmarkRun.aggregate`'s, step for step; a property
test (``tests/core/test_core_report_agreement.py``) checks that both give the same figures for
any criterion runs, and another pins the fields of a criterion run scoring reads.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, cast

from .._results import COUNTED, RunStatus, Status, TaskStatus, _trials, counts_against
from .._scoring import (
    VERDICTS,
    Pointed,
    Scored,
    Verdict,
    points_axes,
    points_score,
    run_score,
    task_score,
    verdict,
)
from .._scoring import axes as axis_scores

if TYPE_CHECKING:
    from ._scores import BenchmarkRunScores, CriterionScore, ReportScores, TaskScore

#: within this, two numbers are one figure (a store may hold a float as text)
_TOLERANCE = 1e-9

#: an axis as a task or benchmark run states it: score, weight, points earned, points possible
Axis = tuple[float, float, int | None, int | None]


@dataclass
class TaskFigures:
    """What a task run's criterion runs give (:meth:`TaskRun.aggregate`'s rules)."""

    status: TaskStatus
    score: float | None
    verdict: Verdict | None
    axes: dict[str, Axis]
    all_passed: bool | None
    critical_failed: list[str]
    points_earned: int | None
    points_possible: int | None
    penalties_applied: list[str]
    counts: dict[str, int]
    #: for the benchmark run's figures (its trials): the task run's key and run label
    task_key: str = ""
    run: str = ""
    statuses: list[Status] = field(default_factory=list)


def _met(c: CriterionScore) -> bool | None:
    """A counted points criterion is met when it passed (CriterionRun's ``_met``)."""
    return c.passed if c.points is not None and c.status in COUNTED else None


def task_figures(
    criteria: Sequence[CriterionScore], threshold: float, running: bool = False
) -> TaskFigures:
    """The figures of a task run with these criterion runs and verdict threshold."""
    statuses = {c.status for c in criteria}
    if Status.DESELECTED in statuses:
        status = TaskStatus.INCOMPLETE
    elif Status.NOT_RUN in statuses:
        status = TaskStatus.RUNNING if running else TaskStatus.CANCELLED
    elif statuses == {Status.SKIPPED}:
        status = TaskStatus.SKIPPED
    else:
        status = TaskStatus.COMPLETED
    counted = [c for c in criteria if c.status in COUNTED]
    items = [Scored(float(c.score or 0.0), c.weight, c.axis) for c in counted]
    has_scores = status in (TaskStatus.COMPLETED, TaskStatus.INCOMPLETE)
    score = task_score(items) if has_scores else None
    axes: dict[str, Axis] = (
        {k: (v["score"], v["weight"], None, None) for k, v in axis_scores(items).items()}
        if has_scores
        else {}
    )
    earned = possible = None
    penalties: list[str] = []
    if any(c.points is not None for c in criteria):
        pointed = [Pointed(c.points or 0, bool(_met(c)), c.axis) for c in counted]
        tally = points_score(pointed)
        earned, possible = tally.earned, tally.possible
        penalties = [c.criterion_id for c in counted if _met(c) and (c.points or 0) < 0]
        if has_scores:
            score = tally.score
            axes = {
                name: (t.score, float(t.possible), t.earned, t.possible)
                for name, t in points_axes(pointed).items()
            }
    critical = [
        c.criterion_id for c in criteria if c.critical and c.status in COUNTED and not c.passed
    ]
    task_verdict: Verdict | None = None
    if score is not None:
        task_verdict = "fail" if critical else verdict(score, threshold, bool(items))
    tally_of = Counter(c.status for c in criteria)
    return TaskFigures(
        status=status,
        score=score,
        verdict=task_verdict,
        axes=axes,
        all_passed=(
            bool(counted) and not any(counts_against(c.status, c.points, _met(c)) for c in counted)
            if has_scores
            else None
        ),
        critical_failed=critical,
        points_earned=earned,
        points_possible=possible,
        penalties_applied=penalties,
        counts={s.value: tally_of.get(s, 0) for s in Status},
        statuses=[c.status for c in criteria],
    )


@dataclass
class RunFigures:
    """What a benchmark run's task runs give (:meth:`BenchmarkRun.aggregate`'s rules)."""

    status: RunStatus
    score: float | None
    verdict: Verdict | None
    strict_success: float | None
    axes: dict[str, Axis]
    counts: dict[str, Any]
    trials: dict[str, Any] | None


def run_counts(tasks: Sequence[TaskFigures]) -> dict[str, Any]:
    """``RunCounts.of``: task runs by status and verdict, criterion runs by status."""
    completed = [t for t in tasks if t.status is TaskStatus.COMPLETED]
    by_status = Counter(t.status for t in tasks)
    criteria = Counter(s for t in tasks for s in t.statuses)
    return {
        "task_runs": len(tasks),
        **{s.value: by_status.get(s, 0) for s in TaskStatus},
        "completed": len(completed),
        "verdicts": {v: sum(1 for t in completed if t.verdict == v) for v in VERDICTS},
        "criteria": sum(criteria.values()),
        **{f"criteria_{s.value}": criteria.get(s, 0) for s in Status},
    }


def run_figures(
    tasks: Sequence[TaskFigures],
    threshold: float,
    stated: RunStatus,
    labels: Sequence[str],
) -> RunFigures:
    """The figures of a benchmark run of these task runs; ``stated``: its status as written
    (running and cancelled say how the session ended, which the task runs cannot)."""
    completed = [t for t in tasks if t.status is TaskStatus.COMPLETED and t.score is not None]
    score = run_score(t.score for t in completed if t.score is not None) if completed else None
    status = (
        RunStatus.RUNNING
        if stated is RunStatus.RUNNING
        else RunStatus.CANCELLED
        if stated is RunStatus.CANCELLED or any(t.status is TaskStatus.CANCELLED for t in tasks)
        else RunStatus.COMPLETED
    )
    by_axis: dict[str, list[float]] = {}
    for t in completed:
        for name, axis in t.axes.items():
            by_axis.setdefault(name, []).append(axis[0])
    trials = None
    if len(labels) > 1:
        shaped = cast(Any, [SimpleNamespace(**vars(t)) for t in completed])
        trials = _trials(shaped, list(labels), threshold).model_dump(mode="json")
    return RunFigures(
        status=status,
        score=score,
        verdict=verdict(score, threshold, True) if score is not None else None,
        strict_success=(
            sum(1 for t in completed if t.all_passed) / len(completed) if completed else None
        ),
        axes={
            name: (run_score(scores), float(len(scores)), None, None)
            for name, scores in by_axis.items()
        },
        counts=run_counts(tasks),
        trials=trials,
    )


# -- comparing what is stated with what is given ---------------------------------------------
def _same(stated: Any, given: Any) -> bool:
    """Equal as JSON values, numbers within :data:`_TOLERANCE`."""
    if stated == given and type(stated) is type(given):  # nearly always: no walk
        return True
    if isinstance(stated, bool) or isinstance(given, bool):
        return stated is given
    if isinstance(stated, int | float) and isinstance(given, int | float):
        return math.isclose(stated, given, rel_tol=0.0, abs_tol=_TOLERANCE)
    if isinstance(stated, dict) and isinstance(given, dict):
        return stated.keys() == given.keys() and all(_same(stated[k], given[k]) for k in stated)
    if isinstance(stated, list | tuple) and isinstance(given, list | tuple):
        return len(stated) == len(given) and all(map(_same, stated, given))
    return bool(stated == given)


def _shown(value: Any) -> str:
    """A figure for the error line: ``0.25``, ``"pass"``, ``{"failed": 1, ...}``."""
    import json

    if isinstance(value, float):
        return f"{value:g}"
    if hasattr(value, "value"):  # an enum
        value = value.value
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."


def _axes_of(stated: Any) -> dict[str, Axis] | None:
    if stated is None:
        return None
    return {
        name: (a.score, a.weight, a.points_earned, a.points_possible) for name, a in stated.items()
    }


def _axes_shown(axes: dict[str, Axis]) -> dict[str, Any]:
    return {name: {"score": a[0], "weight": a[1]} for name, a in sorted(axes.items())}


#: figures whose null is a figure (no score, no verdict); other nulls are fields a view did
#: not read (a stored run's task runs carry only their scores)
_NULLABLE = frozenset({"score", "verdict", "points_earned", "points_possible", "strict_success"})


def _task_problems(task: TaskScore, given: TaskFigures, where: str) -> Iterator[str]:
    stated: dict[str, Any] = {
        "status": task.status,
        "score": task.score,
        "verdict": task.verdict,
        "all_passed": task.all_passed,
        "critical_failed": task.critical_failed,
        "points_earned": task.points_earned,
        "points_possible": task.points_possible,
        "penalties_applied": task.penalties_applied,
        "counts": dict(task.counts.__dict__) if task.counts is not None else None,
        "axes": _axes_of(task.axes),
    }
    for name, value in stated.items():
        again = getattr(given, name)
        if (value is not None or name in _NULLABLE) and not _same(value, again):
            if name == "axes":
                value, again = _axes_shown(value), _axes_shown(again)
            yield f"{where}.{name} (task {task.task_key}) is {_shown(value)}; " + (
                f"its criterion runs give {_shown(again)}"
            )


def _run_problems(run: BenchmarkRunScores, given: RunFigures, where: str) -> Iterator[str]:
    stated: dict[str, Any] = {
        "status": run.status,
        "score": run.score,
        "verdict": run.verdict,
        "strict_success": run.strict_success,
        "counts": run.counts.model_dump(by_alias=True) if run.counts is not None else None,
        "axes": _axes_of(run.axes),
        "trials": run.trials.model_dump(mode="json") if run.trials is not None else None,
    }
    for name, value in stated.items():
        again = getattr(given, name)
        if (value is not None or name in _NULLABLE) and not _same(value, again):
            if name == "axes":
                value, again = _axes_shown(value), _axes_shown(again)
            yield f"{where}.{name} is {_shown(value)}; its task runs give {_shown(again)}"


def _figures_of(task: TaskScore, memo: dict[tuple[Any, ...], TaskFigures]) -> TaskFigures:
    """:func:`task_figures` of a task run, computed once per shape: task runs whose criterion
    runs differ only by their ids (the same task on several entities or trials, tasks of one
    rubric's shape) share their figures, the ids put back in."""
    criteria = task.criterion_runs
    running = task.status is TaskStatus.RUNNING
    shape = tuple(
        (c.status, c.passed, c.score, c.weight, c.axis, c.points, c.critical) for c in criteria
    )
    key = (task.pass_threshold, running, shape)
    found = memo.get(key)
    if found is None:
        found = memo[key] = task_figures(
            [c.model_copy(update={"criterion_id": str(n)}) for n, c in enumerate(criteria)],
            task.pass_threshold,
            running,
        )
    ids = [c.criterion_id for c in criteria]
    return replace(
        found,
        critical_failed=[ids[int(n)] for n in found.critical_failed],
        penalties_applied=[ids[int(n)] for n in found.penalties_applied],
        task_key=task.task_key,
        run=task.run,
    )


def _problems(scores: ReportScores) -> Iterator[str]:
    everything: list[TaskFigures] = []
    memo: dict[tuple[Any, ...], TaskFigures] = {}
    for r, run in enumerate(scores.benchmark_runs):
        at = f"benchmark_runs[{r}]"
        given_tasks = []
        for t, task in enumerate(run.task_runs):
            given = _figures_of(task, memo)
            yield from _task_problems(task, given, f"{at}.task_runs[{t}]")
            given_tasks.append(given)
        everything.extend(given_tasks)
        labels = [info.label for info in run.runs]
        given_run = run_figures(given_tasks, run.pass_threshold, run.status, labels)
        yield from _run_problems(run, given_run, at)
    counts = scores.session.counts if scores.session is not None else None
    if counts is not None:
        stated = counts.model_dump(by_alias=True)
        again = run_counts(everything)
        if not _same(stated, again):
            yield f"session.counts is {_shown(stated)}; its task runs give {_shown(again)}"


def check_agreement(scores: ReportScores, path: str | Path) -> None:
    """ValueError, one line naming ``path`` and the field, for the first figure of the report
    its criterion runs do not give (see the module's docstring)."""
    for problem in _problems(scores):
        raise ValueError(
            f"{path}: its figures do not agree with its criterion runs: {problem}; refused "
            "(edited after it was written?)"
        )


__all__ = ["RunFigures", "TaskFigures", "check_agreement", "run_counts", "run_figures"]
