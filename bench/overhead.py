"""Per-criterion overhead of pytest-verial against bare pytest items doing the same work.

Builds, in a temporary directory, a benchmark of N portal-state-match criteria (T tasks of
N/T criteria, one field each, over a sandbox of JSON rows) and an equivalent plain pytest file
with N parametrized tests that read the same rows (cached per task, as the plugin's source is)
and make the same comparison. Both are run by pytest in subprocesses, alternating, R times;
the median wall times give the ratio (DESIGN §8: target <= 1.5 at 5,000 criteria).

    python bench/overhead.py [--shape small|large] [--criteria 5000] [--repeat 3] [--report]

Shapes (issue 12): ``large`` is few large tasks (tasks of 50 one-field criteria, the default);
``small`` is many small tasks (tasks of 10 criteria with 3 fields each). ``--tasks`` overrides
the task count.

The plugin freezes what a session keeps out of the garbage collector's sight (``heap.py``);
plain pytest does not, and pays for full collections over its items. So the script also
runs the plain file with the same freeze after collection (``plain, heap frozen``): the
ratio against it is the plugin's own per-criterion cost, with the collector out of both.

``--report`` makes the verial run write ``--verial-report`` (and so its journal, one line per
criterion run, fsynced per task run): run it with the source before and after a change to
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


def timed(args: list[str], cwd: Path, ok: tuple[int, ...] = (0,)) -> float:
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(cwd), os.environ.get("PYTHONPATH", "")]),
        },
    )
    elapsed = time.perf_counter() - start
    if proc.returncode not in ok:
        raise SystemExit(f"pytest {' '.join(args)} failed:\n{proc.stdout[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--criteria", type=int, default=5000)
    parser.add_argument("--shape", choices=["small", "large"], default="large")
    parser.add_argument("--tasks", type=int, default=None, help="default: from the shape")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--report", action="store_true", help="write the JSON report too")
    args = parser.parse_args()
    extra = ["--verial-report", "report.json"] if args.report else []
    per_task, fields = (10, 3) if args.shape == "small" else (50, 1)
    args.tasks = args.tasks or max(args.criteria // per_task, 1)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        build(root, args.criteria, args.tasks, fields)
        verial, plain, frozen, empty = [], [], [], []
        for _ in range(args.repeat):
            verial.append(timed(["load.verial.json", "--verial-run", "sandbox", *extra], root))
            plain.append(timed(["test_plain.py"], root))
            frozen.append(timed(["test_plain.py", "-p", "freeze_after_collection"], root))
            empty.append(
                timed(
                    ["-c", "pytest.ini", "--co", "-k", "nothing-at-all", "cases.json"],
                    root,
                    ok=(4, 5),
                )
            )
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


if __name__ == "__main__":
    main()
