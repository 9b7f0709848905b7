"""Results store figures for BENCHMARKS.md (issue 19), measured in one run.

1. Write overhead: a 200-task x 10-criterion session (voice-transcript criteria over a small
   sandbox) run by pytest in a subprocess with a SQLite store (existing: a warm-up session
   created it) and with ``--verial-store none``, alternating, R times; the median wall times
   side by side.
   Target: the store adds <= 5 %.
2. Import: a 60,000-task report (3 criterion runs each, cloned from a real session's task
   run) imported into a fresh SQLite store (and PostgreSQL with --postgres). Target <= 20 s.
3. ``list_runs`` on a store of 10,000 benchmark runs: all of them, and the newest 50; then
   ``verial runs`` and ``verial html --index`` on such a store as child processes (wall time a
   user waits, interpreter start included). Target <= 0.5 s.
5. ``verial trend`` over 1,000 runs of one benchmark (10 task runs each): ``Store.trend`` and
   the command as a child process (table, --json, --task). Target <= 1 s.
6. ``--only rows``: the CPU of a task run's rows on the session's running path, in process
   (``time.process_time``, so the machine's load matters less): 200 task runs of 10 criteria
   (alternately passed and failed, with evidence) made into their rows the typed way
   (``reporting._build._task_run``, ``model_dump``, ``task_run_rows``: bf00e1c's path) and
   from the records (``_store_session._plain_task_run``, ``task_run_rows``: issue 33, wave 6),
   alternating, R times; medians.
7. ``--only writes`` (issue 33, wave 8): a session's store writes in process, through
   SQLAlchemy and through sqlite3 (``store/_lite.py``), and each path's imports in child
   processes (:func:`writes_cost`).
4. Bytes per 1,000 criterion runs: the SQLite file (after import and checkpoint) and, with
   --postgres, the tables' total relation size, divided by the criterion runs stored.

    python bench/store.py [--repeat 5] [--tasks 60000] [--runs 10000] [--trend-runs 1000]
                          [--trend-tasks 10] [--postgres]
                          [--only overhead|import|list|runs|trend|rows|writes]

--postgres starts a throwaway PostgreSQL with tests/store/pg_server.py (initdb + pg_ctl).
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
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "store"))

from store_support import child_env, greeting_project, pytest_command  # noqa: E402

from pytest_verial import Report  # noqa: E402
from pytest_verial.store import open_store  # noqa: E402


def overhead(repeat: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        greeting_project(base, tasks=200, criteria=10)
        times: dict[str, list[float]] = {"none": [], "sqlite": []}
        # the store exists, as it does from a project's second session on (a warm-up run)
        subprocess.run(
            pytest_command(
                "-p",
                "no:randomly",
                "-q",
                "-n",
                "0",
                "--tb=no",
                "--verial-store",
                f"sqlite:///{base}/s/results.db",
            ),
            cwd=base,
            env=child_env(),
            capture_output=True,
            check=False,
        )
        for n in range(repeat):
            for mode in ("none", "sqlite") if n % 2 == 0 else ("sqlite", "none"):
                store = "none" if mode == "none" else f"sqlite:///{base}/s/results.db"
                start = time.perf_counter()
                done = subprocess.run(
                    pytest_command(
                        "-p", "no:randomly", "-q", "-n", "0", "--tb=no", "--verial-store", store
                    ),
                    cwd=base,
                    env=child_env(),
                    capture_output=True,
                    text=True,
                    check=False,
                )
                times[mode].append(time.perf_counter() - start)
                assert done.returncode == 1, done.stdout[-2000:]
        none, sqlite = statistics.median(times["none"]), statistics.median(times["sqlite"])
        print(
            f"write overhead, 200 tasks x 10 criteria, median of {repeat}: "
            f"--verial-store none {none:.2f} s, SQLite store {sqlite:.2f} s "
            f"(+{(sqlite / none - 1) * 100:.1f} %)"
        )


def big_report(tasks: int, runs: int = 1, *, same_tasks: bool = False) -> Report:
    """A report of ``runs`` benchmark runs sharing ``tasks`` task runs, cloned from a real one
    (``same_tasks``: every run holds the same task keys, as runs of one benchmark do)."""
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        greeting_project(base, tasks=1, criteria=3)
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
            cwd=base,
            env=child_env(),
            capture_output=True,
            check=False,
        )
        data: dict[str, Any] = json.loads((base / "r.json").read_text())
    run = data["benchmark_runs"][0]
    template = run["task_runs"][0]
    per_run = max(1, tasks // runs)
    out_runs = []
    for r in range(runs):
        task_runs = []
        for t in range(per_run):
            key = f"t{t:06d}" if same_tasks else f"t{r:05d}-{t:06d}"
            clone = json.loads(json.dumps(template))
            clone.update(id=f"greet.verial.yaml::{key}", task_id=key, task_key=key)
            for c in clone["criterion_runs"]:
                c["nodeid"] = f"greet.verial.yaml::{key}::{c['criterion_id']}"
                c["task_run"] = clone["id"]
                c["task_key"] = c["task_id"] = key
            task_runs.append(clone)
        out_runs.append({**run, "id": f"{run['id']}#{r}", "task_runs": task_runs})
    data["benchmark_runs"] = out_runs
    return Report.from_json(data)


def importing(tasks: int, url: str, label: str) -> tuple[Report, float]:
    report = big_report(tasks)
    with open_store(url) as store:
        start = time.perf_counter()
        store.import_report(report)
        took = time.perf_counter() - start
    print(
        f"import of a {tasks:,}-task report ({3 * tasks:,} criterion runs) into {label}: "
        f"{took:.1f} s"
    )
    return report, took


def listing(runs: int, url: str) -> None:
    report = big_report(runs, runs=runs)
    with open_store(url) as store:
        store.import_report(report)
        for limit in (None, 50):
            best = min(_timed(lambda n=limit: store.list_runs(limit=n)) for _ in range(3))
            print(
                f"list_runs on {runs:,} runs, {'all' if limit is None else f'newest {limit}'}: "
                f"{best * 1000:.0f} ms"
            )


def _verial(*args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Wall time of one ``verial`` child process (interpreter start and imports included)."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest_verial.cli", *args],
        capture_output=True,
        text=True,
        check=False,
    )
    return time.perf_counter() - start, done


def startup() -> float:
    """``verial --version`` as a child process: what every command pays before its work."""
    return min(_verial("--version")[0] for _ in range(3))


def runs_command(runs: int, url: str) -> None:
    """``verial runs`` (and ``verial html --index``) on a store of ``runs`` benchmark runs."""
    report = big_report(runs, runs=runs)
    with open_store(url) as store:
        store.import_report(report)
    print(f"verial --version (a child process, best of 3): {startup():.2f} s")
    commands = [
        ("verial runs", ["runs"]),
        ("verial html --index", ["html", "--index", "-o", "OUT/index.html"]),
    ]
    for name, args in commands:
        with tempfile.TemporaryDirectory() as out:
            argv = [a.replace("OUT", out) for a in args]
            took, done = min((_verial(*argv, "--store", url) for _ in range(3)), key=_first)
        assert done.returncode == 0, done.stderr
        print(f"{name} on {runs:,} runs (a child process, best of 3): {took:.2f} s")


def _first(item: tuple[float, Any]) -> float:
    return item[0]


def trending(runs: int, tasks: int, url: str) -> None:
    """``verial trend`` over ``runs`` runs of one benchmark, ``tasks`` task runs each."""
    report = big_report(runs * tasks, runs=runs, same_tasks=True)
    ref = report.benchmark_runs[0].benchmark.ref
    with open_store(url) as store:
        store.import_report(report)
        best = min(_timed(lambda: store.trend(ref)) for _ in range(3))
        print(f"Store.trend over {runs:,} runs x {tasks} tasks: {best * 1000:.0f} ms")
    for args in ([], ["--json"], ["--task", report.benchmark_runs[0].task_runs[0].task_key]):
        took, done = min(
            (_verial("trend", ref, *args, "--store", url) for _ in range(3)), key=lambda t: t[0]
        )
        assert done.returncode == 0, done.stderr
        print(
            f"verial trend {' '.join(args) or '(table)'} over {runs:,} runs "
            f"(a child process, best of 3): {took:.2f} s"
        )


def _timed(work: Any) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def sqlite_bytes(tasks: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "results.db"
        importing(tasks, f"sqlite:///{path}", "SQLite")
        import sqlite3

        db = sqlite3.connect(path)
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.close()
        size = path.stat().st_size
        report_bytes = len(json.dumps(big_report(tasks).to_json()).encode())
        print(f"the same report as a JSON file: {report_bytes / 1e6:.1f} MB")
        print(
            f"SQLite: {size / 1e6:.1f} MB for {3 * tasks:,} criterion runs = "
            f"{size / (3 * tasks) * 1000 / 1e3:.0f} kB per 1,000 criterion runs"
        )


def postgres(tasks: int) -> None:
    from pg_server import pg_server
    from sqlalchemy import create_engine, text

    with pg_server() as server:
        url = server.new_database()
        importing(tasks, url, "PostgreSQL")
        engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://"))
        with engine.connect() as conn:
            size = int(
                conn.execute(
                    text(
                        "select sum(pg_total_relation_size(c.oid)) from pg_class c "
                        "join pg_namespace n on n.oid = c.relnamespace "
                        "where n.nspname = 'public' and c.relkind = 'r'"
                    )
                ).scalar_one()
            )
        engine.dispose()
        print(
            f"PostgreSQL: {size / 1e6:.1f} MB for {3 * tasks:,} criterion runs = "
            f"{size / (3 * tasks) * 1000 / 1e3:.0f} kB per 1,000 criterion runs"
        )
        listing(10_000, server.new_database())
        trending(1_000, 10, server.new_database())


ROWS_BENCHMARK = """
benchmark: rows
tasks:
""" + "".join(
    f"  - id: t{t:03d}\n    criteria:\n"
    + "".join(
        f"      - {{id: c{c}, axis: {'a' if c % 2 else 'b'}, weight: {1 + c % 3}, "
        f"assertion: {{assert: output-length, min_words: {c + 1}}}}}\n"
        for c in range(10)
    )
    for t in range(200)
)


def _rows_input() -> tuple[Any, Any, Any, str]:
    """200 task runs of 10 criteria as the session's records hold them (items 6 and 7)."""
    from pytest_verial._config.run_folder import RunConfig, RunDir
    from pytest_verial._engine import evidence_json, identity
    from pytest_verial._loader import load_benchmark
    from pytest_verial._nodeids import criterion_nodeid, task_name, task_nodeid
    from pytest_verial._record import CriterionRecord
    from pytest_verial.reporting._build import ReportInput

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rows.verial.yaml"
        path.write_text(ROWS_BENCHMARK, encoding="utf-8")
        plan = load_benchmark(path, None, display="rows.verial.yaml")
    run = RunDir(Path("run-1"), "run-1", config=RunConfig())
    display = "rows.verial.yaml"
    records: dict[str, Any] = {}
    for task in plan.tasks:
        node = task_nodeid(display, task_name(task.key, run.label, False))
        for n, criterion in enumerate(task.criteria):
            nodeid = criterion_nodeid(node, criterion.id)
            who = {**identity(criterion, task), "nodeid": nodeid, "task_run": node, "run": "run-1"}
            evidence = evidence_json("output-length", {"output": "x", "words": n})
            records[nodeid] = CriterionRecord.scored(
                who, 1.0 if n % 2 else 0.3, bool(n % 2), evidence=evidence, duration=0.001
            )
    data = ReportInput(
        files=[(display, plan)],
        file_runs={display: [run]},
        runs=[run],
        selected=set(records),
        criterion_runs=records,
        pass_threshold=None,
        scored=False,
        started_at="2026-01-01T00:00:00Z",
        completed_at=None,
        duration=0.0,
        interrupted=False,
        collection_errors=[],
        running=True,
    )
    return plan, run, data, display


