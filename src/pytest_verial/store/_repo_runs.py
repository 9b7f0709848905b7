"""The three levels as the service reads and changes them: every statement the service runs on
``benchmark_runs``, ``task_runs``, ``criterion_runs``, ``run_owners`` and ``task_run_starts``.

Who sees what is decided here, with the principal (:class:`~._repo_keys.ApiKey`) every function
takes: a run token sees its run, a solver key the runs it created, an org key every run
(pytest's and imported ones included). What is hidden is :class:`NotVisible`, whatever the
reason, so a caller cannot tell "not there" from "not yours".

Phases (Verial's): a task run is ``created``, ``started`` (``POST .../start``, or implicitly by
its completion), ``completed`` or ``cancelled``; a benchmark run is ``created`` until one of its
task runs starts, then ``started``, then ``completed`` (finalized when its last task run
completes) or ``cancelled``. They follow from each run's status and the ``task_run_starts`` rows;
nothing else is stored for them. Only one task run of a benchmark run is ``started`` at a time.

Each change is one write transaction, with the answer the service gives kept for the request's
Idempotency-Key in the same transaction (:mod:`._repo_idempotency`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

from sqlalchemy import Connection, and_, delete, or_, select, update

from .._results import (
    BenchmarkRun,
    CriterionRun,
    Report,
    RunCounts,
    RunStatus,
    Status,
    TaskRun,
    TaskStatus,
)
from . import _run_sums as _sums
from ._core import Store
from ._engine import StoreError
from ._repo_idempotency import Replay, find_replay, record_in, replay_in
from ._repo_keys import ApiKey
from ._repo_reports import _report, insert_report
from ._repo_task_runs import _replace_task
from ._rows import (
    SessionMeta,
    as_utc,
    benchmark_run_row,
    criterion_json,
    report_from_rows,
    report_split,
    session_row,
)
from ._tables import (
    benchmark_runs,
    criterion_runs,
    run_owners,
    run_sums,
    sessions,
    task_run_starts,
    task_runs,
)

T = TypeVar("T")

#: a task run's and a benchmark run's phases, in order
PHASES = ("created", "started", "completed", "cancelled")


class NotVisible(LookupError):
    """No such object, or the principal may not see it (the same answer for both)."""

    def __init__(self, what: str, ident: str) -> None:
        super().__init__(f"{ident}: no {what} with this id (or not visible to this key)")
        self.what = what
        self.ident = ident


class RunConflict(Exception):
    """The change does not fit the run's state (a task run completed twice, a run cancelled)."""


# -- phases --------------------------------------------------------------------------------------
def task_phase(status: str, started: bool) -> str:
    """A task run's phase from its status and whether it was started."""
    if status == TaskStatus.RUNNING:
        return "started" if started else "created"
    if status == TaskStatus.CANCELLED:
        return "cancelled"
    return "completed"


def run_phase(status: str, task_phases: Sequence[str]) -> str:
    """A benchmark run's phase from its status and its task runs' phases."""
    if status == RunStatus.CANCELLED:
        return "cancelled"
    if status == RunStatus.COMPLETED:
        return "completed"
    return "created" if all(p == "created" for p in task_phases) else "started"


# -- what the service reads ------------------------------------------------------------------------
@dataclass(frozen=True)
class StoredCriterionRun:
    id: str
    task_run_id: str
    benchmark_run_id: str
    run: CriterionRun
    scored: bool


@dataclass(frozen=True)
class StoredTaskRun:
    id: str
    benchmark_run_id: str
    run: TaskRun
    criterion_run_ids: list[str]
    phase: str
    started_at: datetime | None
    scored: bool
    #: the task run's JSON form (``run.to_json()``'s) when the writer has it already: the
    #: answer is made from it instead of dumping ``run`` again
    json: dict[str, Any] | None = None


@dataclass(frozen=True)
class TaskRunRef:
    """A task run as its benchmark run lists it."""

    id: str
    run: TaskRun
    phase: str
    started_at: datetime | None


@dataclass(frozen=True)
class StoredBenchmarkRun:
    id: str
    run: BenchmarkRun
    task_runs: list[TaskRunRef]
    phase: str
    scored: bool


