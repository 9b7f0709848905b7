"""A task run's JSON and rows made from the session's plain criterion records (issue 33).

With the store on, the session used to build each completed task run typed
(``reporting._build._task_run``: a validated ``CriterionRun`` per criterion, a ``TaskRun``, its
``model_dump``) only to store it, and the session's end built it again for the report.
:func:`task_run_json` makes the same JSON from what the session already holds: each criterion
run's ``to_json()`` (a plain ``CriterionRecord``'s is exactly ``CriterionRun.to_json()``), and
the task run's figures from :func:`pytest_verial._results.task_figures`, the one pure function
:meth:`TaskRun.aggregate` scores with. The JSON is ``TaskRun.aggregate(...).model_dump(mode=
"json", by_alias=True)`` of the same criterion runs, key for key and value for value
(tests/store/test_store_session_sums.py compares the rows made both ways for every status).

:class:`PlainTaskRun` carries what a task run's rows read outside their JSON
(``_rows.TaskColumns``): its ids, status, verdict, score and criterion runs (the records).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._results import TaskFigures, TaskStatus, confidence_of, task_figures

if TYPE_CHECKING:
    from .._record import CriterionRecord
    from .._results import CriterionRun
    from .._scoring import Verdict

    Criterion = CriterionRecord | CriterionRun


@dataclass(frozen=True, slots=True)
class PlainTaskRun:
    """A completed task run as its rows read it (``_rows.TaskColumns``), with no typed model."""

    id: str
    task_id: str
    task_key: str
    entity: str | None
    run: str
    status: TaskStatus
    verdict: Verdict | None
    score: float | None
    criterion_runs: Sequence[Criterion]


def _float(value: float | None) -> float | None:
    """A float field as the typed model holds it (an int becomes a float)."""
    return None if value is None else float(value)


def confidence(
    criteria: Sequence[Criterion], jsons: Sequence[Mapping[str, Any]], status: TaskStatus
) -> float | None:
    """``_results.task_confidence`` from the criterion runs' JSON: a judge criterion's
    ``confidence`` is its evidence's key (the typed run's evidence model holds the same value,
    which its JSON form writes)."""
    reported = []
    for c, data in zip(criteria, jsons, strict=True):
        if c.counted and c.judge:
            evidence = data.get("evidence")
            reported.append(evidence.get("confidence") if isinstance(evidence, dict) else None)
    return confidence_of(criteria, reported, status)


def _axes(figures: TaskFigures) -> dict[str, dict[str, Any]]:
    """The axes as ``AxisScore`` dumps them (point sums only when given)."""
    out: dict[str, dict[str, Any]] = {}
    for name, (score, weight, earned, possible) in figures.axes.items():
        axis: dict[str, Any] = {"score": float(score), "weight": float(weight)}
        if earned is not None:
            axis["points_earned"] = earned
        if possible is not None:
            axis["points_possible"] = possible
        out[name] = axis
    return out


def task_run_json(
    criteria: Sequence[Criterion],
    threshold: float,
    running: bool,
    identity: Mapping[str, Any],
    snapshot: dict[str, Any] | None,
) -> tuple[PlainTaskRun, dict[str, Any]]:
    """The task run of ``criteria`` (in position order) and its JSON form, equal to
    ``TaskRun.aggregate(criteria, threshold, running, **identity, snapshot=snapshot)
    .model_dump(mode="json", by_alias=True)``. ``identity``: ``id``, ``task_id``,
    ``task_key``, ``entity``, ``name``, ``benchmark``, ``file``, ``run``. Secrets are not
    masked here (the caller masks the JSON; the columns keep the values as given)."""
    figures = task_figures(criteria, threshold, running)
    jsons = [c.to_json() for c in criteria]
    unverified = [c for c in criteria if c.not_evaluated is not None]
    by_points = figures.by_points
    counts = figures.counts
    data: dict[str, Any] = {
        "id": identity["id"],
        "task_id": identity["task_id"],
        "task_key": identity["task_key"],
        "entity": identity.get("entity"),
        "name": identity.get("name"),
        "benchmark": identity.get("benchmark"),
        "file": identity.get("file"),
        "run": identity["run"],
        "status": figures.status.value,
        "verdict": figures.verdict,
        "score": _float(figures.score),
        "pass_threshold": float(threshold),
        "verification": "incomplete" if unverified else "complete",
        "not_evaluated": [
            {"criterion_id": c.criterion_id, "reason": c.not_evaluated or ""} for c in unverified
        ],
        "confidence": _float(confidence(criteria, jsons, figures.status)),
        "axes": _axes(figures),
        "all_passed": figures.all_passed,
        "critical_failed": list(figures.critical_failed),
        "points_earned": figures.points_earned if by_points else None,
        "points_possible": figures.points_possible if by_points else None,
        "penalties_applied": list(figures.penalties_applied) if by_points else [],
        "counts": {
            "passed": counts["passed"],
            "failed": counts["failed"],
            "error": counts["error"],
            "gated": counts["gated"],
            "skipped": counts["skipped"],
            "deselected": counts["deselected"],
            "not_run": counts["not_run"],
            "not_evaluated": counts["not_evaluated"],
        },
        "snapshot": snapshot,
        "feedback": None,
        "criterion_runs": jsons,
    }
    task = PlainTaskRun(
        id=data["id"],
        task_id=data["task_id"],
        task_key=data["task_key"],
        entity=data["entity"],
        run=data["run"],
        status=figures.status,
        verdict=figures.verdict,
        score=data["score"],
        criterion_runs=criteria,
    )
    return task, data


__all__ = ["PlainTaskRun", "confidence", "task_run_json"]
