"""Per-criterion overhead of pytest-verial against bare pytest items doing the same work.

Builds, in a temporary directory, a benchmark of N portal-state-match criteria (T tasks of
N/T criteria, one field each, over a sandbox of JSON rows) and an equivalent plain pytest file
with N parametrized tests that read the same rows (cached per task, as the plugin's source is)
and make the same comparison. Both are run by pytest in subprocesses, alternating, R times;
the median wall times give the ratio (BENCHMARKS.md: target <= 1.5 at 5,000 criteria).

    python bench/overhead.py [--shape small|large] [--criteria 5000] [--repeat 3] [--report]
        [--collect-only]

Shapes (issue 12): ``large`` is few large tasks (tasks of 50 one-field criteria, the default);
``small`` is many small tasks (tasks of 10 criteria with 3 fields each). ``--tasks`` overrides
the task count.

The plugin freezes what a session keeps out of the garbage collector's sight (``heap.py``);
plain pytest does not, and pays for full collections over its items. So the script also
runs the plain file with the same freeze after collection (``plain, heap frozen``): the
ratio against it is the plugin's own per-criterion cost, with the collector out of both.

The plain runs load neither pytest-verial nor its judge plugin (``-p no:verial -p
no:verial-judge``): the plugin's import is counted in the plugin's figure only (issue 21).

``--only-pytest`` runs pytest with no plugin but the one measured
(``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``; the verial runs add ``-p pytest_verial.plugin``) and
with bytecode caches written (``PYTHONDONTWRITEBYTECODE`` unset), as in a user's install:
without it, both sides also load every plugin of the environment (hypothesis, schemathesis,
xdist in the test extras) and, where ``PYTHONDONTWRITEBYTECODE=1`` is set, compile them anew in
every process, which adds the same seconds of start-up to both sides.

``--collect-only`` also times ``pytest --co`` of the benchmark file (issue 21: at most 0.3 x
a full run of the plain file).

``--modes off,store,report`` runs, in the same alternation, one pytest-verial variant per mode
(issue 33): ``off`` is ``--verial-store none`` with no report; ``store`` the default store (a
SQLite file in the project, created by a warm-up run first) with no report; ``report`` the
default store and ``--verial-report`` (its journal too). ``--sources
before=/tmp/old/src,after=src`` runs each mode with each source (``PYTHONPATH``) in the same
alternation, so a change is measured before and after at once. It prints each mode's median CPU
seconds (user + system) and its ratio to bare pytest's, side by side: on this shared 2-core
machine wall time includes waiting for a core, CPU time does not (but a busy machine still adds
cache misses: compare figures from one run).

``--report`` makes the verial run write ``--verial-report`` (and so its journal, one line per
criterion run, fsynced per batch): run it with the source before and after a change to
the report path to see what that path costs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PLAIN_TEST = """
import json
from functools import lru_cache
from pathlib import Path

import pytest

RUN = Path(__file__).parent / "sandbox"
CASES = json.loads((Path(__file__).parent / "cases.json").read_text())


@lru_cache(maxsize=8)
def rows(task):
    return json.loads((RUN / task / "portal" / "claims.json").read_text())


@pytest.mark.parametrize("task,key,fields", CASES)
def test_field(task, key, fields):
    row = next(r for r in rows(task) if r["claim_id"] == key)
    for path, expected in fields:
        value = row
        for part in path.split("."):
            value = value[int(part)] if isinstance(value, list) else value[part]
        assert value == expected
"""

#: the plain runs: without the plugin, so its import counts on its side only
BARE = ["-p", "no:verial", "-p", "no:verial-judge"]

#: ``-p freeze_after_collection``: plain pytest with the freeze the plugin does after collection
FREEZE_PLUGIN = """
import gc


def pytest_collection_finish(session):
    gc.freeze()