def rows_cost(repeat: int) -> None:
    """Item 6: a task run's rows, typed against from the records (see the module's docstring)."""
    from pytest_verial._secrets import redact_json
    from pytest_verial._store_session import _plain_task_run
    from pytest_verial.reporting._build import _task_run
    from pytest_verial.store._rows import task_run_rows

    plan, run, data, display = _rows_input()

    def typed() -> None:
        for n, task in enumerate(plan.tasks):
            made = _task_run(display, plan, task, run, data)
            assert made is not None
            task_data = redact_json(made.model_dump(mode="json", by_alias=True))
            task_run_rows("tr", "br", "ses", n, made, task_data)

    def plain() -> None:
        for n, task in enumerate(plan.tasks):
            made = _plain_task_run(display, plan, task, run, data)
            assert made is not None
            columns, raw = made
            task_run_rows("tr", "br", "ses", n, columns, redact_json(raw))

    times: dict[str, list[float]] = {"typed": [], "plain": []}
    typed(), plain()  # warm: models built, modules loaded
    for _ in range(repeat):
        for name, work in (("typed", typed), ("plain", plain)):
            start = time.process_time()
            work()
            times[name].append(time.process_time() - start)
    typed_s, plain_s = statistics.median(times["typed"]), statistics.median(times["plain"])
    print(
        f"rows of 200 task runs x 10 criteria, CPU medians of {repeat}: typed (bf00e1c's path) "
        f"{typed_s * 1000:.0f} ms, from the records {plain_s * 1000:.0f} ms "
        f"({plain_s / typed_s:.2f}x)"
    )
    print("runs (CPU s): " + json.dumps(times))