@dataclass(frozen=True)
class RunListRow:
    """One benchmark run of a listing: its columns and its phase."""

    id: str
    created_at: datetime
    benchmark_ref: str
    agent: str | None
    run_labels: str
    status: str
    phase: str
    scored: bool
    score: float | None
    verdict: str | None
    strict_success: float | None
    criteria_passed: int
    criteria_failed: int
    criteria_error: int
    source: str


def _visible(conn: Connection, viewer: ApiKey, br_id: str) -> bool | None:
    """Whether the benchmark run is scored, if ``viewer`` may see it; None when hidden."""
    row = conn.execute(
        select(benchmark_runs.c.scored, run_owners.c.key_id)
        .select_from(benchmark_runs.outerjoin(run_owners))
        .where(benchmark_runs.c.id == br_id)
    ).first()
    if row is None:
        return None
    if viewer.run_id is not None:  # a run token: its own run only
        if br_id != viewer.run_id:
            return None
    elif not viewer.org and row.key_id != viewer.id:
        return None
    return bool(row.scored)


def _starts(conn: Connection, tr_ids: Sequence[str]) -> dict[str, datetime]:
    found: dict[str, datetime] = {}
    for start in range(0, len(tr_ids), 500):
        chunk = list(tr_ids[start : start + 500])
        for row in conn.execute(
            select(task_run_starts.c.task_run_id, task_run_starts.c.started_at).where(
                task_run_starts.c.task_run_id.in_(chunk)
            )
        ):
            found[str(row.task_run_id)] = as_utc(row.started_at) or datetime.now(UTC)
    return found


def _task_ids(conn: Connection, br_id: str) -> list[str]:
    return [
        str(i)
        for i in conn.execute(
            select(task_runs.c.id)
            .where(task_runs.c.benchmark_run_id == br_id)
            .order_by(task_runs.c.position)
        ).scalars()
    ]


def _task_run(conn: Connection, viewer: ApiKey, tr_id: str) -> StoredTaskRun:
    row = conn.execute(
        select(task_runs.c.benchmark_run_id, task_runs.c.data).where(task_runs.c.id == tr_id)
    ).first()
    if row is None:
        raise NotVisible("task run", tr_id)
    scored = _visible(conn, viewer, str(row.benchmark_run_id))
    if scored is None:
        raise NotVisible("task run", tr_id)
    crits = list(
        conn.execute(
            select(criterion_runs.c.id, criterion_runs.c.data, criterion_runs.c.evidence)
            .where(criterion_runs.c.task_run_id == tr_id)
            .order_by(criterion_runs.c.position)
        )
    )
    run = TaskRun.model_validate(
        {**row.data, "criterion_runs": [criterion_json(c.data, c.evidence) for c in crits]}
    )
    started = _starts(conn, [tr_id]).get(tr_id)
    return StoredTaskRun(
        id=tr_id,
        benchmark_run_id=str(row.benchmark_run_id),
        run=run,
        criterion_run_ids=[str(c.id) for c in crits],
        phase=task_phase(run.status, started is not None),
        started_at=started,
        scored=scored,
    )


def read_task_run(store: Store, viewer: ApiKey, tr_id: str) -> StoredTaskRun:
    """A task run with its criterion runs (NotVisible when ``viewer`` may not see it)."""
    return store.read("read a task run", lambda conn: _task_run(conn, viewer, tr_id))


def read_criterion_run(store: Store, viewer: ApiKey, cr_id: str) -> StoredCriterionRun:
    """One criterion run, its evidence whole (NotVisible when ``viewer`` may not see it)."""

    def work(conn: Connection) -> StoredCriterionRun:
        row = conn.execute(
            select(
                criterion_runs.c.data,
                criterion_runs.c.evidence,
                criterion_runs.c.task_run_id,
                task_runs.c.benchmark_run_id,
            )
            .join(task_runs, task_runs.c.id == criterion_runs.c.task_run_id)
            .where(criterion_runs.c.id == cr_id)
        ).first()
        if row is None:
            raise NotVisible("criterion run", cr_id)
        scored = _visible(conn, viewer, str(row.benchmark_run_id))
        if scored is None:
            raise NotVisible("criterion run", cr_id)
        return StoredCriterionRun(
            id=cr_id,
            task_run_id=str(row.task_run_id),
            benchmark_run_id=str(row.benchmark_run_id),
            run=CriterionRun.from_json(criterion_json(row.data, row.evidence)),
            scored=scored,
        )

    return store.read("read a criterion run", work)


