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

A task run's figures come from :func:`pytest_verial._results.task_figures`, the one pure
function the writer's :meth:`TaskRun.aggregate` scores with too, over the readers' light views
of criterion runs, without building a :class:`~pytest_verial._results.TaskRun` per task run:
``verial compare`` reads two reports of 60,000 task runs each in seconds, and the result types
cost ten times this. A benchmark run's rules are :meth:`BenchmarkRun.aggregate`'s, step for
step; a property test (``tests/core/test_core_report_agreement.py``) checks that any report the
writer writes is read back, and another pins the fields of a criterion run scoring reads.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, cast

from .._results import (
    Axis,
    RunStatus,
    Status,
    TaskFigures,
    TaskStatus,
    _trials,
    task_figures,
)
from .._scoring import (
    VERDICTS,
    Verdict,
    run_score,
    verdict,
)

if TYPE_CHECKING:
    from ._score_views import BenchmarkRunScores, ReportScores, TaskScore

#: within this, two numbers are one figure (a store may hold a float as text)
_TOLERANCE = 1e-9


@dataclass(frozen=True, slots=True)
class Given:
    """What one task run's criterion runs give: its figures (shared by the task runs of one
    shape, criterion ids by position) and what names it (the benchmark run's trials)."""

    figures: TaskFigures
    task_key: str
    run: str


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


def run_counts(given: Sequence[Given]) -> dict[str, Any]:
    """``RunCounts.of``: task runs by status and verdict, criterion runs by status."""
    tasks = [g.figures for g in given]
    completed = [t for t in tasks if t.status is TaskStatus.COMPLETED]
    by_status = Counter(t.status for t in tasks)
    criteria = Counter(s for t in tasks for s in t.statuses)
    return {
        "task_runs": len(tasks),
        **{s.value: by_status.get(s, 0) for s in TaskStatus},
        "completed": len(completed),
        "unverified": sum(1 for t in completed if t.counts.get("not_evaluated")),
        "verdicts": {v: sum(1 for t in completed if t.verdict == v) for v in VERDICTS},
        "criteria": sum(criteria.values()),
        **{f"criteria_{s.value}": criteria.get(s, 0) for s in Status},
        "criteria_not_evaluated": sum(t.counts.get("not_evaluated", 0) for t in tasks),
    }


