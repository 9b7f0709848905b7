"""`verial serve` figures for BENCHMARKS.md (issue 20), measured in one run.

The task: ``sftp-referral-packet`` of example_benchmarks/files.verial.yaml with its criteria
repeated to 10 deterministic criteria (a benchmark file written for the bench, ``serve-10``),
scored on the captured good-agent run; every request is a new task run written to the store.

1. ``POST /v1/verify-task``: p50/p95/p99 and task runs/s at C concurrent clients (threads of
   this process, one httpx client each) for each of W uvicorn workers, on SQLite and, with
   ``--postgres``, on a throwaway PostgreSQL (tests/store/pg_server.py); 5xx and "database is
   locked" counted. The inline engine (``verify_task``) on the same task and folder is the
   baseline: the overhead is the service's p50 at 1 client, 1 worker, minus the inline p50.
2. ``GET /task-runs/{id}`` of task runs of 10, 100 and 1,000 criteria (benchmarks
   ``serve-100``, ``serve-1000``): p50 of 50 reads.
3. RSS per worker process (VmRSS of each uvicorn process after the load).
4. Restart to ready after kill -9: the server killed (SIGKILL) under load, started again, the
   time until ``/readyz`` answers 200; and how many acknowledged task runs are missing then.

    python bench/service.py [--requests 200] [--clients 1,8,32,128] [--workers 1,2,4]
                            [--postgres] [--restarts 3]
    python bench/service.py --overhead ROUNDS [--requests 200] [--postgres]

5. ``--overhead ROUNDS``: only the overhead over inline ``verify_task`` at 1 worker and
   1 client, measured in ROUNDS alternating batches of ``--requests`` (inline, then served).
6. ``--lean ROUNDS`` (issue 33's targets, side by side in one run, 1 worker, SQLite): the
   overhead as in 5; verify-task throughput at 8 clients over inline calls per second (one
   thread), in ROUNDS alternating batches; and a run-API ``complete`` of the 1,000th task run
   of a 1,000-task benchmark run over the 1st (medians of the first and the last
   ``LEAN_EDGE`` completes of the same run, each completed one after the other).

   Each 1-worker round also prints the server's CPU and the client's per verify-task (from
   /proc and this process) and the p50 of ``GET /healthz`` (any request's floor here).

    python bench/service.py --lean ROUNDS [--requests 200] [--tasks 1000] [--complete-only]
                            [--lean-workers 1,2]
    python bench/service.py --lean ROUNDS --ab /tmp/old/src [--requests 100]

7. ``--lean ROUNDS --ab SRC``: the code at SRC and this code served at the same time (1 and 2
   workers each), measured in alternating batches so both see the same load (a shared machine).

"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import yaml

ROOT = Path(__file__).resolve().parents[1]
FILES = ROOT / "example_benchmarks" / "files.verial.yaml"
RUNS = ROOT / "example_benchmarks" / "runs"
TASK = "sftp-referral-packet"


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def write_benchmarks(folder: Path) -> list[Path]:
    """``serve-N``: the example task with its criteria repeated to N (10, 100, 1,000)."""
    data = yaml.safe_load(FILES.read_text())
    task = next(t for t in data["tasks"] if t["id"] == TASK)
    paths = []
    for n in (10, 100, 1000):
        criteria = [
            {**task["criteria"][i % len(task["criteria"])], "id": f"c{i:04d}"} for i in range(n)
        ]
        bench = {"benchmark": f"serve-{n}", "version": 1, "tasks": [{**task, "criteria": criteria}]}
        path = folder / f"serve-{n}.verial.yaml"
        path.write_text(yaml.safe_dump(bench, sort_keys=False))
        paths.append(path)
    return paths


def inline_p50(bench: Path, n: int) -> float:
    from pytest_verial import load_benchmark, verify_task
    from pytest_verial.checks import default_registry

    plan = load_benchmark(bench, default_registry())
    task = plan.tasks[0]
    times = []
    for _ in range(n):
        start = time.perf_counter()
        verify_task(task, RUNS / "good-agent" / TASK, {})
        times.append(time.perf_counter() - start)
    return statistics.median(times)


@contextlib.contextmanager
def server(
    store: str, benches: list[Path], workers: int, log: Path, src: str | None = None
) -> Iterator[tuple[str, Any]]:
    """``verial serve`` on a free port; ``src``: the pytest-verial source it runs (PYTHONPATH),
    else this environment's."""
    port = _port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("VERIAL_")}
    if src is not None:
        env["PYTHONPATH"] = src
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "pytest_verial.cli", "serve", *map(str, benches),
             "--runs-root", str(RUNS), "--store", store, "--port", str(port),
             "--workers", str(workers)],
            stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT, start_new_session=True,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(url)
        yield url, proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def wait_ready(url: str, timeout: float = 120) -> float:
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        try:
            if httpx.get(url + "/readyz", timeout=1).status_code == 200:
                return time.perf_counter() - start
        except httpx.HTTPError:
            pass
        time.sleep(0.02)
    raise SystemExit(f"{url} not ready in {timeout} s")


