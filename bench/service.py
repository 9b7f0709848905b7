"""`verial serve` figures for BENCHMARKS.md (issue 20): POST /v1/verify-task latency.

A real `verial serve` (uvicorn, --workers W) over a fresh SQLite store scores
``sftp-referral-packet`` of example_benchmarks/files.verial.yaml (3 deterministic criteria) on
the captured good-agent run, for C concurrent clients (threads, one httpx client each, each
request a new task run stored), and reports p50/p95/p99, throughput and 5xx. The baseline is
the inline engine (``verify_task``) on the same task and folder in this process; the overhead
is the service's p50 at 1 client minus the inline p50.

    python bench/service.py [--requests 200] [--clients 1,8,32] [--workers 1]
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

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


def inline_p50(n: int) -> float:
    from pytest_verial.checks import default_registry
    from pytest_verial.inline import verify_task
    from pytest_verial.loader import load_benchmark

    plan = load_benchmark(FILES, default_registry())
    task = next(t for t in plan.tasks if t.key == TASK)
    times = []
    for _ in range(n):
        start = time.perf_counter()
        verify_task(task, RUNS / "good-agent" / TASK, {})
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run_clients(url: str, key: str, clients: int, total: int) -> tuple[list[float], int, float]:
    body = {"benchmark": "sftp-drops@1", "task_id": TASK, "sandbox": {"run_dir": "good-agent"}}
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    per = max(1, total // clients)

    def work() -> None:
        with httpx.Client(base_url=url, timeout=120) as client:
            for _ in range(per):
                start = time.perf_counter()
                r = client.post(
                    "/v1/verify-task", json=body, headers={"Authorization": f"Bearer {key}"}
                )
                took = time.perf_counter() - start
                with lock:
                    latencies.append(took)
                    if r.status_code >= 500 or "database is locked" in r.text:
                        errors[0] += 1

    threads = [threading.Thread(target=work) for _ in range(clients)]
    wall = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, errors[0], time.perf_counter() - wall


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--clients", default="1,8,32")
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    from pytest_verial.service.keys import create_key
    from pytest_verial.store import open_store

    base = inline_p50(50)
    print(f"inline verify_task p50: {base * 1000:.2f} ms")
    with tempfile.TemporaryDirectory(prefix="verial-bench-serve-") as tmp:
        url = f"sqlite:///{tmp}/store.db"
        with open_store(url) as store:
            _, key = create_key(store, "org")
        port = _port()
        log = open(Path(tmp) / "serve.log", "wb")  # noqa: SIM115
        env = {k: v for k, v in os.environ.items() if not k.startswith("VERIAL_")}
        proc = subprocess.Popen(
            [sys.executable, "-m", "pytest_verial.cli", "serve", str(FILES),
             "--runs-root", str(RUNS), "--store", url, "--port", str(port),
             "--workers", str(args.workers)],
            stdout=log, stderr=subprocess.STDOUT, env=env, cwd=ROOT,
        )  # fmt: skip
        server = f"http://127.0.0.1:{port}"
        try:
            for _ in range(300):
                try:
                    if httpx.get(server + "/readyz", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.1)
            run_clients(server, key, 1, 10)  # warm-up
            print(f"workers={args.workers}  requests per level={args.requests}")
            print("clients   p50 ms   p95 ms   p99 ms   runs/s   5xx")
            for clients in [int(c) for c in args.clients.split(",")]:
                lat, errors, wall = run_clients(server, key, clients, args.requests)
                print(
                    f"{clients:>7}  {_pct(lat, 0.5) * 1000:7.1f}  {_pct(lat, 0.95) * 1000:7.1f}  "
                    f"{_pct(lat, 0.99) * 1000:7.1f}  {len(lat) / wall:7.1f}  {errors:4d}"
                )
                if clients == 1:
                    over = (_pct(lat, 0.5) - base) * 1000
                    print(f"         overhead over inline at p50: {over:.1f} ms")
        finally:
            os.kill(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)
            log.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