"""

FIELDS = [("lines.0.cpt", "99213"), ("status", "accepted"), ("payer.name", "Aetna")]


def build(root: Path, criteria: int, tasks: int, fields: int = 1) -> None:
    per_task = criteria // tasks
    bench_tasks, cases = [], []
    for t in range(tasks):
        task_id = f"task-{t:04d}"
        rows = [
            {
                "claim_id": f"CLM-{t}-{i}",
                "status": "accepted",
                "lines": [{"cpt": "99213", "charge": 125.0 + i}],
                "payer": {"name": "Aetna"},
            }
            for i in range(per_task)
        ]
        folder = root / "sandbox" / task_id / "portal"
        folder.mkdir(parents=True)
        (folder / "claims.json").write_text(json.dumps(rows))
        crits = []
        for i in range(per_task):
            crits.append(
                {
                    "id": f"c{i}",
                    "weight": 1 + i % 3,
                    "axis": "correctness" if i % 2 else "safety",
                    "assertion": {
                        "assert": "portal-state-match",
                        "correlate_by": {
                            "resource": "claims",
                            "key": "claim_id",
                            "value": f"CLM-{t}-{i}",
                        },
                        "assertions": [
                            {"path": path, "expected": value} for path, value in FIELDS[:fields]
                        ],
                    },
                }
            )
            cases.append([task_id, f"CLM-{t}-{i}", FIELDS[:fields]])
        bench_tasks.append({"id": task_id, "criteria": crits})
    (root / "load.verial.json").write_text(json.dumps({"benchmark": "load", "tasks": bench_tasks}))
    (root / "test_plain.py").write_text(PLAIN_TEST)
    (root / "cases.json").write_text(json.dumps(cases))
    (root / "pytest.ini").write_text("[pytest]\n")
    (root / "freeze_after_collection.py").write_text(FREEZE_PLUGIN)


def only_pytest() -> None:
    """From now on, pytest runs load no plugin but the one measured; bytecode is cached."""
    ONLY_PYTEST.append(True)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"


#: set by :func:`only_pytest`
ONLY_PYTEST: list[bool] = []


def verial_args(*args: str) -> list[str]:
    """The arguments of a pytest-verial run (the plugin named when autoload is off)."""
    return [*(["-p", "pytest_verial.plugin"] if ONLY_PYTEST else []), *args]


def timed(args: list[str], cwd: Path, ok: tuple[int, ...] = (0,)) -> float:
    """Wall seconds of one pytest run; its CPU seconds (user + system) go to :data:`CPU`."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(cwd), os.environ.get("PYTHONPATH", "")]),
    }
    with (cwd / "pytest.out").open("w") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
    CPU.append(usage.ru_utime + usage.ru_stime)
    if os.waitstatus_to_exitcode(status) not in ok:
        output = (cwd / "pytest.out").read_text(errors="replace")
        raise SystemExit(f"pytest {' '.join(args)} failed:\n{output[-2000:]}")
    return elapsed


#: CPU seconds of each run of :func:`timed`, in order (on a shared machine, wall time
#: includes waiting for a core; CPU time does not)
CPU: list[float] = []