def body(n: int = 10) -> dict[str, Any]:
    return {"benchmark": f"serve-{n}@1", "task_id": TASK, "sandbox": {"run_dir": "good-agent"}}


def run_clients(
    url: str, key: str, clients: int, total: int, acked: list[str] | None = None
) -> tuple[list[float], int, float]:
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    per = max(2, total // clients)

    def work() -> None:
        with httpx.Client(base_url=url, timeout=120) as client:
            for _ in range(per):
                start = time.perf_counter()
                try:
                    r = client.post(
                        "/v1/verify-task", json=body(), headers={"Authorization": f"Bearer {key}"}
                    )
                except httpx.HTTPError:
                    return  # the server was killed (the restart figure)
                took = time.perf_counter() - start
                with lock:
                    latencies.append(took)
                    if r.status_code >= 500 or "database is locked" in r.text:
                        errors[0] += 1
                    elif acked is not None and r.status_code == 201:
                        acked.append(r.json()["task_run_id"])

    threads = [threading.Thread(target=work) for _ in range(clients)]
    wall = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, errors[0], time.perf_counter() - wall


def rss_mb(pid: int) -> list[float]:
    """VmRSS of the server's uvicorn processes (the workers, or the one process)."""
    out = subprocess.run(["ps", "-o", "pid=,ppid=,rss=", "-e"], capture_output=True, text=True)
    rows = [tuple(int(x) for x in line.split()) for line in out.stdout.splitlines() if line.strip()]
    children = [rss for p, parent, rss in rows if parent == pid]
    own = [rss for p, _parent, rss in rows if p == pid]
    return [kb / 1024 for kb in (children or own)]


def new_store(kind: str, tmp: Path, pg: Any) -> str:
    # private: internals with no public face (issue 32: a test is not a user)
    from pytest_verial.service._keys import create_key
    from pytest_verial.store import open_store

    url = (
        f"sqlite:///{tmp}/store-{time.monotonic_ns()}.db" if kind == "sqlite" else pg.new_database()
    )
    with open_store(url) as store:
        create_key(store, "org")
    return str(url)


def org_key(url: str) -> str:
    # private: internals with no public face (issue 32: a test is not a user)
    from pytest_verial.service._keys import create_key
    from pytest_verial.store import open_store

    with open_store(url) as store:
        return create_key(store, "org")[1]


def grid(kind: str, args: argparse.Namespace, tmp: Path, benches: list[Path], pg: Any) -> None:
    for workers in [int(w) for w in args.workers.split(",")]:
        store = new_store(kind, tmp, pg)
        key = org_key(store)
        with server(store, benches, workers, tmp / "serve.log") as (url, proc):
            run_clients(url, key, 1, 10)  # warm-up
            for clients in [int(c) for c in args.clients.split(",")]:
                lat, errors, wall = run_clients(url, key, clients, args.requests)
                print(
                    f"| {kind} | {workers} | {clients} | {_pct(lat, 0.5) * 1000:.1f} | "
                    f"{_pct(lat, 0.95) * 1000:.1f} | {_pct(lat, 0.99) * 1000:.1f} | "
                    f"{len(lat) / wall:.1f} | {len(lat) / wall / workers:.1f} | {errors} |",
                    flush=True,
                )
            rss = rss_mb(proc.pid)
            print(
                f"  RSS per worker ({kind}, {workers} workers): "
                + ", ".join(f"{r:.0f} MB" for r in rss),
                flush=True,
            )


def reads(kind: str, tmp: Path, benches: list[Path], pg: Any) -> None:
    store = new_store(kind, tmp, pg)
    key = org_key(store)
    auth = {"Authorization": f"Bearer {key}"}
    with (
        server(store, benches, 1, tmp / "serve.log") as (url, _),
        httpx.Client(base_url=url, timeout=120, headers=auth) as http,
    ):
        for n in (10, 100, 1000):
            made = http.post("/v1/verify-task", json=body(n))
            assert made.status_code == 201, made.text
            tr = made.json()["task_run_id"]
            times = []
            for _ in range(50):
                start = time.perf_counter()
                got = http.get(f"/task-runs/{tr}")
                times.append(time.perf_counter() - start)
                assert len(got.json()["criterion_runs"]) == n
            print(
                f"  GET /task-runs/{{id}} ({kind}), {n:,} criteria: p50 "
                f"{statistics.median(times) * 1000:.1f} ms",
                flush=True,
            )


def restart(kind: str, tmp: Path, benches: list[Path], pg: Any, repeat: int) -> None:
    store = new_store(kind, tmp, pg)
    key = org_key(store)
    readies, acked, lost = [], [], 0
    for _ in range(repeat):
        with server(store, benches, 1, tmp / "serve.log") as (url, proc):
            load = threading.Thread(target=run_clients, args=(url, key, 8, 4000, acked))
            load.start()
            time.sleep(1.0)
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            load.join()
            start = time.perf_counter()
        with server(store, benches, 1, tmp / "serve.log") as (url, _):
            readies.append(time.perf_counter() - start)
            with httpx.Client(base_url=url, timeout=60) as http:
                auth = {"Authorization": f"Bearer {key}"}
                lost += sum(
                    http.get(f"/task-runs/{tr}", headers=auth).status_code != 200 for tr in acked
                )
    print(
        f"  restart to ready after kill -9 ({kind}): median {statistics.median(readies):.2f} s "
        f"of {repeat} ({', '.join(f'{r:.2f}' for r in readies)}); acknowledged task runs "
        f"{len(acked)}, lost {lost}",
        flush=True,
    )


def overhead(kind: str, tmp: Path, benches: list[Path], pg: Any, rounds: int, n: int) -> None:
    """The service's p50 (1 worker, 1 client) against inline ``verify_task`` on the same task
    and folder, in alternating batches of ``n`` so that both see the same machine."""
    store = new_store(kind, tmp, pg)
    key = org_key(store)
    with server(store, benches, 1, tmp / "serve.log") as (url, _):
        run_clients(url, key, 1, 20)  # warm-up
        inline_p50(benches[0], 20)
        pairs = []
        for _ in range(rounds):
            lat, _errors, _wall = run_clients(url, key, 1, n)
            pairs.append((inline_p50(benches[0], n), statistics.median(lat)))
    for inline, served in pairs:
        print(
            f"  {kind}: inline p50 {inline * 1000:.2f} ms, service p50 {served * 1000:.2f} ms, "
            f"overhead {(served - inline) * 1000:.2f} ms",
            flush=True,
        )
    gaps = sorted(served - inline for inline, served in pairs)
    print(f"  {kind}: overhead, median of {rounds} rounds: {statistics.median(gaps) * 1000:.2f} ms")


def inline_rate(bench: Path, n: int) -> float:
    """Inline ``verify_task`` calls per second, one after the other in this thread."""
    from pytest_verial import load_benchmark, verify_task
    from pytest_verial.checks import default_registry

    task = load_benchmark(bench, default_registry()).tasks[0]
    start = time.perf_counter()
    for _ in range(n):
        verify_task(task, RUNS / "good-agent" / TASK, {})
    return n / (time.perf_counter() - start)


#: completes timed at each end of the run (the first ones, the last ones)
LEAN_EDGE = 5


def many_tasks(tmp: Path, n: int) -> tuple[Path, Path]:
    """``serve-many``: the example task ``n`` times (one criterion each of the example's),
    and a runs root holding a copy of its good-agent folder under each task's name."""
    import shutil

    data = yaml.safe_load(FILES.read_text())
    task = next(t for t in data["tasks"] if t["id"] == TASK)
    tasks = [{**task, "id": f"task-{i:04d}"} for i in range(n)]
    bench = tmp / "serve-many.verial.yaml"
    bench.write_text(yaml.safe_dump({"benchmark": "serve-many", "version": 1, "tasks": tasks}))
    root = tmp / "runs-many"
    (root / "good-agent").mkdir(parents=True)
    shutil.copy(RUNS / "good-agent" / "run.yaml", root / "good-agent" / "run.yaml")
    for t in tasks:
        shutil.copytree(RUNS / "good-agent" / TASK, root / "good-agent" / t["id"])
    return bench, root


def completes(tmp: Path, n: int) -> tuple[list[float], list[float]]:
    """The times of the first and the last LEAN_EDGE completes of one ``n``-task run."""
    bench, root = many_tasks(tmp, n)
    store = new_store("sqlite", tmp, None)
    key = org_key(store)
    port = _port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("VERIAL_")}
    with (tmp / "serve-many.log").open("ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "pytest_verial.cli", "serve", str(bench),
             "--runs-root", str(root), "--store", store, "--port", str(port)],
            stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT, start_new_session=True,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(url)
        with httpx.Client(base_url=url, timeout=120) as http:
            made = http.post(
                "/v1/benchmark-runs",
                json={"benchmark": "serve-many@1", "agent": "bench"},
                headers={"Authorization": f"Bearer {key}"},
            )
            assert made.status_code == 201, made.text
            run = made.json()
            token = {"Authorization": f"Bearer {run['bearer_token']}"}
            times = []
            for task in run["task_runs"]:
                path = task["complete_url"].removeprefix(url)
                start = time.perf_counter()
                done = http.post(path, json={"sandbox": {"run_dir": "good-agent"}}, headers=token)
                times.append(time.perf_counter() - start)
                assert done.status_code == 200, done.text
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    return times[:LEAN_EDGE], times[-LEAN_EDGE:]


