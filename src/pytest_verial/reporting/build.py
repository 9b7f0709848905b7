"""Build the three-level report (benchmark run -> task runs -> criterion runs) from records.

Pure: takes the plans, the selected node ids and the criterion runs received, and returns
plain JSON. The same function serves ``-n 0`` and ``-n 2``, which is why their reports agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .. import __version__
from ..engine import base_record
from ..loader import BenchmarkPlan, CriterionPlan, TaskPlan
from ..runinfo import RunDir, shared_folders
from ..scoring import (
    DEFAULT_VERDICT_THRESHOLD,
    Scored,
    axes,
    resolve_threshold,
    run_score,
    task_score,
    trial_stats,
    verdict,
)

SCHEMA_ID = "pytest-verial/report/v1"
COUNTED = ("passed", "failed", "error", "gated")


@dataclass
class ReportInput:
    """Everything the report is made of."""

    files: Sequence[tuple[str, BenchmarkPlan]]  # display path, plan; in collection order
    #: run directories scored for each file (by display path); all of them, in order
    file_runs: Mapping[str, Sequence[RunDir]]
    runs: Sequence[RunDir]
    selected: set[str]
    records: Mapping[str, dict[str, Any]]
    pass_threshold: float | None
    scored: bool
    started_at: str
    completed_at: str | None
    duration: float
    interrupted: bool
    collection_errors: Sequence[dict[str, str]]
    running: bool = False


def task_node_name(task: TaskPlan, run: RunDir, runs: int) -> str:
    """The task node's name: its key, plus ``@<run>`` when several runs are scored."""
    return task.key if runs == 1 else f"{task.key}@{run.label}"


def _criterion_run(
    nodeid: str, plan: CriterionPlan, task: TaskPlan, data: ReportInput
) -> dict[str, Any]:
    record = data.records.get(nodeid)
    if record is not None:
        return {**record, "nodeid": nodeid}
    status = "deselected" if nodeid not in data.selected else "not_run"
    return {
        **base_record(plan, task),
        "nodeid": nodeid,
        "passed": False,
        "score": None,
        "status": status,
        "details": None,
        "evidence": None,
        "started_at": None,
        "completed_at": None,
        "duration": None,
    }


def _task_run(
    display: str, plan: BenchmarkPlan, task: TaskPlan, run: RunDir, data: ReportInput
) -> dict[str, Any] | None:
    node = f"{display}::{task_node_name(task, run, len(data.file_runs[display]))}"
    ordered = sorted(task.criteria, key=lambda c: c.position)
    ids = [f"{node}::{c.id}" for c in ordered]
    if task.criteria and not any(i in data.selected for i in ids):
        return None
    if not task.criteria and f"{node}::no-criteria" not in data.selected:
        return None
    runs = [_criterion_run(i, c, task, data) for i, c in zip(ids, ordered, strict=True)]
    statuses = {r["status"] for r in runs}
    status = (
        "incomplete"
        if "deselected" in statuses
        else "cancelled"
        if "not_run" in statuses and not data.running
        else "running"
        if "not_run" in statuses
        else "skipped"
        if statuses == {"skipped"}  # skip_verification: nothing was verified
        else "completed"
    )
    counted = [r for r in runs if r["status"] in COUNTED]
    scored = [Scored(float(r["score"]), float(r["weight"]), r["axis"]) for r in counted]
    threshold = resolve_threshold(
        task.task.pass_threshold,
        plan.benchmark.pass_threshold,
        data.pass_threshold,
        default=DEFAULT_VERDICT_THRESHOLD,
    )
    has_scores = status in ("completed", "incomplete")
    score = task_score(scored) if has_scores else None
    return {
        "id": node,
        "task_id": task.task.id,
        "task_key": task.key,
        "entity": task.entity.id if task.entity else None,
        "name": task.task.name,
        "benchmark": plan.slug,
        "file": display,
        "run": run.label,
        "status": status,
        "verdict": verdict(score, threshold, bool(scored)) if score is not None else None,
        "score": score,
        "pass_threshold": threshold,
        "axes": axes(scored) if has_scores else {},
        "counts": {
            s: sum(1 for r in runs if r["status"] == s)
            for s in ("passed", "failed", "error", "gated", "skipped", "deselected", "not_run")
        },
        "snapshot": task.task.model_dump(mode="json", exclude_none=True),
        "criterion_runs": runs,
    }


