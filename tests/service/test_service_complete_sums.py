"""A run-API ``complete`` does the same work whatever the run's size (issue 33): the run's
aggregates come from running sums kept in the store, updated with the task run in one
transaction, exact (a float sum in any order equals ``fsum``), and two completes of one run at
once on PostgreSQL both count."""

from __future__ import annotations

import contextlib
import json
import math
import random
import shutil
import sqlite3
import threading
import warnings
from datetime import UTC, datetime
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml
from service_support import EXAMPLES, RUNS
from sqlalchemy import event

# The statements and rows a request reads are counted below the HTTP API, and the sums'
# arithmetic is checked against the scoring it replaces.
# private: neither has a public face
from pytest_verial._results import RunCounts, TaskStatus
from pytest_verial._scoring import run_score
from pytest_verial.service import create_app
from pytest_verial.service._keys import create_key
from pytest_verial.store import _repo_runs
from pytest_verial.store._repo_keys import ApiKey
from pytest_verial.store._repo_runs import read_report
from pytest_verial.store._run_sums import _mean

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

ORG = ApiKey("org", "org", None, datetime(2000, 1, 1, tzinfo=UTC), None)


def _benchmark(tmp_path: Path, size: int) -> tuple[Path, Path]:
    """A benchmark of ``size`` copies of verify-pa-letter and a runs root holding each copy's
    folder in the good and the flawed run."""
    data = yaml.safe_load((EXAMPLES / "verification.verial.yaml").read_text())
    task = next(t for t in data["tasks"] if t["id"] == "verify-pa-letter")
    tasks = [{**task, "id": f"letter-{n:02d}"} for n in range(size)]
    bench = tmp_path / f"many{size}.verial.yaml"
    bench.write_text(yaml.safe_dump({"benchmark": f"many{size}", "version": 1, "tasks": tasks}))
    root = tmp_path / "runs"
    for agent in ("good-agent", "flawed-agent"):
        for t in tasks:
            if not (root / agent / t["id"]).exists():
                shutil.copytree(RUNS / agent / "verify-pa-letter", root / agent / t["id"])
    return bench, root


class Reads:
    """Statements the store runs and the rows each SELECT gives (SQLite: counted by asking the
    same connection, inside the same transaction, how many rows it has; PostgreSQL: the
    result's row count)."""

    def __init__(self, engine: Any, sqlite: bool) -> None:
        self.statements = 0
        self.rows = 0
        self.on = False
        self.sqlite = sqlite
        event.listen(engine, "after_cursor_execute", self._seen)

    def _seen(self, _c: Any, cursor: Any, statement: str, params: Any, *_a: Any) -> None:
        if not self.on or threading.current_thread().name == "verial-jobs":
            return  # the async jobs' worker polls the store on its own
        self.statements += 1
        if not statement.lstrip().upper().startswith("SELECT"):
            return
        if self.sqlite:
            counted = cursor.connection.execute(f"SELECT count(*) FROM ({statement})", params)
            self.rows += counted.fetchone()[0]
        else:  # psycopg 3 fetches a result whole: its row count is known
            self.rows += max(cursor.rowcount, 0)

    def count(self, call: Any) -> tuple[Any, int, int]:
        self.statements = self.rows = 0
        self.on = True
        try:
            made = call()
        finally:
            self.on = False
        return made, self.statements, self.rows


def _url(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 's.db'}"
    return str(request.getfixturevalue("service_postgres").new_database())


def _aggregates_equal_recomputed(store: Any, run_id: str) -> None:
    report, _scored = read_report(store, ORG, run_id)
    (stored,) = report.benchmark_runs
    running = any(t.status is TaskStatus.RUNNING for t in stored.task_runs)
    again = stored.rescored(running=running)
    assert stored.model_dump(exclude={"task_runs"}) == again.model_dump(exclude={"task_runs"})
    # in the same order as a recomputation writes them (the report's JSON is unchanged)
    assert list(stored.axes) == list(again.axes)
    if not running:
        assert report.session.counts == RunCounts.of(stored.task_runs)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_complete_reads_as_much_of_a_run_of_three_as_of_a_run_of_thirty(
    tmp_path: Path, request: pytest.FixtureRequest, backend: str
) -> None:
    """The second complete (the first warms the process's caches of the key and the token)
    and the last (which finalizes the run) of a 3-task run and of a 30-task run run as many
    statements and read as many rows."""
    url = _url(backend, tmp_path, request)
    figures: dict[int, list[tuple[int, int]]] = {}
    for size in (3, 30):
        bench, root = _benchmark(tmp_path, size)
        app = create_app(url, [bench], root)
        _, key = create_key(app.state.store, "solver")
        reads = Reads(app.state.store.engine, backend == "sqlite")
        with TestClient(app) as client:
            made = client.post(
                "/v1/benchmark-runs",
                json={"benchmark": f"many{size}@1", "agent": "e2e"},
                headers={"Authorization": f"Bearer {key}"},
            )
            assert made.status_code == 201, made.text
            run = made.json()
            token = {"Authorization": f"Bearer {run['bearer_token']}"}
            seen = []
            for n, task in enumerate(run["task_runs"]):
                body = {"sandbox": {"run_dir": "flawed-agent" if n % 2 else "good-agent"}}
                done, statements, rows = reads.count(
                    lambda task=task, body=body, token=token: client.post(
                        task["complete_url"], json=body, headers=token
                    )
                )
                assert done.status_code == 200, done.text
                if n in (1, size - 1):
                    seen.append((statements, rows))
            _aggregates_equal_recomputed(app.state.store, run["id"])
        figures[size] = seen
    assert figures[3] == figures[30]
    # and what it reads is a handful of rows, not a run's worth
    assert all(rows < 30 for _statements, rows in figures[30])