def route_work(tmp: Path, bench: Path, n: int) -> tuple[float, float]:
    """p50 of verify-task's own work in this process, without HTTP (the key's check, scoring,
    storing, the answer's JSON), and p50 of inline ``verify_task``, alternating: what the
    service adds on one core, apart from the transport and the scheduler."""
    from pytest_verial import load_benchmark, verify_task
    from pytest_verial.checks import default_registry
    from pytest_verial.service import _keys, create_app
    from pytest_verial.service._keys import authenticate, create_key
    from pytest_verial.service._requests import VerifyTaskIn
    from pytest_verial.service._routes.verify import _made, _stored
    from pytest_verial.store import _repo_keys
    from pytest_verial.store._repo_runs import store_verified

    app = create_app(f"sqlite:///{tmp}/route-{time.monotonic_ns()}.db", [bench], RUNS)
    store, verifier = app.state.store, app.state.verifier
    _, key = create_key(store, "org")
    # the key's check as the route makes it: since wave 6 (issue 33) a key this process kept is
    # read in the write transaction; before, by a read of its own (authenticate)
    kept = getattr(_keys, "kept_key", None)
    authenticate(store, key)

    def owner_of() -> tuple[Any, Any]:
        if kept is None:
            return authenticate(store, key), None
        owner = kept(store, key)[0]

        def then(conn: Any, _answer: Any) -> None:
            assert _repo_keys.key_active_in(conn, owner.id)

        return owner, then

    task = load_benchmark(bench, default_registry()).tasks[0]
    served_body = body()
    served, inline = [], []
    for _ in range(n):
        start = time.perf_counter()
        request = VerifyTaskIn.model_validate(served_body)
        owner, then = owner_of()
        assert owner is not None
        made = store_verified(
            store, owner, verifier.verify(request), _stored(False), idem=None, digest="", then=then
        )
        _made(made).render(made.body)
        served.append(time.perf_counter() - start)
        start = time.perf_counter()
        verify_task(task, RUNS / "good-agent" / TASK, {})
        inline.append(time.perf_counter() - start)
    store.close()
    return statistics.median(served), statistics.median(inline)


