"""``verial compare BASE.json HEAD.json``: the changes from BASE to HEAD, and a gate on them.

Prints, per paired benchmark run, the run score and verdict on each side with the paired
bootstrap interval of the difference, then each task and criterion that changed, regressions
first; then the benchmark runs it could not pair. Rules: :mod:`.diff` and README, "Compare and
gate". Exit status: 0 no regression, 1 a regression, 2 unusable input (one line on stderr).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..display import escape
from ..heap import no_gc
from .diff import (
    EXIT_NOTHING_COMPARED,
    BenchmarkRunDelta,
    Comparison,
    TaskDelta,
    compare_reports,
)
from .outputs import EXIT_REFUSED, OutputRefused, refused, write_text_atomic
from .scores import ReportScores, check_scores, load_scores
from .terminal import plural

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
            f"{', '.join(run.base_runs)} -> {', '.join(run.head_runs)}: {mark}",
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


def configure(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``verial compare``."""
    parser.add_argument(
        "base",
        help="the JSON report to compare against (--verial-report), or a stored run: br_... "
        "(a unique prefix), latest, latest~N",
    )
    parser.add_argument("head", help="the JSON report of the change, or a stored run")
    parser.add_argument(
        "--tolerance",
        default="0.0",
        metavar="DROP",
        help="exit 1 when a benchmark run's score drops by more than DROP (default 0.0)",
    )
    parser.add_argument("--json", metavar="OUT", help="write the comparison as JSON to OUT")
    from ..store.cli import add_store_argument

    add_store_argument(parser)


def _side(value: str, store: str | None) -> tuple[ReportScores, str]:
    """The scores of a report file or a stored run, checked; ValueError in one line."""
    from ..store import StoreError
    from ..store.cli import open_cli_store
    from ..store.commands import is_store_ref

    if not is_store_ref(value):
        return load_scores(value), value
    try:  # the score columns alone: evidence and snapshots stay in the store
        with open_cli_store(store) as opened:
            run_id = opened.resolve(value)
            scores = opened.scores_of_run(run_id)
    except StoreError as exc:
        raise ValueError(str(exc)) from None
    name = value if value == run_id else f"{value} ({run_id})"
    check_scores(scores, name)
    return scores, name


def _tolerance(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"--tolerance: {text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"--tolerance: {value:g} is outside [0, 1]")
    return value


def run(args: argparse.Namespace) -> int:
    """Compare, print, write ``--json``; 0, 1 on a regression, 2 with one line on bad input,
    4 when ``--json`` names a file that must not be written (:mod:`.outputs`)."""
    from ..store.commands import file_inputs

    files = file_inputs(args.base, args.head)
    inputs = [
        (f"the {side} report", v)
        for side, v in zip(("base", "head"), (args.base, args.head), strict=True)
        if v in files
    ]
    if args.json and refused("compare", [("--json", args.json)], inputs):
        return EXIT_REFUSED
    try:
        tolerance = _tolerance(args.tolerance)
        with no_gc():  # two reports' views stay alive: collections would walk them again
            (base, base_name), (head, head_name) = (
                _side(args.base, args.store),
                _side(args.head, args.store),
            )
    except (ValueError, RecursionError) as exc:
        print(f"verial compare: {escape(str(exc).splitlines()[0])}", file=sys.stderr)
        return 2
    with no_gc():
        comparison = compare_reports(base, head, tolerance=tolerance, names=(base_name, head_name))
    if args.json:
        # compact, serialized by pydantic's own encoder (``jq`` prints it for people)
        text = comparison.model_dump_json(by_alias=True)
        try:
            write_text_atomic(Path(args.json), text + "\n")
        except OSError as exc:
            reason = exc.strerror or str(exc)
            print(f"verial compare: --json: cannot write {args.json}: {reason}", file=sys.stderr)
            return 2
        except OutputRefused as exc:  # made a device or a folder since the check
            print(f"verial compare: --json: {exc}", file=sys.stderr)
            return EXIT_REFUSED
    print(escape(f"verial compare: {args.base} -> {args.head}"))
    for text, _ in comparison_lines(comparison):
        print(escape(text))
    if comparison.exit_status == EXIT_NOTHING_COMPARED:
        print(
            "verial compare: nothing compared (no benchmark run of one report pairs with a "
            f"scored run of the other): the gate fails, exit status {EXIT_NOTHING_COMPARED}",
            file=sys.stderr,
        )
    return comparison.exit_status
