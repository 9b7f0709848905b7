"""``verial trend BENCHMARK [--task T] [--last N] [--json] [--store URL]``: a benchmark's score
per stored run over time, per axis and per task (issue 19).

The terminal view is a compact table: one row per series (the run score, each axis, each task)
with a unicode sparkline of its values, oldest run first and newest last, on a fixed 0..1 scale
(so a drop looks like a drop whatever the other runs did); a run without a value for a series
(not scored, cancelled, the task not in that run) is a gap (a space). Then the newest runs, one
line each. ``--json`` prints every point instead.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from .._config.store_option import add_store_argument
from .._display import escape
from ..store._core import Store
from ..store._engine import StoreError
from ..store._repo_trend import TrendPoint, known_benchmarks

BARS = "▁▂▃▄▅▆▇█"
GAP = " "
#: how many runs a sparkline shows (the newest), and how many runs / tasks the table lists
SPARK_WIDTH = 60
RUN_LINES = 20
TASK_LINES = 20


def spark(values: Sequence[float | None], width: int = SPARK_WIDTH) -> str:
    """A sparkline of scores in 0..1, oldest first; ``None`` is a gap. Only the newest
    ``width`` values are drawn, after a ``…`` when some were left out."""
    shown = values[-width:] if width > 0 else values
    out = []
    for v in shown:
        if v is None:
            out.append(GAP)
        else:
            clamped = min(1.0, max(0.0, float(v)))
            out.append(BARS[round(clamped * (len(BARS) - 1))])
    return ("…" if len(values) > len(shown) else "") + "".join(out)


def series(
    points: Sequence[TrendPoint], *, most_tasks: int | None = None
) -> tuple[list[tuple[str, list[float | None]]], int]:
    """(name, values per point) for the run score, each axis and each task, in the order
    they first appear; only the first ``most_tasks`` tasks (and how many more there are)."""
    axes: dict[str, None] = {}
    tasks: dict[str, None] = {}
    for p in points:
        axes.update(dict.fromkeys(p.axes))
        tasks.update(dict.fromkeys(p.tasks))
    names = list(tasks)
    shown = names if most_tasks is None else names[:most_tasks]
    out: list[tuple[str, list[float | None]]] = [("score", [p.score for p in points])]
    out += [(f"axis {a}", [p.axes.get(a) for p in points]) for a in axes]
    out += [(f"task {t}", [p.tasks.get(t) for p in points]) for t in shown]
    return out, len(names) - len(shown)


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def trend_lines(benchmark: str, points: Sequence[TrendPoint], *, task: str | None) -> list[str]:
    """The terminal view (see the module)."""
    if not points:
        return [f"{escape(benchmark)}: no runs"]
    first, last = points[0].created_at, points[-1].created_at
    lines = [
        f"trend of {escape(benchmark)}"
        + (f", task {escape(task)}" if task else "")
        + f": {len(points)} run(s), {first:%Y-%m-%d %H:%M} .. {last:%Y-%m-%d %H:%M} UTC"
        + " (oldest first, a gap is a run without a score)"
    ]
    rows, hidden = series(points, most_tasks=TASK_LINES)
    width = min(max(len(escape(n)) for n, _ in rows), 40)
    spark_width = max(5, min(SPARK_WIDTH, len(points)) + (1 if len(points) > SPARK_WIDTH else 0))
    lines.append(
        f"{'':{width}}  {'trend':{spark_width}}  {'first':>5}  {'last':>5}  {'min':>5}  {'max':>5}"
    )
    for name, values in rows:
        known = [v for v in values if v is not None]
        shown = escape(name)
        if len(shown) > width:
            shown = shown[: width - 1] + "…"
        lines.append(
            f"{shown:{width}}  {spark(values):{spark_width}}  "
            f"{_num(known[0] if known else None):>5}  {_num(known[-1] if known else None):>5}  "
            f"{_num(min(known) if known else None):>5}  {_num(max(known) if known else None):>5}"
        )
    if hidden:
        lines.append(f"... {hidden} more task(s): name one with --task T, or --json")
    lines.append("")
    newest = points[-RUN_LINES:]
    if len(points) > len(newest):
        lines.append(f"the newest {len(newest)} of {len(points)} runs (--last N, --json):")
    for p in newest:
        lines.append(
            f"{p.id}  {p.created_at:%Y-%m-%d %H:%M}  {_num(p.score):>5}  "
            f"{p.verdict or p.status:<9}  {(p.git_commit or '-')[:10]:<10}  "
            f"{escape(p.agent or '-')}"
        )
    return lines


def point_json(p: TrendPoint) -> dict[str, Any]:
    return {
        "id": p.id,
        "created_at": p.created_at.isoformat().replace("+00:00", "Z"),
        "score": p.score,
        "verdict": p.verdict,
        "status": p.status,
        "git_commit": p.git_commit,
        "agent": p.agent,
        "axes": p.axes,
        "tasks": p.tasks,
    }


def load_trend(
    store: Store, benchmark: str, *, task: str | None = None, last: int | None = None
) -> list[TrendPoint]:
    """The points of ``benchmark`` (StoreError, one line, naming the known benchmarks when it
    has no runs; naming the task when no run of it holds ``task``)."""
    points = store.trend(benchmark, task=task, last=last)
    if not points and last != 0:
        known = store.read("list the benchmarks", known_benchmarks)
        if not known:
            raise StoreError(f"{benchmark}: the results store {store.url_masked} holds no runs")
        raise StoreError(
            f"{benchmark}: no runs of that benchmark in the store; known: {_listed(known)}"
        )
    if task is not None and not any(task in p.tasks for p in points):
        raise StoreError(f"{benchmark}: no run of it holds the task {task}")
    return points


def _listed(names: Iterable[str], most: int = 10) -> str:
    names = list(names)
    shown = ", ".join(escape(n) for n in names[:most])
    return shown + (f", ... ({len(names)} in all)" if len(names) > most else "")


def configure(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``verial trend``."""
    parser.add_argument("benchmark", metavar="BENCHMARK", help="benchmark ref, slug or file")
    parser.add_argument("--task", metavar="T", help="only this task (its task key)")
    parser.add_argument("--last", metavar="N", type=int, help="only the newest N runs")
    parser.add_argument("--json", action="store_true", help="every point as JSON")
    add_store_argument(parser)


def run(args: argparse.Namespace) -> int:
    """Print the trend (or ``--json``: every point); 2 with one line when there is none."""
    from .._config.store_option import open_cli_store

    if args.last is not None and args.last < 1:
        print(f"verial trend: --last {args.last}: give a number of runs >= 1", file=sys.stderr)
        return 2
    try:
        with open_cli_store(args.store) as store:
            points = load_trend(store, args.benchmark, task=args.task, last=args.last)
    except StoreError as exc:
        print(f"verial trend: {exc}", file=sys.stderr)
        return 2
    if args.json:
        out = {
            "benchmark": args.benchmark,
            "task": args.task,
            "runs": [point_json(p) for p in points],
        }
        print(json.dumps(out, indent=2))
        return 0
    for line in trend_lines(args.benchmark, points, task=args.task):
        print(line)
    return 0
