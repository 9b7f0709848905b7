"""A task run's searches sent at once, end to end: child pytest runs at -n 0 and -n 2.

The same benchmark is scored with ``sources.fhir.concurrency: 1`` and ``8`` against the slow
server (``medplum_slow``: ``SLOW_MS`` per answer, each request's overlap in its log): the
criterion runs must be identical, the requests the same (one per page of each distinct search,
per task run), and only the concurrent run may have several requests under way in one task run.

The sequential scoring (concurrency 1) is the baseline of two tests, the concurrent run's and
the faulted run's: it is run once per worker count (``sequential``) on two task runs, the fewest
that still put one task run on each worker of a ``-n 2`` session. Each of its 20 requests waits
on the slow server in turn, so it was the longest part of this module (three task runs, run by
both tests: 50 waits of 300 ms per worker count).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from medplum_support import TOKEN, MedplumServer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
from core_support import child_env as core_child_env  # noqa: E402
from core_support import interruptible_pytest, pytest_command  # noqa: E402
from test_live_concurrent import SEARCHES, criteria

WORKERS = pytest.mark.parametrize("workers", [0, 2])
TASKS = ("first", "second")
#: one worker runs this module and test_live_concurrent.py (scripts/test: --dist loadgroup): one
#: slow server is started for both, and the sequential baseline is scored once per worker count
pytestmark = pytest.mark.xdist_group("fhir-slow")
Runs = dict[str, Any]
#: what may differ between two runs of the same criteria
TIMING = ("started_at", "completed_at", "duration")


def project(root: Path, server: MedplumServer, concurrency: int, tasks: tuple[str, ...]) -> Path:
    """A benchmark of ``tasks`` x 24 FHIR criteria and a run directory reading ``server``."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    crits = [
        {"id": f"c{i:02d}", "assertion": {"assert": "fhir-resource-state", **c}}
        for i, c in enumerate(criteria())
    ]
    bench = {
        "benchmark": "live",
        "version": 1,
        "tasks": [{"id": t, "criteria": crits} for t in tasks],
    }
    (root / "live.verial.yaml").write_text(yaml.safe_dump(bench), encoding="utf-8")
    for task in tasks:
        (root / "run" / task).mkdir(parents=True, exist_ok=True)
    fhir = {
        "base_url": server.base_url,
        "token_env": "E2E_FHIR_TOKEN",
        "retries": 1,
        "backoff": 0.01,
        "timeout": 1,
        "concurrency": concurrency,
    }
    run_yaml = {"sources": {"fhir": fhir}}
    (root / "run" / "run.yaml").write_text(yaml.safe_dump(run_yaml), encoding="utf-8")
    return root


def arguments(workers: int) -> list[str]:
    """The child pytest's arguments scoring the project."""
    return [
        "-p",
        "no:randomly",
        "-n",
        str(workers),
        "--verial-run",
        "run",
        "--verial-report",
        "report.json",
    ]


def child_env() -> dict[str, str]:
    """A child pytest's clean environment (core_support's), plus the server's token."""
    return {**core_child_env(), "E2E_FHIR_TOKEN": TOKEN}


