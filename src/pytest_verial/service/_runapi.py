"""Verial's run API over the store: a benchmark run created with every task run pending, task
runs completed one by one (scored on their sandbox), the run finalized when its last task run
completes, or cancelled (completed task runs kept).

Each step is one write transaction: a task run's rows are replaced under the same id, the
benchmark run's aggregates and (when it ends) its session are rewritten from the typed task
runs, through the same rows code as the plugin's writer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, select, update

from .._results import BenchmarkRun, Report, RunCounts, RunStatus, TaskRun, TaskStatus
from ..store import Store
from ..store._core import _replace_task, _report, insert_report
from ..store._rows import SessionMeta, as_utc, benchmark_run_row, report_split, session_row
from ..store._tables import (
    benchmark_runs,
    criterion_runs,
    run_owners,
    sessions,
    task_run_starts,
    task_runs,
)
from ._http import Problem
from ._keys import ApiKey, new_run_token
from ._runs import _visible, not_found, task_view


def pending_view(tr_id: str, task: TaskRun, base: str, started: bool = False) -> dict[str, Any]:
    phase = (
        "completed"
        if task.status is not TaskStatus.RUNNING
        else "started"
        if started
        else ("pending")
    )
    return {
        "id": tr_id,
        "task_id": task.task_id,
        "task_key": task.task_key,
        "name": task.name,
        "phase": phase,
        "status": str(task.status),
        "start_url": f"{base}/v1/task-runs/{tr_id}/start",
        "complete_url": f"{base}/v1/task-runs/{tr_id}/complete",
    }


def start_task(store: Store, key: ApiKey, tr_id: str, base: str) -> dict[str, Any]:
    """Mark a pending task run started (once; a second start answers the first time) and
    answer what the agent needs: the task's id, name, entity and ``task_item`` (never its
    criteria)."""

    def work(conn: Connection) -> dict[str, Any]:
        br_id = conn.execute(
            select(task_runs.c.benchmark_run_id).where(task_runs.c.id == tr_id)
        ).scalar()
        if br_id is None or _visible(conn, key, str(br_id)) is None:
            raise not_found("task run", tr_id)
        report = _report(conn, run_id=str(br_id))
        run = report.benchmark_runs[0]
        task = run.task_runs[_position(conn, tr_id)]
        _check_open(run, task, tr_id)
        when = conn.execute(
            select(task_run_starts.c.started_at).where(task_run_starts.c.task_run_id == tr_id)
        ).scalar()
        if when is None:
            when = datetime.now(UTC)
            conn.execute(task_run_starts.insert().values(task_run_id=tr_id, started_at=when))
        snapshot = task.snapshot or {}
        return {
            **pending_view(tr_id, task, base, started=True),
            "benchmark_run_id": str(br_id),
            "entity": task.entity,
            "started_at": (as_utc(when) or datetime.now(UTC)).isoformat(),
            "task_item": snapshot.get("task_item"),
        }

    return store.write("start a task run", work)


def create_run(store: Store, key: ApiKey, report: Report, base: str) -> dict[str, Any]:
    """Store a new benchmark run (every task run pending), its owner and a run token."""

    def work(conn: Connection) -> dict[str, Any]:
        result = insert_report(conn, report, source="service", ids=True)
        br_id = result.run_ids[0]
        conn.execute(run_owners.insert().values(benchmark_run_id=br_id, key_id=key.id))
        token, expires = new_run_token(conn, br_id, datetime.now(UTC))
        ids = [tr_id for tr_id, _ in result.task_runs[0]]
        run = report.benchmark_runs[0]
        return {
            "id": br_id,
            "benchmark": run.benchmark.ref,
            "status": str(run.status),
            "scored": run.scored,
            "run_token": token,
            "run_token_expires_at": expires.isoformat(),
            "task_runs": [
                pending_view(i, t, base) for i, t in zip(ids, run.task_runs, strict=True)
            ],
        }

    return store.write("create a benchmark run", work)


@dataclass(frozen=True)
class Pending:
    """A task run about to be completed: where it sits and what it is."""

    task_run_id: str
    benchmark_run_id: str
    run: BenchmarkRun
    task: TaskRun


def pending_task(store: Store, key: ApiKey, tr_id: str) -> Pending:
    """The task run ``tr_id`` if the key may complete it now (404 hidden, 409 done)."""

    def work(conn: Connection) -> Pending:
        br_id = conn.execute(
            select(task_runs.c.benchmark_run_id).where(task_runs.c.id == tr_id)
        ).scalar()
        if br_id is None or _visible(conn, key, str(br_id)) is None:
            raise not_found("task run", tr_id)
        report = _report(conn, run_id=str(br_id))
        run = report.benchmark_runs[0]
        position = _position(conn, tr_id)
        task = run.task_runs[position]
        _check_open(run, task, tr_id)
        return Pending(tr_id, str(br_id), run, task)

    return store.read("read a task run", work)


def _position(conn: Connection, tr_id: str) -> int:
    return int(
        conn.execute(select(task_runs.c.position).where(task_runs.c.id == tr_id)).scalar_one()
    )


def _check_open(run: BenchmarkRun, task: TaskRun, tr_id: str) -> None:
    if task.status is not TaskStatus.RUNNING:
        raise Problem(409, f"{tr_id}: this task run is already {task.status}")
    if run.status is not RunStatus.RUNNING:
        raise Problem(409, f"{tr_id}: its benchmark run is {run.status}")


def _rewrite(conn: Connection, br_id: str, *, interrupted: bool = False) -> BenchmarkRun:
    """The benchmark run's aggregates (and its session, when it ended) from its task runs."""
    row = conn.execute(
        select(benchmark_runs.c.session_id, benchmark_runs.c.created_at).where(
            benchmark_runs.c.id == br_id
        )
    ).one()
    report = _report(conn, run_id=br_id)
    old = report.benchmark_runs[0]
    running = not interrupted and any(t.status is TaskStatus.RUNNING for t in old.task_runs)
    run = old.rescored(running=running, interrupted=interrupted)
    values = benchmark_run_row(
        br_id, str(row.session_id), 0, run, as_utc(row.created_at) or datetime.now(UTC)
    )
    for column in ("id", "position", "session_id", "created_at"):
        values.pop(column)
    conn.execute(update(benchmark_runs).where(benchmark_runs.c.id == br_id).values(values))
    if not running:
        now = datetime.now(UTC)
        started = (
            as_utc(
                conn.execute(
                    select(sessions.c.started_at).where(sessions.c.id == row.session_id)
                ).scalar_one()
            )
            or now
        )
        session = report.session.model_copy(
            update={
                "status": run.status,
                "phase": "completed",
                "completed_at": now.isoformat(),
                "duration": (now - started).total_seconds(),
                "counts": RunCounts.of(run.task_runs),
            }
        )
        _data, extra = report_split(report)
        srow = session_row(
            str(row.session_id), session, SessionMeta(started_at=session.started_at), extra
        )
        conn.execute(
            update(sessions)
            .where(sessions.c.id == row.session_id)
            .values(
                status=srow["status"],
                completed_at=srow["completed_at"],
                data=srow["data"],
                report_digest=None,
            )
        )
    return run


