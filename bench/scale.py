"""Scale figures (issue 12): wall time and peak memory of a pytest-verial run as inputs grow.

Three axes, each point a real pytest run in a subprocess (``python -m pytest -p no:randomly -q
--verial-report report.json -n 0``) on inputs built beforehand in a temporary directory:

- ``criteria``: N ``portal-state-match`` criteria in tasks of 50 (``bench/overhead.py``'s
  ``build()``, the issue's "few large tasks" shape), also at ``-n 2`` with ``--workers 0,2``;
- ``tasks``: a fixed number of criteria (10,000) spread over T tasks;
- ``fhir``: a task of 10 ``fhir-resource-state`` criteria (9 distinct searches) over a snapshot
  of N resources in one NDJSON file (``bench/fhir.py``'s Synthea-like corpus, written in chunks
  of 100,000 with the ids of each further chunk suffixed): load + index + search + score.

Wall time is the subprocess's, start-up included. Peak memory is the process tree's: with
``-n 0`` the exact peak RSS of the pytest process (``os.wait4``'s ``ru_maxrss``); with ``-n 2``
the largest sum of the RSS of the process and its descendants, sampled every 0.2 s.

Prints a Markdown table and writes a log-log plot (time and memory against each axis) to
``docs/scale.png`` (``--png``; needs matplotlib: ``pip install -e '.[bench]'``).

    python bench/scale.py [--axis criteria tasks fhir] [--workers 0,2] [--criteria 1000,...]
        [--tasks 10,100,...] [--tasks-criteria 10000] [--resources 1000,...] [--json points.jsonl]
    python bench/scale.py --replot points.jsonl   # the table and plot of earlier runs
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests" / "fhir"))

from corpus import make_corpus  # noqa: E402
from overhead import build as build_criteria  # noqa: E402

CRITERIA = [1_000, 3_000, 10_000, 30_000, 100_000]
TASKS = [10, 100, 1_000, 10_000]
RESOURCES = [1_000, 10_000, 100_000, 1_000_000]
PER_TASK = 50  # the criteria axis: tasks of 50 criteria
CHUNK = 100_000  # FHIR resources generated (and held) at a time
PAGE = os.sysconf("SC_PAGE_SIZE")

FHIR_BENCHMARK = """benchmark: scale-fhir
version: 1
tasks:
  - id: scan
    criteria:
      - id: appointment-booked
        assertion:
          assert: fhir-resource-state
          resource_type: Appointment
          search: {patient: Patient/john-smith, status: booked}
          fields: [{path: participant.0.actor.display, expected: Dr. Rivera}]
      - id: appointment-start
        assertion:
          assert: fhir-resource-state
          resource_type: Appointment
          search: {patient: Patient/john-smith, status: booked}
          fields: [{path: start, expected: "2026-12-03T14:00:00Z"}]
      - id: smiths
        assertion:
          assert: fhir-resource-state
          resource_type: Patient
          search: {family: smith}
          match: any
          fields: [{path: name.0.family, expected: Smith}]
      - id: recent-heart-rate
        assertion:
          assert: fhir-resource-state
          resource_type: Observation
          search: {code: "http://loinc.org|8867-4", date: ge2024-01-01}
          fields: [{path: code.coding.0.code, expected: "8867-4"}]
      - id: glucose-unit
        assertion:
          assert: fhir-resource-state
          resource_type: Observation
          search: {code: "2339-0"}
          match: all
          fields: [{path: valueQuantity.unit, expected: mg/dL}]
      - id: finished-encounters
        assertion:
          assert: fhir-resource-state
          resource_type: Encounter
          search: {status: finished}
          count: {op: gte, expected: 1}
      - id: encounters-of-patient
        assertion:
          assert: fhir-resource-state
          resource_type: Encounter
          search: {subject: Patient/pat1}
          fields: [{path: subject.reference, expected: Patient/pat1}]
      - id: diabetes
        assertion:
          assert: fhir-resource-state
          resource_type: Condition
          search: {code: "http://snomed.info/sct|44054006"}
          fields: [{path: code.text, expected: Diabetes mellitus type 2}]
      - id: condition-of-patient
        assertion:
          assert: fhir-resource-state
          resource_type: Condition
          search: {subject: Patient/pat0}
          fields: [{path: code.coding.0.system, expected: "http://snomed.info/sct"}]
      - id: active-prescriptions
        assertion:
          assert: fhir-resource-state
          resource_type: MedicationRequest
          search: {status: active}
          fields: [{path: intent, expected: order}]
