"""A benchmark run's running sums (issue 33): one row per benchmark run still running, which a
run-API ``complete`` updates by the task run it scores instead of reading the whole run again.

The running benchmark runs of an existing store get theirs now, summed from their task runs'
rows (:func:`pytest_verial.store._run_sums.of`, plain JSON in, plain JSON out). A finished run
needs none: nothing changes its aggregates any more. A run without a row (one a pytest session
stored) gets it from its task runs on its first ``complete``.
"""

from __future__ import annotations

from typing import Any

from alembic import op
from sqlalchemy import JSON, Column, ForeignKey, Integer, String, column, select, table

from pytest_verial.store._run_sums import of

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

_benchmark_runs = table("benchmark_runs", column("id", String), column("status", String))
_task_runs = table(
    "task_runs",
    column("benchmark_run_id", String),
    column("position", Integer),
    column("data", JSON),
)


def upgrade() -> None:
    sums = op.create_table(
        "run_sums",
        Column(
            "benchmark_run_id",
            String(40),
            ForeignKey("benchmark_runs.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        Column("sums", JSON, nullable=False),
    )
    conn = op.get_bind()
    running = conn.execute(
        select(_benchmark_runs.c.id).where(_benchmark_runs.c.status == "running")
    ).scalars()
    rows: list[dict[str, Any]] = []
    for run_id in list(running):
        tasks = conn.execute(
            select(_task_runs.c.position, _task_runs.c.data)
            .where(_task_runs.c.benchmark_run_id == run_id)
            .order_by(_task_runs.c.position)
        )
        rows.append({"benchmark_run_id": run_id, "sums": of((t.position, t.data) for t in tasks)})
    if rows:
        op.bulk_insert(sums, rows)


def downgrade() -> None:
    op.drop_table("run_sums")