def list_criterion_runs(
    store: Store, viewer: ApiKey, tr_id: str, *, limit: int, after: int | None
) -> tuple[list[StoredCriterionRun], bool]:
    """A task run's criterion runs in order, ``limit`` of them after position ``after``, and
    whether more follow (NotVisible when ``viewer`` may not see the task run)."""

    def work(conn: Connection) -> tuple[list[StoredCriterionRun], bool]:
        br_id = conn.execute(
            select(task_runs.c.benchmark_run_id).where(task_runs.c.id == tr_id)
        ).scalar()
        scored = None if br_id is None else _visible(conn, viewer, str(br_id))
        if scored is None:
            raise NotVisible("task run", tr_id)
        query = select(
            criterion_runs.c.id,
            criterion_runs.c.position,
            criterion_runs.c.data,
            criterion_runs.c.evidence,
        ).where(criterion_runs.c.task_run_id == tr_id)
        if after is not None:
            query = query.where(criterion_runs.c.position > after)
        rows = list(conn.execute(query.order_by(criterion_runs.c.position).limit(limit + 1)))
        found = [
            StoredCriterionRun(
                str(r.id),
                tr_id,
                str(br_id),
                CriterionRun.from_json(criterion_json(r.data, r.evidence)),
                scored,
            )
            for r in rows[:limit]
        ]
        return found, len(rows) > limit

    return store.read("list criterion runs", work)


def criterion_position(store: Store, cr_id: str) -> int | None:
    """Where a criterion run sits in its task run (a listing's cursor), or None."""

    def work(conn: Connection) -> int | None:
        value = conn.execute(
            select(criterion_runs.c.position).where(criterion_runs.c.id == cr_id)
        ).scalar()
        return None if value is None else int(value)

    return store.read("read a criterion run", work)


def _benchmark_run(
    conn: Connection, br_id: str, scored: bool, run: BenchmarkRun | None = None
) -> StoredBenchmarkRun:
    """A benchmark run with its task runs' ids and phases (``run``: as just rewritten)."""
    if run is None:
        run = _report(conn, run_id=br_id).benchmark_runs[0]
    ids = _task_ids(conn, br_id)
    starts = _starts(conn, ids)
    refs = [
        TaskRunRef(i, t, task_phase(t.status, i in starts), starts.get(i))
        for i, t in zip(ids, run.task_runs, strict=True)
    ]
    return StoredBenchmarkRun(
        id=br_id,
        run=run,
        task_runs=refs,
        phase=run_phase(run.status, [r.phase for r in refs]),
        scored=scored,
    )


def read_benchmark_run(store: Store, viewer: ApiKey, br_id: str) -> StoredBenchmarkRun:
    """A benchmark run with its task runs and their phases (NotVisible when hidden)."""

    def work(conn: Connection) -> StoredBenchmarkRun:
        scored = _visible(conn, viewer, br_id)
        if scored is None:
            raise NotVisible("benchmark run", br_id)
        return _benchmark_run(conn, br_id, scored)

    return store.read("read a run", work)


def read_report(store: Store, viewer: ApiKey, br_id: str) -> tuple[Report, bool]:
    """The run's report and whether it is scored (NotVisible when hidden)."""

    def work(conn: Connection) -> tuple[Report, bool]:
        scored = _visible(conn, viewer, br_id)
        if scored is None:
            raise NotVisible("benchmark run", br_id)
        return _report(conn, run_id=br_id), scored

    return store.read("read a run", work)