"""
FHIR_CRITERIA = FHIR_BENCHMARK.count("  - id: ") - 1


@dataclass
class Point:
    """One measured run."""

    axis: str
    x: int
    workers: int
    criteria: int
    tasks: int
    resources: int
    wall_s: float
    cpu_s: float
    peak_mb: float
    input_mb: float


def _tree_rss(root: int) -> int:
    """Bytes of RSS of ``root`` and its descendants now (from ``/proc/<pid>/stat``)."""
    parent, rss = {}, {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="ascii", errors="replace") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(name)], rss[int(name)] = int(fields[1]), int(fields[21]) * PAGE
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo.extend(child for child, up in parent.items() if up == pid)
    return total


def run_pytest(args: list[str], cwd: Path, workers: int) -> tuple[float, float, float]:
    """Run pytest on ``args`` in ``cwd``: wall s, CPU s (user + system, workers included) and
    peak RSS MB; exits on a failure."""
    cmd = [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider", "-q"]
    cmd += ["--verial-report", "report.json", "-n", str(workers), *args]
    peak, done = [0], threading.Event()

    def sample(pid: int) -> None:
        while not done.wait(0.2):
            peak[0] = max(peak[0], _tree_rss(pid))

    with (cwd / "pytest.out").open("w") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
        sampler = threading.Thread(target=sample, args=(proc.pid,), daemon=True)
        if workers:
            sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        done.set()
        proc.returncode = os.waitstatus_to_exitcode(status)
    if sampler.is_alive():
        sampler.join()
    if proc.returncode != 0 or not (cwd / "report.json").exists():
        tail = (cwd / "pytest.out").read_text(errors="replace")[-1500:]
        raise SystemExit(f"pytest {' '.join(args)} exited {proc.returncode}:\n{tail}")
    largest = usage.ru_maxrss * 1024  # KiB on Linux
    return wall, usage.ru_utime + usage.ru_stime, max(largest, peak[0]) / 2**20


def _suffixed(line: str, chunk: int) -> str:
    """A resource of chunk ``chunk`` > 0: its id and every ``Type/id`` reference made unique."""
    return re.sub(r'"(id|reference)": "([^"?]+)"', lambda m: f'"{m[1]}": "{m[2]}-c{chunk}"', line)


def write_snapshot(path: Path, resources: int) -> None:
    """``resources`` Synthea-like resources as NDJSON, generated a chunk at a time."""
    fixed = len(make_corpus(0))
    per_patient = (len(make_corpus(40)) - fixed) / 40
    with path.open("w", encoding="utf-8") as handle:
        for chunk, first in enumerate(range(0, resources, CHUNK)):
            size = min(CHUNK, resources - first)
            patients = int((size - fixed) / per_patient * 1.05) + 1
            for resource in make_corpus(max(patients, 1), seed=7 + chunk)[:size]:
                line = json.dumps(resource)
                handle.write((_suffixed(line, chunk) if chunk else line) + "\n")


def criteria_points(sizes: list[int], workers: list[int], tmp: Path) -> Iterator[Point]:
    """The criteria axis: N criteria in tasks of ``PER_TASK``."""
    for n in sizes:
        root = tmp / f"criteria-{n}"
        tasks = max(n // PER_TASK, 1)
        build_criteria(root, n, tasks)
        size = (root / "load.verial.json").stat().st_size / 1e6
        for w in workers:
            wall, cpu, peak = run_pytest(["load.verial.json", "--verial-run", "sandbox"], root, w)
            yield Point("criteria", n, w, n, tasks, 0, wall, cpu, peak, size)


def task_points(sizes: list[int], criteria: int, tmp: Path) -> Iterator[Point]:
    """The tasks axis: ``criteria`` criteria spread over T tasks."""
    for t in sizes:
        root = tmp / f"tasks-{t}"
        build_criteria(root, criteria, t)
        size = (root / "load.verial.json").stat().st_size / 1e6
        wall, cpu, peak = run_pytest(["load.verial.json", "--verial-run", "sandbox"], root, 0)
        yield Point("tasks", t, 0, criteria // t * t, t, 0, wall, cpu, peak, size)


def fhir_points(sizes: list[int], tmp: Path) -> Iterator[Point]:
    """The FHIR axis: one task of ``FHIR_CRITERIA`` criteria over a snapshot of N resources."""
    for n in sizes:
        root = tmp / f"fhir-{n}"
        (root / "run" / "scan" / "fhir").mkdir(parents=True)
        (root / "scale.verial.yaml").write_text(FHIR_BENCHMARK)
        (root / "pytest.ini").write_text("[pytest]\n")
        snapshot = root / "run" / "scan" / "fhir" / "export.ndjson"
        write_snapshot(snapshot, n)
        size = snapshot.stat().st_size / 1e6
        wall, cpu, peak = run_pytest(["scale.verial.yaml", "--verial-run", "run"], root, 0)
        snapshot.unlink()
        yield Point("fhir", n, 0, FHIR_CRITERIA, 1, n, wall, cpu, peak, size)


def _per_criterion(point: Point) -> str:
    """Wall ms per criterion, start-up included (not for the FHIR axis: 10 criteria)."""
    return "" if point.axis == "fhir" else f"{point.wall_s / point.criteria * 1e3:.2f}"


def table(points: list[Point]) -> str:
    """The Markdown table of the points."""
    head = (
        "| axis | criteria | tasks | FHIR resources | input MB | `-n` | wall s | CPU s | "
        "ms / criterion | peak RSS MB |\n|---|---|---|---|---|---|---|---|---|---|"
    )
    rows = [
        f"| {p.axis} | {p.criteria:,} | {p.tasks:,} | {p.resources:,} | {p.input_mb:.1f} | "
        f"{p.workers} | {p.wall_s:.1f} | {p.cpu_s:.1f} | {_per_criterion(p)} | {p.peak_mb:.0f} |"
        for p in points
    ]
    return "\n".join([head, *rows])


def plot(points: list[Point], png: Path) -> str | None:
    """Write the log-log figure; the one-line reason when it cannot be made."""
    try:
        import matplotlib
    except ImportError:
        return "matplotlib is not installed: pip install -e '.[bench]' (the table is above)"
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axes = [a for a in ("criteria", "tasks", "fhir") if any(p.axis == a for p in points)]
    labels = {
        "criteria": f"criteria (tasks of {PER_TASK})",
        "tasks": "tasks (criteria fixed)",
        "fhir": f"FHIR resources ({FHIR_CRITERIA} criteria)",
    }
    fig, grid = plt.subplots(2, len(axes), figsize=(4.2 * len(axes), 7), squeeze=False)
    for col, axis in enumerate(axes):
        for row, (measure, unit) in enumerate((("wall_s", "wall time (s)"), ("peak_mb", "MB"))):
            ax = grid[row][col]
            for w in sorted({p.workers for p in points if p.axis == axis}):
                mine = [p for p in points if p.axis == axis and p.workers == w]
                xs, ys = [p.x for p in mine], [getattr(p, measure) for p in mine]
                ax.plot(xs, ys, "o-", label=f"-n {w}")
                if w == 0 and len(xs) > 1:  # linear growth from the last point, for reference
                    ax.plot(xs, [ys[-1] * x / xs[-1] for x in xs], ":", color="grey")
            ax.set_xscale("log")
            ax.set_yscale("log")
            values = [getattr(p, measure) for p in points if p.axis == axis]
            ax.set_ylim(min(values) / 1.6, max(values) * 1.6)  # the dotted line shows a slope
            for ticks, subs in ((ax.xaxis, (1.0,)), (ax.yaxis, (1.0, 2.0, 5.0))):
                ticks.set_major_locator(LogLocator(subs=subs))
                ticks.set_major_formatter(
                    FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}")
                )
                ticks.set_minor_formatter(NullFormatter())
            ax.set_xlabel(labels[axis])
            ax.set_ylabel(unit if row == 0 else "peak RSS (MB)")
            ax.grid(True, which="both", alpha=0.3)
            if row == 0:
                ax.legend(title="dotted: linear", fontsize="small")
    fig.suptitle("pytest-verial: one pytest run, start-up included", fontsize="medium")
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=100)
    plt.close(fig)
    return None


def _sizes(text: str) -> list[int]:
    """``1000,3000,10_000`` as counts; an argparse error for anything else."""
    try:
        sizes = [int(part.replace("_", "")) for part in text.split(",") if part.strip()]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"expected counts >= 1 like 1000,3000, got {text!r}")
    return sizes


def _workers(text: str) -> list[int]:
    """``0,2`` as ``-n`` values; an argparse error for anything else."""
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        values = []
    if not values or min(values) < 0:
        raise argparse.ArgumentTypeError(f"expected -n values >= 0 like 0,2, got {text!r}")
    return values


def main() -> None:
    """Measure the chosen axes, print the table, write the plot."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--axis", nargs="+", choices=["criteria", "tasks", "fhir"])
    parser.add_argument("--criteria", type=_sizes, default=CRITERIA)
    parser.add_argument("--tasks", type=_sizes, default=TASKS)
    parser.add_argument("--tasks-criteria", type=int, default=10_000)
    parser.add_argument("--resources", type=_sizes, default=RESOURCES)
    parser.add_argument(
        "--workers", type=_workers, default=[0], help="the criteria axis's -n values: 0,2"
    )
    parser.add_argument("--png", type=Path, default=ROOT / "docs" / "scale.png")
    parser.add_argument("--json", type=Path, help="append each point to this file as measured")
    parser.add_argument(
        "--replot", type=Path, help="measure nothing: the table and plot of a --json file"
    )
    args = parser.parse_args()
    if max(args.tasks) > args.tasks_criteria:
        parser.error(f"--tasks {max(args.tasks)} exceeds --tasks-criteria {args.tasks_criteria}")
    chosen = args.axis or ["criteria", "tasks", "fhir"]
    if args.replot:
        points = [Point(**json.loads(line)) for line in args.replot.read_text().splitlines()]
        report(points, args.png)
        return
    points = []
    with tempfile.TemporaryDirectory(prefix="verial-scale-") as tmp:
        runs: dict[str, Callable[[], Iterator[Point]]] = {
            "criteria": lambda: criteria_points(args.criteria, args.workers, Path(tmp)),
            "tasks": lambda: task_points(args.tasks, args.tasks_criteria, Path(tmp)),
            "fhir": lambda: fhir_points(args.resources, Path(tmp)),
        }
        for axis in chosen:
            for point in runs[axis]():
                points.append(point)
                if args.json:
                    with args.json.open("a", encoding="utf-8") as handle:
                        handle.write(json.dumps(asdict(point)) + "\n")
                print(
                    f"  {axis} {point.x:,}: {point.criteria:,} criteria, {point.tasks:,} tasks, "
                    f"-n {point.workers}: {point.wall_s:.1f} s, {point.peak_mb:.0f} MB",
                    file=sys.stderr,
                    flush=True,
                )
    report(points, args.png)


def report(points: list[Point], png: Path) -> None:
    """Print the table, draw the plot (or say in one line why not)."""
    order = ["criteria", "tasks", "fhir"]
    points = sorted(points, key=lambda p: (order.index(p.axis), p.workers, p.x))
    print(table(points))
    problem = plot(points, png)
    if problem:
        print(f"scale.py: no plot: {problem}", file=sys.stderr)
    else:
        print(f"\nplot: {png}")


if __name__ == "__main__":
    main()
