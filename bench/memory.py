"""Peak memory per criterion of a pytest-verial session, as the slope between sizes (issue 21).

Builds ``bench/overhead.py``'s benchmark and plain pytest file at each size, then runs, in
fresh processes: pytest-verial on the benchmark with the JSON report (``--verial-report``)
and the results store on (its default SQLite file, or ``--store URL``), and, unless
``--no-plain``, bare pytest (``-p no:verial -p no:verial-judge``) on the plain file that makes
the same comparisons. Each run's peak RSS is the process's exact ``ru_maxrss`` (``-n 0``).

    python bench/memory.py [--shape small|large] [--criteria 20000,100000] [--no-plain]
        [--store URL] [--json points.jsonl] [--only-pytest]

Prints one line per run (wall and CPU seconds, peak RSS, the load average) and, for two
sizes or more, the slope between the smallest and the largest: KB of peak memory per added
criterion, and ms of wall time per added criterion.
``--only-pytest``: as in ``bench/overhead.py``.
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
    args = parser.parse_args()
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
            if not args.no_plain:
                runs["plain"] = ["test_plain.py", *BARE]
            for side, command in runs.items():
                wall, peak, last = run(command, root)
                results[side].append((n, wall, peak))
                load = Path("/proc/loadavg").read_text().split()[0]
                line = {"side": side, "shape": args.shape, "criteria": n, "wall_s": wall}
                line |= {"cpu_s": round(CPU[-1], 2)}
                line |= {"peak_mb": peak, "load": float(load)}
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
