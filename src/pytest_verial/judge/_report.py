"""Verification facts for the report: retry-with-feedback text and the judge/cost summary.

Both read only the typed report (criterion runs with their evidence), so they give the same
result under ``-n 0`` and ``-n 2`` and can be recomputed from a saved report.

``feedback`` (PRD-103 §7.2) is written for every failed or partial task run: the criteria that
did not pass, their failed fields with expected and actual values, and the judge's reasoning
for principles rated below 4, phrased for a coordinator to put into the agent's next attempt.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from .._results import FAILING, CriterionRun, Status, TaskRun
from ._settings import DEFAULT_BUDGET

_MAX_ROWS = 8


def _value(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= 120 else text[:117] + "..."


def _criterion_feedback(run: CriterionRun) -> list[str]:
    name = run.label or run.criterion_id
    details = (run.details or "").strip()
    lines = [f"- {name} [{run.assertion}, {run.status}]: {details}".rstrip(": ")]
    evidence = run.evidence
    rows = [r for r in evidence.rows() if not r.passed] if evidence else []
    for r in rows[:_MAX_ROWS]:
        if r.message:  # a schema violation says it best itself
            lines.append(f"    {r.path}: {_value(r.message)}")
            continue
        op = f" ({r.op})" if r.op else ""
        lines.append(f"    {r.path}: expected {_value(r.expected)}{op}, got {_value(r.actual)}")
    if len(rows) > _MAX_ROWS:
        lines.append(f"    ... and {len(rows) - _MAX_ROWS} more failed fields")
    for phrase in evidence.phrases() if evidence else []:
        forbidden = phrase.expected == "absent"
        ok = phrase.passed if isinstance(phrase.passed, bool) else phrase.found != forbidden
        if not ok:
            verb = "must not say" if forbidden else "must say"
            lines.append(f"    {verb}: {_value(phrase.phrase)}")
    for rating in evidence.ratings() if evidence else []:
        if int(rating.rating or 0) < 4:
            lines.append(
                f"    principle {_value(rating.principle)}: rated "
                f"{rating.rating}/5 - {rating.reasoning}"
            )
    return lines


def _judge_info(run: CriterionRun) -> Mapping[str, Any]:
    """The judge's facts on a criterion run's evidence (calls, cost, models)."""
    info = getattr(run.evidence, "judge", None) if run.evidence is not None else None
    return info if isinstance(info, Mapping) else {}


def reads(run: Any) -> bool:
    """Whether :func:`task_feedback` or :func:`verification_summary` reads criterion run
    ``run`` (a typed run or the session's plain record): a counted run that did not pass, a
    pass with partial credit, a judged run. A light report keeps these typed
    (``reporting._build.build_light``), so the judge's annotations of it equal those of the
    whole report."""
    partial = run.status is Status.PASSED and (run.score or 0) < 1
    return bool(run.judge) or run.status in FAILING or partial


def task_feedback(task_run: TaskRun) -> str | None:
    """The feedback text of a failed or partial task run (None for a pass or no verdict).

    Only what the agent should change: a criterion the verifier could not evaluate is not the
    agent's to fix and is left out (and so is anything about the verifier's set-up). A task
    run whose verdict is unknown because of those still gets the criteria it did fail."""
    runs = [
        r
        for r in task_run.criterion_runs
        if r.not_evaluated is None
        and (r.status in FAILING or (r.status is Status.PASSED and (r.score or 0) < 1))
    ]
    failed = any(r.status in FAILING for r in runs)
    if task_run.verdict not in ("fail", "partial") and not (task_run.verdict is None and failed):
        return None
    if task_run.score is not None and task_run.verdict is not None:
        head = f"Task {task_run.task_key} scored {task_run.score:.2f} ({task_run.verdict})"
    elif task_run.score is not None:  # not every criterion could be checked
        head = f"Task {task_run.task_key} scored {task_run.score:.2f} on the criteria checked"
    else:
        head = f"Task {task_run.task_key} failed"
    lines = [head + ". Address these before the next attempt:"]
    for run in runs:
        lines.extend(_criterion_feedback(run))
    if not runs:
        lines.append("- the task has no criteria, or none that could be scored")
    return "\n".join(lines)


def verification_summary(
    task_runs: Iterable[TaskRun],
    task_costs: Mapping[tuple[str, str], float | None],
    budget: float = DEFAULT_BUDGET,
) -> dict[str, Any]:
    """Judge calls made and saved, verification cost and its share of task cost.

    ``task_costs`` maps (run label, task key) to the task's cost from run.yaml (None unknown).
    A judge-everything pipeline would call the judge once per judge criterion that ran.
    """
    judge_runs: list[CriterionRun] = []
    cost_by_task: dict[tuple[str, str], float] = {}
    models: set[str] = set()
    executors: set[str] = set()
    for task in task_runs:
        key = (task.run, task.task_key)
        for run in task.criterion_runs:
            if not run.judge or run.status in (Status.DESELECTED, Status.NOT_RUN):
                continue
            judge_runs.append(run)
            info = _judge_info(run)
            cost_by_task[key] = cost_by_task.get(key, 0.0) + float(info.get("cost") or 0.0)
            if info.get("model"):
                models.add(str(info["model"]))
            if info.get("executor_model"):
                executors.add(str(info["executor_model"]))
    infos = [_judge_info(r) for r in judge_runs]
    verification_cost = sum(cost_by_task.values())
    known = {k: c for k, c in task_costs.items() if c is not None}
    task_cost = sum(known.values())
    share = verification_cost / task_cost if task_cost > 0 else None
    return {
        "judge_models": sorted(models),
        "executor_models": sorted(executors),
        "judge_criteria": len(judge_runs),
        "judge_calls": sum(int(i.get("calls") or 0) for i in infos),
        "evaluations": sum(1 for i in infos if i.get("called") or i.get("cached")),
        "cached": sum(1 for i in infos if i.get("cached")),
        "saved_by_gating": sum(1 for r in judge_runs if r.status is Status.GATED),
        "saved_by_bypass": sum(1 for r in judge_runs if r.status is Status.SKIPPED),
        "judge_everything_calls": len(judge_runs),
        "errors": sum(1 for r in judge_runs if r.status is Status.ERROR),
        # the errors of the verifier itself: judge absent, unreachable, slow, unparseable
        "not_evaluated": sum(1 for r in judge_runs if r.not_evaluated is not None),
        "not_evaluated_reasons": _reasons(judge_runs),
        "cost": round(verification_cost, 8),
        "cost_known": all(i.get("cost_known", True) for i in infos),
        "task_cost": round(task_cost, 6) if known else None,
        "cost_share": round(share, 10) if share is not None else None,
        "budget": budget,
        "over_budget": bool(share is not None and share > budget),
    }


def _reasons(runs: Iterable[CriterionRun]) -> dict[str, int]:
    """How many criteria were not evaluated, by reason."""
    reasons: dict[str, int] = {}
    for run in runs:
        if run.not_evaluated is not None:
            reasons[run.not_evaluated] = reasons.get(run.not_evaluated, 0) + 1
    return reasons


def verification_lines(summary: Mapping[str, Any], configured: bool = True) -> list[str]:
    """Terminal lines for the verification summary: nothing when the session has no judge
    criterion, nor when no judge is ``configured`` (``--verial-judge-model`` / ini) and no
    judge criterion was evaluated or errored (every one bypassed or gated: ``./scripts/demo``)."""
    if not summary.get("judge_criteria"):
        return []
    ran = summary.get("evaluations") or summary.get("judge_calls") or summary.get("errors")
    if not configured and not summary.get("judge_models") and not ran:
        return []
    models = ", ".join(summary["judge_models"]) or (
        "(no call made)" if configured else "(no model configured)"
    )
    lines = [
        f"judge {models}: {summary['judge_calls']} call(s) made for "
        f"{summary['judge_criteria']} judge criteria ({summary['cached']} from cache); "
        f"saved {summary['saved_by_gating']} by gating and {summary['saved_by_bypass']} by "
        f"bypass (a judge-everything pipeline: {summary['judge_everything_calls']} evaluations)"
    ]
    share = summary.get("cost_share")
    cost = f"${summary['cost']:.4f}" + ("" if summary.get("cost_known") else " (price unknown)")
    if share is None:
        lines.append(
            f"verification cost {cost}; task cost unknown (add cost per task in "
            "run.yaml to see the share)"
        )
    else:
        lines.append(
            f"verification cost {cost} = {share:.1%} of task cost "
            f"${summary['task_cost']:.4f} (budget {summary['budget']:.0%})"
        )
        if summary.get("over_budget"):
            lines.append(
                f"warning: verification cost is {share:.1%} of task cost, above the "
                f"{summary['budget']:.0%} budget"
            )
    return lines