def cpu_of_last() -> float:
    """CPU seconds of the last :func:`timed` run."""
    return CPU[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--criteria", type=int, default=5000)
    parser.add_argument("--shape", choices=["small", "large"], default="large")
    parser.add_argument("--tasks", type=int, default=None, help="default: from the shape")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--report", action="store_true", help="write the JSON report too")
    parser.add_argument(
        "--collect-only", action="store_true", help="also time `pytest --co` of the benchmark"
    )
    parser.add_argument(
        "--only-pytest", action="store_true", help="no other plugin; bytecode caches on"
    )
    parser.add_argument(
        "--modes", default=None, help="comma-separated: off, store, report (side by side)"
    )
    parser.add_argument(
        "--sources",
        default=None,
        help="with --modes: LABEL=SRC,... pytest-verial sources measured side by side",
    )
    args = parser.parse_args()
    if args.modes:
        modes_main(args)
        return
    if args.only_pytest:
        only_pytest()
    extra = ["--verial-report", "report.json"] if args.report else []
    per_task, fields = (10, 3) if args.shape == "small" else (50, 1)
    args.tasks = args.tasks or max(args.criteria // per_task, 1)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        build(root, args.criteria, args.tasks, fields)
        verial, plain, frozen, empty, listed = [], [], [], [], []
        cpu: dict[str, list[float]] = {"verial": [], "plain": [], "co": []}
        for _ in range(args.repeat):
            verial.append(
                timed(verial_args("load.verial.json", "--verial-run", "sandbox", *extra), root)
            )
            cpu["verial"].append(cpu_of_last())
            plain.append(timed(["test_plain.py", *BARE], root))
            cpu["plain"].append(cpu_of_last())
            frozen.append(timed(["test_plain.py", *BARE, "-p", "freeze_after_collection"], root))
            empty.append(
                timed(
                    ["-c", "pytest.ini", *BARE, "--co", "-k", "nothing-at-all", "cases.json"],
                    root,
                    ok=(4, 5),
                )
            )
            if args.collect_only:
                listed.append(
                    timed(verial_args("--co", "load.verial.json", "--verial-run", "sandbox"), root)
                )
                cpu["co"].append(cpu_of_last())
        v, p, f, e = (statistics.median(x) for x in (verial, plain, frozen, empty))
    n = args.criteria
    print(
        f"shape {args.shape}: {n} criteria in {args.tasks} tasks, {fields} field(s) each, "
        f"repeats: {args.repeat} (medians)"
    )
    print(
        f"pytest-verial:      {v:7.2f} s  ({(v - e) / n * 1e3:.3f} ms per criterion above start-up)"
    )
    print(f"plain pytest items: {p:7.2f} s  ({(p - e) / n * 1e3:.3f} ms per test above start-up)")
    print(f"plain, heap frozen: {f:7.2f} s  ({(f - e) / n * 1e3:.3f} ms per test above start-up)")
    print(f"pytest start-up:    {e:7.2f} s")
    print(f"ratio (wall):       {v / p:.2f}")
    print(f"ratio (per item):   {(v - e) / (p - e):.2f}")
    print(f"ratio against plain with the heap frozen (wall): {v / f:.2f}")
    if listed:
        c = statistics.median(listed)
        print(f"pytest-verial --co:  {c:7.2f} s  (ratio to the plain full run: {c / p:.2f})")
    vc, pc = statistics.median(cpu["verial"]), statistics.median(cpu["plain"])
    print(f"CPU (user + system): pytest-verial {vc:.2f} s, plain {pc:.2f} s, ratio {vc / pc:.2f}")
    if listed:
        cc = statistics.median(cpu["co"])
        print(f"CPU of --co: {cc:.2f} s, ratio to plain {cc / pc:.2f}")
    runs = {"verial": verial, "plain": plain, "co": listed, "cpu": cpu}
    print("runs (s): " + json.dumps(runs))


#: the pytest-verial variants of ``--modes``
MODES = {
    "off": ["--verial-store", "none"],
    "store": [],
    "report": ["--verial-report", "report.json"],
}


def modes_main(args: argparse.Namespace) -> None:
    """``--modes``: each variant and bare pytest alternating; CPU medians and ratios."""
    if args.only_pytest:
        only_pytest()
    modes = args.modes.split(",")
    sources = dict(s.split("=", 1) for s in args.sources.split(",")) if args.sources else {"": ""}
    outer = os.environ.get("PYTHONPATH", "")
    per_task, fields = (10, 3) if args.shape == "small" else (50, 1)
    args.tasks = args.tasks or max(args.criteria // per_task, 1)
    labels = [f"{m} {s}".strip() for s in sources for m in modes]
    cpu: dict[str, list[float]] = {m: [] for m in ["plain", *labels]}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        build(root, args.criteria, args.tasks, fields)
        # several sources: each its own store (a newer one migrates its schema, which an
        # older one then refuses); one: the project's default store
        stores = {
            source: ["--verial-store", f"sqlite:///{root / f'store-{n}.db'}"]
            if len(sources) > 1
            else []
            for n, source in enumerate(sources)
        }
        for source, src in sources.items():
            # the store exists before the measured runs (a project's usual case)
            os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (src, outer) if p)
            timed(verial_args("load.verial.json", "--verial-run", "sandbox", *stores[source]), root)
        for _ in range(args.repeat):
            for source, src in sources.items():
                os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (src, outer) if p)
                for mode in modes:
                    extra = MODES[mode] if mode == "off" else [*stores[source], *MODES[mode]]
                    timed(
                        verial_args("load.verial.json", "--verial-run", "sandbox", *extra),
                        root,
                    )
                    cpu[f"{mode} {source}".strip()].append(cpu_of_last())
            os.environ["PYTHONPATH"] = outer
            timed(["test_plain.py", *BARE], root)
            cpu["plain"].append(cpu_of_last())
    print(
        f"shape {args.shape}: {args.criteria} criteria in {args.tasks} tasks, {fields} field(s)"
        f" each; CPU seconds (user + system), medians of {args.repeat}"
    )
    base = statistics.median(cpu["plain"])
    print(f"  bare pytest        {base:7.2f} s")
    for label in labels:
        median = statistics.median(cpu[label])
        print(f"  verial {label:<18} {median:7.2f} s  ratio {median / base:.2f}")
    print("runs (CPU s): " + json.dumps(cpu))


if __name__ == "__main__":
    main()
