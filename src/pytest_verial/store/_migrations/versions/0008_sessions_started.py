"""Sessions as first-class refs (issue 34): ``latest`` and ``latest~N`` name the newest
sessions, and ``verial runs --sessions`` lists them newest first, both by start time."""

from __future__ import annotations

from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_sessions_started", "sessions", ["started_at", "id"])


def downgrade() -> None:
    op.drop_index("ix_sessions_started", table_name="sessions")