def rescoring(tmp: Path, sizes: tuple[int, ...] = (10, 1000)) -> None:
    """In this process: a benchmark run rescored from all its task runs (``_rewrite``, in a
    write transaction rolled back) for runs of ``sizes`` task runs just created, p50 of 5:
    what a cancel does, and a complete of a run with trials (a complete of a run with one run
    folder updates its running sums instead, whatever the run's size)."""
    import warnings

    from pytest_verial.service import create_app
    from pytest_verial.service._keys import create_key
    from pytest_verial.store._repo_runs import _rewrite

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient

    data = yaml.safe_load(FILES.read_text())
    task = next(t for t in data["tasks"] if t["id"] == TASK)
    for n in sizes:
        tasks = [{**task, "id": f"t{i:04d}"} for i in range(n)]
        bench = tmp / f"rescore-{n}.verial.yaml"
        bench.write_text(
            yaml.safe_dump({"benchmark": f"rescore-{n}", "version": 1, "tasks": tasks})
        )
        app = create_app(f"sqlite:///{tmp}/rescore-{n}.db", [bench], RUNS)
        _, key = create_key(app.state.store, "org")
        with TestClient(app) as client:
            run = client.post(
                "/v1/benchmark-runs",
                json={"benchmark": f"rescore-{n}@1", "agent": "bench"},
                headers={"Authorization": f"Bearer {key}"},
            ).json()
            times = []
            for _ in range(5):
                with app.state.store.engine.connect() as conn, conn.begin() as tx:
                    start = time.perf_counter()
                    _rewrite(conn, run["id"])
                    times.append(time.perf_counter() - start)
                    tx.rollback()
        print(
            f"  in-process: full rescoring (cancel; trials) of a {n:,}-task run, p50 "
            f"{statistics.median(times) * 1000:.1f} ms",
            flush=True,
        )


