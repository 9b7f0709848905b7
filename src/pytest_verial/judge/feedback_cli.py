"""``verial feedback REPORT TASK``: print a task's retry feedback from a JSON report.

TASK is a task key (``lumbar-mri-pa`` or ``lumbar-mri-pa[maria-chen]``), a task id (every
entity's run of it), or a task run's node id. Exit 0 with the text on stdout (nothing when the
task passed, with a note on stderr); 2 when the report or the task cannot be found.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .report import task_feedback


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``verial feedback``."""
    parser.add_argument("report", help="JSON report written with --verial-report")
    parser.add_argument("task", help="task key, task id, or task run node id")


def run(args: Any) -> int:
    """Print the feedback of the matching task runs."""
    from ..reporting.json_report import read_report

    try:
        report = read_report(args.report)
        task_runs = [t for run in report["benchmark_runs"] for t in run["task_runs"]]
    except ValueError as exc:
        print(f"verial feedback: {exc}", file=sys.stderr)
        return 2
    matches = [
        t for t in task_runs if args.task in (t.get("task_key"), t.get("task_id"), t.get("id"))
    ]
    if not matches:
        known = ", ".join(sorted({str(t.get("task_key")) for t in task_runs})) or "none"
        print(
            f"verial feedback: no task {args.task!r} in {args.report} (tasks: {known})",
            file=sys.stderr,
        )
        return 2
    several = len(matches) > 1
    for task in matches:
        text = task.get("feedback") if "feedback" in task else task_feedback(task)
        if not text:
            print(
                f"verial feedback: task run {task.get('id')} has verdict "
                f"{task.get('verdict') or task.get('status')}: no feedback",
                file=sys.stderr,
            )
            continue
        if several:
            print(f"# {task.get('task_key')} (run {task.get('run')})")
        print(text)
        if several:
            print()
    return 0
