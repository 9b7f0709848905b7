"""The changes from one report to another as lines, for ``verial compare``
(:mod:`pytest_verial._commands.compare`) and ``--verial-baseline``.

Per paired benchmark run: the run score and verdict on each side with the paired
bootstrap interval of the difference, then each task and criterion that changed, regressions
first; then the benchmark runs it could not pair. Rules: :mod:`._diff` and README, "Compare
and gate".
"""

from __future__ import annotations

from ._diff import EXIT_NOTHING_COMPARED, BenchmarkRunDelta, Comparison, TaskDelta
from ._terminal import plural

#: changed tasks listed per benchmark run, worst first (the rest are counted; --json has all)
MAX_CHANGED_TASKS = 50
#: a line and its colour on a tty (None: the terminal's default)
Line = tuple[str, str | None]


def _score(value: float | None) -> str:
    return f"{value:.3f}" if value is not None else "-"


def _delta(value: float | None) -> str:
    return f"{value:+.3f}" if value is not None else "-"


def _sides(base: object, head: object) -> str:
    shown = ["-" if v is None else getattr(v, "value", v) for v in (base, head)]
    return f"{shown[0]} -> {shown[1]}"


def _colour(change: str) -> str | None:
    return {"regression": "red", "improvement": "green"}.get(change)


def _run_lines(run: BenchmarkRunDelta, criteria: bool) -> list[Line]:
    mark = "REGRESSION" if run.regression else "ok"
    lines: list[Line] = [
        (
            f"benchmark run {run.benchmark} ({run.file}), "
            f"{run.base_name or ', '.join(run.base_runs)} -> "
            f"{run.head_name or ', '.join(run.head_runs)}: {mark}",
            "red" if run.regression else "green",
        ),
        (
            f"  run score {_score(run.base_score)} -> {_score(run.head_score)} "
            f"({_delta(run.delta)}), verdict {_sides(run.base_verdict, run.head_verdict)}",
            None,
        ),
    ]
    if run.interval is not None:
        i = run.interval
        lines.append(
            (
                f"  paired difference over {i.tasks} shared task"
                f"{'' if i.tasks == 1 else 's'}: mean {_delta(i.mean)}, "
                f"{i.confidence:.0%} interval [{_delta(i.low)}, {_delta(i.high)}] "
                f"(bootstrap, {i.resamples:,} resamples, seed {i.seed})",
                None,
            )
        )
    else:
        lines.append(("  no task scored on both sides: no interval", None))
    lines.extend((f"  note: {note}", "yellow") for note in run.notes)
    unchanged = shown = 0
    changed = [t for t in run.tasks if t.change != "unchanged" or t.criteria]
    for task in run.tasks:
        if task.change == "unchanged" and not task.criteria:
            unchanged += 1
            continue
        if shown == MAX_CHANGED_TASKS:
            continue
        shown += 1
        lines.append((_task_line(task), _colour(task.change)))
        if criteria:
            for c in task.criteria:
                lines.append(
                    (
                        f"    criterion {c.criterion_id}: {c.change}, "
                        f"{_sides(c.base_status, c.head_status)}, "
                        f"score {_score(c.base_score)} -> {_score(c.head_score)}",
                        None,
                    )
                )
    if len(changed) > shown:
        more = len(changed) - shown
        lines.append(
            (f"  ... and {plural(more, 'more changed task')} (all of them: --json OUT)", None)
        )
    if unchanged:
        lines.append((f"  {unchanged} task{'' if unchanged == 1 else 's'} unchanged", None))
    return lines


def _task_line(task: TaskDelta) -> str:
    why = "verdict worse" if task.verdict_worse else task.change
    statuses = (task.base_status, task.head_status)
    status = "" if statuses == ("completed", "completed") else f", status {_sides(*statuses)}"
    return (
        f"  task {task.task_key}: {why}, score {_score(task.base_score)} -> "
        f"{_score(task.head_score)} ({_delta(task.delta)}), verdict "
        f"{_sides(task.base_verdict, task.head_verdict)}{status}"
    )


def comparison_lines(comparison: Comparison, criteria: bool = True) -> list[Line]:
    """The lines ``verial compare`` prints (and ``--verial-baseline`` adds to the summary)."""
    lines: list[Line] = []
    for run in comparison.benchmark_runs:
        lines.extend(_run_lines(run, criteria))
    for u in comparison.unpaired:
        lines.append((f"not paired: {u.side} benchmark run {u.id}: {u.reason}", "yellow"))
    if not comparison.benchmark_runs:
        lines.append(("no benchmark run paired: nothing compared", "yellow"))
    regressed = [r for r in comparison.benchmark_runs if r.regression]
    if regressed:
        dropped = sum(1 for r in regressed if r.score_dropped)
        worse = sum(len(r.worse_verdicts) for r in regressed)
        lines.append(
            (
                f"{len(regressed)} of {plural(len(comparison.benchmark_runs), 'benchmark run')} "
                "regressed "
                f"(run score down by more than {comparison.tolerance:g} in {dropped}; "
                f"{worse} task verdict{'' if worse == 1 else 's'} worse)",
                "red",
            )
        )
    elif comparison.exit_status == EXIT_NOTHING_COMPARED:
        if comparison.benchmark_runs:
            lines.append(("no paired benchmark run has a score on both sides", "yellow"))
    else:
        lines.append(
            (
                f"no regression in {plural(len(comparison.benchmark_runs), 'benchmark run')} "
                f"(tolerance {comparison.tolerance:g})",
                "green",
            )
        )
    return lines
