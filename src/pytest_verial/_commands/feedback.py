"""``verial feedback REPORT TASK``: print a task's retry feedback from a JSON report.

TASK is a task key (``lumbar-mri-pa`` or ``lumbar-mri-pa[maria-chen]``), a task id (every
entity's run of it), or a task run's node id. Exit 0 with the text on stdout (nothing when the
task passed, with a note on stderr); 2 when the report or the task cannot be found, and when a
matching task run belongs to a scored benchmark run: its feedback names the rubric's expected
values, so it is printed only with ``--show-rubric`` (the user says the rubric may be shown).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .._display import escape


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``verial feedback``."""
    parser.add_argument("report", help="JSON report written with --verial-report")
    parser.add_argument("task", help="task key, task id, or task run node id")
    parser.add_argument(
        "--show-rubric",
        action="store_true",
        help="print the feedback of a scored run too (it names expected values and labels)",
    )


def run(args: Any) -> int:
    """Print the feedback of the matching task runs."""
    from ..judge._report import task_feedback
    from ..reporting._json_report import load_report

    try:
        report = load_report(args.report)
    except ValueError as exc:
        print(escape(f"verial feedback: {exc}"), file=sys.stderr)
        return 2
    task_runs = list(report.task_runs())
    matches = [t for t in task_runs if args.task in (t.task_key, t.task_id, t.id)]
    scored = {id(t) for b in report.benchmark_runs if b.scored for t in b.task_runs}
    if not args.show_rubric and any(id(t) in scored for t in matches):
        print(
            f"verial feedback: {escape(args.task)} in {escape(str(args.report))} is a scored run: "
            "its feedback shows the rubric; give --show-rubric to print it",
            file=sys.stderr,
        )
        return 2
    if not matches:
        known = ", ".join(sorted({t.task_key for t in task_runs})) or "none"
        print(
            escape(f"verial feedback: no task {args.task!r} in {args.report} (tasks: {known})"),
            file=sys.stderr,
        )
        return 2
    several = len(matches) > 1
    for task in matches:
        text = task.feedback or task_feedback(task)
        if not text:
            print(
                escape(
                    f"verial feedback: task run {task.id} has verdict "
                    f"{task.verdict or task.status}: no feedback"
                ),
                file=sys.stderr,
            )
            continue
        if several:
            print(escape(f"# {task.task_key} (run {task.run})"))
        print(escape(text, keep="\n"))
        if several:
            print()
    return 0
