"""Terminal output: failing criteria as prose with expected/actual rows, and the summary table."""

from __future__ import annotations

import json
from typing import Any

from ..display import escape

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
        return escape(what) + "\n  (details withheld: scored run; see the JSON report)"
    lines = [what, f"  {record.get('details') or ''}".rstrip()]
    lines.extend(_rows(record.get("evidence") or {}))
    # Each line escaped on its own: a value's newline or ESC never reaches the terminal.
    return "\n".join(escape(line) for line in lines if line.strip())


def _axes(axes: dict[str, dict[str, float]]) -> str:
    return "  ".join(f"{name} {v['score']:.2f} (w{v['weight']:g})" for name, v in axes.items())


def _name(task_run: dict[str, Any]) -> str:
    """The task node's name: ``task[entity]``, with ``@run`` when several runs are scored."""
    return str(task_run["id"]).rsplit("::", 1)[-1]


def summary_lines(report: dict[str, Any], scored: bool) -> list[str]:
    """The summary table per task run and the run line."""
    run = report["benchmark_run"]
    lines: list[str] = []
    tasks = run["task_runs"]
    if not tasks:
        return ["no task runs were scored"]
    width = max(
        len("task"),
        *(len(_name(t)) for t in tasks),
    )
    lines.append(f"{'task':<{width}}  {'score':>6}  {'verdict':<8}  axes")
    for t in tasks:
        name = _name(t)
        score = f"{t['score']:.3f}" if t["score"] is not None else "-"
        verdict = t["verdict"] or "-"
        note = f"  [{t['status']}]" if t["status"] != "completed" else ""
        lines.append(f"{name:<{width}}  {score:>6}  {verdict:<8}  {_axes(t['axes'])}{note}")
    for trial in run.get("trials") or []:
        lines.append(
            f"trials {trial['task_key']}: k={trial['k']} mean {trial['mean']:.3f} "
            f"pass^k {'yes' if trial['pass_k'] else 'no'} "
            f"95% CI [{trial['ci95'][0]:.3f}, {trial['ci95'][1]:.3f}]"
        )
    s = run["summary"]
    score = f"{run['score']:.3f}" if run["score"] is not None else "-"
    refs = ", ".join(b["ref"] for b in run["benchmarks"])
    labels = ", ".join(dict.fromkeys(r["label"] for r in run["runs"]))
    lines.append(
        f"run {refs} on {labels}: score {score}, verdict {run['verdict'] or '-'}, "
        f"status {run['status']}; {s['completed']} of {s['task_runs']} task runs scored "
        f"({s['verdicts']['pass']} pass, {s['verdicts']['partial']} partial, "
        f"{s['verdicts']['fail']} fail); criteria: {s['criteria_passed']} passed, "
        f"{s['criteria_failed']} failed, {s['criteria_error']} errors"
        + (f", {s['criteria_gated']} gated" if s["criteria_gated"] else "")
        + (f", {s['criteria_skipped']} skipped" if s["criteria_skipped"] else "")
    )
    for warning in run["warnings"]:
        lines.append(f"warning: {warning}")
    failing = [
        (t, c)
        for t in tasks
        for c in t["criterion_runs"]
        if c["status"] in ("failed", "error", "gated")
    ]
    lines = [escape(line) for line in lines]  # names, refs, run labels, warnings
    if failing:
        lines.append("failing criteria:")
        for t, c in failing:
            head = escape(f"  {_name(t)}::{c['criterion_id']}")
            lines.append(head + "  " + describe_failure(c, scored).replace("\n", "\n  "))
    return lines