def build_report(data: ReportInput) -> dict[str, Any]:
    """The JSON report (see ``report.schema.json``)."""
    task_runs = [
        tr
        for display, plan in data.files
        for run in data.file_runs[display]
        for task in plan.tasks
        for tr in [_task_run(display, plan, task, run, data)]
        if tr
    ]
    completed = [t for t in task_runs if t["status"] == "completed"]
    benchmarks = [
        {
            "slug": p.slug,
            "version": p.benchmark.version,
            "name": p.benchmark.name,
            "ref": f"{p.slug}@{p.benchmark.version}" if p.benchmark.version is not None else p.slug,
            "file": d,
            "pass_threshold": p.benchmark.pass_threshold,
        }
        for d, p in data.files
    ]
    single = {p.benchmark.pass_threshold for _, p in data.files}
    threshold = resolve_threshold(
        single.pop() if len(single) == 1 else None,
        data.pass_threshold,
        default=DEFAULT_VERDICT_THRESHOLD,
    )
    score = run_score(t["score"] for t in completed)
    statuses = {t["status"] for t in task_runs}
    status = (
        "running"
        if data.running
        else "cancelled"
        if data.interrupted or "cancelled" in statuses
        else "completed"
    )
    warnings = shared_folders(
        [
            (display, run, task.key)
            for display, plan in data.files
            for run in data.file_runs[display]
            for task in plan.tasks
        ]
    ) + [
        f"task run {t['id']} is incomplete ({t['counts']['deselected']} criteria deselected): "
        "left out of the run score"
        for t in task_runs
        if t["status"] == "incomplete"
    ]
    criteria = [c for t in task_runs for c in t["criterion_runs"]]
    summary = {
        "task_runs": len(task_runs),
        **{
            s: sum(1 for t in task_runs if t["status"] == s)
            for s in ("completed", "incomplete", "cancelled", "skipped")
        },
        "verdicts": {
            v: sum(1 for t in completed if t["verdict"] == v) for v in ("pass", "partial", "fail")
        },
        "criteria": len(criteria),
        **{
            f"criteria_{s}": sum(1 for c in criteria if c["status"] == s)
            for s in ("passed", "failed", "error", "gated", "skipped", "deselected", "not_run")
        },
        "collection_errors": len(data.collection_errors),
    }
    run_info = [
        {
            "label": r.label,
            "path": str(r.path),
            "id": r.config.id,
            "agent": r.config.agent,
            "executor_model": r.config.executor_model,
            "scored": data.scored or bool(r.config.scored),
        }
        for r in data.runs
    ]
    report: dict[str, Any] = {
        "schema": SCHEMA_ID,
        "generator": {"name": "pytest-verial", "version": __version__},
        "benchmark_run": {
            "benchmarks": benchmarks,
            "runs": run_info,
            "status": status,
            "phase": "started" if data.running else "completed",
            "scored": data.scored,
            "score": score if completed else None,
            "verdict": verdict(score, threshold, bool(completed)) if completed else None,
            "pass_threshold": threshold,
            "started_at": data.started_at,
            "completed_at": data.completed_at,
            "duration": round(data.duration, 3),
            "summary": summary,
            "warnings": warnings,
            "collection_errors": list(data.collection_errors),
            "trials": _trials(task_runs)
            if any(len(runs) > 1 for runs in data.file_runs.values())
            else [],
            "task_runs": task_runs,
        },
    }
    return report


def _trials(task_runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for t in task_runs:
        if t["status"] == "completed":
            groups.setdefault((t["file"], t["task_key"]), []).append(t)
    out = []
    for (file, key), runs in groups.items():
        stats = trial_stats([r["score"] for r in runs], [r["verdict"] for r in runs])
        out.append(
            {
                "file": file,
                "task_key": key,
                "k": stats.k,
                "mean": stats.mean,
                "pass_k": stats.pass_all,
                "pass_rate": stats.pass_rate,
                "ci95": [stats.ci_low, stats.ci_high],
                "runs": [r["run"] for r in runs],
            }
        )
    return out