def run_figures(
    given: Sequence[Given],
    threshold: float,
    stated: RunStatus,
    labels: Sequence[str],
) -> RunFigures:
    """The figures of a benchmark run of these task runs; ``stated``: its status as written
    (running and cancelled say how the session ended, which the task runs cannot)."""
    tasks = [g.figures for g in given]
    # a completed task run the verifier could not fully evaluate is left out of every
    # figure, and the run's verdict is null (BenchmarkRun.aggregate)
    unverified = [
        t for t in tasks if t.status is TaskStatus.COMPLETED and t.counts.get("not_evaluated")
    ]
    done = [
        g
        for g in given
        if g.figures.status is TaskStatus.COMPLETED
        and g.figures.score is not None
        and not g.figures.counts.get("not_evaluated")
    ]
    completed = [g.figures for g in done]
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
        shaped = cast(
            Any,
            [
                SimpleNamespace(
                    task_key=g.task_key, run=g.run, score=g.figures.score, verdict=g.figures.verdict
                )
                for g in done
            ],
        )
        trials = _trials(shaped, list(labels), threshold).model_dump(mode="json")
    return RunFigures(
        status=status,
        score=score,
        verdict=verdict(score, threshold, True) if score is not None and not unverified else None,
        strict_success=(
            sum(1 for t in completed if t.all_passed) / len(completed) if completed else None
        ),
        axes={
            name: (run_score(scores), float(len(scores)), None, None)
            for name, scores in by_axis.items()
        },
        counts=run_counts(given),
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


def _older(stated: Any, given: Any) -> Any:
    """Stated counts with the keys an older writer did not write (``not_evaluated``,
    ``unverified``, ``criteria_not_evaluated``: report v2) taken as the zero they meant;
    a key left out whose count is not zero still differs."""
    if not isinstance(stated, dict) or not isinstance(given, dict):
        return stated
    missing = {k: v for k, v in given.items() if k not in stated and v == 0}
    return {**stated, **missing} if missing else stated


def _shown(value: Any) -> str:
    """A figure for the error line: ``0.25``, ``"pass"``, ``{"failed": 1, ...}``."""
    import json

    if isinstance(value, float):
        return f"{value:g}"
    if hasattr(value, "value"):  # an enum
        value = value.value
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."


def _axes_of(stated: dict[str, Any] | None) -> dict[str, Axis] | None:
    """Stated axes (``{name: {score, weight, points_earned?, points_possible?}}``) as the
    tuples figures are given in."""
    if stated is None:
        return None
    return {
        name: (a.get("score"), a.get("weight"), a.get("points_earned"), a.get("points_possible"))
        for name, a in stated.items()
    }


def _axes_shown(axes: dict[str, Axis]) -> dict[str, Any]:
    return {name: {"score": a[0], "weight": a[1]} for name, a in sorted(axes.items())}


#: figures whose null is a figure (no score, no verdict); other nulls are fields a view did
#: not read (a stored run's task runs carry only their scores)
_NULLABLE = frozenset({"score", "verdict", "points_earned", "points_possible", "strict_success"})


def _as_written(given: TaskFigures) -> tuple[Any, ...] | None:
    """What criterion runs give, in the form a report writes it (axes and counts as their
    JSON), for one comparison with what a task run states; None when a list of criteria is
    not empty (it names criteria by id, which a shared figure does not know)."""
    if given.critical_failed or given.penalties_applied:
        return None
    axes = {
        name: {"score": a[0], "weight": a[1]}
        if a[2] is None
        else {"score": a[0], "weight": a[1], "points_earned": a[2], "points_possible": a[3]}
        for name, a in given.axes.items()
    }
    scalars = (given.status, given.score, given.verdict, given.all_passed)
    return (*scalars, given.points_earned, given.points_possible, given.counts, axes)


def _agrees_at_once(task: TaskScore, given: TaskFigures) -> bool:
    """Whether every figure ``task`` states is what ``given`` gives, in one comparison (a
    report written by the plugin: all figures there, each exactly the same)."""
    written = given.key
    return (
        written is not None
        and not task.critical_failed
        and not task.penalties_applied
        and task.model_fields_set >= _TASK_FIELDS
        and (task.status, task.score, task.verdict, task.all_passed) == written[:4]
        and (task.points_earned, task.points_possible) == written[4:6]
        and task.counts == written[6]
        and task.axes == written[7]
    )


#: the figures a task run states (all of them: the fast comparison needs every one)
_TASK_FIELDS = frozenset(
    {"status", "score", "verdict", "all_passed", "critical_failed", "points_earned"}
    | {"points_possible", "penalties_applied", "counts", "axes"}
)


def _task_problems(task: TaskScore, given: TaskFigures, where: str) -> Iterator[str]:
    """The figures of ``task`` that ``given`` (by position: criterion ids are its own) does
    not agree with. Nearly always every figure is equal: one comparison says so."""
    if _agrees_at_once(task, given):
        return
    ids = [c.criterion_id for c in task.criterion_runs]
    stated: dict[str, Any] = {
        "status": task.status,
        "score": task.score,
        "verdict": task.verdict,
        "all_passed": task.all_passed,
        "critical_failed": task.critical_failed,
        "points_earned": task.points_earned,
        "points_possible": task.points_possible,
        "penalties_applied": task.penalties_applied,
        "counts": _older(task.counts, given.counts),
        "axes": _axes_of(task.axes),
    }
    for name, value in stated.items():
        if name not in task.model_fields_set:  # not in the report (written by hand)
            continue
        again = getattr(given, name)
        if name in ("critical_failed", "penalties_applied"):
            again = [ids[int(n)] for n in again]
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
        "counts": _older(run.counts, given.counts),
        "axes": _axes_of(run.axes),
        "trials": run.trials,
    }
    for name, value in stated.items():
        if name not in run.model_fields_set:  # not in the report (written by hand)
            continue
        again = getattr(given, name)
        if (value is not None or name in _NULLABLE) and not _same(value, again):
            if name == "axes":
                value, again = _axes_shown(value), _axes_shown(again)
            yield f"{where}.{name} is {_shown(value)}; its task runs give {_shown(again)}"