def _listing(
    viewer: ApiKey, benchmark: str | None, agent: str | None, after: tuple[datetime, str] | None
) -> Any:
    """The query of :func:`list_benchmark_runs`, without its limit (``after``'s time as the
    column holds it)."""
    query = (
        select(
            benchmark_runs.c.id,
            benchmark_runs.c.created_at,
            benchmark_runs.c.benchmark_ref,
            benchmark_runs.c.run_labels,
            benchmark_runs.c.agent,
            benchmark_runs.c.status,
            benchmark_runs.c.scored,
            benchmark_runs.c.score,
            benchmark_runs.c.verdict,
            benchmark_runs.c.strict_success,
            benchmark_runs.c.criteria_passed,
            benchmark_runs.c.criteria_failed,
            benchmark_runs.c.criteria_error,
            sessions.c.source,
        )
        .join(sessions, sessions.c.id == benchmark_runs.c.session_id)
        .outerjoin(run_owners, run_owners.c.benchmark_run_id == benchmark_runs.c.id)
    )
    if viewer.run_id is not None:
        query = query.where(benchmark_runs.c.id == viewer.run_id)
    elif not viewer.org:
        query = query.where(run_owners.c.key_id == viewer.id)
    if benchmark:
        query = query.where(
            or_(
                benchmark_runs.c.benchmark_ref == benchmark,
                benchmark_runs.c.benchmark_slug == benchmark,
            )
        )
    if agent:
        query = query.where(benchmark_runs.c.agent == agent)
    if after is not None:
        when = after[0]
        query = query.where(
            or_(
                benchmark_runs.c.created_at < when,
                and_(benchmark_runs.c.created_at == when, benchmark_runs.c.id < after[1]),
            )
        )
    return query.order_by(benchmark_runs.c.created_at.desc(), benchmark_runs.c.id.desc())


def _list_row(r: Any, moved: set[str]) -> RunListRow:
    """A row of :func:`_listing` as a :class:`RunListRow` (``moved``: the running benchmark
    runs with a task run started)."""
    return RunListRow(
        id=str(r.id),
        created_at=as_utc(r.created_at) or datetime.now(UTC),
        benchmark_ref=str(r.benchmark_ref),
        agent=r.agent,
        run_labels=str(r.run_labels),
        status=str(r.status),
        phase=run_phase(str(r.status), ["started"] if str(r.id) in moved else []),
        scored=bool(r.scored),
        score=r.score,
        verdict=r.verdict,
        strict_success=r.strict_success,
        criteria_passed=int(r.criteria_passed),
        criteria_failed=int(r.criteria_failed),
        criteria_error=int(r.criteria_error),
        source=str(r.source),
    )


def list_benchmark_runs(
    store: Store,
    viewer: ApiKey,
    *,
    limit: int,
    after: tuple[datetime, str] | None,
    benchmark: str | None,
    agent: str | None,
) -> tuple[list[RunListRow], bool]:
    """The benchmark runs ``viewer`` may see, newest first, ``limit`` of them after the
    (created_at, id) ``after``; and whether more follow."""
    if after is not None:
        when = after[0].astimezone(UTC)
        after = (when.replace(tzinfo=None) if store.sqlite else when, after[1])
    query = _listing(viewer, benchmark, agent, after).limit(limit + 1)

    def work(conn: Connection) -> tuple[list[RunListRow], bool]:
        rows = list(conn.execute(query))
        page = rows[:limit]
        moved = _moved(conn, [str(r.id) for r in page if r.status == RunStatus.RUNNING])
        return [_list_row(r, moved) for r in page], len(rows) > limit

    return store.read("list runs", work)


def _moved(conn: Connection, run_ids: Sequence[str]) -> set[str]:
    """The running benchmark runs among ``run_ids`` with a task run started or done."""
    if not run_ids:
        return set()
    done = conn.execute(
        select(task_runs.c.benchmark_run_id)
        .where(task_runs.c.benchmark_run_id.in_(list(run_ids)))
        .where(task_runs.c.status != TaskStatus.RUNNING)
    ).scalars()
    started = conn.execute(
        select(task_runs.c.benchmark_run_id)
        .join(task_run_starts, task_run_starts.c.task_run_id == task_runs.c.id)
        .where(task_runs.c.benchmark_run_id.in_(list(run_ids)))
    ).scalars()
    return {str(i) for i in done} | {str(i) for i in started}


# -- what the service writes ---------------------------------------------------------------------
def _once(
    store: Store,
    doing: str,
    owner: ApiKey,
    idem: str | None,
    digest: str,
    work: Callable[[Connection], Replay],
) -> Replay:
    """Run ``work`` in one write transaction unless ``owner``'s Idempotency-Key already holds
    an answer, and keep its answer for the key in the same transaction. Two requests with one
    key at once: the one that commits second answers what the first kept."""

    def once(conn: Connection) -> Replay:
        earlier = replay_in(conn, owner.id, idem, digest) if idem is not None else None
        if earlier is not None:
            return earlier
        answer = work(conn)
        record_in(conn, owner.id, idem, digest, answer)
        return answer

    try:
        return store.write(doing, once)
    except StoreError:
        found = find_replay(store, owner.id, idem, digest) if idem is not None else None
        if found is None:
            raise
        return found


