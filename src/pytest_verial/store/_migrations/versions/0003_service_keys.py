"""The service's tables (issue 20): API keys (hashes only), idempotent requests and the key
that created each benchmark run over HTTP."""

from __future__ import annotations

from alembic import op
from sqlalchemy import JSON, Column, DateTime, ForeignKey, Index, Integer, String, Text

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "api_keys",
        Column("id", String(40), primary_key=True),
        Column("scope", String(16), nullable=False),
        Column("name", Text),
        Column("hash", String(64), nullable=False, unique=True),
        Column("created_at", DateTime(timezone=True), nullable=False),
        Column("revoked_at", DateTime(timezone=True)),
    )
    op.create_table(
        "idempotency",
        Column("key", String(255), primary_key=True),
        Column("owner", String(40), primary_key=True),
        Column("request_hash", String(64), nullable=False),
        Column("status", Integer, nullable=False),
        Column("response", JSON, nullable=False),
        Column("created_at", DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "run_owners",
        Column(
            "benchmark_run_id",
            String(40),
            ForeignKey("benchmark_runs.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        Column("key_id", String(40), nullable=False),
        Index("ix_run_owners_key", "key_id", "benchmark_run_id"),
    )


def downgrade() -> None:
    for name in ("run_owners", "idempotency", "api_keys"):
        op.drop_table(name)
