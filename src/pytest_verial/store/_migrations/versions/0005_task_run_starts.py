"""When the service's ``POST /v1/task-runs/{id}/start`` started a task run (issue 20)."""

from __future__ import annotations

from alembic import op
from sqlalchemy import Column, DateTime, ForeignKey, String

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "task_run_starts",
        Column(
            "task_run_id",
            String(40),
            ForeignKey("task_runs.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        Column("started_at", DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("task_run_starts")
