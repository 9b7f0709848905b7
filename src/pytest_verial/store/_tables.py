"""The store's tables (SQLAlchemy Core): sessions, benchmark runs, task runs, criterion runs and
judge calls, Verial's three levels plus the session around them.

Each level keeps its queryable facts in columns and the rest of its typed object in ``data``
(JSON), so that a report read back from the store is the report that went in, even as
:mod:`pytest_verial._results` grows. The migrations in ``migrations/versions`` create exactly
these tables; a change here is a new migration.
"""

from __future__ import annotations

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

metadata = MetaData()

sessions = Table(
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
    #: ``latest`` and ``latest~N`` name sessions, newest first (migration 0008)
    Index("ix_sessions_started", "started_at", "id"),
)

benchmark_runs = Table(
    "benchmark_runs",
    metadata,
    Column("id", String(40), primary_key=True),
    Column("session_id", String(40), ForeignKey("sessions.id", ondelete="CASCADE"), nullable=False),
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

task_runs = Table(
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
    Index("ix_task_runs_key", "task_key", "benchmark_run_id"),
)

criterion_runs = Table(
    "criterion_runs",
    metadata,
    Column("id", String(40), primary_key=True),
    Column(
        "task_run_id", String(40), ForeignKey("task_runs.id", ondelete="CASCADE"), nullable=False
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

judge_calls = Table(
    "judge_calls",
    metadata,
    Column("id", String(40), primary_key=True),
    Column("session_id", String(40), ForeignKey("sessions.id", ondelete="CASCADE"), nullable=False),
    Column("criterion_run_id", String(40), ForeignKey("criterion_runs.id", ondelete="CASCADE")),
    Column("model", Text),
    Column("prompt_tokens", Integer),
    Column("completion_tokens", Integer),
    Column("cost", Float),
    Column("cached", Boolean),
    Index("ix_judge_calls_session", "session_id"),
    Index("ix_judge_calls_criterion", "criterion_run_id"),
)

# -- the service (issue 20): keys, idempotent requests, who created which run -----------------
api_keys = Table(
    "api_keys",
    metadata,
    Column("id", String(40), primary_key=True),
    Column("scope", String(16), nullable=False),
    Column("name", Text),
    #: SHA-256 (hex) of the key; the key itself is never stored
    Column("hash", String(64), nullable=False, unique=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("revoked_at", DateTime(timezone=True)),
)

idempotency = Table(
    "idempotency",
    metadata,
    Column("key", String(255), primary_key=True),
    Column("owner", String(40), primary_key=True),
    Column("request_hash", String(64), nullable=False),
    Column("status", Integer, nullable=False),
    Column("response", JSON, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
)

run_owners = Table(
    "run_owners",
    metadata,
    Column(
        "benchmark_run_id",
        String(40),
        ForeignKey("benchmark_runs.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("key_id", String(40), nullable=False),
    Index("ix_run_owners_key", "key_id", "benchmark_run_id"),
)

run_tokens = Table(
    "run_tokens",
    metadata,
    Column("id", String(40), primary_key=True),
    Column(
        "benchmark_run_id",
        String(40),
        ForeignKey("benchmark_runs.id", ondelete="CASCADE"),
        nullable=False,
    ),
    #: SHA-256 (hex) of the token; the token itself is never stored
    Column("hash", String(64), nullable=False, unique=True),
    Column("expires_at", DateTime(timezone=True), nullable=False),
)

task_run_starts = Table(
    "task_run_starts",
    metadata,
    Column(
        "task_run_id",
        String(40),
        ForeignKey("task_runs.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("started_at", DateTime(timezone=True), nullable=False),
)

#: ``POST /v1/verify-task?async=true``: claimed by any server process with
#: ``SELECT ... FOR UPDATE SKIP LOCKED`` (PostgreSQL) or under SQLite's write lock; a job whose
#: worker died is claimed again once its lease has passed
jobs = Table(
    "jobs",
    metadata,
    Column("id", String(40), primary_key=True),
    #: the key that queued it (its reader)
    Column("owner", String(40), nullable=False),
    Column("kind", String(32), nullable=False),
    Column("request", JSON, nullable=False),
    #: queued | running | done | failed
    Column("status", String(16), nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("worker", Text),
    Column("lease_until", DateTime(timezone=True)),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("started_at", DateTime(timezone=True)),
    Column("finished_at", DateTime(timezone=True)),
    #: the answer the synchronous request would have given (201 and its body, or a problem)
    Column("response_status", Integer),
    Column("response", JSON),
    Index("ix_jobs_status_created", "status", "created_at"),
)

#: a benchmark run's running sums (issue 33, migration 0009): what a run-API ``complete``
#: updates its aggregates from, in the transaction that stores the task run
#: (:mod:`pytest_verial.store._run_sums`)
run_sums = Table(
    "run_sums",
    metadata,
    Column(
        "benchmark_run_id",
        String(40),
        ForeignKey("benchmark_runs.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("sums", JSON, nullable=False),
)