def cpu_seconds(pid: int) -> float:
    """User and system CPU of process ``pid`` and its finished children (/proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def server_pids(pid: int) -> list[int]:
    """The processes serving requests: uvicorn's workers, or the one process."""
    out = subprocess.run(["ps", "-o", "pid=,ppid=", "-e"], capture_output=True, text=True)
    rows = [tuple(int(x) for x in line.split()) for line in out.stdout.splitlines() if line]
    return [p for p, parent in rows if parent == pid] or [pid]


def healthz_p50(url: str, n: int) -> float:
    """p50 of ``GET /healthz`` through the same client: what any request costs here (the
    client, the loopback, uvicorn and FastAPI) with no work behind it."""
    times = []
    with httpx.Client(base_url=url, timeout=60) as client:
        for _ in range(n):
            start = time.perf_counter()
            client.get("/healthz")
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def lean(
    tmp: Path, benches: list[Path], rounds: int, n: int, tasks: int, workers: list[int]
) -> None:
    """Issue 33's three service figures, one run, SQLite: the overhead at 1 worker, the
    8-client throughput at each of ``workers`` (the first one is the target's)."""
    print(f"load average before: {os.getloadavg()}", flush=True)
    gaps: list[float] = []
    ratios: dict[int, list[float]] = {w: [] for w in workers}
    for count in workers:
        store = new_store("sqlite", tmp, None)
        key = org_key(store)
        with server(store, benches, count, tmp / "serve.log") as (url, proc):
            run_clients(url, key, 1, 20)  # warm-up
            inline_p50(benches[0], 20)
            pids = server_pids(proc.pid)
            for _ in range(rounds):
                if count == 1:
                    spent = cpu_seconds(pids[0])
                    own = time.process_time()
                    lat, _errors, _wall = run_clients(url, key, 1, n)
                    spent = (cpu_seconds(pids[0]) - spent) / len(lat)
                    own = (time.process_time() - own) / len(lat)
                    inline = inline_p50(benches[0], n)
                    floor = healthz_p50(url, n)
                    gaps.append(statistics.median(lat) - inline)
                    print(
                        f"  round: inline p50 {inline * 1000:.2f} ms, service p50 "
                        f"{statistics.median(lat) * 1000:.2f} ms, overhead "
                        f"{gaps[-1] * 1000:.2f} ms; the server's CPU {spent * 1000:.2f} ms and "
                        f"the client's {own * 1000:.2f} ms per request; /healthz p50 "
                        f"{floor * 1000:.2f} ms",
                        flush=True,
                    )
                served, errors, wall = run_clients(url, key, 8, n)
                rate = inline_rate(benches[0], n)
                ratios[count].append(len(served) / wall / rate)
                print(
                    f"  {count} worker(s): 8 clients {len(served) / wall:.1f}/s ({errors} "
                    f"errors), inline {rate:.1f}/s, ratio {ratios[count][-1]:.2f}",
                    flush=True,
                )
    route, inline_alone = route_work(tmp, benches[0], n)
    print(
        f"  in-process (no HTTP): route work p50 {route * 1000:.2f} ms, inline p50 "
        f"{inline_alone * 1000:.2f} ms, added {(route - inline_alone) * 1000:.2f} ms",
        flush=True,
    )
    rescoring(tmp)
    first, last = completes(tmp, tasks)
    print(f"load average after: {os.getloadavg()}", flush=True)
    print("| measure | figure | target |")
    print("|---|---|---|")
    if gaps:
        print(
            f"| verify-task p50 - inline p50, 1 worker, SQLite (median of {rounds} rounds) | "
            f"{statistics.median(gaps) * 1000:.2f} ms | <= 3 ms |"
        )
    for count in workers:
        print(
            f"| verify-task/s at 8 clients, {count} worker(s) / inline calls/s (median of "
            f"{rounds} rounds) | {statistics.median(ratios[count]):.2f} | >= 0.5 |"
        )
    print(
        f"| complete of the last / the first task run, {tasks:,}-task run "
        f"(medians of {LEAN_EDGE}: {statistics.median(last) * 1000:.1f} ms / "
        f"{statistics.median(first) * 1000:.1f} ms) | "
        f"{statistics.median(last) / statistics.median(first):.2f} | <= 1.5 |"
    )


