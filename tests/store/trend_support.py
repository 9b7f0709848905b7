"""Small reports built in process, for the trend / html-from-store tests (no pytest child)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from pytest_verial import Report

T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


def _verdict(score: float | None) -> str | None:
    if score is None:
        return None
    return "pass" if score >= 0.8 else "partial" if score > 0 else "fail"


def task_run(key: str, score: float | None, *, details: str = "ok", axis: str = "accuracy") -> Any:
    status = "passed" if (score or 0) >= 0.8 else "failed" if score is not None else "not_run"
    return {
        "id": f"b.verial.yaml::{key}",
        "task_id": key,
        "task_key": key,
        "run": "r1",
        "status": "completed" if score is not None else "cancelled",
        "verdict": _verdict(score),
        "score": score,
        "pass_threshold": 0.8,
        "axes": {axis: {"score": score, "weight": 1.0}} if score is not None else {},
        "feedback": f"feedback of {key}",
        "criterion_runs": [
            {
                "criterion_id": "c1",
                "label": f"label of {key}",
                "axis": axis,
                "status": status,
                "passed": status == "passed",
                "score": score,
                "details": details,
                "evidence": {"field_results": [{"path": "x", "expected": "SECRET-EXPECTED"}]},
                "nodeid": f"b.verial.yaml::{key}::c1",
            }
        ],
    }


def report(
    index: int,
    score: float | None,
    tasks: dict[str, float | None],
    *,
    benchmark: str = "bench",
    scored: bool = False,
    agent: str = "agent-1",
    details: str = "ok",
    axes: dict[str, float] | None = None,
) -> Report:
    """A one-run report ``index`` hours after :data:`T0`. Without ``axes``, the run's axes are
    the ones its task runs give (a report read from a file is checked against its criterion
    runs); ``axes`` sets them for a report stored directly, whatever they add up to."""
    started = (T0 + timedelta(hours=index)).isoformat().replace("+00:00", "Z")
    scores = [s for s in tasks.values() if s is not None]
    if axes is None and scores:
        run_axes = {"accuracy": {"score": sum(scores) / len(scores), "weight": float(len(scores))}}
    else:
        run_axes = {a: {"score": s, "weight": 1.0} for a, s in (axes or {}).items()}
    runs = [
        {
            "id": f"{benchmark}#{index}",
            "benchmark": {
                "slug": benchmark,
                "version": 1,
                "ref": f"{benchmark}@1",
                "file": f"{benchmark}.verial.yaml",
            },
            "runs": [{"label": "r1", "path": "runs/r1", "agent": agent, "scored": scored}],
            "status": "completed" if score is not None else "cancelled",
            "scored": scored,
            "score": score,
            "verdict": _verdict(score),
            "pass_threshold": 0.8,
            "axes": run_axes,
            "task_runs": [task_run(k, s, details=details) for k, s in tasks.items()],
        }
    ]
    built = Report.from_json(
        {
            "schema": "pytest-verial/report/v3",
            "generator": {"name": "pytest-verial", "version": "0"},
            "session": {
                "status": "completed",
                "phase": "completed",
                "scored": scored,
                "started_at": started,
                "completed_at": started,
                "duration": 1.0,
            },
            "benchmark_runs": runs,
        }
    )
    # the counts and flags its criterion runs give, as the plugin writes them (a report read
    # from a file is checked against its criterion runs); scores and axes stay as given
    for run in built.benchmark_runs:
        for n, task in enumerate(run.task_runs):
            again = task.rescored()
            run.task_runs[n] = task.model_copy(
                update={"counts": again.counts, "all_passed": again.all_passed}
            )
        again = run.rescored()
        run.counts, run.strict_success = again.counts, again.strict_success
    built.session.counts = built.benchmark_runs[0].counts
    return built
