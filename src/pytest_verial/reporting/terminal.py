"""Terminal output: failing criteria as prose with expected/actual rows, and the summary table."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..display import escape
from ..nodeids import parse
from ..results import AxisScore, BenchmarkRun, Report, Status, TaskRun, TaskStatus
from ..secrets import redact

_RESULT_KEYS = ("field_results", "assertion_results")


def _short(value: Any, width: int = 40) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    text = repr(value) if isinstance(value, str) else text
    return text if len(text) <= width else text[: width - 3] + "..."


def _rows(evidence: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for key in _RESULT_KEYS:
        results = evidence.get(key) or []
        if results:
            width = max(len("path"), *(len(str(r.get("path", ""))) for r in results))
            lines.append(f"    {'path':<{width}}  {'expected':<30}  {'actual':<30}")
            for r in results:
                op = f" ({r['op']})" if r.get("op") else ""
                mark = "ok" if r.get("passed") else "FAIL"
                lines.append(
                    f"    {str(r.get('path')):<{width}}  {_short(r.get('expected'), 30) + op:<30}"
                    f"  {_short(r.get('actual'), 30):<30}  {mark}"
                )
    for r in evidence.get("phrase_results") or []:
        mark = "ok" if r.get("passed") else "FAIL"
        where = f"turn {r['turn']}" if r.get("turn") is not None else "not found"
        lines.append(
            f"    {r.get('expected', 'present'):<8} {_short(r.get('phrase'), 40):<42} "
            f"{where:<10} {mark}"
        )
    return lines


def describe_failure(record: dict[str, Any], scored: bool) -> str:
    """A failing criterion as a sentence, plus expected/actual rows unless the run is scored."""
    status = record.get("status", "failed")
    what = (
        f"criterion {record.get('criterion_id')!r} ({record.get('assert')}) {status}: "
        f"score {float(record.get('score') or 0.0):.2f}, weight {record.get('weight')}, "
        f"axis {record.get('axis') or '__default__'}"
    )
    if scored:
        return escape(redact(what)) + "\n  (details withheld: scored run; see the JSON report)"
    lines = [what, f"  {record.get('details') or ''}".rstrip()]
    lines.extend(_rows(record.get("evidence") or {}))
    # Secrets masked in the raw text first, then each line escaped on its own: a value's
    # newline or ESC never reaches the terminal.
    text = redact("\n".join(line for line in lines if line.strip()))
    return "\n".join(escape(line) for line in text.split("\n"))


def _axes(axes: Mapping[str, AxisScore]) -> str:
    return "  ".join(f"{name} {v.score:.2f} (w{v.weight:g})" for name, v in axes.items())


def _name(task_run: TaskRun) -> str:
    """The task node's name: ``task[entity]``, with ``@run`` when several runs are scored."""
    return parse(task_run.id).task or task_run.id


def _score(value: float | None) -> str:
    return f"{value:.3f}" if value is not None else "-"


def summary_lines(report: Report, scored: bool = False) -> list[str]:
    """A table per benchmark run, its run line, and the failing criteria (secrets masked).

    A scored benchmark run (or ``scored``) shows no details or evidence."""
    return [redact(line) for line in _summary_lines(report, scored)]


def _run_lines(run: BenchmarkRun) -> list[str]:
    tasks = run.task_runs
    labels = ", ".join(r.label for r in run.runs)
    lines = [f"benchmark run {run.benchmark.ref} on {labels} ({run.benchmark.file})"]
    width = max(len("task"), *(len(_name(t)) for t in tasks))
    lines.append(f"{'task':<{width}}  {'score':>6}  {'verdict':<8}  axes")
    for t in tasks:
        note = f"  [{t.status}]" if t.status is not TaskStatus.COMPLETED else ""
        if t.critical_failed:
            note += f"  [critical failed: {', '.join(t.critical_failed)}]"
        lines.append(
            f"{_name(t):<{width}}  {_score(t.score):>6}  {t.verdict or '-':<8}  "
            f"{_axes(t.axes)}{note}"
        )
    if run.trials is not None:
        for trial in run.trials.tasks:
            lines.append(
                f"trials {trial.task_key}: k={trial.k} mean {trial.mean:.3f} "
                f"pass^k {'yes' if trial.pass_k else 'no'} "
                f"95% CI [{trial.ci95[0]:.3f}, {trial.ci95[1]:.3f}]"
            )
        whole = run.trials
        lines.append(
            f"trials of the run: k={whole.k} mean {whole.mean:.3f} "
            f"pass^k {'yes' if whole.pass_k else 'no'} "
            f"95% CI [{whole.ci95[0]:.3f}, {whole.ci95[1]:.3f}]"
        )
    c = run.counts
    strict = f", strict success {run.strict_success:.0%}" if run.strict_success is not None else ""
    lines.append(
        f"run score {_score(run.score)}, verdict {run.verdict or '-'}{strict}, "
        f"status {run.status}; {c.completed} of {c.task_runs} task runs scored "
        f"({c.verdicts.pass_} pass, {c.verdicts.partial} partial, {c.verdicts.fail} fail); "
        f"criteria: {c.criteria_passed} passed, {c.criteria_failed} failed, "
        f"{c.criteria_error} errors"
        + (f", {c.criteria_gated} gated" if c.criteria_gated else "")
        + (f", {c.criteria_skipped} skipped" if c.criteria_skipped else "")
    )
    return lines


def _summary_lines(report: Report, scored: bool) -> list[str]:
    lines: list[str] = []
    if not report.benchmark_runs:
        lines.append("no task runs were scored")
    for run in report.benchmark_runs:
        lines.extend(_run_lines(run))
    for warning in report.session.warnings:
        lines.append(f"warning: {warning}")
    lines = [escape(line) for line in lines]  # names, refs, run labels, warnings
    failing = [
        (run, t, c)
        for run in report.benchmark_runs
        for t in run.task_runs
        for c in t.criterion_runs
        if c.status in (Status.FAILED, Status.ERROR, Status.GATED)
    ]
    if failing:
        lines.append("failing criteria:")
        for run, t, c in failing:
            head = escape(f"  {_name(t)}::{c.criterion_id}")
            text = describe_failure(c.to_json(), scored or run.scored)
            lines.append(head + "  " + text.replace("\n", "\n  "))
    return lines
