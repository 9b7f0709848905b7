"""``verial compare`` of two large reports (issue 18 class 7), for BENCHMARKS.md.

Two reports of N task runs each (default 60,000) are cloned from the task runs of one real
session: K + 1 tasks of K voice criteria (default 2) whose sandboxes meet 0 to K of them, so
task scores take the values 0, 1/K, ... 1. Each task of the base report takes one of them at
random, the head report's task takes a neighbour of the base's, more often upwards, so the mean
paired difference is small and positive and the bootstrap has real work. The files are in the
layout pytest-verial writes (one task run a line: ``json_report.report_text``). The command
runs as a child process, as a user runs it, timed with its peak resident memory (``ru_maxrss``
of the child). The interval it prints is checked against the normal interval of the same differences
(mean +- 1.96 sd / sqrt(n)), which the percentile bootstrap approaches at this size.

Target: <= 10 s and peak memory <= 3 x the two files' size, with the interval still correct.

With ``--store`` both reports are also imported into a fresh SQLite store (``verial import``)
and compared by reference (``verial compare latest~1 latest --store URL``), issue 19's target
for two stored 60,000-task runs: <= 10 s.

    python bench/compare_scale.py [--tasks 60000] [--criteria 2] [--repeat 3] [--store]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "store"))

from store_support import (  # noqa: E402
    Project,
    child_env,
    pytest_command,
    voice_criterion,
)

from pytest_verial import BenchmarkRun  # noqa: E402

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.reporting._json_report import report_text  # noqa: E402

WORDS = ("good morning", "thanks", "hello", "goodbye")


def templates(criteria: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One real report, and its ``criteria + 1`` task runs ordered by score (0 ... 1)."""
    with tempfile.TemporaryDirectory() as tmp:
        project = Project(Path(tmp))
        spec = []
        for met in range(criteria + 1):
            key = f"t{met}"
            spec.append(
                {
                    "id": key,
                    "criteria": [
                        voice_criterion(f"c{i}", contains=[w])
                        for i, w in enumerate(WORDS[:criteria])
                    ],
                }
            )
            said = " ".join(WORDS[:met]) or "nothing"
            project.sandbox(key, {"voice/turns.json": [{"speaker": "agent", "text": said}]})
        project.benchmark("greet", {"benchmark": "greet", "version": 1, "tasks": spec})
        subprocess.run(
            pytest_command(
                "-p",
                "no:randomly",
                "-q",
                "-n",
                "0",
                "--verial-store",
                "none",
                "--verial-report",
                "r.json",
            ),
            cwd=project.path,
            env=child_env(),
            capture_output=True,
            check=False,
        )
        data: dict[str, Any] = json.loads((project.path / "r.json").read_text())
    runs = sorted(data["benchmark_runs"][0]["task_runs"], key=lambda t: t["score"])
    if [t["score"] for t in runs] != [m / criteria for m in range(criteria + 1)]:
        raise SystemExit(f"unexpected template scores {[t['score'] for t in runs]}")
    return data, runs


def clone(template: dict[str, Any], key: str) -> dict[str, Any]:
    task: dict[str, Any] = json.loads(json.dumps(template))
    task.update(id=f"greet.verial.yaml::{key}", task_id=key, task_key=key)
    for c in task["criterion_runs"]:
        c["nodeid"] = f"greet.verial.yaml::{key}::{c['criterion_id']}"
        c["task_run"] = task["id"]
        c["task_key"] = c["task_id"] = key
    return task


