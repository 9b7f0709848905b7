"""``verial show REPORT [TASK_RUN [CRITERION]]``: Verial's three levels, from a saved report.

- no id: every benchmark run with its task table and run line;
- a task run: its score, verdict, axes and one line per criterion run;
- a criterion run: every field, its details, its expected / actual rows and its evidence.

Ids are node ids (``file::task[@run]``, ``file::task::criterion``, as pytest prints them) or
plain ids (``task`` / ``task[entity]`` and ``criterion``). An id that matches several runs
(one task on several run folders) lists them, so the user can pick one. A scored run shows
no details or evidence, as on the terminal. Exit status: 0 shown, 2 not found or unusable.
"""

from __future__ import annotations

import argparse
import json
import sys

from .._display import escape
from .._names import axis_name, run_name
from .._nodeids import criterion_nodeid, parse, task_run_of
from .._results import BenchmarkRun, CriterionRun, Report, TaskRun
from .._secrets import redact, redact_json
from ..reporting._elide import elide
from ..reporting._json_report import load_report
from ..reporting._terminal import describe_failure, summary_lines

#: evidence printed in full up to this many characters of JSON
_EVIDENCE_CHARS = 4000


def configure(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``verial show``."""
    parser.add_argument(
        "report",
        help="a JSON report (--verial-report), a stored session (latest, latest~N, ses_...) or "
        "a stored benchmark run (br_...)",
    )
    parser.add_argument("task_run", nargs="?", help="a task run: node id, or task[entity] id")
    parser.add_argument("criterion", nargs="?", help="a criterion of that task run")
    parser.add_argument("--scored", action="store_true", help="omit details and evidence")
    from .._config.store_option import add_store_argument

    add_store_argument(parser)


def run(args: argparse.Namespace) -> int:
    """Print what was asked; 2 with one line on stderr when it is not in the report."""
    from ._stored import report_or_stored

    try:
        report, _ = report_or_stored(args.report, args.store, load_report)
    except ValueError as exc:
        print(f"verial show: {escape(str(exc))}", file=sys.stderr)
        return 2
    try:
        lines = show(report, args.task_run, args.criterion, scored=args.scored)
    except LookupError as exc:
        print(f"verial show: {escape(str(exc))}", file=sys.stderr)
        return 2
    for line in lines:
        print(line)
    return 0


def show(
    report: Report, task_run: str | None, criterion: str | None, scored: bool = False
) -> list[str]:
    """The lines ``verial show`` prints; LookupError when an id is not in the report."""
    report = elide(report, scored)
    if task_run is None:
        return summary_lines(report, scored)
    parts = parse(task_run)
    if criterion is None and parts.criterion is not None:
        task_run, criterion = task_run_of(task_run), parts.criterion
    bench, task = find_task_run(report, task_run)
    hide = scored or bench.scored
    if criterion is None:
        return _task_lines(bench, task, hide)
    found = next((c for c in task.criterion_runs if c.criterion_id == criterion), None)
    if found is None:
        ids = ", ".join(c.criterion_id for c in task.criterion_runs) or "none"
        raise LookupError(f"no criterion {criterion!r} in task run {task.id} (criteria: {ids})")
    return _criterion_lines(task, found, hide)


def find_task_run(report: Report, wanted: str) -> tuple[BenchmarkRun, TaskRun]:
    """The one task run an id names: a node id, a task key (``task[entity]``) or a task id."""
    hits = [
        (b, t)
        for b in report.benchmark_runs
        for t in b.task_runs
        if wanted in (t.id, t.task_key, t.task_id, parse(t.id).task)
    ]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        known = ", ".join(t.task_key for t in report.task_runs()) or "none"
        raise LookupError(f"no task run {wanted!r} in the report (tasks: {known})")
    raise LookupError(
        f"{wanted!r} names {len(hits)} task runs; give one of: " + ", ".join(t.id for _, t in hits)
    )


def _score(value: float | None) -> str:
    return f"{value:.3f}" if value is not None else "-"


def _task_lines(bench: BenchmarkRun, task: TaskRun, hide: bool) -> list[str]:
    lines = [
        f"task run {task.id}",
        f"  benchmark run {bench.id} ({bench.benchmark.ref}) on {run_name(bench.runs)}",
        f"  score {_score(task.score)}, verdict {task.verdict or '-'}, status {task.status}, "
        f"threshold {task.pass_threshold:g}, all passed: "
        + {True: "yes", False: "no", None: "-"}[task.all_passed],
    ]
    if task.axes:
        lines.append(
            "  axes: "
            + ", ".join(
                f"{axis_name(n)} {a.score:.2f} (w{a.weight:g})" for n, a in task.axes.items()
            )
        )
    if task.verification == "incomplete":
        lines.append(
            f"  verification incomplete (confidence {_score(task.confidence)}): not evaluated "
            + ", ".join(f"{n.criterion_id} ({n.reason})" for n in task.not_evaluated)
        )
    if task.critical_failed:
        lines.append("  critical criteria not passed: " + ", ".join(task.critical_failed))
    if task.points_earned is not None:
        lines.append(
            f"  points {task.points_earned} of {task.points_possible}; penalties applied: "
            + (", ".join(task.penalties_applied) or "none")
        )
    width = max([len("criterion"), *(len(c.criterion_id) for c in task.criterion_runs)])
    lines.append(f"  {'criterion':<{width}}  {'status':<10}  {'score':>5}  weight  details")
    for c in task.criterion_runs:
        details = "" if hide else (c.details or "")
        lines.append(
            f"  {c.criterion_id:<{width}}  {c.status:<10}  {_score(c.score):>5}  "
            f"{f'{c.weight:g}' if c.points is None else f'{c.points:+d}':>6}  {details}".rstrip()
        )
    if task.feedback and not hide:
        lines.append("  feedback:")
        lines.extend("    " + line for line in task.feedback.splitlines())
    return [escape(redact(line)) for line in lines]


def _criterion_lines(task: TaskRun, c: CriterionRun, hide: bool) -> list[str]:
    lines = [
        f"criterion run {c.nodeid or criterion_nodeid(task.id, c.criterion_id)}",
        f"  assert {c.assertion}, status {c.status}, score {_score(c.score)}, "
        f"threshold {c.pass_threshold if c.pass_threshold is not None else '-'}, "
        + (f"weight {c.weight:g}" if c.points is None else f"points {c.points:+d}")
        + ("" if c.met is None else ", met" if c.met else ", not met")
        + (" (penalty applied)" if c.penalty_applied else "")
        + (f", axis {c.axis}" if c.axis else "")
        + (", critical" if c.critical else "")
        + (", judge" if c.judge else ""),
    ]
    if c.label:
        lines.append(f"  label: {c.label}" if not hide else "  label: (withheld: scored run)")
    if c.file and c.line:
        lines.append(f"  defined at {c.file}:{c.line}")
    lines = [escape(redact(line)) for line in lines]
    if hide:
        return [*lines, "  (details and evidence withheld: scored run; see the JSON report)"]
    lines.extend("  " + line for line in describe_failure(c, False).splitlines())
    evidence = redact_json(c.evidence.to_json() if c.evidence else {})
    for rating in evidence.get("rubric_results") or []:
        lines.append(
            escape(
                f"  principle {rating.get('principle')!r}: rated {rating.get('rating')}/5 "
                f"- {rating.get('reasoning')}"
            )
        )
    text = json.dumps(evidence, indent=2, ensure_ascii=False, default=str)
    if len(text) > _EVIDENCE_CHARS:
        text = text[:_EVIDENCE_CHARS] + f"\n... ({len(text) - _EVIDENCE_CHARS} more characters)"
    lines.append("  evidence:")
    lines.extend(escape("    " + line) for line in text.splitlines())
    return lines
