"""Peak memory per criterion of a pytest-verial session, as the slope between sizes (issue 21).

Builds ``bench/overhead.py``'s benchmark and plain pytest file at each size, then runs, in
fresh processes: pytest-verial on the benchmark with the JSON report (``--verial-report``)
and the results store on (its default SQLite file, or ``--store URL``), and, unless
``--no-plain``, bare pytest (``-p no:verial -p no:verial-judge``) on the plain file that makes
the same comparisons. Each run's peak RSS is the process's exact ``ru_maxrss`` (``-n 0``).

    python bench/memory.py [--shape small|large] [--criteria 20000,100000] [--no-plain]
        [--store URL] [--json points.jsonl] [--only-pytest] [--phases] [--trace]

Prints one line per run (wall and CPU seconds, peak RSS, the load average) and, for two
sizes or more, the slope between the smallest and the largest: KB of peak memory per added
criterion, and ms of wall time per added criterion.
``--only-pytest``: as in ``bench/overhead.py``. ``--no-plain`` runs pytest-verial only (the
1,000,000-criterion session: bare pytest's figure is the slope's projection).

``--phases``: the verial run also loads a small plugin (:data:`PHASES`) that writes, to
``phases.json`` printed after the run, the process's RSS and peak RSS (``VmRSS``,
``VmHWM``) at each phase's end: start-up, collection, the criteria run, the session's end
(the recorder's report, files and store), so the slope of each phase can be told apart.
``--trace`` also traces Python's allocations (``tracemalloc``, several times slower): what
each phase added that is still alive, by source file, and the end's peak over the run's.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from overhead import BARE, build, only_pytest, verial_args  # noqa: E402

#: ``--phases``: RSS (and with ``--trace``, traced Python memory) at each phase's end
PHASES = """
import json, os, tracemalloc
import pytest

TRACE = bool(os.environ.get("VERIAL_PHASES_TRACE"))
if TRACE:
    tracemalloc.start(1)
OUT = {}
SNAP = {}


def _mark(name):
    status = dict(
        line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line
    )
    one = {k: int(status[k].split()[0]) // 1024 for k in ("VmRSS", "VmHWM")}
    if TRACE:
        current, peak = tracemalloc.get_traced_memory()
        one |= {"traced_mb": current >> 20, "traced_peak_mb": peak >> 20}
        SNAP[name] = tracemalloc.take_snapshot()
        tracemalloc.reset_peak()
    OUT[name] = one


def _top(before, after, n=14):
    stats = SNAP[after].compare_to(SNAP[before], "filename")
    return [
        [s.traceback[0].filename.rsplit("site-packages/", 1)[-1][-60:], s.size_diff >> 10]
        for s in stats[:n]
    ]


def pytest_configure(config):
    _mark("start-up")


def pytest_collection_finish(session):
    _mark("collection")


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_sessionfinish(session):
    _mark("run")
    yield
    _mark("end")
    if TRACE:
        OUT["top_run_kb"] = _top("collection", "run")
        OUT["top_end_kb"] = _top("run", "end")
    with open("phases.json", "w") as out:
        json.dump(OUT, out)
"""


def run(args: list[str], cwd: Path) -> tuple[float, float, str]:
    """Run pytest in ``cwd``: wall s, peak RSS MB and the last line of its output (its CPU
    seconds, user + system, go to :data:`CPU`)."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
    with (cwd / "pytest.out").open("w") as out:
        start = time.perf_counter()
        proc = subprocess.Popen([*cmd, *args], cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    CPU.append(usage.ru_utime + usage.ru_stime)
    tail = (cwd / "pytest.out").read_text(errors="replace")[-600:]
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"pytest {' '.join(args)} failed:\n{tail}")
    return wall, usage.ru_maxrss / 1024, tail.strip().splitlines()[-1]


#: CPU seconds (user + system) of each :func:`run`, in order: on a shared machine wall time
#: includes waiting for a core
CPU: list[float] = []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", choices=["small", "large"], default="large")
    parser.add_argument("--criteria", default="20000,100000", help="sizes, comma-separated")
    parser.add_argument("--no-plain", action="store_true", help="pytest-verial only")
    parser.add_argument("--store", help="--verial-store URL (default: the plugin's default)")
    parser.add_argument("--json", type=Path, help="append each run to this file")
    parser.add_argument(
        "--only-pytest", action="store_true", help="no other plugin; bytecode caches on"
    )
    parser.add_argument("--phases", action="store_true", help="RSS at each phase's end")
    parser.add_argument("--trace", action="store_true", help="--phases with tracemalloc")
    args = parser.parse_args()
    if args.trace:
        args.phases = True
        os.environ["VERIAL_PHASES_TRACE"] = "1"
    if args.only_pytest:
        only_pytest()
    sizes = [int(s.replace("_", "")) for s in args.criteria.split(",")]
    per_task, fields = (10, 3) if args.shape == "small" else (50, 1)
    results: dict[str, list[tuple[int, float, float]]] = {"verial": [], "plain": []}
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="verial-memory-") as tmp:
            root = Path(tmp)
            build(root, n, max(n // per_task, 1), fields)
            runs = {"verial": verial_args("load.verial.json", "--verial-run", "sandbox")}
            runs["verial"] += ["--verial-report", "report.json"]
            if args.store:
                runs["verial"] += ["--verial-store", args.store]
            if args.phases:  # python -m pytest: the project's folder is on sys.path
                (root / "verial_phases.py").write_text(PHASES)
                runs["verial"] = ["-p", "verial_phases", *runs["verial"]]
            if not args.no_plain:
                runs["plain"] = ["test_plain.py", *BARE]
            for side, command in runs.items():
                wall, peak, last = run(command, root)
                results[side].append((n, wall, peak))
                load = Path("/proc/loadavg").read_text().split()[0]
                line = {"side": side, "shape": args.shape, "criteria": n, "wall_s": wall}
                line |= {"cpu_s": round(CPU[-1], 2)}
                line |= {"peak_mb": peak, "load": float(load)}
                if side == "verial" and args.phases:
                    line |= {"phases": json.loads((root / "phases.json").read_text())}
                print(json.dumps(line), "#", last, flush=True)
                if args.json:
                    with args.json.open("a", encoding="utf-8") as handle:
                        handle.write(json.dumps(line) + "\n")
    for side, points in results.items():
        if len(points) > 1:
            (n0, w0, m0), (n1, w1, m1) = points[0], points[-1]
            kb = (m1 - m0) * 1024 / (n1 - n0)
            ms = (w1 - w0) * 1e3 / (n1 - n0)
            print(f"{side}: {kb:.2f} KB and {ms:.3f} ms per criterion from {n0:,} to {n1:,}")


if __name__ == "__main__":
    main()
