"""Two runs side by side (issue 34): ``/ui/compare?base=&head=`` on ``verial serve`` and
``verial view``, and the page ``verial html HEAD BASE`` writes.

The comparison is ``verial compare``'s own (:func:`pytest_verial.reporting._diff.compare_reports`:
the same pairing of benchmark runs, session refs pairing every benchmark, the same regression
rules); this module only draws it. Per paired benchmark run, a table of two columns, BASE and
HEAD, down to criteria: every task (regressions first, then improvements, then the rest, as
the comparison orders them) and under it every criterion, its status and score on each side,
a failed criterion with its expected and actual values. A scored run shows statuses and scores
only (:mod:`pytest_verial.reporting._elide`). One static page: no script.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from .._results import CriterionRun, Report, TaskRun
from ..reporting._diff import BenchmarkRunDelta, Comparison, TaskDelta, compare_reports
from ..reporting._elide import elide
from ..reporting._outputs import write_text_atomic
from ._index_html import _e, page

#: the order of a change on the page (the comparison's own for tasks)
_RANK = {"regression": 0, "improvement": 1, "unscored": 2, "removed": 3, "added": 4}


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _pill(verdict: str | None) -> str:
    cls = verdict if verdict in ("pass", "partial", "fail") else "none"
    return f'<span class="pill {cls}">{_e(verdict or "-")}</span>'


def _change(change: str, delta: float | None = None) -> str:
    text = change if delta is None or abs(delta) < 1e-9 else f"{change} {delta:+.3f}"
    return f'<span class="change {_e(change)}">{_e(text)}</span>'


def _expected_actual(c: CriterionRun) -> str:
    """A failed criterion's failed rows, ``path: expected -> actual`` (nothing when none)."""
    evidence: Any = c.evidence
    if isinstance(evidence, BaseModel):
        evidence = evidence.model_dump(mode="json", by_alias=True)
    if c.passed or not isinstance(evidence, dict):
        return ""
    rows: list[Any] = []
    for key in ("fieldResults", "field_results", "assertionResults"):
        found = evidence.get(key)
        if isinstance(found, list):
            rows += [r for r in found if isinstance(r, dict) and not r.get("passed")]
    shown = [
        f"{r.get('path', '')}: expected {r.get('expected')!r}, actual {r.get('actual')!r}"
        for r in rows[:3]
    ]
    return "".join(f'<span class="ea">{_e(line)}</span>' for line in shown)


def _criterion_cell(runs: list[CriterionRun]) -> str:
    if not runs:
        return "-"
    first = runs[0]
    status = first.status.value
    if first.not_evaluated:
        status = "not verified"
    elif len({c.status for c in runs}) > 1:
        status = "mixed"
    cls = {"passed": "pass", "failed": "fail", "error": "fail"}.get(status, "none")
    score = _num(first.score if len(runs) == 1 else None)
    return f'<span class="pill {cls}">{_e(status)}</span> {score}{_expected_actual(first)}'


def _task_runs(report: Report) -> dict[str, TaskRun]:
    return {t.id: t for b in report.benchmark_runs for t in b.task_runs}


def _criteria_rows(
    task: TaskDelta, base: dict[str, TaskRun], head: dict[str, TaskRun]
) -> list[tuple[int, str]]:
    sides: dict[str, tuple[list[CriterionRun], list[CriterionRun]]] = {}
    for index, (ids, runs) in enumerate(((task.base_task_runs, base), (task.head_task_runs, head))):
        for run_id in ids:
            for c in runs[run_id].criterion_runs if run_id in runs else []:
                sides.setdefault(c.criterion_id, ([], []))[index].append(c)
    changed = {c.criterion_id: c for c in task.criteria}
    rows = []
    for criterion_id, (left, right) in sides.items():
        delta = changed.get(criterion_id)
        change = delta.change if delta is not None else "unchanged"
        rows.append(
            (
                _RANK.get(change, 5),
                f'<tr class="criterion-row {_e(change)}" data-criterion="{_e(criterion_id)}">'
                f"<td>{_e(criterion_id)}</td><td class=base>{_criterion_cell(left)}</td>"
                f"<td>{_criterion_cell(right)}</td>"
                f"<td>{_change(change, delta.delta if delta else None)}</td></tr>",
            )
        )
    return sorted(rows, key=lambda r: r[0])


