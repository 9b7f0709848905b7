"""An index for ``trend --task``: a task's score across the runs of one benchmark."""

from __future__ import annotations

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_task_runs_key", "task_runs", ["task_key", "benchmark_run_id"])


def downgrade() -> None:
    op.drop_index("ix_task_runs_key", table_name="task_runs")
