"""`verial serve` and `verial keys` as a user runs them: a real uvicorn process on 127.0.0.1
and a free port (stopped by its PID), a SQLite store in tmp_path, httpx as the client."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import socket
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from service_support import FILES, ROOT, RUNS, new_key, run_verial, serve


def test_keys_create_list_revoke(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    done = run_verial(
        tmp_path, "keys", "create", "--scope", "org", "--name", "ci", "--store", store
    )
    assert done.returncode == 0, done.stderr
    key = done.stdout.strip()
    assert re.fullmatch(r"vk_[A-Za-z0-9_-]{43}", key)
    assert "not shown again" in done.stderr
    solver_id, solver = new_key(tmp_path, store, "solver")
    assert solver.startswith("vrl_slv_") and solver_id.startswith("key_")
    listed = run_verial(tmp_path, "keys", "list", "--json", "--store", store)
    keys = json.loads(listed.stdout)
    assert [(k["scope"], k["name"], k["revoked_at"]) for k in keys] == [
        ("org", "ci", None),
        ("solver", None, None),
    ]
    # the keys themselves are stored nowhere: not in the list, not in the database file
    assert key not in listed.stdout and solver not in listed.stdout
    raw = (tmp_path / "store.db").read_bytes()
    assert key.encode() not in raw and solver.encode() not in raw
    revoked = run_verial(tmp_path, "keys", "revoke", solver_id, "--store", store)
    assert revoked.returncode == 0 and solver_id in revoked.stdout
    text = run_verial(tmp_path, "keys", "list", "--store", store).stdout
    assert "revoked" in text and solver not in text
    missing = run_verial(tmp_path, "keys", "revoke", "key_NOPE", "--store", store)
    assert missing.returncode == 2
    assert missing.stderr.count("\n") == 1 and "key_NOPE" in missing.stderr
    bad = run_verial(tmp_path, "keys", "create", "--scope", "admin", "--store", store)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_serve_refuses_a_public_bind_without_keys_and_bad_inputs(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    refused = run_verial(tmp_path, "serve", "--host", "0.0.0.0", "--port", "9", "--store", store)
    assert refused.returncode == 2
    assert refused.stderr.strip().count("\n") == 0
    assert "no API key" in refused.stderr and "verial keys create" in refused.stderr
    for args, needle in (
        (["no-such.verial.yaml"], "no-such.verial.yaml"),
        ([str(FILES), "--runs-root", str(tmp_path / "none")], "--runs-root"),
        (["--port", "0"], "--port"),
        (["--workers", "0"], "--workers"),
    ):
        done = run_verial(tmp_path, "serve", *args, "--store", store)
        assert done.returncode == 2, args
        assert needle in done.stderr and done.stderr.strip().count("\n") == 0, done.stderr
        assert "Traceback" not in done.stderr


def test_a_real_server_scores_stores_and_reads_back(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    _, org = new_key(tmp_path, store, "org")
    _, solver = new_key(tmp_path, store, "solver")
    with serve(tmp_path, store, str(FILES), "--runs-root", str(RUNS)) as server:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            assert client.get("/healthz").json() == {"status": "ok"}
            spec = client.get("/openapi.json").json()
            assert "/v1/verify-task" in spec["paths"]
            body = {
                "benchmark": "sftp-drops@1",
                "task_id": "sftp-claims-batch",
                "sandbox": {"run_dir": "flawed-agent"},
            }
            h = {"Authorization": f"Bearer {solver}", "Idempotency-Key": "e2e-1"}
            first = client.post("/v1/verify-task", json=body, headers=h)
            assert first.status_code == 201, first.text
            again = client.post("/v1/verify-task", json=body, headers=h)
            assert again.json() == first.json()
            made = first.json()
            for path, key in (
                (f"/v1/benchmark-runs/{made['benchmark_run_id']}", solver),
                (f"/task-runs/{made['task_run_id']}", org),
                (f"/criterion-runs/{made['criterion_runs'][0]['id']}", org),
            ):
                got = client.get(path, headers={"Authorization": f"Bearer {key}"})
                assert got.status_code == 200, (path, got.text)
            listed = client.get(
                "/v1/benchmark-runs", headers={"Authorization": f"Bearer {org}"}
            ).json()
            assert [r["id"] for r in listed["data"]] == [made["benchmark_run_id"]]
            # a 100 MB body is refused from its headers, and the server carries on
            parts = urlsplit(server.url)
            with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
                sock.sendall(
                    b"POST /v1/verify-task HTTP/1.1\r\nHost: x\r\n"
                    b"Content-Type: application/json\r\n"
                    + f"Authorization: Bearer {org}\r\n".encode()
                    + f"Content-Length: {100 * 1024 * 1024}\r\n\r\n".encode()
                    + b"{" * 1000
                )
                answer = sock.recv(65536).decode(errors="replace")
            assert answer.startswith("HTTP/1.1 413"), answer
            assert "application/problem+json" in answer
            assert client.get("/healthz").status_code == 200
            unauth = client.get("/v1/benchmark-runs", headers={"Authorization": "Bearer vk_x"})
            assert unauth.status_code == 401
            assert unauth.headers["content-type"].startswith("application/problem+json")
        log = server.text()
    # the access log shows requests, never a key
    assert "POST /v1/verify-task" in log
    assert org not in log and solver not in log
    # what the server stored is in the store after it stopped
    done = run_verial(
        tmp_path, "export", made["benchmark_run_id"], "-o", "out.json", "--store", store
    )
    assert done.returncode == 0, done.stderr
    exported = json.loads((tmp_path / "out.json").read_text())
    assert exported["benchmark_runs"][0]["task_runs"][0]["score"] == made["score"]


def test_two_workers_run_a_benchmark_run_task_by_task(tmp_path: Path) -> None:
    """`--workers 2` (uvicorn's worker processes over one store): a run created, completed task
    by task with its run token, read at three levels."""
    store = f"sqlite:///{tmp_path / 'store.db'}"
    _, solver = new_key(tmp_path, store, "solver")
    with serve(tmp_path, store, str(FILES), "--runs-root", str(RUNS), "--workers", "2") as server:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            made = client.post(
                "/v1/benchmark-runs",
                json={"benchmark": "sftp-drops@1", "agent": "e2e"},
                headers={"Authorization": f"Bearer {solver}"},
            )
            assert made.status_code == 201, made.text
            run = made.json()
            token = {"Authorization": f"Bearer {run['bearer_token']}"}
            for task in run["task_runs"]:
                assert task["complete_url"].startswith(server.url)
                done = client.post(
                    task["complete_url"], json={"sandbox": {"run_dir": "good-agent"}}, headers=token
                )
                assert done.status_code == 200, done.text
                assert done.json()["phase"] == "completed"
            got = client.get(f"/v1/benchmark-runs/{run['id']}", headers=token).json()
            assert got["status"] == "completed" and got["verdict"] == "pass"
        log = server.text()
    assert run["bearer_token"] not in log and solver not in log


#: kills of the server per store (20 in all): each life is killed at a random moment after its
#: first acknowledged write, while both clients write; every kill pays a server start-up and
#: every acknowledged write is read back and replayed, so the count is the test's cost (at 20
#: per store the two took 3 min each under load, the slowest tests of the suite after the
#: local model's README flow)
KILLS = 10


@pytest.mark.xdist_group("cpu-heavy")  # beside no local model server (scripts/test)
@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_kill_9_loses_no_acknowledged_write(
    tmp_path: Path, request: pytest.FixtureRequest, backend: str
) -> None:
    """The server is killed (SIGKILL) at a random moment under concurrent verify-task calls,
    synchronous and async, KILLS times: after each restart every acknowledged task run reads
    back whole, every acknowledged job ends done and stored once, no task run is visible
    without its criterion runs (SQLite: its integrity check too), and replaying every
    Idempotency-Key stores nothing twice."""
    if backend == "sqlite":
        store = f"sqlite:///{tmp_path / 'store.db'}"
    else:
        store = str(request.getfixturevalue("service_postgres").new_database())
    _, org = new_key(tmp_path, store, "org")
    auth = {"Authorization": f"Bearer {org}"}
    acknowledged: dict[str, tuple[int, dict[str, object]]] = {}
    sent: list[tuple[str, dict[str, object], bool]] = []
    lock = threading.Lock()
    rng = random.Random(20)
    lease = {"VERIAL_JOB_LEASE": "1"}  # a job whose server was killed is claimed again soon

    def body(n: int) -> dict[str, object]:
        return {
            "benchmark": "sftp-drops@1",
            "task_id": ("sftp-referral-packet", "sftp-claims-batch")[n % 2],
            "sandbox": {"run_dir": ("good-agent", "flawed-agent")[n % 3 % 2]},
        }

    def client(url: str, prefix: str, stop: threading.Event, answered: threading.Event) -> None:
        n = 0
        with httpx.Client(base_url=url, timeout=30) as http:
            while not stop.is_set():
                key, payload, queued = f"{prefix}-{n}", body(n), n % 3 == 2
                n += 1
                with lock:
                    sent.append((key, payload, queued))
                try:
                    r = http.post(
                        "/v1/verify-task" + ("?async=true" if queued else ""),
                        json=payload,
                        headers={**auth, "Idempotency-Key": key},
                    )
                except httpx.HTTPError:
                    return
                assert r.status_code == (202 if queued else 201), r.text
                with lock:
                    acknowledged[key] = (r.status_code, r.json())
                answered.set()

    args = (str(FILES), "--runs-root", str(RUNS))
    for cycle in range(KILLS):
        with serve(tmp_path, store, *args, env=lease) as server:
            stop, answered = threading.Event(), threading.Event()
            threads = [
                threading.Thread(target=client, args=(server.url, f"c{cycle}-{i}", stop, answered))
                for i in range(2)
            ]
            for t in threads:
                t.start()
            # The kill comes at a random moment after the server's first acknowledgement of
            # this life, while both clients keep writing: each life then has something to
            # lose, however slowly a loaded machine lets it answer (the test asserts that
            # nothing acknowledged is lost, not how fast the server acknowledges).
            while not answered.wait(0.1):
                assert any(t.is_alive() for t in threads), "both clients stopped unanswered"
            time.sleep(rng.uniform(0.0, 0.5))
            os.kill(server.pid, signal.SIGKILL)
            stop.set()
            for t in threads:
                t.join(timeout=60)
    assert len(acknowledged) >= KILLS  # at least one acknowledged write per life
    if backend == "sqlite":
        db = sqlite3.connect(tmp_path / "store.db")
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        db.close()
    assert _half_written(store) == (0, 0)  # nothing half-written is visible
    with (
        serve(tmp_path, store, *args, env=lease) as server,
        httpx.Client(base_url=server.url, timeout=60, headers=auth) as http,
    ):
        for key, (status, answer) in acknowledged.items():
            if status == 202:  # a job: done once a server has claimed it again
                answer = _job_result(http, str(answer["location"]), key)
            got = http.get(f"/task-runs/{answer['task_run_id']}").json()
            assert got["score"] == answer["score"], key
            assert len(got["criterion_runs"]) == len(answer["criterion_runs"]) > 0
        for key, payload, queued in sent:  # every key replayed (acknowledged or cut off)
            r = http.post(
                "/v1/verify-task" + ("?async=true" if queued else ""),
                json=payload,
                headers={"Idempotency-Key": key},
            )
            assert r.status_code == (202 if queued else 201), r.text
            if key in acknowledged:
                assert r.json() == acknowledged[key][1]
            if queued:
                _job_result(http, r.headers["location"], key)
        # one benchmark run per key, none twice, each whole
        runs = _all_runs(http, auth)
        assert len(runs) == len({k for k, _, _ in sent})
        for run in rng.sample(runs, min(len(runs), 100)):
            (task,) = http.get(f"/v1/benchmark-runs/{run['id']}").json()["task_runs"]
            assert http.get(f"/task-runs/{task['id']}").json()["criterion_runs"]


def _half_written(url: str) -> tuple[int, int]:
    """Benchmark runs without a task run, task runs without a criterion run."""
    from sqlalchemy import column, exists, func, select, table

    from pytest_verial.store import open_store

    # the store's SQL schema, read as a user of the database would
    benchmark_runs = table("benchmark_runs", column("id"))
    task_runs = table("task_runs", column("id"), column("benchmark_run_id"))
    criterion_runs = table("criterion_runs", column("task_run_id"))

    def count(conn: object, table: object, child: object) -> int:
        query = select(func.count()).select_from(table).where(~exists().where(child))
        return int(conn.execute(query).scalar_one())  # type: ignore[attr-defined]

    with open_store(url) as store:
        return store.read(
            "check",
            lambda conn: (
                count(conn, benchmark_runs, task_runs.c.benchmark_run_id == benchmark_runs.c.id),
                count(conn, task_runs, criterion_runs.c.task_run_id == task_runs.c.id),
            ),
        )


def _job_result(http: httpx.Client, location: str, key: str) -> dict[str, object]:
    deadline = time.monotonic() + 60
    while (job := http.get(location).json())["status"] not in ("done", "failed"):
        assert time.monotonic() < deadline, (key, job)
        time.sleep(0.1)
    assert job["status"] == "done", (key, job)
    return dict(job["result"])


def _all_runs(http: httpx.Client, auth: dict[str, str]) -> list[dict[str, object]]:
    page = http.get("/v1/benchmark-runs", params={"limit": 500}, headers=auth).json()
    runs = list(page["data"])
    while page["next_cursor"]:
        page = http.get(
            "/v1/benchmark-runs",
            params={"limit": 500, "cursor": page["next_cursor"]},
            headers=auth,
        ).json()
        runs += page["data"]
    return runs


def test_a_typescript_coordinator_scores_and_reads_back(tmp_path: Path) -> None:
    """examples/ts-client (TypeScript, Node's fetch, types generated from /openapi.json)
    against a real server: creates a run with a solver key, starts and completes its task runs
    with the run's bearer token, reads the run, then a task run and a criterion run with an org
    key, and the evidence's rows through the typed union."""
    import shutil
    import subprocess

    example = ROOT / "examples" / "ts-client"
    tsc = example / "node_modules" / ".bin" / "tsc"
    node = shutil.which("node")
    if node is None or not tsc.exists():
        pytest.skip(
            "node or the example's TypeScript compiler is missing (scripts/setup.d/70-ts-client.sh)"
        )
    out = tmp_path / "dist"
    built = subprocess.run(
        [str(tsc), "-p", str(example), "--outDir", str(out)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stdout + built.stderr
    store = f"sqlite:///{tmp_path / 'store.db'}"
    _, solver = new_key(tmp_path, store, "solver")
    _, org = new_key(tmp_path, store, "org")
    with serve(tmp_path, store, str(FILES), "--runs-root", str(RUNS)) as server:
        ran = subprocess.run(
            [node, str(out / "client.js")],
            env={
                "PATH": os.environ.get("PATH", ""),
                "VERIAL_URL": server.url,
                "VERIAL_KEY": solver,
                "VERIAL_ORG_KEY": org,
                "VERIAL_BENCHMARK": "sftp-drops@1",
                "VERIAL_RUN_DIR": "flawed-agent",
            },
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert ran.returncode == 0, ran.stderr
    result = json.loads(ran.stdout)
    assert result["run"]["status"] == "completed" and result["run"]["phase"] == "completed"
    assert result["run"]["progress"] == {**result["run"]["progress"], "task_runs": 2, "done": 2}
    assert [t["verdict"] for t in result["task_runs"]] != ["pass", "pass"]  # the flawed agent
    assert result["task"]["id"] == result["task_runs"][0]["task_run_id"]
    assert result["criterion"]["id"] == result["task"]["criterion_runs"][0]["id"]
    assert {a["name"] for a in result["axes"]} == set(result["task"]["axes"])
    evidence = result["criterion"]["evidence"]
    keys = ("fieldResults", "field_results", "assertionResults", "phraseResults")
    (found,) = [k for k in keys if k in evidence]
    assert len(result["rows"]) == len(evidence[found])


def test_two_servers_over_one_postgresql_share_runs_and_keys(
    tmp_path: Path, service_postgres: Any
) -> None:
    """Two `verial serve` processes over one PostgreSQL are stateless: the same
    Idempotency-Key sent to both at once stores one run, and each server reads what the other
    stored."""
    from concurrent.futures import ThreadPoolExecutor

    store = service_postgres.new_database()
    _, org = new_key(tmp_path, store, "org")
    auth = {"Authorization": f"Bearer {org}"}
    args = (str(FILES), "--runs-root", str(RUNS))
    with serve(tmp_path, store, *args) as one, serve(tmp_path, store, *args) as two:
        body = {
            "benchmark": "sftp-drops@1",
            "task_id": "sftp-claims-batch",
            "sandbox": {"run_dir": "flawed-agent"},
        }

        def post(n: int) -> dict[str, object]:
            url = (one.url, two.url)[n % 2]
            r = httpx.post(
                url + "/v1/verify-task",
                json=body,
                headers={**auth, "Idempotency-Key": f"k{n // 2}"},
                timeout=60,
            )
            assert r.status_code == 201, r.text
            return dict(r.json())

        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(post, range(16)))
        for n in range(0, 16, 2):  # both servers answered each key the same
            assert answers[n] == answers[n + 1]
        with httpx.Client(base_url=two.url, timeout=60) as http:
            assert len(_all_runs(http, auth)) == 8
        tr = answers[0]["task_run_id"]
        a = httpx.get(f"{one.url}/task-runs/{tr}", headers=auth).json()
        b = httpx.get(f"{two.url}/task-runs/{tr}", headers=auth).json()
        assert a == b and a["score"] == answers[0]["score"]


def _running_on(db: Any, pid: int) -> Any:
    """The job the server of ``pid`` is running now, as PostgreSQL has it."""
    return db.execute(
        "select id from jobs where status = 'running' and worker like %s", (f"%:{pid}:%",)
    ).fetchone()


def test_a_job_whose_server_died_is_finished_by_the_other_server(
    tmp_path: Path, service_postgres: Any
) -> None:
    """Two `verial serve` processes over one PostgreSQL take async jobs from one jobs table
    (FOR UPDATE SKIP LOCKED). The first is frozen while it holds a job and killed (SIGKILL):
    once the job's lease has passed, the second claims it again; every job ends done, each
    stored once."""
    import psycopg

    # the suite's PostgreSQL (tests/service/conftest.py), a database of its own
    store = str(service_postgres.new_database())
    _, org = new_key(tmp_path, store, "org")
    auth = {"Authorization": f"Bearer {org}"}
    args = (str(FILES), "--runs-root", str(RUNS))
    lease = {"VERIAL_JOB_LEASE": "2"}
    locations: list[str] = []
    with (
        serve(tmp_path, store, *args, env=lease) as one,
        serve(tmp_path, store, *args, env=lease) as two,
    ):
        body = {
            "benchmark": "sftp-drops@1",
            "task_id": "sftp-claims-batch",
            "sandbox": {"run_dir": "flawed-agent"},
        }
        held = None
        with psycopg.connect(store, autocommit=True) as db:
            for _ in range(200):  # queue on the first server until it holds a job
                r = httpx.post(one.url + "/v1/verify-task?async=true", json=body, headers=auth)
                assert r.status_code == 202, r.text
                locations.append(r.headers["location"])
                os.kill(one.pid, signal.SIGSTOP)
                held = _running_on(db, one.pid)
                if held is not None:
                    # a frozen server's last COMMIT may still sit unread in its socket, and
                    # PostgreSQL finishes the job after the first look (attempts stays 1):
                    # held only when it is still running a moment later
                    time.sleep(1)
                    if _running_on(db, one.pid) == held:
                        break
                    held = None
                os.kill(one.pid, signal.SIGCONT)
        assert held is not None, "the first server never held a job"
        os.kill(one.pid, signal.SIGKILL)
        deadline = time.monotonic() + 60
        with httpx.Client(base_url=two.url, timeout=30, headers=auth) as http:
            for location in locations:
                while (job := http.get(location).json())["status"] not in (
                    "done",
                    "failed",
                ):
                    assert time.monotonic() < deadline, job
                    time.sleep(0.1)
                assert job["status"] == "done", job
                if location.endswith(held[0]):
                    assert job["attempts"] == 2, job  # claimed again after the kill
            assert len(_all_runs(http, auth)) == len(locations)