def _run_table(
    delta: BenchmarkRunDelta,
    base: dict[str, TaskRun],
    head: dict[str, TaskRun],
    stored: tuple[Mapping[str, str], Mapping[str, str]],
) -> str:
    def name(side: int, run_id: str, label: str) -> str:
        found = stored[side].get(run_id)
        if found is None:
            return f"{_e(label)} <code>{_e(run_id)}</code>"
        return f'<a href="/ui/runs/{_e(found)}">{_e(label)} <code>{_e(found)}</code></a>'

    verdict = "regression" if delta.regression else "no regression"
    interval = (
        f"; mean task change {delta.interval.mean:+.3f} (95% CI {delta.interval.low:+.3f} to "
        f"{delta.interval.high:+.3f}, {delta.interval.tasks} tasks)"
        if delta.interval is not None
        else ""
    )
    rows = []
    for task in delta.tasks:
        rows.append(
            f'<tr class="task-row {_e(task.change)}" data-task="{_e(task.task_key)}">'
            f"<td>{_e(task.task_key)}</td>"
            f"<td class=base>{_pill(task.base_verdict)} {_num(task.base_score)}</td>"
            f"<td>{_pill(task.head_verdict)} {_num(task.head_score)}</td>"
            f"<td>{_change(task.change, task.delta)}</td></tr>"
        )
        rows += [row for _, row in _criteria_rows(task, base, head)]
    notes = "".join(f'<p class="meta">{_e(n)}</p>' for n in delta.notes)
    return (
        f'<section class="pair {"regression" if delta.regression else ""}" '
        f'data-benchmark="{_e(delta.benchmark)}">'
        f"<h2>{_e(delta.benchmark)}: {_e(verdict)}</h2>"
        f'<div class="meta">{_e(delta.file)}; run score {_num(delta.base_score)} -&gt; '
        f"{_num(delta.head_score)}{_e(interval)}</div>{notes}"
        '<table class="side-by-side"><thead><tr><th>task / criterion</th>'
        f'<th class="base">base: {name(0, delta.base, delta.base_name)} '
        f"{_pill(delta.base_verdict)} {_num(delta.base_score)}</th>"
        f'<th class="head">head: {name(1, delta.head, delta.head_name)} '
        f"{_pill(delta.head_verdict)} {_num(delta.head_score)}</th>"
        f"<th>change</th></tr></thead><tbody>{''.join(rows)}</tbody></table></section>"
    )


def render_compare(
    base: Report,
    head: Report,
    names: tuple[str, str],
    *,
    nav: str = "",
    stored: tuple[Mapping[str, str], Mapping[str, str]] = ({}, {}),
) -> str:
    """The page of BASE and HEAD side by side (``names``: the refs as given); ``stored``: per
    side, a benchmark run's id in its report -> its id in the store (whose page it links)."""
    base, head = elide(base), elide(head)
    comparison: Comparison = compare_reports(base, head, names=names)
    base_runs, head_runs = _task_runs(base), _task_runs(head)
    regressed = sum(d.regression for d in comparison.benchmark_runs)
    summary = (
        f'<section class="summary"><h2>{_e(names[0])} -&gt; {_e(names[1])}: '
        f"{len(comparison.benchmark_runs)} benchmark run(s) paired, {regressed} regressed</h2>"
        '<div class="meta">the comparison of <code>verial compare</code>: benchmark runs pair by '
        "benchmark and file; in each, regressions first, then improvements, then the rest"
        "</div></section>"
    )
    unpaired = "".join(
        f'<li class="unpaired">{_e(u.side)} {_e(u.id)}: {_e(u.reason)}</li>'
        for u in comparison.unpaired
    )
    if unpaired:
        unpaired = f"<section><h2>Not paired</h2><ul>{unpaired}</ul></section>"
    tables = "".join(_run_table(d, base_runs, head_runs, stored) for d in comparison.benchmark_runs)
    return page(
        "pytest-verial: compare",
        summary + tables + unpaired,
        nav=nav,
        meta=f"base {_e(names[0])} - head {_e(names[1])}",
    )


def write_compare(path: Path, base: Report, head: Report, names: tuple[str, str]) -> None:
    """``verial html HEAD BASE``: the two runs side by side, written atomically as one static
    page (the page ``/ui/compare`` serves, with no links into a store)."""
    write_text_atomic(path, render_compare(base, head, names))
