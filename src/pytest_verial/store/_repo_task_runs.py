"""The rows of a session's runs as it is written: a benchmark run's row (inserted, its
aggregates updated), a task run's row with its criterion runs and judge calls (inserted, or
replacing the ones stored of it), and the ids of what a session holds already (a recovery
writes over them)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, delete, select

from .._results import TaskRun
from ._ids import new_id
from ._rows import task_run_rows
from ._tables import benchmark_runs, criterion_runs, judge_calls, task_runs


def _replace_task(
    conn: Connection,
    session_id: str,
    run_id: str,
    task_id: str | None,
    position: int,
    task: TaskRun,
    kept: dict[str, Any] | None = None,
) -> str:
    """Insert a task run's rows (replacing the ones of ``task_id``); its store id. ``kept``
    (a dict) gets the task run's row: its ``position`` and ``data``, as stored."""
    if task_id is not None:
        position = conn.execute(
            select(task_runs.c.position).where(task_runs.c.id == task_id)
        ).scalar_one()
        conn.execute(delete(task_runs).where(task_runs.c.id == task_id))
    else:
        task_id = new_id("tr")
    rows = task_run_rows(task_id, run_id, session_id, position, task)
    conn.execute(task_runs.insert(), [rows.task])
    if kept is not None:
        kept.update(position=position, data=rows.task["data"])
    if rows.criteria:
        conn.execute(criterion_runs.insert(), rows.criteria)
    if rows.judge:
        conn.execute(judge_calls.insert(), rows.judge)
    return task_id


def stored_runs(conn: Connection, session_id: str) -> dict[str, tuple[str, dict[str, str]]]:
    """A stored session's benchmark runs: report id -> (store id, its task runs' report ids ->
    store ids)."""
    runs: dict[str, tuple[str, dict[str, str]]] = {}
    for r in conn.execute(
        select(benchmark_runs.c.id, benchmark_runs.c.report_id).where(
            benchmark_runs.c.session_id == session_id
        )
    ):
        tasks = {
            t.report_id: t.id
            for t in conn.execute(
                select(task_runs.c.id, task_runs.c.report_id).where(
                    task_runs.c.benchmark_run_id == r.id
                )
            )
        }
        runs[r.report_id] = (r.id, tasks)
    return runs
