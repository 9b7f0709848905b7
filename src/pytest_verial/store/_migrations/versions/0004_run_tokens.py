"""Run tokens of the service (issue 20): ``vrl_run_...``, scoped to one benchmark run, with an
expiry (hashes only)."""

from __future__ import annotations

from alembic import op
from sqlalchemy import Column, DateTime, ForeignKey, String

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "run_tokens",
        Column("id", String(40), primary_key=True),
        Column(
            "benchmark_run_id",
            String(40),
            ForeignKey("benchmark_runs.id", ondelete="CASCADE"),
            nullable=False,
        ),
        Column("hash", String(64), nullable=False, unique=True),
        Column("expires_at", DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("run_tokens")
