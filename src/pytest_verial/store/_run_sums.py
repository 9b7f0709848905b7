"""A benchmark run's running sums (issue 33): what its aggregates are computed from, kept in one
small row (``run_sums``) so that a run-API ``complete`` updates them by the task run it scores
instead of reading every task run of the run again.

The sums are exact. A run's score is ``clamp(fsum(scores) / n)`` over its completed, verified
task runs (:func:`~pytest_verial._scoring.run_score`), and ``math.fsum`` is the correctly
rounded value of the exact sum; so the sums keep the exact sum of the scores as a fraction
(``"numerator/denominator"``: every float is a dyadic rational), and ``float()`` of it, also
correctly rounded, is the ``fsum`` of the same scores bit for bit, in whatever order the task
runs completed. An axis keeps the same per axis, with the place it first appears in position
order (its order in the run's ``axes``, as a full recomputation orders them). Counts are
integers. Everything is read from task runs' rows as JSON (``task_runs.data``), no typed model.

A run with several run folders (trials) has per-trial statistics no sum gives: it is recomputed
from its task runs, as before (the service creates runs with one run folder).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

from .._results import (
    AxisScore,
    BenchmarkRun,
    RunCounts,
    RunStatus,
    Status,
    TaskStatus,
)
from .._scoring import VERDICTS, clamp, verdict

#: the integer counts a run keeps (RunCounts' fields, its verdicts flattened)
_TASK_STATUSES = tuple(s.value for s in TaskStatus)
_CRITERIA = tuple(f"criteria_{s.value}" for s in Status)


def empty() -> dict[str, Any]:
    """The sums of a run with no task runs."""
    return {"scores": [0, "0"], "axes": {}, "all_passed": 0, "counts": _zero_counts()}


def _zero_counts() -> dict[str, int]:
    names = ["task_runs", *_TASK_STATUSES, "unverified", *(f"verdict_{v}" for v in VERDICTS)]
    return dict.fromkeys([*names, "criteria", *_CRITERIA, "criteria_not_evaluated"], 0)


def _scored(task: Mapping[str, Any]) -> bool:
    """Whether a task run counts in the run's score and axes (completed, scored, verified)."""
    return (
        task.get("status") == TaskStatus.COMPLETED
        and task.get("score") is not None
        and task.get("verification", "complete") == "complete"
    )


def add(sums: dict[str, Any], task: Mapping[str, Any], position: int, sign: int = 1) -> None:
    """Add a task run (its row's ``data``) to ``sums`` (``sign=-1``: take it away; only a task
    run that counts in no score, a running one, can be taken away exactly: a ValueError
    otherwise, and the caller recomputes)."""
    counts = sums["counts"]
    status = str(task.get("status"))
    counts["task_runs"] += sign
    counts[status] += sign
    if status == TaskStatus.COMPLETED:
        if task.get("verification", "complete") == "incomplete":
            counts["unverified"] += sign
        if task.get("verdict") in VERDICTS:
            counts[f"verdict_{task['verdict']}"] += sign
    tcounts: Mapping[str, int] = task.get("counts") or {}
    for s in Status:
        n = int(tcounts.get(s.value, 0))
        counts[f"criteria_{s.value}"] += sign * n
        counts["criteria"] += sign * n
    counts["criteria_not_evaluated"] += sign * int(tcounts.get("not_evaluated", 0))
    if not _scored(task):
        return
    if sign < 0:
        raise ValueError("a scored task run cannot be taken out of the sums")
    n, total = sums["scores"]
    sums["scores"] = [n + 1, str(Fraction(total) + Fraction(float(task["score"])))]
    sums["all_passed"] += 1 if task.get("all_passed") else 0
    axes: dict[str, Any] = sums["axes"]
    for index, (name, axis) in enumerate((task.get("axes") or {}).items()):
        n, total, first = axes.get(name, [0, "0", [position, index]])
        axes[name] = [
            n + 1,
            str(Fraction(total) + Fraction(float(axis["score"]))),
            min(first, [position, index]),
        ]


def of(tasks: Iterable[tuple[int, Mapping[str, Any]]]) -> dict[str, Any]:
    """The sums of a run's task runs (position, row data)."""
    sums = empty()
    for position, task in tasks:
        add(sums, task, position)
    return sums


def _mean(n: int, total: str) -> float:
    """:func:`~pytest_verial._scoring.run_score` of ``n`` scores summing exactly to ``total``:
    ``float(Fraction)`` is the correctly rounded sum, as ``math.fsum`` is."""
    return clamp(float(Fraction(total)) / n)


def run_from(
    old: BenchmarkRun, sums: Mapping[str, Any], *, interrupted: bool, running: bool | None = None
) -> BenchmarkRun:
    """The benchmark run ``old`` (its identity) with the aggregates of ``sums``: what
    :meth:`BenchmarkRun.aggregate` gives over the task runs summed (no trials: one run
    folder). ``running``: whether it still runs (default: while a task run summed does)."""
    c = sums["counts"]
    n, total = sums["scores"]
    score = _mean(n, total) if n else None
    if running is None:
        running = not interrupted and c[TaskStatus.RUNNING] > 0
    status = (
        RunStatus.RUNNING
        if running
        else RunStatus.CANCELLED
        if interrupted or c[TaskStatus.CANCELLED] > 0
        else RunStatus.COMPLETED
    )
    ordered = sorted(sums["axes"].items(), key=lambda item: item[1][2])
    axes = {name: AxisScore(score=_mean(k, t), weight=float(k)) for name, (k, t, _first) in ordered}
    counts = RunCounts.model_validate(
        {
            **{k: v for k, v in c.items() if not k.startswith("verdict_")},
            "verdicts": {v: c[f"verdict_{v}"] for v in VERDICTS},
        }
    )
    unverified = c["unverified"] > 0
    return BenchmarkRun(
        id=old.id,
        benchmark=old.benchmark,
        runs=old.runs,
        scored=old.scored,
        status=status,
        score=score,
        verdict=verdict(score, old.pass_threshold, True)
        if score is not None and not unverified
        else None,
        pass_threshold=old.pass_threshold,
        verification="incomplete" if unverified else "complete",
        axes=axes,
        strict_success=sums["all_passed"] / n if n else None,
        counts=counts,
        trials=None,
        task_runs=[],
    )


__all__ = ["add", "empty", "of", "run_from"]