def store_verified(
    store: Store,
    owner: ApiKey,
    report: Report,
    answer: Callable[[StoredTaskRun], Replay],
    *,
    idem: str | None,
    digest: str,
    then: Callable[[Connection, Replay], None] | None = None,
) -> Replay:
    """Store the report of one verified task (a benchmark run with one task run), its owner
    and its Idempotency-Key record in one transaction; ``answer`` builds what is answered
    from the stored task run. ``then(conn, answer)`` runs in that transaction (an async job
    marked done with it). The report's JSON form is made once: the rows and the answer are
    both made from it."""
    run = report.benchmark_runs[0]
    task = run.task_runs[0]
    plain = report.to_json()

    def work(conn: Connection) -> Replay:
        result = insert_report(conn, report, source="service", ids=True, plain=plain)
        br_id = result.run_ids[0]
        conn.execute(_OWNER, [{"benchmark_run_id": br_id, "key_id": owner.id}])
        tr_id, cr_ids = result.task_runs[0][0]
        phase = task_phase(task.status, True)
        task_json = plain["benchmark_runs"][0]["task_runs"][0]
        stored = StoredTaskRun(tr_id, br_id, task, cr_ids, phase, None, run.scored, task_json)
        made = answer(stored)
        if then is not None:
            then(conn, made)
        return made

    return _once(store, "store the verified task", owner, idem, digest, work)


#: the owner row of a verified task's run, built once (one per verify-task request)
_OWNER = run_owners.insert()

#: what a task run's running sums read of it (:func:`._run_sums.add`)
_SUMMED = {"status", "verification", "verdict", "score", "all_passed", "axes", "counts"}


def create_run(
    store: Store,
    owner: ApiKey,
    report: Report,
    answer: Callable[[StoredBenchmarkRun], Replay],
    *,
    idem: str | None,
    digest: str,
) -> Replay:
    """Store a new benchmark run (every task run ``created``) and its owner. Its bearer token
    is stored apart (:func:`~._repo_keys.add_run_token`), never in the answer kept for the
    Idempotency-Key."""

    def work(conn: Connection) -> Replay:
        result = insert_report(conn, report, source="service", ids=True)
        br_id = result.run_ids[0]
        conn.execute(run_owners.insert().values(benchmark_run_id=br_id, key_id=owner.id))
        run = report.benchmark_runs[0]
        if len(run.runs) == 1:  # its running sums, which each complete updates
            sums = _sums.of(
                (i, t.model_dump(mode="json", include=_SUMMED)) for i, t in enumerate(run.task_runs)
            )
            conn.execute(run_sums.insert().values(benchmark_run_id=br_id, sums=sums))
        return answer(_benchmark_run(conn, br_id, run.scored))

    return _once(store, "create a benchmark run", owner, idem, digest, work)


def _open_task(conn: Connection, viewer: ApiKey, tr_id: str) -> str:
    """The benchmark run of a task run the viewer may change now (NotVisible, RunConflict
    when it or its run is over): from the two rows' status columns, whatever the run's size."""
    row = conn.execute(
        select(task_runs.c.benchmark_run_id, task_runs.c.status).where(task_runs.c.id == tr_id)
    ).first()
    if row is None or _visible(conn, viewer, str(row.benchmark_run_id)) is None:
        raise NotVisible("task run", tr_id)
    br_id = str(row.benchmark_run_id)
    status = conn.execute(
        select(benchmark_runs.c.status).where(benchmark_runs.c.id == br_id)
    ).scalar_one()
    _check_open(RunStatus(status), TaskStatus(row.status), tr_id)
    return br_id


def _check_open(run: RunStatus, task: TaskStatus, tr_id: str) -> None:
    if task is not TaskStatus.RUNNING:
        raise RunConflict(f"{tr_id}: this task run is already {task_phase(task, True)}")
    if run is not RunStatus.RUNNING:
        raise RunConflict(f"{tr_id}: its benchmark run is {run_phase(run, [])}")