def side_by_side(tmp: Path, benches: list[Path], before: str, rounds: int, n: int) -> None:
    """``--ab``: the code at ``before`` (a ``src`` folder) and this code served at once, each
    by its own ``verial serve`` on its own SQLite store, measured in alternating batches (the
    order swapped each round) so that both see the same load: per side the 1-client p50 over
    the inline p50 measured between them, the server's CPU per request (/proc), and the
    8-client throughput over inline calls/s at 1 and at 2 workers."""
    print(f"load average before: {os.getloadavg()}", flush=True)
    sides = {"before": before, "after": None}
    figures: dict[str, dict[str, list[float]]] = {
        side: {"gap": [], "cpu": [], "r1": [], "r2": []} for side in sides
    }
    with contextlib.ExitStack() as stack:
        urls: dict[tuple[str, int], tuple[str, str, list[int]]] = {}
        for side, src in sides.items():
            for count in (1, 2):
                store = new_store("sqlite", tmp, None)
                key = org_key(store)
                log = tmp / f"serve-{side}-{count}.log"
                url, proc = stack.enter_context(server(store, benches, count, log, src))
                run_clients(url, key, 1, 20)  # warm-up
                urls[side, count] = (url, key, server_pids(proc.pid))
        inline_p50(benches[0], 20)
        for index in range(rounds):
            order = list(sides) if index % 2 == 0 else list(sides)[::-1]
            for side in order:
                url, key, pids = urls[side, 1]
                spent = cpu_seconds(pids[0])
                lat, _errors, _wall = run_clients(url, key, 1, n)
                figures[side]["cpu"].append((cpu_seconds(pids[0]) - spent) / len(lat))
                inline = inline_p50(benches[0], n)
                figures[side]["gap"].append(statistics.median(lat) - inline)
                for count in (1, 2):
                    url, key, _pids = urls[side, count]
                    served, _errors, wall = run_clients(url, key, 8, n)
                    rate = inline_rate(benches[0], n)
                    figures[side][f"r{count}"].append(len(served) / wall / rate)
                print(
                    f"  round {index + 1} {side}: p50 {statistics.median(lat) * 1000:.2f} ms, "
                    f"inline {inline * 1000:.2f} ms, overhead "
                    f"{figures[side]['gap'][-1] * 1000:.2f} ms, server CPU "
                    f"{figures[side]['cpu'][-1] * 1000:.2f} ms/request; 8 clients / inline: "
                    f"1 worker {figures[side]['r1'][-1]:.2f}, 2 workers "
                    f"{figures[side]['r2'][-1]:.2f}",
                    flush=True,
                )
    print(f"load average after: {os.getloadavg()}", flush=True)
    print(f"| measure (median of {rounds} rounds) | before | after | target |")
    print("|---|---|---|---|")
    rows = [
        ("verify-task p50 - inline p50, 1 worker, SQLite (ms)", "gap", 1000, "<= 3 ms"),
        ("the server's CPU per verify-task, 1 worker (ms)", "cpu", 1000, ""),
        ("verify-task/s at 8 clients, 1 worker / inline calls/s", "r1", 1, ">= 0.5"),
        ("verify-task/s at 8 clients, 2 workers / inline calls/s", "r2", 1, ""),
    ]
    for label, name, scale, target in rows:
        before_, after_ = (statistics.median(figures[s][name]) * scale for s in sides)
        print(f"| {label} | {before_:.2f} | {after_:.2f} | {target} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--clients", default="1,8,32,128")
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--postgres", action="store_true")
    parser.add_argument("--restarts", type=int, default=3)
    parser.add_argument(
        "--overhead",
        type=int,
        metavar="ROUNDS",
        help="only the overhead over inline verify_task: ROUNDS alternating batches",
    )
    parser.add_argument(
        "--lean",
        type=int,
        metavar="ROUNDS",
        help="issue 33's figures: overhead, throughput ratio, complete's growth",
    )
    parser.add_argument("--tasks", type=int, default=1000, help="task runs of --lean's run")
    parser.add_argument(
        "--ab",
        metavar="SRC",
        help="with --lean ROUNDS: the code at SRC (a src folder) and this code served at once, "
        "measured in alternating batches",
    )
    parser.add_argument(
        "--lean-workers",
        default="1",
        help="with --lean: the worker counts of the 8-client throughput (e.g. 1,2); the "
        "overhead is always 1 worker's",
    )
    parser.add_argument(
        "--complete-only",
        action="store_true",
        help="with --lean: only complete's growth (a --tasks run completed one by one)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="verial-bench-serve-") as name:
        tmp = Path(name)
        benches = write_benchmarks(tmp)
        base = inline_p50(benches[0], 50)
        print(f"inline verify_task p50 (10 criteria): {base * 1000:.2f} ms", flush=True)
        kinds = ["sqlite"] + (["postgresql"] if args.postgres else [])
        pg_cm: Any = contextlib.nullcontext()
        if args.postgres:
            sys.path.insert(0, str(ROOT / "tests" / "store"))
            from pg_server import pg_server

            pg_cm = pg_server()
        with pg_cm as pg:
            if args.lean and args.complete_only:
                print(f"load average before: {os.getloadavg()}", flush=True)
                first, last = completes(tmp, args.tasks)
                print(f"load average after: {os.getloadavg()}", flush=True)
                print(
                    f"complete of the last / the first task run, {args.tasks:,}-task run "
                    f"(medians of {LEAN_EDGE}: {statistics.median(last) * 1000:.1f} ms / "
                    f"{statistics.median(first) * 1000:.1f} ms): "
                    f"{statistics.median(last) / statistics.median(first):.2f} (target <= 1.5)"
                )
                return 0
            if args.lean and args.ab:
                side_by_side(tmp, benches, args.ab, args.lean, args.requests)
                return 0
            if args.lean:
                counts = [int(w) for w in args.lean_workers.split(",")]
                lean(tmp, benches, args.lean, args.requests, args.tasks, counts)
                return 0
            if args.overhead:
                for kind in kinds:
                    overhead(kind, tmp, benches, pg, args.overhead, args.requests)
                return 0
            print(
                "| store | workers | clients | p50 ms | p95 ms | p99 ms | runs/s "
                "| runs/s per worker | 5xx |"
            )
            print("|---|---|---|---|---|---|---|---|---|")
            for kind in kinds:
                grid(kind, args, tmp, benches, pg)
            for kind in kinds:
                reads(kind, tmp, benches, pg)
                restart(kind, tmp, benches, pg, args.restarts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
