"""Whole reports in and out of the store: :func:`insert_report` stores one (a session, its
benchmark runs, task runs, criterion runs and judge calls, in the caller's write transaction),
:func:`_report` reads a session's or one benchmark run's back, :func:`_scores` only their
scores (what ``verial compare`` reads)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, select

from .._results import SCHEMA_ID, Report
from ._engine import StoreError
from ._ids import new_id
from ._rows import (
    SessionMeta,
    benchmark_run_row,
    criterion_json,
    digest_of,
    report_from_rows,
    report_split,
    session_row,
    task_run_rows,
)
from ._tables import benchmark_runs, criterion_runs, judge_calls, sessions, task_runs

if TYPE_CHECKING:
    from ..reporting._scores import BenchmarkRunScores, ReportScores


@dataclass(frozen=True)
class ImportResult:
    """What ``import_report`` did: the session it stored (or found) and its benchmark runs."""

    session_id: str
    created: bool
    run_ids: list[str] = field(default_factory=list)
    # with ``ids=True``: per benchmark run, each task run's id and its criterion runs' ids
    task_runs: list[list[tuple[str, list[str]]]] = field(default_factory=list)


def insert_report(
    conn: Connection,
    report: Report,
    *,
    source: str = "import",
    origin: str | None = None,
    ids: bool = False,
    plain: dict[str, Any] | None = None,
) -> ImportResult:
    """Store a whole report inside the caller's write transaction (``import_report``, and the
    service, which stores its own rows in the same transaction); the same report (same digest)
    twice is stored once (the service's own are new: not looked up). ``ids``: also answer
    every task run's and criterion run's id. ``plain``: the report's ``to_json()`` when the
    caller made it already (not made again; the rows share its values, so the caller leaves it
    as it is)."""
    data, extra = report_split(report, plain)
    digest = digest_of(data)
    # a report the service made (``source="service"``) is timed to the microsecond as it is
    # stored: never one stored before, so it is not looked up (its digest is still stored: a
    # later import of it finds it)
    found = None
    if source != "service":
        query = select(sessions.c.id).where(sessions.c.report_digest == digest)
        found = conn.execute(query).scalar()
    if found is not None:
        run_ids = list(
            conn.execute(
                select(benchmark_runs.c.id)
                .where(benchmark_runs.c.session_id == found)
                .order_by(benchmark_runs.c.position)
            ).scalars()
        )
        tasks = [_stored_ids(conn, run_id) for run_id in run_ids] if ids else []
        return ImportResult(found, False, run_ids, tasks)
    meta = SessionMeta(started_at=report.session.started_at, source=source, origin=origin)
    session_id = new_id("ses")
    row = session_row(session_id, report.session, meta, extra, data["session"])
    row["report_digest"] = digest
    conn.execute(_INSERT[sessions], [row])
    run_ids, tasks = _insert_runs(conn, session_id, report, data, row["started_at"], ids=ids)
    return ImportResult(session_id, True, run_ids, tasks)


def _stored_ids(conn: Connection, run_id: str) -> list[tuple[str, list[str]]]:
    """A stored benchmark run's task run ids, each with its criterion run ids, in order."""
    tasks: dict[str, list[str]] = {
        str(i): []
        for i in conn.execute(
            select(task_runs.c.id)
            .where(task_runs.c.benchmark_run_id == run_id)
            .order_by(task_runs.c.position)
        ).scalars()
    }
    for c in conn.execute(
        select(criterion_runs.c.task_run_id, criterion_runs.c.id)
        .join(task_runs, task_runs.c.id == criterion_runs.c.task_run_id)
        .where(task_runs.c.benchmark_run_id == run_id)
        .order_by(criterion_runs.c.task_run_id, criterion_runs.c.position)
    ):
        tasks[str(c.task_run_id)].append(str(c.id))
    return list(tasks.items())


def chunks(items: Sequence[str], size: int) -> Iterator[Sequence[str]]:
    """``items`` in slices of ``size`` (one ``IN`` list each: a database bounds its length)."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _insert_runs(
    conn: Connection,
    session_id: str,
    report: Report,
    data: Mapping[str, Any],
    created_at: datetime,
    *,
    ids: bool = False,
) -> tuple[list[str], list[list[tuple[str, list[str]]]]]:
    """Insert every benchmark run of a report (its canonical JSON ``data``) under a session;
    the benchmark runs' ids and, with ``ids``, their task and criterion runs' ids."""
    run_ids = []
    tasks: list[list[tuple[str, list[str]]]] = []
    run_rows = []
    task_rows: list[dict[str, Any]] = []
    crit_rows: list[dict[str, Any]] = []
    judge_rows: list[dict[str, Any]] = []
    for position, (run, run_data) in enumerate(
        zip(report.benchmark_runs, data["benchmark_runs"], strict=True)
    ):
        run_id = new_id("br")
        run_ids.append(run_id)
        run_rows.append(benchmark_run_row(run_id, session_id, position, run, created_at, run_data))
        if ids:
            tasks.append([])
        for index, (task, task_data) in enumerate(
            zip(run.task_runs, run_data["task_runs"], strict=True)
        ):
            rows = task_run_rows(new_id("tr"), run_id, session_id, index, task, task_data)
            task_rows.append(rows.task)
            crit_rows.extend(rows.criteria)
            judge_rows.extend(rows.judge)
            if ids:
                tasks[-1].append((rows.task["id"], [c["id"] for c in rows.criteria]))
    for table, batch in (
        (benchmark_runs, run_rows),
        (task_runs, task_rows),
        (criterion_runs, crit_rows),
        (judge_calls, judge_rows),
    ):
        for start in range(0, len(batch), 5000):
            conn.execute(_INSERT[table], batch[start : start + 5000])
    return run_ids, tasks


#: each table's INSERT, built once: a report's rows (one verified task per service request)
#: reuse its compiled form without a new statement and cache key per call
_INSERT = {
    table: table.insert()
    for table in (sessions, benchmark_runs, task_runs, criterion_runs, judge_calls)
}


def _report(
    conn: Connection, *, session_id: str | None = None, run_id: str | None = None
) -> Report:
    if run_id is not None:
        sid = conn.execute(
            select(benchmark_runs.c.session_id).where(benchmark_runs.c.id == run_id)
        ).scalar()
        if sid is None:
            raise StoreError(f"{run_id}: no benchmark run in the store")
        session_id = str(sid)
        run_filter = benchmark_runs.c.id == run_id
    else:
        run_filter = benchmark_runs.c.session_id == session_id
    session_data = conn.execute(select(sessions.c.data).where(sessions.c.id == session_id)).scalar()
    if session_data is None:
        raise StoreError(f"{session_id}: no session in the store")
    runs = list(
        conn.execute(
            select(benchmark_runs.c.id, benchmark_runs.c.data)
            .where(run_filter)
            .order_by(benchmark_runs.c.position)
        )
    )
    run_ids = [r.id for r in runs]
    tasks: dict[str, list[tuple[str, Mapping[str, Any]]]] = {i: [] for i in run_ids}
    task_ids: list[str] = []
    for chunk in chunks(run_ids, 500):
        for t in conn.execute(
            select(task_runs.c.id, task_runs.c.benchmark_run_id, task_runs.c.data)
            .where(task_runs.c.benchmark_run_id.in_(chunk))
            .order_by(task_runs.c.benchmark_run_id, task_runs.c.position)
        ):
            tasks[t.benchmark_run_id].append((t.id, t.data))
            task_ids.append(t.id)
    criteria: dict[str, list[Any]] = {i: [] for i in task_ids}
    query = select(
        criterion_runs.c.task_run_id, criterion_runs.c.data, criterion_runs.c.evidence
    ).order_by(criterion_runs.c.task_run_id, criterion_runs.c.position)
    if run_id is not None or len(task_ids) <= 500:
        for chunk in chunks(task_ids, 500):
            for c in conn.execute(query.where(criterion_runs.c.task_run_id.in_(chunk))):
                criteria[c.task_run_id].append(criterion_json(c.data, c.evidence))
    else:  # a whole session: join instead of thousands of IN lists
        joined = (
            query.join(task_runs, task_runs.c.id == criterion_runs.c.task_run_id)
            .join(benchmark_runs, benchmark_runs.c.id == task_runs.c.benchmark_run_id)
            .where(benchmark_runs.c.session_id == session_id)
        )
        for c in conn.execute(joined):
            criteria[c.task_run_id].append(criterion_json(c.data, c.evidence))
    return report_from_rows(
        session_data,
        [(r.data, [(tdata, criteria[tid]) for tid, tdata in tasks[r.id]]) for r in runs],
    )


def _scores(conn: Connection, run_ids: Sequence[str]) -> ReportScores:
    """The scores of these benchmark runs (in this order) as one report's."""
    from ..reporting._scores import ReportScores

    runs = [_run_scores(conn, run_id) for run_id in run_ids]
    return ReportScores.model_validate({"schema": SCHEMA_ID, "benchmark_runs": runs})


def _run_scores(conn: Connection, run_id: str) -> BenchmarkRunScores:
    from ..reporting._scores import BenchmarkRunScores, CriterionScore, TaskScore

    run_data = conn.execute(
        select(benchmark_runs.c.data).where(benchmark_runs.c.id == run_id)
    ).scalar()
    if run_data is None:
        raise StoreError(f"{run_id}: no benchmark run in the store")
    tasks: dict[str, TaskScore] = {}
    for t in conn.execute(
        select(
            task_runs.c.id,
            task_runs.c.report_id,
            task_runs.c.task_key,
            task_runs.c.run_label,
            task_runs.c.status,
            task_runs.c.verdict,
            task_runs.c.score,
            task_runs.c.data["pass_threshold"].as_float().label("pass_threshold"),
        )
        .where(task_runs.c.benchmark_run_id == run_id)
        .order_by(task_runs.c.position)
    ):
        tasks[t.id] = TaskScore(
            id=t.report_id,
            task_key=t.task_key,
            run=t.run_label,
            status=t.status,
            verdict=t.verdict,
            score=t.score,
            pass_threshold=t.pass_threshold,
        )
    for c in conn.execute(
        select(
            criterion_runs.c.task_run_id,
            criterion_runs.c.criterion_id,
            criterion_runs.c.status,
            criterion_runs.c.passed,
            criterion_runs.c.score,
            criterion_runs.c.data["pass_threshold"].as_float().label("pass_threshold"),
        )
        .join(task_runs, task_runs.c.id == criterion_runs.c.task_run_id)
        .where(task_runs.c.benchmark_run_id == run_id)
        .order_by(task_runs.c.position, criterion_runs.c.position)
    ):
        tasks[c.task_run_id].criterion_runs.append(
            CriterionScore(
                criterion_id=c.criterion_id,
                status=c.status,
                passed=c.passed,
                score=c.score,
                pass_threshold=c.pass_threshold,
            )
        )
    return BenchmarkRunScores.model_validate({**run_data, "task_runs": list(tasks.values())})