def write_pair(folder: Path, tasks: int, criteria: int) -> tuple[Path, Path, list[float]]:
    """The base and head reports of ``tasks`` task runs, and the paired score differences."""
    data, pool = templates(criteria)
    rng = random.Random(7)
    sides: tuple[list[dict[str, Any]], list[dict[str, Any]]] = ([], [])
    diffs = []
    for t in range(tasks):
        key = f"t{t:06d}"
        b = rng.randrange(criteria + 1)
        h = min(criteria, max(0, b + rng.choice((-1, 0, 0, 1, 1))))
        sides[0].append(clone(pool[b], key))
        sides[1].append(clone(pool[h], key))
        diffs.append(pool[h]["score"] - pool[b]["score"])
    paths = []
    for name, task_runs in zip(("base", "head"), sides, strict=True):
        # its figures scored again from the cloned task runs, as a reader checks them
        typed = BenchmarkRun.model_validate(dict(data["benchmark_runs"][0], task_runs=task_runs))
        run = typed.rescored().model_dump(mode="json", by_alias=True)
        session = dict(data["session"], counts=run["counts"])
        report = dict(data, benchmark_runs=[run], session=session)
        path = folder / f"{name}.json"
        path.write_text(report_text(report) + "\n", encoding="utf-8")
        paths.append(path)
    return paths[0], paths[1], diffs


def compare(folder: Path, *sides: str) -> tuple[float, int, dict[str, Any]]:
    """Wall seconds, peak RSS (bytes) and the --json output of one ``verial compare``."""
    out = folder / "comparison.json"
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest_verial.cli", "compare", *sides, "--json", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=child_env(),
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"verial compare exited {proc.returncode}: {proc.stderr.read()!r}")
    return wall, usage.ru_maxrss * 1024, json.loads(out.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=60_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--criteria", type=int, default=2, choices=range(1, len(WORDS) + 1))
    parser.add_argument(
        "--store", action="store_true", help="also import both into SQLite, compare by reference"
    )
    parser.add_argument("--write-pair", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write_pair:  # the child that builds the files (see below)
        *_, diffs = write_pair(Path(args.write_pair), args.tasks, args.criteria)
        (Path(args.write_pair) / "diffs.json").write_text(json.dumps(diffs))
        return
    with tempfile.TemporaryDirectory() as tmp:
        # built in a child process: Linux carries a process's peak RSS across fork and exec
        # (ru_maxrss), so a parent that held the reports would inflate every figure below
        subprocess.run(
            [sys.executable, __file__, "--write-pair", tmp, "--tasks", str(args.tasks)]
            + ["--criteria", str(args.criteria)],
            check=True,
        )
        base, head = Path(tmp) / "base.json", Path(tmp) / "head.json"
        diffs = json.loads((Path(tmp) / "diffs.json").read_text())
        size = base.stat().st_size + head.stat().st_size
        print(f"{args.tasks:,} task runs per report, files {size / 1e6:.1f} MB together")
        n = len(diffs)
        mean = math.fsum(diffs) / n
        half = 1.959964 * statistics.stdev(diffs) / math.sqrt(n)
        sides = [("two report files", [str(base), str(head)])]
        if args.store:
            url = f"sqlite:///{tmp}/results.db"
            start = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "pytest_verial.cli", "import", str(base), str(head)]
                + ["--store", url],
                env=child_env(),
                check=True,
                capture_output=True,
            )
            print(f"verial import of both into SQLite: {time.perf_counter() - start:.1f} s")
            sides.append(("two stored runs", ["latest~1", "latest", "--store", url]))
        for label, argv in sides:
            runs = [compare(Path(tmp), *argv) for _ in range(args.repeat)]
            walls = [w for w, _, _ in runs]
            peak = max(p for _, p, _ in runs)
            interval = runs[-1][2]["benchmark_runs"][0]["interval"]
            print(
                f"verial compare, {label}: median {statistics.median(walls):.2f} s of "
                f"{args.repeat} ({', '.join(f'{w:.2f}' for w in walls)}), peak RSS "
                f"{peak / 1e6:.0f} MB = {peak / size:.2f} x the files"
            )
            print(
                f"  interval: mean {interval['mean']:.5f} [{interval['low']:.5f}, "
                f"{interval['high']:.5f}] ({interval['resamples']:,} resamples); normal "
                f"interval {mean:.5f} [{mean - half:.5f}, {mean + half:.5f}]"
            )


if __name__ == "__main__":
    main()
