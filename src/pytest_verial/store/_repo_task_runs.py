"""The rows of a session's runs as it is written: a task run's row with its criterion runs and
judge calls (inserted, or replacing the ones stored of it)."""

from __future__ import annotations

from sqlalchemy import Connection, delete, select

from .._results import TaskRun
from ._ids import new_id
from ._rows import task_run_rows
from ._tables import criterion_runs, judge_calls, task_runs


def _replace_task(
    conn: Connection,
    session_id: str,
    run_id: str,
    task_id: str | None,
    position: int,
    task: TaskRun,
) -> str:
    """Insert a task run's rows (replacing the ones of ``task_id``); its store id."""
    if task_id is not None:
        position = conn.execute(
            select(task_runs.c.position).where(task_runs.c.id == task_id)
        ).scalar_one()
        conn.execute(delete(task_runs).where(task_runs.c.id == task_id))
    else:
        task_id = new_id("tr")
    rows = task_run_rows(task_id, run_id, session_id, position, task)
    conn.execute(task_runs.insert(), [rows.task])
    if rows.criteria:
        conn.execute(criterion_runs.insert(), rows.criteria)
    if rows.judge:
        conn.execute(judge_calls.insert(), rows.judge)
    return task_id