def complete_task(
    store: Store, key: ApiKey, pending: Pending, scored_task: TaskRun, *, elide: bool
) -> dict[str, Any]:
    """Store the scored task run in place of the pending one, then the run's aggregates."""

    def work(conn: Connection) -> dict[str, Any]:
        report = _report(conn, run_id=pending.benchmark_run_id)
        position = _position(conn, pending.task_run_id)
        _check_open(
            report.benchmark_runs[0],
            report.benchmark_runs[0].task_runs[position],
            pending.task_run_id,
        )
        session_id = str(
            conn.execute(
                select(benchmark_runs.c.session_id).where(
                    benchmark_runs.c.id == pending.benchmark_run_id
                )
            ).scalar_one()
        )
        _replace_task(
            conn, session_id, pending.benchmark_run_id, pending.task_run_id, position, scored_task
        )
        run = _rewrite(conn, pending.benchmark_run_id)
        cr_ids = [
            str(i)
            for i in conn.execute(
                select(criterion_runs.c.id)
                .where(criterion_runs.c.task_run_id == pending.task_run_id)
                .order_by(criterion_runs.c.position)
            ).scalars()
        ]
        view = task_view(
            pending.task_run_id, pending.benchmark_run_id, scored_task, cr_ids, elide=elide
        )
        view["benchmark_run_status"] = str(run.status)
        return view

    return store.write("complete a task run", work)


def cancel_run(
    store: Store, key: ApiKey, br_id: str, cancelled: Callable[[TaskRun], TaskRun]
) -> BenchmarkRun:
    """Cancel a running benchmark run: its pending task runs become cancelled, completed ones
    are kept."""

    def work(conn: Connection) -> BenchmarkRun:
        if _visible(conn, key, br_id) is None:
            raise not_found("benchmark run", br_id)
        report = _report(conn, run_id=br_id)
        run = report.benchmark_runs[0]
        if run.status is not RunStatus.RUNNING:
            raise Problem(409, f"{br_id}: this benchmark run is already {run.status}")
        session_id = str(
            conn.execute(
                select(benchmark_runs.c.session_id).where(benchmark_runs.c.id == br_id)
            ).scalar_one()
        )
        ids = list(
            conn.execute(
                select(task_runs.c.id)
                .where(task_runs.c.benchmark_run_id == br_id)
                .order_by(task_runs.c.position)
            ).scalars()
        )
        for position, (tr_id, task) in enumerate(zip(ids, run.task_runs, strict=True)):
            if task.status is TaskStatus.RUNNING:
                _replace_task(conn, session_id, br_id, str(tr_id), position, cancelled(task))
        return _rewrite(conn, br_id, interrupted=True)

    return store.write("cancel a benchmark run", work)