Memo = dict[tuple[Any, ...], TaskFigures]


def _figures_of(task: TaskScore, memo: Memo) -> TaskFigures:
    """:func:`task_figures` of a task run, computed once per shape: task runs whose criterion
    runs differ only by their ids (the same task on several entities or trials, tasks of one
    rubric's shape) share their figures (criterion ids in them by position)."""
    criteria = task.criterion_runs
    running = task.status is TaskStatus.RUNNING
    shape = tuple(
        (c.status, c.passed, c.score, c.weight, c.axis, c.points, c.critical, c.not_evaluated)
        for c in criteria
    )
    key = (task.pass_threshold, running, shape)
    found = memo.get(key)
    if found is None:
        found = memo[key] = task_figures(
            [c.model_copy(update={"criterion_id": str(n)}) for n, c in enumerate(criteria)],
            task.pass_threshold,
            running,
        )
        found.key = _as_written(found)
    return found


def check_task(task: TaskScore, where: str, memo: Memo, path: str | Path) -> Given:
    """What ``task``'s criterion runs give; a ValueError (see :func:`check_agreement`) when a
    figure it states differs. ``where``: its JSON path (``benchmark_runs[0].task_runs[3]``).
    A reader of many task runs calls it as each is read, then drops the figures it stated."""
    figures = _figures_of(task, memo)
    for problem in _task_problems(task, figures, where):
        raise ValueError(_refusal(path, problem))
    return Given(figures, task.task_key, task.run)


def _refusal(path: str | Path, problem: str) -> str:
    return (
        f"{path}: its figures do not agree with its criterion runs: {problem}; refused "
        "(edited after it was written?)"
    )


def check_agreement(
    scores: ReportScores,
    path: str | Path,
    memo: Memo | None = None,
    checked: Sequence[Sequence[Given]] = (),
) -> None:
    """ValueError, one line naming ``path`` and the field, for the first figure of the report
    its criterion runs do not give (see the module's docstring). ``checked``: per benchmark
    run, what its task runs give, when they were checked as they were read
    (:func:`check_task`); they are not checked again."""
    memo = {} if memo is None else memo
    everything: list[Given] = []
    for r, run in enumerate(scores.benchmark_runs):
        at = f"benchmark_runs[{r}]"
        if r < len(checked):
            given = list(checked[r])
        else:
            given = [
                check_task(task, f"{at}.task_runs[{t}]", memo, path)
                for t, task in enumerate(run.task_runs)
            ]
        everything.extend(given)
        labels = [info.label for info in run.runs]
        figures = run_figures(given, run.pass_threshold, run.status, labels)
        for problem in _run_problems(run, figures, at):
            raise ValueError(_refusal(path, problem))
    session = scores.session
    stated_counts = session is not None and "counts" in session.model_fields_set
    counts = session.counts if session is not None and stated_counts else None
    if counts is not None:
        again = run_counts(everything)
        stated = _older(counts, again)
        if not _same(stated, again):
            problem = f"session.counts is {_shown(stated)}; its task runs give {_shown(again)}"
            raise ValueError(_refusal(path, problem))


__all__ = [
    "Given",
    "Memo",
    "RunFigures",
    "TaskFigures",
    "check_agreement",
    "check_task",
    "run_counts",
    "run_figures",
    "task_figures",
]
