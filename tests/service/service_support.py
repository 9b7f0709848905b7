"""Helpers of the service's tests: the `verial` command in a child process, a real `verial
serve` (uvicorn) on 127.0.0.1 and a free port, stopped by its PID, and the example benchmark
the service is started with."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from lifetime_support import tied
from sqlalchemy import func, select, table

from pytest_verial.store import Store

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "example_benchmarks"
RUNS = EXAMPLES / "runs"
FILES = EXAMPLES / "files.verial.yaml"


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_", "VERIAL_"))}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTEST_ADDOPTS"] = "-p no:hypothesispytest -p no:schemathesis -p no:anyio"
    return {**env, **extra}


def run_verial(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_verial.cli", *args],
        cwd=cwd,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def new_key(cwd: Path, store: str, scope: str) -> tuple[str, str]:
    """(key id, key) of a new key made by `verial keys create --json`, run in this process
    through the CLI's own ``main``: the key is what the tests need, and a child `verial`
    costs ~1 s of CPU in imports (the CLI's own output and exit codes are tested with
    ``run_verial``). ``cwd`` is kept for the callers: the command reads no file of it."""
    import contextlib
    import io
    import json

    from pytest_verial.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["keys", "create", "--scope", scope, "--json", "--store", store])
    assert code == 0, err.getvalue()
    data = json.loads(out.getvalue())
    return str(data["id"]), str(data["key"])


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Server:
    url: str
    pid: int
    log: Path

    def text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


@contextlib.contextmanager
def serve(
    cwd: Path, store: str, *args: str, timeout: float = 60, env: dict[str, str] | None = None
) -> Iterator[Server]:
    """`verial serve` in a child process until /readyz answers; killed by its PID after."""
    port = free_port()
    log = cwd / f"serve-{port}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pytest_verial.cli",
                "serve",
                *args,
                "--store",
                store,
                "--port",
                str(port),
            ],
            cwd=cwd,
            env=child_env(**(env or {})),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = Server(f"http://127.0.0.1:{port}", proc.pid, log)
    try:
        # stopped with this process too, however it ends
        with tied(proc.pid, signal.SIGTERM, 15):
            deadline = time.monotonic() + timeout
            while True:
                if proc.poll() is not None:
                    raise AssertionError(f"verial serve exited {proc.returncode}: {server.text()}")
                try:
                    if httpx.get(server.url + "/readyz", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise AssertionError(f"verial serve not ready in {timeout}s: {server.text()}")
                time.sleep(0.1)
            yield server
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait(timeout=15)


@dataclass
class Api:
    client: Any
    app: Any
    org: str
    solver: str
    solver_id: str
    org_id: str
    url: str

    def h(self, key: str | None) -> dict[str, str]:
        return {} if key is None else {"Authorization": f"Bearer {key}"}


#: the store's tables the service writes a verification to (its SQL schema, read as a user of
#: the database would, not through the store's code)
SERVICE_TABLES = ("sessions", "benchmark_runs", "task_runs", "criterion_runs", "idempotency")


def count_rows(store: Store) -> dict[str, int]:
    """Rows per level (the tests' "nothing stored twice")."""

    def work(conn: Any) -> dict[str, int]:
        return {
            name: int(conn.execute(select(func.count()).select_from(table(name))).scalar_one())
            for name in SERVICE_TABLES
        }

    return store.read("count rows", work)