def _other_started(conn: Connection, br_id: str, tr_id: str) -> None:
    """RunConflict when another task run of the benchmark run is in phase ``started``."""
    other = conn.execute(
        select(task_runs.c.id)
        .join(task_run_starts, task_run_starts.c.task_run_id == task_runs.c.id)
        .where(
            task_runs.c.benchmark_run_id == br_id,
            task_runs.c.status == TaskStatus.RUNNING,
            task_runs.c.id != tr_id,
        )
        .limit(1)
    ).scalar()
    if other is not None:
        raise RunConflict(
            f"{tr_id}: task run {other} is started; only one task run of a benchmark run is "
            "started at a time (complete it first)"
        )


def start_task(
    store: Store,
    viewer: ApiKey,
    tr_id: str,
    answer: Callable[[StoredTaskRun], Replay],
    *,
    idem: str | None,
    digest: str,
) -> Replay:
    """Move a task run from ``created`` to ``started`` (a second start answers the first
    one's time); RunConflict when another task run of its benchmark run is started."""

    def work(conn: Connection) -> Replay:
        br_id = _open_task(conn, viewer, tr_id)
        if tr_id not in _starts(conn, [tr_id]):
            _other_started(conn, br_id, tr_id)
            conn.execute(
                task_run_starts.insert().values(task_run_id=tr_id, started_at=datetime.now(UTC))
            )
        return answer(_task_run(conn, viewer, tr_id))

    return _once(store, "start a task run", viewer, idem, digest, work)


@dataclass(frozen=True)
class Pending:
    """A task run about to be completed: where it sits and what it is (``run`` without its
    task runs, ``task`` without its criterion runs: what names them)."""

    task_run_id: str
    benchmark_run_id: str
    run: BenchmarkRun
    task: TaskRun


def pending_task(store: Store, viewer: ApiKey, tr_id: str) -> Pending:
    """The task run ``tr_id`` if ``viewer`` may complete it now (NotVisible, RunConflict)."""

    def work(conn: Connection) -> Pending:
        br_id = _open_task(conn, viewer, tr_id)
        if tr_id not in _starts(conn, [tr_id]):
            _other_started(conn, br_id, tr_id)
        data = conn.execute(select(task_runs.c.data).where(task_runs.c.id == tr_id)).scalar_one()
        return Pending(tr_id, br_id, _light_run(conn, br_id, []), _light_task(data))

    return store.read("read a task run", work)


def complete_task(
    store: Store,
    viewer: ApiKey,
    pending: Pending,
    scored_task: TaskRun,
    answer: Callable[[StoredTaskRun, StoredBenchmarkRun], Replay],
    *,
    idem: str | None,
    digest: str,
) -> Replay:
    """Store the scored task run in place of the open one (keeping when it started; a task
    run completed without a start starts now), then the run's aggregates: finalized when it
    was the last task run.

    Constant work whatever the run's size: the aggregates come from the run's running sums
    (:mod:`._run_sums`), updated by this task run in the same transaction, under a lock on the
    benchmark run's row (PostgreSQL: ``FOR UPDATE``; SQLite: its one writer), so that two
    completes of one run at once never lose one another's update."""
    tr_id, br_id = pending.task_run_id, pending.benchmark_run_id

    def work(conn: Connection) -> Replay:
        run_row = conn.execute(
            select(benchmark_runs.c.session_id, benchmark_runs.c.created_at, benchmark_runs.c.data)
            .where(benchmark_runs.c.id == br_id)
            .with_for_update()
        ).first()
        if run_row is None or _open_task(conn, viewer, tr_id) != br_id:
            raise NotVisible("task run", tr_id)
        started = _starts(conn, [tr_id]).get(tr_id)
        if started is None:
            _other_started(conn, br_id, tr_id)
            started = datetime.now(UTC)
        before = conn.execute(select(task_runs.c.data).where(task_runs.c.id == tr_id)).scalar_one()
        session_id = str(run_row.session_id)
        kept: dict[str, Any] = {}
        _replace_task(conn, session_id, br_id, tr_id, 0, scored_task, kept)
        # the task run's rows were replaced under the same id: its start goes with them
        conn.execute(task_run_starts.insert().values(task_run_id=tr_id, started_at=started))
        old = BenchmarkRun.model_validate({**run_row.data, "task_runs": []})
        run = _summed(conn, br_id, old, before, kept)
        if run is None:  # trials: statistics no sum gives
            run = _rewrite(conn, br_id)
        else:
            _write_run(conn, br_id, session_id, run_row.created_at, run)
        stored = _task_run(conn, viewer, tr_id)
        phase = run_phase(run.status, ["completed"])
        return answer(stored, StoredBenchmarkRun(br_id, run, [], phase, stored.scored))

    return _once(store, "complete a task run", viewer, idem, digest, work)


