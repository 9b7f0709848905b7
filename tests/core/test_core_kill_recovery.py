"""A session killed at random points loses nothing its batches promised (issue 33).

The journal's lines are written as criterion runs arrive and fsynced, with the store's rows, at
batch boundaries (every 100 completed task runs, or 1 s: README, "Interrupted and crashed
runs"). Each seed kills a child pytest with SIGKILL right after a seeded random number of
completed task runs (seed 2026: 31, before the first 100-task boundary, so only the 1 s
boundaries can have passed; seed 17: 134, after one; a third seed gave 61, the first case
again, for a child session of 0.7 s of CPU and more); then:

- the store holds only whole task runs (every criterion run of each, counts that agree), at
  least every task run completed before the last batch boundary (so fewer than 100 are ever
  missing: a boundary comes every 100 completed task runs or sooner), and none the journal
  lacks;
- ``verial report --recover`` rebuilds every task run completed before the kill (a process
  kill loses nothing written), leaves the one in flight ``cancelled``, and fills the store's
  session with exactly the recovered report's task runs.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from core_support import Project, child_env, pytest_command, voice_criterion

from pytest_verial.cli import main
from pytest_verial.store import open_store

TASKS = 230
PER_TASK = 2
BATCH = 100  # pytest_verial.reporting._journal.BATCH_TASK_RUNS

#: kills its own process once the controller has recorded KILL_AFTER completed task runs
KILLER = f"""
import os
import signal

import pytest

LAST = {PER_TASK} * int(os.environ["KILL_AFTER"])
seen = 0


@pytest.hookimpl(trylast=True)
def pytest_runtest_logreport(report):
    global seen
    if report.when == "call":
        seen += 1
        if seen == LAST:  # the recorder has taken this criterion run (trylast)
            os.kill(os.getpid(), signal.SIGKILL)
"""


def _project(path: Path) -> None:
    project = Project(path)
    project.conftest(KILLER)
    turns = {"voice/turns.json": [{"speaker": "agent", "text": "Good morning!"}]}
    tasks = []
    for t in range(TASKS):
        key = f"t{t:03d}"
        project.sandbox(key, turns)
        criteria = [
            voice_criterion("greets", contains=["good morning"]),
            voice_criterion("asks-dob", contains=["date of birth"]),
        ]
        tasks.append({"id": key, "criteria": criteria})
    project.benchmark("killed", {"benchmark": "killed", "tasks": tasks})


def _stored_tasks(url: str) -> dict[str, dict[str, Any]]:
    """The session's task runs in the store, by task key (its only session)."""
    with open_store(url, create=False) as store:
        rows = store.list_runs()
        if not rows:  # killed before its first batch boundary: nothing stored yet
            return {}
        (row,) = rows
        report = store.report_of_session(row.session_id).to_json()
    tasks = [t for r in report["benchmark_runs"] for t in r["task_runs"]]
    by_key = {t["task_key"]: t for t in tasks}
    assert len(by_key) == len(tasks)  # each task run stored once
    return by_key


def _whole(task: dict[str, Any]) -> None:
    """A completed task run with every criterion run scored and counts that agree."""
    statuses = [c["status"] for c in task["criterion_runs"]]
    assert task["status"] == "completed" and statuses == ["passed", "failed"], task["id"]
    assert (task["counts"]["passed"], task["counts"]["failed"]) == (1, 1), task["id"]
    assert task["score"] == pytest.approx(0.5) and task["verdict"] == "partial", task["id"]


# an existing store is written through sqlite3 (store/_lite.py), a new one through SQLAlchemy
# (it creates the file): each seed kills one of the two writers
@pytest.mark.parametrize(("seed", "store"), [(17, "existing"), (2026, "new")])
def test_a_session_killed_at_random_keeps_every_batch(
    tmp_path: Path,
    seed: int,
    store: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    killed_after = random.Random(seed).randint(1, TASKS - 1)
    _project(tmp_path)
    url = f"sqlite:///{tmp_path / 'results.db'}"
    if store == "existing":  # the project's usual case: its store made by an earlier session
        open_store(url).close()
    proc = subprocess.run(
        pytest_command("-n", "0", "--verial-report", "report.json", "--verial-store", url),
        cwd=tmp_path,
        env={**child_env(), "KILL_AFTER": str(killed_after)},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert not (tmp_path / "report.json").exists()
    done = [f"t{t:03d}" for t in range(killed_after)]

    # the store: whole task runs only, every batch boundary passed, none beyond the kill
    stored = _stored_tasks(url)
    assert set(stored) <= set(done)
    # a boundary comes every BATCH completed task runs or sooner (every second): fewer than
    # BATCH completed task runs are ever waiting for one
    assert len(stored) > killed_after - BATCH
    for task in stored.values():
        _whole(task)

    journal = tmp_path / "report.json.journal.jsonl"
    journaled = {
        json.loads(line)["nodeid"].split("::")[1]
        for line in journal.read_text(encoding="utf-8").splitlines()[1:]
    }
    assert set(stored) <= journaled  # the store never holds what the journal lacks

    # in this process (``main``, as the console script calls it): recovering needs no process
    # of its own (a child's start-up and store import cost a second and more of CPU), and it
    # registers no secret (no key, no source settings)
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    code = main(["report", "--recover", str(journal), "-o", "recovered.json", "--store", url])
    out, err = capsys.readouterr()
    assert code == 0, out[-2000:] + err[-2000:]
    report = json.loads((tmp_path / "recovered.json").read_text(encoding="utf-8"))
    tasks = {t["task_key"]: t for r in report["benchmark_runs"] for t in r["task_runs"]}
    completed = sorted(k for k, t in tasks.items() if t["status"] == "completed")
    assert completed == done  # a process kill loses no completed task run
    for key in done:
        _whole(tasks[key])
    assert all(tasks[k]["status"] == "cancelled" for k in tasks if k not in done)
    assert report["session"]["counts"]["completed"] == killed_after

    # the store's session now holds the recovered report's task runs, each once
    stored = _stored_tasks(url)
    assert sorted(stored) == sorted(tasks)
    for key in done:
        _whole(stored[key])
        assert stored[key]["criterion_runs"] == tasks[key]["criterion_runs"]
    assert all(stored[k]["status"] == "cancelled" for k in stored if k not in done)
