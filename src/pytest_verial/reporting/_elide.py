"""What a scored benchmark run may show: one elision for every surface that renders a report.

A scored run (``scored: true`` in run.yaml, ``--verial-scored``, or ``--scored`` on a command)
keeps its rubric private: the criterion runs' labels, details (which name expected values) and
evidence (expected / actual rows, judge ratings), the task runs' feedback (built from those) and
sandbox snapshots. :func:`elide` returns a copy of a report without them, and every renderer
calls it first: the in-session and ``verial html`` pages (the report and its base), the
terminal summary and ``verial report``, ``verial show``, the Markdown summary and the CI step
summary; ``verial feedback`` refuses a scored run unless told ``--show-rubric``. ``verial
compare`` and ``--verial-baseline`` show ids, statuses and scores only. The JSON report itself
keeps everything (it is the record; ``verial export`` copies the store's own rows).
"""

from __future__ import annotations

from .._results import BenchmarkRun, CriterionRun, Report, TaskRun

#: the fields of a criterion run and of a task run a scored run never shows
CRITERION_FIELDS = ("label", "details", "evidence")
TASK_FIELDS = ("feedback", "snapshot")


def elide_criterion(run: CriterionRun) -> CriterionRun:
    """A criterion run without its label, details and evidence."""
    return run.model_copy(update=dict.fromkeys(CRITERION_FIELDS))


def elide_task(task: TaskRun) -> TaskRun:
    """A task run without feedback or snapshot, its criterion runs elided."""
    update: dict[str, object] = dict.fromkeys(TASK_FIELDS)
    update["criterion_runs"] = [elide_criterion(c) for c in task.criterion_runs]
    return task.model_copy(update=update)


def elide_run(run: BenchmarkRun) -> BenchmarkRun:
    """A benchmark run with every task run elided."""
    return run.model_copy(update={"task_runs": [elide_task(t) for t in run.task_runs]})


def elide(report: Report, scored: bool = False) -> Report:
    """``report`` with every scored benchmark run elided (all of them when ``scored``);
    the report itself when none is (no copy)."""
    hidden = [scored or run.scored for run in report.benchmark_runs]
    if not any(hidden):
        return report
    runs = [
        elide_run(run) if hide else run
        for run, hide in zip(report.benchmark_runs, hidden, strict=True)
    ]
    return report.model_copy(update={"benchmark_runs": runs})
