"""The service's jobs: ``POST /v1/verify-task?async=true`` queued for any worker (issue 20)."""

from __future__ import annotations

from alembic import op
from sqlalchemy import JSON, Column, DateTime, Index, Integer, String, Text

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "jobs",
        Column("id", String(40), primary_key=True),
        Column("owner", String(40), nullable=False),
        Column("kind", String(32), nullable=False),
        Column("request", JSON, nullable=False),
        Column("status", String(16), nullable=False),
        Column("attempts", Integer, nullable=False),
        Column("worker", Text),
        Column("lease_until", DateTime(timezone=True)),
        Column("created_at", DateTime(timezone=True), nullable=False),
        Column("started_at", DateTime(timezone=True)),
        Column("finished_at", DateTime(timezone=True)),
        Column("response_status", Integer),
        Column("response", JSON),
        Index("ix_jobs_status_created", "status", "created_at"),
    )


def downgrade() -> None:
    op.drop_table("jobs")