def score(root: Path, workers: int) -> tuple[Runs, str]:
    """Run the child pytest; criterion runs by node id (timings dropped), and its output."""
    proc = subprocess.run(
        pytest_command(*arguments(workers)),
        cwd=root,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode in (0, 1), output[-3000:]
    report = json.loads((root / "report.json").read_text(encoding="utf-8"))
    runs = {
        c["nodeid"]: {k: v for k, v in c.items() if k not in TIMING}
        for r in report["benchmark_runs"]
        for t in r["task_runs"]
        for c in t["criterion_runs"]
    }
    return runs, output


@pytest.fixture(scope="module")
def sequential(
    tmp_path_factory: pytest.TempPathFactory, medplum_slow_server: MedplumServer
) -> Callable[[int], tuple[Runs, dict[str, Any]]]:
    """The benchmark scored with ``concurrency: 1`` at a worker count: its criterion runs and
    the server's log of it, scored on first use and kept for the module's other tests."""
    done: dict[int, tuple[Runs, dict[str, Any]]] = {}

    def at(workers: int) -> tuple[Runs, dict[str, Any]]:
        if workers not in done:
            root = project(
                tmp_path_factory.mktemp(f"one-n{workers}"), medplum_slow_server, 1, TASKS
            )
            medplum_slow_server.reset_log()
            runs, _ = score(root, workers)
            done[workers] = runs, medplum_slow_server.log()
            medplum_slow_server.reset_log()
        return done[workers]

    return at


@WORKERS
def test_concurrent_scores_equal_sequential_with_the_same_requests(
    tmp_path: Path,
    medplum_slow: MedplumServer,
    sequential: Callable[[int], tuple[Runs, dict[str, Any]]],
    workers: int,
) -> None:
    alone, log_alone = sequential(workers)
    medplum_slow.reset_log()
    together, _ = score(project(tmp_path / "eight", medplum_slow, 8, TASKS), workers)
    concurrent = medplum_slow.log()
    assert len(together) == len(TASKS) * 3 * len(SEARCHES)
    assert together == alone
    assert Counter(r["url"] for r in concurrent["requests"]) == Counter(
        r["url"] for r in log_alone["requests"]
    )
    # one request per page of each distinct search, per task run
    assert set(Counter(r["url"] for r in concurrent["requests"]).values()) == {len(TASKS)}
    # a pool of one: never more requests under way than workers scoring task runs
    assert log_alone["max_inflight"] <= max(workers, 1)
    assert concurrent["max_inflight"] > max(workers, 1)


@WORKERS
def test_a_failing_search_errs_only_its_own_criteria(
    tmp_path: Path,
    medplum_slow: MedplumServer,
    sequential: Callable[[int], tuple[Runs, dict[str, Any]]],
    workers: int,
) -> None:
    expected, _ = sequential(workers)
    medplum_slow.reset_log()
    medplum_slow.faults(
        [
            {"match": "status=proposed", "status": 500},
            {"match": "family=Smith", "status": 404},
            {"match": "/Encounter", "delay": 2500},
        ]
    )
    got, output = score(project(tmp_path / "faults", medplum_slow, 8, TASKS), workers)
    medplum_slow.reset_log()
    broken = {
        "status=proposed": "HTTP 500",
        "family=Smith": "HTTP 404",
        "Encounter?status=finished": "did not answer GET",
    }
    assert len(got) == len(expected) == len(TASKS) * 3 * len(SEARCHES)
    for nodeid, run in got.items():
        query = run["evidence"].get("query") or ""
        want = expected[nodeid]
        cause = next((m for k, m in broken.items() if k in want["evidence"]["query"]), None)
        if cause is None:
            assert run == want, nodeid
        else:
            assert run["status"] == "error" and run["score"] == 0, nodeid
            assert cause in run["details"] and "\n" not in run["details"], run["details"]
            assert not query
    failed = {line.split()[1] for line in output.splitlines() if line.startswith("FAILED ")}
    errored = {nodeid for nodeid, run in got.items() if run["status"] == "error"}
    # 3 searches of 3 criteria in each task run
    assert len(errored) == len(TASKS) * 3 * 3 and errored <= failed
    assert "Traceback" not in output


@WORKERS
def test_an_interrupt_cancels_the_searches_not_started(
    tmp_path: Path, medplum_slow: MedplumServer, workers: int
) -> None:
    root = project(tmp_path, medplum_slow, 2, TASKS[:1])
    medplum_slow.reset_log()
    medplum_slow.faults([{"match": "/", "delay": 1500}])  # every answer takes 1.5 s + SLOW_MS
    env = child_env()
    proc = subprocess.Popen(
        interruptible_pytest(*arguments(workers)),
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 90
        while medplum_slow.log()["count"] == 0:
            assert proc.poll() is None, proc.communicate()[0][-3000:]
            assert time.monotonic() < deadline, "no search was sent"
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)
        output, _ = proc.communicate(timeout=60)  # a guard against a hang, not a timing
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    sent = medplum_slow.log()["count"]
    medplum_slow.reset_log()
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, output[-3000:]
    assert sent < len(SEARCHES), output[-3000:]  # the queued searches were never sent
    assert "Exception in thread" not in output
