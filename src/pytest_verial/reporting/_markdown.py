"""A Markdown summary of a report, for CI pages (GitHub-flavoured Markdown).

Written by ``--verial-markdown PATH``, and appended to the file ``GITHUB_STEP_SUMMARY`` names
when that variable is set (GitHub Actions shows it on the run's page). Per benchmark run: a
heading with score, verdict and strict success, a table of task runs, and the failing
criteria with their expected / actual rows inside a collapsed ``<details>`` block. A scored
run shows ids, scores and statuses only. Every cell is escaped: sandbox text cannot break a
table, open a link or inject HTML.
"""

from __future__ import annotations

import html
import json
import os
from pathlib import Path
from typing import Any

from .._display import escape, sanitize
from .._names import axis_name, run_name
from .._results import FAILING, BenchmarkRun, CriterionRun, Report, TaskRun
from .._secrets import redact
from ._elide import elide
from ._terminal import plural

_MAX_ROWS = 20
_VERDICT = {"pass": "pass", "partial": "partial", "fail": "**fail**"}


def cell(value: Any, width: int = 80) -> str:
    """Text that stays inside one table cell: no newline, pipe, HTML or Markdown syntax, no
    control character (:func:`.._display.sanitize`) and no link."""
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    text = escape(" ".join(str(text).split()))
    if len(text) > width:
        text = text[: width - 3] + "..."
    text = html.escape(text, quote=False)
    for char in "\\|`*_[]<>#!":
        text = text.replace(char, "\\" + char)
    return sanitize(text, markdown=True)


def _score(value: float | None) -> str:
    return f"{value:.3f}" if value is not None else "-"


def markdown(report: Report, scored: bool = False) -> str:
    """The summary as GitHub-flavoured Markdown (secrets masked)."""
    report = elide(report, scored)
    lines = ["## pytest-verial", ""]
    counts = report.session.counts
    lines.append(
        f"{plural(counts.task_runs, 'task run')} in "
        f"{plural(len(report.benchmark_runs), 'benchmark run')}; "
        f"criteria: {counts.criteria_passed} passed, {counts.criteria_failed} failed, "
        f"{plural(counts.criteria_error, 'error')}"
        + (
            f" ({counts.criteria_not_evaluated} not evaluated: the verifier could not check them)"
            if counts.criteria_not_evaluated
            else ""
        )
        + f". Session {report.session.status}."
    )
    lines.append("")
    for run in report.benchmark_runs:
        lines.extend(_run(run, scored or run.scored))
    for warning in report.session.warnings:
        lines.append(f"> warning: {cell(warning, 300)}")
    return sanitize(redact("\n".join(lines).rstrip()), keep="\n", markdown=True) + "\n"


def _run(run: BenchmarkRun, scored: bool) -> list[str]:
    labels = run_name(run.runs)
    strict = f", strict success {run.strict_success:.0%}" if run.strict_success is not None else ""
    lines = [
        f"### {cell(run.benchmark.ref)} on {cell(labels)}: {_score(run.score)} "
        f"{_VERDICT.get(run.verdict or '', '-')}{strict}",
        "",
        "| task | score | verdict | axes | status |",
        "|---|---:|---|---|---|",
    ]
    for t in run.task_runs:
        axes = ", ".join(f"{axis_name(n)} {a.score:.2f}" for n, a in t.axes.items())
        critical = (
            f" (critical failed: {', '.join(t.critical_failed)})" if t.critical_failed else ""
        )
        if t.verification == "incomplete":
            critical += f" (not verified: {', '.join(n.reason for n in t.not_evaluated)})"
        lines.append(
            f"| {cell(t.task_key)} | {_score(t.score)} | {_VERDICT.get(t.verdict or '', '-')} "
            f"| {cell(axes)} | {cell(str(t.status) + critical)} |"
        )
    failing = [
        (t, c)
        for t in run.task_runs
        for c in t.criterion_runs
        if c.status in FAILING and c.not_evaluated is None
    ]
    lines.append("")
    if failing:
        lines.extend(_failing(failing, scored))
    return lines


def _failing(failing: list[tuple[TaskRun, CriterionRun]], scored: bool) -> list[str]:
    lines = [
        f"<details><summary>{len(failing)} failing "
        f"{'criterion' if len(failing) == 1 else 'criteria'}</summary>",
        "",
        "| task | criterion | check | status | score | details |",
        "|---|---|---|---|---:|---|",
    ]
    for t, c in failing:
        details = "(withheld: scored run)" if scored else cell(c.details or "", 200)
        lines.append(
            f"| {cell(t.task_key)} | {cell(c.criterion_id)} | {cell(c.assertion or '')} "
            f"| {c.status} | {_score(c.score)} | {details} |"
        )
    if not scored:
        for t, c in failing:
            rows = _field_rows(c)
            if rows:
                lines.extend(["", f"**{cell(t.task_key)} / {cell(c.criterion_id)}**", ""])
                lines.extend(rows)
    lines.extend(["", "</details>", ""])
    return lines


def _field_rows(c: CriterionRun) -> list[str]:
    rows = [r.model_dump(mode="json") for r in c.evidence.rows()] if c.evidence else []
    if not rows:
        return []
    out = ["| path | expected | actual | |", "|---|---|---|---|"]
    for r in rows[:_MAX_ROWS]:
        op = f" ({r['op']})" if r.get("op") else ""
        out.append(
            f"| {cell(r.get('path'))} | {cell(r.get('expected'), 60)}{cell(op)} "
            f"| {cell(r.get('actual'), 60)} | {'ok' if r.get('passed') else 'FAIL'} |"
        )
    if len(rows) > _MAX_ROWS:
        out.append(f"| ... {len(rows) - _MAX_ROWS} more | | | |")
    return out


def write_markdown(path: Path, report: Report, scored: bool = False) -> None:
    """Write the summary to ``path`` (atomically)."""
    from ._outputs import write_text_atomic

    write_text_atomic(path, markdown(report, scored))


def append_step_summary(
    report: Report, scored: bool = False, path: Path | str | None = None
) -> Path | None:
    """Append the summary to ``path`` (default ``$GITHUB_STEP_SUMMARY``); the file, or None.

    Appended, not replaced: the step's other writers keep their lines. One ``O_APPEND`` write to
    a regular file only (:func:`._outputs.append_text`), checked with the session's other outputs
    and inputs before the session starts.
    """
    from ._outputs import append_text

    target = path or os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return None
    return append_text(target, markdown(report, scored) + "\n")