def _summed(
    conn: Connection, br_id: str, old: BenchmarkRun, before: Any, after: dict[str, Any]
) -> BenchmarkRun | None:
    """The benchmark run's aggregates once its task run ``before`` (a row's data) became
    ``after`` (position and data), from its running sums, kept updated; None for a run with
    trials (several run folders), which is recomputed."""
    if len(old.runs) > 1:
        conn.execute(delete(run_sums).where(run_sums.c.benchmark_run_id == br_id))
        return None
    found = conn.execute(
        select(run_sums.c.sums).where(run_sums.c.benchmark_run_id == br_id)
    ).scalar()
    sums: dict[str, Any] | None = None
    if found is not None:
        sums = copy.deepcopy(found)
        try:
            _sums.add(sums, before, after["position"], -1)
        except ValueError:
            sums = None
    if sums is None:  # a run stored before its sums were kept: summed from its rows once
        sums = _sums.of(
            (int(r.position), r.data)
            for r in conn.execute(
                select(task_runs.c.position, task_runs.c.data)
                .where(task_runs.c.benchmark_run_id == br_id)
                .order_by(task_runs.c.position)
            )
        )
    else:
        _sums.add(sums, after["data"], after["position"])
        conn.execute(update(run_sums).where(run_sums.c.benchmark_run_id == br_id).values(sums=sums))
        return _sums.run_from(old, sums, interrupted=False)
    if found is None:
        conn.execute(run_sums.insert().values(benchmark_run_id=br_id, sums=sums))
    else:
        conn.execute(update(run_sums).where(run_sums.c.benchmark_run_id == br_id).values(sums=sums))
    return _sums.run_from(old, sums, interrupted=False)


def _write_run(
    conn: Connection, br_id: str, session_id: str, created_at: Any, run: BenchmarkRun
) -> None:
    """The benchmark run's row set to ``run``'s aggregates (its session's too when it
    ended)."""
    values: dict[str, Any] = benchmark_run_row(
        br_id, session_id, 0, run, as_utc(created_at) or datetime.now(UTC)
    )
    for column in ("id", "position", "session_id", "created_at"):
        values.pop(column)
    conn.execute(update(benchmark_runs).where(benchmark_runs.c.id == br_id).values(values))
    if run.status is not RunStatus.RUNNING:
        _end_session(conn, session_id, run)


def cancel_run(
    store: Store,
    viewer: ApiKey,
    br_id: str,
    cancelled: Callable[[TaskRun], TaskRun],
    answer: Callable[[StoredBenchmarkRun], Replay],
    *,
    idem: str | None,
    digest: str,
) -> Replay:
    """Cancel a running benchmark run: its open task runs become ``cancelled``, completed ones
    are kept (RunConflict when the run is over)."""

    def work(conn: Connection) -> Replay:
        scored = _visible(conn, viewer, br_id)
        if scored is None:
            raise NotVisible("benchmark run", br_id)
        run = _report(conn, run_id=br_id).benchmark_runs[0]
        if run.status is not RunStatus.RUNNING:
            phase = run_phase(run.status, [])
            raise RunConflict(f"{br_id}: this benchmark run is already {phase}")
        session_id = str(
            conn.execute(
                select(benchmark_runs.c.session_id).where(benchmark_runs.c.id == br_id)
            ).scalar_one()
        )
        for position, (tr_id, task) in enumerate(
            zip(_task_ids(conn, br_id), run.task_runs, strict=True)
        ):
            if task.status is TaskStatus.RUNNING:
                _replace_task(conn, session_id, br_id, tr_id, position, cancelled(task))
        run = _rewrite(conn, br_id, interrupted=True)
        return answer(_benchmark_run(conn, br_id, scored, run))

    return _once(store, "cancel a benchmark run", viewer, idem, digest, work)


def _light_task(data: Any) -> TaskRun:
    """A task run from its row alone, to aggregate or name it: no criterion runs (its
    ``counts`` say how many of each) and no snapshot of its task (the bulk of its row, and
    the slowest part of it to validate)."""
    return TaskRun.model_validate({**data, "criterion_runs": [], "snapshot": None})


