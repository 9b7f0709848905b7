"""The first store schema: sessions, benchmark runs, task runs, criterion runs, judge calls.

A frozen copy of the tables as they were at this revision (never edited: a change to the
tables is a new revision).
"""

from __future__ import annotations

from alembic import op
from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
)

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def _sessions(metadata: MetaData) -> None:
    """The sessions (one pytest session, import or service request each)."""
    Table(
        "sessions",
        metadata,
        Column("id", String(40), primary_key=True),
        Column("report_digest", String(64), unique=True),
        Column("source", String(16), nullable=False),
        Column("started_at", DateTime(timezone=True), nullable=False),
        Column("completed_at", DateTime(timezone=True)),
        Column("status", String(16), nullable=False),
        Column("exit_status", Integer),
        Column("host", Text),
        Column("git_commit", String(64)),
        Column("git_branch", Text),
        Column("git_dirty", Boolean),
        Column("ci_url", Text),
        Column("plugin_version", String(40)),
        Column("command_line", Text),
        Column("scored", Boolean, nullable=False, default=False),
        Column("data", JSON, nullable=False),
    )


def _benchmark_runs(metadata: MetaData) -> None:
    """The benchmark runs of a session."""
    Table(
        "benchmark_runs",
        metadata,
        Column("id", String(40), primary_key=True),
        Column(
            "session_id", String(40), ForeignKey("sessions.id", ondelete="CASCADE"), nullable=False
        ),
        Column("position", Integer, nullable=False),
        Column("report_id", Text, nullable=False),
        Column("benchmark_slug", Text, nullable=False),
        Column("benchmark_version", Text),
        Column("benchmark_ref", Text, nullable=False),
        Column("benchmark_file", Text, nullable=False),
        Column("agent", Text),
        Column("run_labels", Text, nullable=False),
        Column("status", String(16), nullable=False),
        Column("scored", Boolean, nullable=False),
        Column("score", Float),
        Column("verdict", String(8)),
        Column("pass_threshold", Float, nullable=False),
        Column("strict_success", Float),
        Column("criteria_passed", Integer, nullable=False),
        Column("criteria_failed", Integer, nullable=False),
        Column("criteria_error", Integer, nullable=False),
        Column("created_at", DateTime(timezone=True), nullable=False),
        Column("data", JSON, nullable=False),
        Index("ix_benchmark_runs_created", "created_at", "id"),
        Index("ix_benchmark_runs_ref_created", "benchmark_ref", "created_at"),
        Index("ix_benchmark_runs_agent", "agent"),
        Index("ix_benchmark_runs_session", "session_id", "position"),
    )


def _task_runs(metadata: MetaData) -> None:
    """The task runs of a benchmark run."""
    Table(
        "task_runs",
        metadata,
        Column("id", String(40), primary_key=True),
        Column(
            "benchmark_run_id",
            String(40),
            ForeignKey("benchmark_runs.id", ondelete="CASCADE"),
            nullable=False,
        ),
        Column("position", Integer, nullable=False),
        Column("report_id", Text, nullable=False),
        Column("task_id", Text, nullable=False),
        Column("task_key", Text, nullable=False),
        Column("entity", Text),
        Column("run_label", Text, nullable=False),
        Column("status", String(16), nullable=False),
        Column("verdict", String(8)),
        Column("score", Float),
        Column("data", JSON, nullable=False),
        Index("ix_task_runs_run", "benchmark_run_id", "position"),
    )


def _criterion_runs(metadata: MetaData) -> None:
    """The criterion runs of a task run."""
    Table(
        "criterion_runs",
        metadata,
        Column("id", String(40), primary_key=True),
        Column(
            "task_run_id",
            String(40),
            ForeignKey("task_runs.id", ondelete="CASCADE"),
            nullable=False,
        ),
        Column("position", Integer, nullable=False),
        Column("criterion_id", Text, nullable=False),
        Column("nodeid", Text),
        Column("assertion", Text),
        Column("axis", Text),
        Column("weight", Float, nullable=False),
        Column("status", String(16), nullable=False),
        Column("passed", Boolean, nullable=False),
        Column("score", Float),
        Column("details", Text),
        Column("evidence", JSON),
        Column("data", JSON, nullable=False),
        Index("ix_criterion_runs_task", "task_run_id", "position"),
    )


def _judge_calls(metadata: MetaData) -> None:
    """The judge's calls (tokens, cost) of a session's criterion runs."""
    Table(
        "judge_calls",
        metadata,
        Column("id", String(40), primary_key=True),
        Column(
            "session_id", String(40), ForeignKey("sessions.id", ondelete="CASCADE"), nullable=False
        ),
        Column("criterion_run_id", String(40), ForeignKey("criterion_runs.id", ondelete="CASCADE")),
        Column("model", Text),
        Column("prompt_tokens", Integer),
        Column("completion_tokens", Integer),
        Column("cost", Float),
        Column("cached", Boolean),
        Index("ix_judge_calls_session", "session_id"),
        Index("ix_judge_calls_criterion", "criterion_run_id"),
    )


def upgrade() -> None:
    metadata = MetaData()
    for table in (_sessions, _benchmark_runs, _task_runs, _criterion_runs, _judge_calls):
        table(metadata)
    metadata.create_all(op.get_bind())


def downgrade() -> None:
    for name in ("judge_calls", "criterion_runs", "task_runs", "benchmark_runs", "sessions"):
        op.drop_table(name)