def test_a_sum_of_scores_kept_exactly_is_fsum_in_any_order() -> None:
    rng = random.Random(33)
    for _ in range(300):
        scores = [
            rng.choice([rng.random(), 1 / rng.randint(1, 9), 0.1, 0.7, 1.0, 0.0])
            for _ in range(rng.randint(1, 60))
        ]
        total = Fraction(0)
        for s in rng.sample(scores, len(scores)):  # completes come in any order
            total += Fraction(s)
        assert _mean(len(scores), str(total)) == run_score(scores)
        assert float(total) == math.fsum(scores)


def test_two_completes_of_one_run_at_once_on_postgresql_both_count(
    tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two workers complete two task runs of one run at once: each stores its task run and
    then waits (a little) for the other to have done the same before the aggregates are
    updated. Without a lock on the run both would sum what they saw and one update would be
    lost; with it, the second waits for the first to commit and counts both."""
    url = _url("postgresql", tmp_path, request)
    bench, root = _benchmark(tmp_path, 3)
    app = create_app(url, [bench], root)
    _, key = create_key(app.state.store, "solver")
    both = threading.Barrier(2)
    replace = _repo_runs._replace_task

    def replaced_then_wait(*args: Any, **kwargs: Any) -> str:
        made = replace(*args, **kwargs)
        # the other one may wait for our lock: then there is nothing to wait for
        with contextlib.suppress(threading.BrokenBarrierError):
            both.wait(timeout=3)
        return made

    monkeypatch.setattr(_repo_runs, "_replace_task", replaced_then_wait)
    with TestClient(app) as client:
        made = client.post(
            "/v1/benchmark-runs",
            json={"benchmark": "many3@1", "agent": "e2e"},
            headers={"Authorization": f"Bearer {key}"},
        )
        run = made.json()
        token = {"Authorization": f"Bearer {run['bearer_token']}"}
        answers: list[Any] = []

        def complete(task: dict[str, Any], agent: str) -> None:
            body = {"sandbox": {"run_dir": agent}}
            answers.append(client.post(task["complete_url"], json=body, headers=token))

        workers = [
            threading.Thread(target=complete, args=(run["task_runs"][0], "good-agent")),
            threading.Thread(target=complete, args=(run["task_runs"][1], "flawed-agent")),
        ]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        assert [a.status_code for a in answers] == [200, 200], [a.text for a in answers]
        after = client.get(f"/v1/benchmark-runs/{run['id']}", headers=token).json()
        assert after["counts"]["completed"] == 2
        assert after["counts"]["running"] == 1
        _aggregates_equal_recomputed(app.state.store, run["id"])
        last = client.post(
            run["task_runs"][2]["complete_url"],
            json={"sandbox": {"run_dir": "good-agent"}},
            headers=token,
        )
        assert last.status_code == 200
        assert last.json()["benchmark_run_phase"] == "completed"
        _aggregates_equal_recomputed(app.state.store, run["id"])


def test_a_store_of_the_previous_schema_gets_its_running_runs_sums(tmp_path: Path) -> None:
    """A store at schema 0008 with a run half completed: opened by this version, its running
    run's sums are the ones its completes would have kept, and its next completes keep the
    aggregates a recomputation gives."""
    bench, root = _benchmark(tmp_path, 4)
    path = tmp_path / "s.db"
    app = create_app(f"sqlite:///{path}", [bench], root)
    _, key = create_key(app.state.store, "solver")
    with TestClient(app) as client:
        run = client.post(
            "/v1/benchmark-runs",
            json={"benchmark": "many4@1", "agent": "e2e"},
            headers={"Authorization": f"Bearer {key}"},
        ).json()
        token = {"Authorization": f"Bearer {run['bearer_token']}"}
        for task, agent in zip(run["task_runs"][:2], ("flawed-agent", "good-agent"), strict=True):
            done = client.post(
                task["complete_url"], json={"sandbox": {"run_dir": agent}}, headers=token
            )
            assert done.status_code == 200, done.text
    app.state.store.close()
    db = sqlite3.connect(path)
    (kept,) = db.execute("select sums from run_sums").fetchone()
    db.execute("drop table run_sums")
    db.execute("update alembic_version set version_num = '0008'")
    db.commit()
    db.close()
    again = create_app(f"sqlite:///{path}", [bench], root)
    db = sqlite3.connect(path)
    assert db.execute("select version_num from alembic_version").fetchall() == [("0009",)]
    assert json.loads(db.execute("select sums from run_sums").fetchone()[0]) == json.loads(kept)
    db.close()
    with TestClient(again) as client:
        for task in run["task_runs"][2:]:
            done = client.post(
                task["complete_url"], json={"sandbox": {"run_dir": "good-agent"}}, headers=token
            )
            assert done.status_code == 200, done.text
            _aggregates_equal_recomputed(again.state.store, run["id"])
