"""The trend and listing reads of the results store that the Store's own methods do not cover:
the benchmarks it holds runs of (``verial trend`` names them when asked for an unknown one).

Its functions take the connection of the caller's transaction (``store.read(doing, fn)``), so
that the Store, which reads through them, is not imported here."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, select

from .._nodeids import task_name
from ._repo_reports import chunks
from ._repo_sessions import name_of
from ._rows import as_utc
from ._tables import benchmark_runs, sessions, task_runs


def known_benchmarks(conn: Connection) -> list[str]:
    """The benchmark refs the store holds runs of, sorted."""
    return sorted(
        str(r) for r in conn.execute(select(benchmark_runs.c.benchmark_ref).distinct()).scalars()
    )


@dataclass(frozen=True)
class RunRow:
    """One benchmark run as ``verial runs`` lists it."""

    id: str
    created_at: datetime
    benchmark_ref: str
    benchmark_slug: str
    benchmark_version: str | None
    benchmark_file: str
    run_labels: str
    agent: str | None
    scored: bool
    score: float | None
    verdict: str | None
    strict_success: float | None
    criteria_passed: int
    criteria_failed: int
    criteria_error: int
    status: str
    git_commit: str | None
    session_id: str
    report_id: str
    #: the run's one name (:func:`pytest_verial._names.run_name`): run.yaml's agent of each
    #: run folder, else the folder's label
    name: str = "-"
    #: task runs left out of the run score because some of their criteria were deselected
    incomplete: int = 0

    @property
    def state(self) -> str:
        """What ``verial runs`` shows in its status column: ``completed``, ``cancelled``,
        ``running`` (still running, or killed and not recovered), or ``incomplete`` (completed
        with task runs whose criteria were partly deselected: ``-k``, ``-m``)."""
        if self.status == "completed" and self.incomplete:
            return "incomplete"
        return self.status


@dataclass(frozen=True)
class TrendPoint:
    """One benchmark run in a trend: its score, axes and per-task scores."""

    id: str
    created_at: datetime
    score: float | None
    verdict: str | None
    axes: dict[str, float]
    tasks: dict[str, float | None]
    git_commit: str | None
    #: the run's one name (run.yaml's agent, else its run folder label), as ``verial runs``
    agent: str | None
    status: str


_RUN_COLUMNS = (
    benchmark_runs.c.id,
    benchmark_runs.c.created_at,
    benchmark_runs.c.benchmark_ref,
    benchmark_runs.c.benchmark_slug,
    benchmark_runs.c.benchmark_version,
    benchmark_runs.c.benchmark_file,
    benchmark_runs.c.run_labels,
    benchmark_runs.c.agent,
    benchmark_runs.c.scored,
    benchmark_runs.c.score,
    benchmark_runs.c.verdict,
    benchmark_runs.c.strict_success,
    benchmark_runs.c.criteria_passed,
    benchmark_runs.c.criteria_failed,
    benchmark_runs.c.criteria_error,
    benchmark_runs.c.status,
    sessions.c.git_commit,
    benchmark_runs.c.session_id,
    benchmark_runs.c.report_id,
    benchmark_runs.c.data["runs"].label("runs_info"),
    benchmark_runs.c.data["counts"]["incomplete"].as_integer().label("incomplete"),
)


def run_row(values: dict[str, Any]) -> RunRow:
    """A :class:`RunRow` from the columns of :data:`_RUN_COLUMNS`."""
    values["name"] = name_of(
        values.pop("runs_info", None), values.get("agent") or values.get("run_labels")
    )
    values["incomplete"] = int(values.get("incomplete") or 0)
    values["created_at"] = as_utc(values["created_at"])
    return RunRow(**values)


def _benchmark_filter(benchmark: str) -> Any:
    """Benchmark runs of ``benchmark``: its ref (``slug@version``), slug or file."""
    return (
        (benchmark_runs.c.benchmark_ref == benchmark)
        | (benchmark_runs.c.benchmark_slug == benchmark)
        | (benchmark_runs.c.benchmark_file == benchmark)
    )


def agent_filter(agent: str) -> Any:
    """Benchmark runs named ``agent`` (run.yaml's agent) or with a run folder labelled so
    (``run_labels`` holds the labels joined by commas)."""
    labels = benchmark_runs.c.run_labels
    return (
        (benchmark_runs.c.agent == agent)
        | (labels == agent)
        | labels.startswith(agent + ",", autoescape=True)
        | labels.endswith("," + agent, autoescape=True)
        | labels.contains("," + agent + ",", autoescape=True)
    )


def list_runs(
    conn: Connection,
    *,
    benchmark: str | None = None,
    agent: str | None = None,
    since: datetime | None = None,
    limit: int | None = None,
) -> list[RunRow]:
    """Benchmark runs (of ``benchmark``, by ``agent``, created at ``since`` or later: a time
    as the column holds it), newest first."""
    query = select(*_RUN_COLUMNS).join(sessions, sessions.c.id == benchmark_runs.c.session_id)
    if benchmark:
        query = query.where(_benchmark_filter(benchmark))
    if agent:
        query = query.where(agent_filter(agent))
    if since is not None:
        query = query.where(benchmark_runs.c.created_at >= since)
    query = query.order_by(benchmark_runs.c.created_at.desc(), benchmark_runs.c.id.desc())
    if limit is not None:
        query = query.limit(max(0, limit))
    return [run_row(r._asdict()) for r in conn.execute(query)]


def trend_points(
    conn: Connection,
    benchmark: str,
    *,
    task: str | None = None,
    last: int | None = None,
    per_task: bool = True,
) -> list[TrendPoint]:
    """Per benchmark run of ``benchmark`` (ref, slug or file), oldest first: its score, axes
    and per-task scores (see :meth:`pytest_verial.store._core.Store.trend`)."""
    query = (
        select(
            benchmark_runs.c.id,
            benchmark_runs.c.created_at,
            benchmark_runs.c.score,
            benchmark_runs.c.verdict,
            benchmark_runs.c.data,
            benchmark_runs.c.agent,
            benchmark_runs.c.status,
            sessions.c.git_commit,
        )
        .join(sessions, sessions.c.id == benchmark_runs.c.session_id)
        .where(
            (benchmark_runs.c.benchmark_ref == benchmark)
            | (benchmark_runs.c.benchmark_slug == benchmark)
            | (benchmark_runs.c.benchmark_file == benchmark)
        )
        .order_by(benchmark_runs.c.created_at.desc(), benchmark_runs.c.id.desc())
    )
    if last is not None:
        query = query.limit(max(0, last))
    rows = list(conn.execute(query))[::-1]
    ids = [r.id for r in rows]
    tasks: dict[str, dict[str, float | None]] = {i: {} for i in ids}
    tq = select(
        task_runs.c.benchmark_run_id,
        task_runs.c.task_key,
        task_runs.c.run_label,
        task_runs.c.score,
    )
    if task is not None:
        tq = tq.where(task_runs.c.task_key == task)
    for chunk in chunks(ids if per_task else [], 500):
        for t in conn.execute(
            tq.where(task_runs.c.benchmark_run_id.in_(chunk)).order_by(
                task_runs.c.benchmark_run_id, task_runs.c.position
            )
        ):
            several = t.task_key in tasks[t.benchmark_run_id]
            key = task_name(t.task_key, t.run_label, several)
            tasks[t.benchmark_run_id][key] = t.score
    return [
        TrendPoint(
            id=r.id,
            created_at=as_utc(r.created_at) or datetime.now(UTC),
            score=r.score,
            verdict=r.verdict,
            axes={k: float(v["score"]) for k, v in (r.data.get("axes") or {}).items()},
            tasks=tasks[r.id],
            git_commit=r.git_commit,
            agent=name_of(r.data.get("runs"), r.agent),
            status=r.status,
        )
        for r in rows
    ]