def _light_run(conn: Connection, br_id: str, tasks: Sequence[TaskRun]) -> BenchmarkRun:
    """The benchmark run from its row, with ``tasks`` as its task runs (its aggregates as
    stored, not recomputed)."""
    data = conn.execute(
        select(benchmark_runs.c.data).where(benchmark_runs.c.id == br_id)
    ).scalar_one()
    return BenchmarkRun.model_validate({**data, "task_runs": list(tasks)})


def _counts(tasks: Sequence[TaskRun]) -> RunCounts:
    """:meth:`RunCounts.of` from task runs read without their criterion runs: the criterion
    counts summed from each task run's ``counts`` (one count per status, as a task run keeps
    them)."""
    by_status = {
        f"criteria_{s.value}": sum(getattr(t.counts, s.value) for t in tasks) for s in Status
    }
    return RunCounts.of(tasks).model_copy(
        update={
            **by_status,
            "criteria": sum(by_status.values()),
            "criteria_not_evaluated": sum(t.counts.not_evaluated for t in tasks),
        }
    )


def _rewrite(conn: Connection, br_id: str, *, interrupted: bool = False) -> BenchmarkRun:
    """The benchmark run's aggregates (and its session, when it ended) from its task runs.

    Read from the task runs' rows alone (their scores, axes and counts), never their criterion
    runs: a ``complete`` costs the task it scores plus one small row per task run of the run,
    not the run's criteria read back as a typed report."""
    row = conn.execute(
        select(benchmark_runs.c.session_id, benchmark_runs.c.created_at).where(
            benchmark_runs.c.id == br_id
        )
    ).one()
    # the whole data parsed in Python: a JSON path on SQLite prints a float with 15 digits
    tasks = [
        _light_task(data)
        for data in conn.execute(
            select(task_runs.c.data)
            .where(task_runs.c.benchmark_run_id == br_id)
            .order_by(task_runs.c.position)
        ).scalars()
    ]
    old = _light_run(conn, br_id, tasks)
    running = not interrupted and any(t.status is TaskStatus.RUNNING for t in tasks)
    run = old.rescored(running=running, interrupted=interrupted)
    run = run.model_copy(update={"counts": _counts(tasks)})
    values: dict[str, Any] = benchmark_run_row(
        br_id, str(row.session_id), 0, run, as_utc(row.created_at) or datetime.now(UTC)
    )
    for column in ("id", "position", "session_id", "created_at"):
        values.pop(column)
    conn.execute(update(benchmark_runs).where(benchmark_runs.c.id == br_id).values(values))
    if not running:
        _end_session(conn, str(row.session_id), run)
    return run


def _end_session(conn: Connection, session_id: str, run: BenchmarkRun) -> None:
    """The session of a service run that just ended (its one benchmark run ``run``)."""
    now = datetime.now(UTC)
    srow = conn.execute(
        select(sessions.c.started_at, sessions.c.data).where(sessions.c.id == session_id)
    ).one()
    started = as_utc(srow.started_at) or now
    report = report_from_rows(srow.data, [])
    session = report.session.model_copy(
        update={
            "status": run.status,
            "phase": "completed",
            "completed_at": now.isoformat(),
            "duration": (now - started).total_seconds(),
            "counts": run.counts,
        }
    )
    _data, extra = report_split(report)
    values = session_row(session_id, session, SessionMeta(started_at=session.started_at), extra)
    conn.execute(
        update(sessions)
        .where(sessions.c.id == session_id)
        .values(
            status=values["status"],
            completed_at=values["completed_at"],
            data=values["data"],
            report_digest=None,
        )
    )


__all__ = [
    "PHASES",
    "NotVisible",
    "Pending",
    "RunConflict",
    "RunListRow",
    "StoredBenchmarkRun",
    "StoredCriterionRun",
    "StoredTaskRun",
    "TaskRunRef",
    "cancel_run",
    "complete_task",
    "create_run",
    "criterion_position",
    "list_benchmark_runs",
    "list_criterion_runs",
    "pending_task",
    "read_benchmark_run",
    "read_criterion_run",
    "read_report",
    "read_task_run",
    "run_phase",
    "start_task",
    "store_verified",
    "task_phase",
]