#: what a session with the store on imports that one with the store off does not (issue 33)
STORE_IMPORTS = {
    "SQLAlchemy's path": "import pytest_verial._results, pytest_verial.store._core, "
    "pytest_verial.store._repo_batches, sqlalchemy.dialects.sqlite",
    "the session's store (sqlite3)": "import pytest_verial._results, "
    "pytest_verial._store_session, pytest_verial.store._repo_batches",
    "the results alone": "import pytest_verial._results",
}


def writes_cost(repeat: int) -> None:
    """Item 7 (issue 33, wave 8): a session's store writes on each path, in process
    (``time.process_time``): an existing SQLite store opened, then 200 task runs of 10
    criteria handed to ``_store_session.SessionStore`` criterion by criterion with a batch
    boundary every 100 task runs (``BATCH_TASK_RUNS``), through SQLAlchemy (``open_store``)
    and through sqlite3 (``open_lite``), alternating, R times; then each path's imports in
    child processes (CPU, medians of R)."""
    import resource

    from pytest_verial._store_session import SessionStore
    from pytest_verial.store._core import open_store
    from pytest_verial.store._lite import open_lite
    from pytest_verial.store._rows import SessionMeta

    plan, run, data, display = _rows_input()
    nodeids = list(data.criterion_runs)
    per_batch = 100 * 10
    opens = {"SQLAlchemy": open_store, "sqlite3": open_lite}
    times: dict[str, list[float]] = {name: [] for name in opens}
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(repeat + 1):  # the first round warms both paths up
            for name, opener in opens.items():
                url = f"sqlite:///{Path(tmp) / f'{name}-{n}.db'}"
                open_store(url).close()
                start = time.process_time()
                session = SessionStore(url, SessionMeta(started_at="2026-01-01T00:00:00Z"))
                session.store = opener(url)
                session.hooked = lambda: False
                for i, nodeid in enumerate(nodeids, 1):
                    session.criterion_done(nodeid, nodeids, data)
                    if i % per_batch == 0:
                        session.flush()
                session.close()
                if n:
                    times[name].append(time.process_time() - start)
    sa, lite = statistics.median(times["SQLAlchemy"]), statistics.median(times["sqlite3"])
    print(
        f"a session's store writes, 200 task runs x 10 criteria, CPU medians of {repeat}: "
        f"SQLAlchemy {sa * 1000:.0f} ms, sqlite3 {lite * 1000:.0f} ms ({lite / sa:.2f}x)"
    )
    imports: dict[str, list[float]] = {name: [] for name in STORE_IMPORTS}
    for _ in range(repeat):
        for name, code in STORE_IMPORTS.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([sys.executable, "-c", code], check=True)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            used = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
            imports[name].append(used)
    for name, used in imports.items():
        print(f"import, {name}: {statistics.median(used) * 1000:.0f} ms CPU")
    print("runs (CPU s): " + json.dumps({**times, **imports}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--tasks", type=int, default=60_000)
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--postgres", action="store_true")
    parser.add_argument("--trend-runs", type=int, default=1_000)
    parser.add_argument("--trend-tasks", type=int, default=10)
    parser.add_argument(
        "--only",
        choices=["overhead", "import", "list", "runs", "trend", "postgres", "rows", "writes"],
    )
    args = parser.parse_args()
    os.environ.pop("VERIAL_STORE", None)
    if args.only in (None, "overhead"):
        overhead(args.repeat)
    if args.only in (None, "import"):
        sqlite_bytes(args.tasks)
    if args.only in (None, "list"):
        with tempfile.TemporaryDirectory() as tmp:
            listing(args.runs, f"sqlite:///{tmp}/results.db")
    if args.only in (None, "runs"):
        with tempfile.TemporaryDirectory() as tmp:
            runs_command(args.runs, f"sqlite:///{tmp}/results.db")
    if args.only in (None, "trend"):
        with tempfile.TemporaryDirectory() as tmp:
            trending(args.trend_runs, args.trend_tasks, f"sqlite:///{tmp}/results.db")
    if args.postgres or args.only == "postgres":
        postgres(args.tasks)
    if args.only == "writes":
        writes_cost(args.repeat)
    if args.only == "rows":
        rows_cost(args.repeat)


if __name__ == "__main__":
    main()
