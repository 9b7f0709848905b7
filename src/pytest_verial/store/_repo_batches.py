"""A session's rows written once (issue 33): task runs in batches while it runs, then the end.

The recorder hands the store its completed task runs at each batch boundary (``_recorder.py``:
every ``BATCH_TASK_RUNS`` completed task runs or ``BATCH_SECONDS``, whichever first, right
after the journal's batch is fsynced): :func:`write_batch` inserts them, with their criterion
runs and judge calls, in one transaction, and each benchmark run's row (inserted the first
time, its aggregates updated when the batch brings new ones). :func:`finish` then writes the
session's end: the session row, every benchmark run's final aggregates, and only the task runs
the session did not store yet (cancelled ones, a task run of the last batch). A task run
already stored is left as it is when its rows are the final report's; where the final report
differs (the judge's ``feedback`` on a failed task run, a ``pytest_verial_report`` hook's
edit), its task row is updated, and its criterion rows replaced only when they differ too. No
row is deleted and inserted again, as the session's end did before.

A kill loses at most the batch in flight, which the journal does not hold either: ``verial
report --recover`` (or the next session with the same ``--verial-report``) finishes the
session from the journal with :func:`finish`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from .._heap import no_gc
from .._secrets import redact_json
from ._ids import new_id
from ._rows import (
    Rows,
    benchmark_run_row,
    digest_of,
    report_split,
    session_row,
    task_row,
    task_run_rows,
)

if TYPE_CHECKING:
    from .._results import BenchmarkRun, Report, TaskRun
    from ._db import Db
    from ._rows import TaskColumns

#: a store._core.SessionWriter, which delegates to this module (so it is not imported here:
#: the store's modules import downwards only)
SessionWriter = Any

#: the columns of the session's row its end writes
_FINISHED = ("completed_at", "status", "exit_status", "scored", "data", "report_digest")

#: the keys of a row that are ids the store made (not the report's content)
_IDS = ("id", "task_run_id", "criterion_run_id", "benchmark_run_id")


#: the task run at the session's end: its columns and its JSON, secrets masked, criterion
#: runs and all (made only when the end needs them)
Whole = Callable[[], "tuple[TaskColumns, Mapping[str, Any]]"]


class LightEnd(Protocol):
    """The session's end without the whole report's JSON (issue 33): what ``finish`` reads
    in its place when the recorder streamed the report (``_store_session._LightEnd``)."""

    #: the whole report's ``report_digest`` (``_rows.digest_of`` of its canonical JSON)
    digest: str

    def head(self, run: int, index: int, task: TaskRun) -> dict[str, Any]:
        """Task run number ``index`` of benchmark run ``run``: its JSON without criterion runs
        (its ``snapshot`` included), secrets masked."""
        ...

    def whole(self, run: int, index: int, task: TaskRun) -> tuple[TaskColumns, Mapping[str, Any]]:
        """Task run number ``index`` of benchmark run ``run``: its columns, every criterion
        run's included, and its whole JSON, secrets masked."""
        ...


def _given(task: TaskColumns, data: Mapping[str, Any]) -> tuple[TaskColumns, Mapping[str, Any]]:
    return task, data


def _strip(row: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in _IDS}


def rows_digests(rows: Rows, below: bool = True) -> tuple[str, str | None]:
    """What a task run's rows say, apart from the ids the store made: its task row's digest
    and (``below``) its criterion runs' and judge calls' digest."""
    task = digest_of(_strip(rows.task))
    if not below:
        return task, None
    strip = _strip
    return task, digest_of(
        {"c": [strip(r) for r in rows.criteria], "j": [strip(r) for r in rows.judge]}
    )


def _insert(db: Db, rows: Sequence[Rows]) -> None:
    for table, batch in (
        ("task_runs", [r.task for r in rows]),
        ("criterion_runs", [c for r in rows for c in r.criteria]),
        ("judge_calls", [j for r in rows for j in r.judge]),
    ):
        if batch:
            db.insert(table, batch)


def write_batch(
    writer: SessionWriter,
    runs: Mapping[str, BenchmarkRun],
    tasks: Sequence[tuple[str, TaskColumns, int, Mapping[str, Any]]],
) -> None:
    """One transaction: each benchmark run of ``runs`` (its row inserted the first time, its
    aggregates updated), then the task runs of ``tasks`` (benchmark run id, task run, its
    position in the final report, its JSON as :func:`._rows.task_run_rows` stores it) with
    their criterion runs and judge calls, each inserted once. Nothing in memory changes
    before the commit (a retried transaction starts afresh)."""

    def work(db: Db) -> tuple[dict[str, str], dict[str, tuple[str, str | None]]]:
        ids = {run_id: store_id for run_id, (store_id, _) in writer.runs.items()}
        writer._last_run = None  # each run given is written: its aggregates are new
        ids.update({run_id: writer._run_id(db, run) for run_id, run in runs.items()})
        rows, digests = [], {}
        for run_id, task, position, data in tasks:
            if task.id in writer.runs.get(run_id, ("", {}))[1]:  # stored already: never twice
                continue
            one = task_run_rows(new_id("tr"), ids[run_id], writer.session_id, position, task, data)
            rows.append(one)
            # the criterion rows' digest only where a pytest_verial_report hook may change them
            digests[task.id] = rows_digests(one, below=writer.compare_rows)
        _insert(db, rows)
        return ids, digests

    with writer._lock:
        ids, digests = writer.store.write_db("store task runs", work)
        for run_id, store_id in ids.items():
            writer.runs.setdefault(run_id, (store_id, {}))
        for run_id, task, *_ in tasks:
            # the store id is read back only if the end has to update the row
            writer.runs[run_id][1].setdefault(task.id, "")
        writer.written.update(digests)


def finish(
    writer: SessionWriter,
    report: Report,
    hooked: bool = True,
    plain: Mapping[str, Any] | None = None,
    light: LightEnd | None = None,
) -> None:
    """The session's end (see the module's docstring), in one transaction (``hooked``: a
    ``pytest_verial_report`` hook may have changed the report's criterion runs).

    What it reads, exactly (the interface with the recorder, issue 33):

    - the report's JSON, secrets masked here: ``plain`` when given (``report.to_json()``, not
      masked, every task and criterion run in it), else ``report.to_json()``. From it come the
      session's ``report_digest`` (SHA-256 of the whole canonical report: ``verial import`` of
      the session's own JSON report finds it by that), the ``data`` column of the session,
      of each benchmark run and of each task run written or compared, and the criterion rows'
      ``data``/``evidence`` of the task runs it writes;
    - of the typed report: ``report.session`` (status, times, exit status, scored: the
      session row's columns), each benchmark run's identity and aggregates (its row's
      columns: ``id``, ``benchmark``, ``runs``, ``status``, ``scored``, ``score``,
      ``verdict``, ``pass_threshold``, ``strict_success``, ``counts``) and its task runs in
      order, the same as ``plain``'s;
    - of each task run already stored by a batch of this writer, with ``hooked`` false: its
      ``id`` and its row's columns (``task_id``, ``task_key``, ``entity``, ``run``,
      ``status``, ``verdict``, ``score``), compared with what its batch stored (the judge's
      ``feedback`` is added at the end). Its criterion runs are **not** read: not rebuilt,
      not compared, not rewritten;
    - of every other task run (not stored yet: cancelled, or in a batch that never
      committed), and of every task run when ``hooked``: its criterion runs too (their
      columns: ``criterion_id``, ``nodeid``, ``assert``, ``axis``, ``weight``, ``status``,
      ``passed``, ``score``, ``judge``).

    ``light`` (the recorder streamed the report: its criterion runs are not in ``report``):
    the digest is ``light.digest``, made as the JSON report was written; the JSON columns
    come from ``report``'s figures (each benchmark run and task run dumped one at a time,
    without criterion runs), and a task run whose criterion runs the end needs (the cases
    above) is read whole from ``light.whole``, one at a time. ``report`` then holds each task
    run's figures and only some of its criterion runs, which are not read.

    So ``report`` may leave out the criterion runs of the task runs already stored **only**
    with ``plain`` or ``light``, and with no ``pytest_verial_report`` hook: otherwise the
    digest and JSON columns would be the shorter report's (tested with ``plain`` in
    tests/store/test_store_session_sums.py, with ``light`` in test_store_light_end.py)."""
    extra, digest, run_data = _report_data(report, plain, light)

    def tasks(
        position: int, run: BenchmarkRun
    ) -> Iterator[tuple[TaskRun, Mapping[str, Any], Whole]]:
        return _tasks(position, run, run_data, light)

    def work(db: Db) -> None:
        _finish_session(db, writer, report, extra, digest)
        kept: set[str] = set()
        for position, run in enumerate(report.benchmark_runs):
            known = writer.runs.get(run.id)
            run_id = known[0] if known else new_id("br")
            kept.add(run_id)
            brow = benchmark_run_row(
                run_id,
                writer.session_id,
                position,
                run,
                writer.created_at,
                None if run_data is None else run_data[position],
            )
            if known is None:
                db.insert("benchmark_runs", [brow])
                _finish_tasks(db, writer, run_id, {}, tasks(position, run), hooked)
                continue
            brow.pop("id")
            db.update("benchmark_runs", run_id, brow)
            stored = db.task_ids(run_id)
            _finish_tasks(db, writer, run_id, stored, tasks(position, run), hooked)
        gone = [store_id for store_id, _ in writer.runs.values() if store_id not in kept]
        if gone:  # a benchmark run the final report no longer has (a hook removed it)
            db.delete("benchmark_runs", gone)

    with writer._lock, no_gc():
        writer.store.write_db("store the session's report", work)


def _report_data(
    report: Report, plain: Mapping[str, Any] | None, light: LightEnd | None
) -> tuple[dict[str, Any], str, list[dict[str, Any]] | None]:
    """What :func:`finish` reads of the report's JSON: the top-level keys the session row keeps,
    the ``report_digest``, and each benchmark run's JSON (None when ``light``: dumped one task
    run at a time by :func:`_tasks`)."""
    if light is not None:
        extra = redact_json(
            report.model_dump(mode="json", by_alias=True, exclude={"session", "benchmark_runs"})
        )
        return extra, light.digest, None
    data, extra = report_split(report, None if plain is None else dict(plain))
    return extra, digest_of(data), data["benchmark_runs"]


def _tasks(
    position: int,
    run: BenchmarkRun,
    run_data: list[dict[str, Any]] | None,
    light: LightEnd | None,
) -> Iterator[tuple[TaskRun, Mapping[str, Any], Whole]]:
    """Each task run of ``run`` (number ``position``): its JSON without criterion runs
    (with them, whole), and how to read it whole."""
    if run_data is not None:
        for task, task_data in zip(run.task_runs, run_data[position]["task_runs"], strict=True):
            yield task, task_data, partial(_given, task, task_data)
        return
    assert light is not None
    for index, task in enumerate(run.task_runs):
        yield task, light.head(position, index, task), partial(light.whole, position, index, task)


def _finish_session(
    db: Db, writer: SessionWriter, report: Report, extra: dict[str, Any], digest: str
) -> None:
    """The session's row at the end: its columns, and the report's digest unless another
    session already holds it."""
    row = session_row(writer.session_id, report.session, writer.meta, extra)
    taken = db.session_holding(digest)
    row["report_digest"] = digest if taken in (None, writer.session_id) else None
    row = {k: row[k] for k in _FINISHED}
    db.update("sessions", writer.session_id, row)


#: task runs whose rows the end inserts together (a cancelled session's may be most of them)
_INSERT_EVERY = 200


def _finish_tasks(
    db: Db,
    writer: SessionWriter,
    run_id: str,
    stored: dict[str, str],
    tasks: Iterable[tuple[TaskRun, Mapping[str, Any], Whole]],
    hooked: bool,
) -> None:
    """A benchmark run's task runs at the end: the new ones inserted, the stored ones left
    alone unless the final report says otherwise.

    Without a ``pytest_verial_report`` hook, a stored task run's criterion runs are the ones
    its batch stored (the final report is built from the same criterion runs): only its task
    row is compared (the judge's ``feedback`` is added at the end), never its criterion rows
    rebuilt. With a hook, every row is compared, as the hook may have changed any."""
    new: list[Rows] = []
    for index, (task, task_data, whole) in enumerate(tasks):
        store_id = stored.pop(task.id, None)
        written = writer.written.get(task.id)
        if store_id is not None and written is not None and written[1] is None and not hooked:
            row = task_row(store_id, run_id, index, task, task_data)
            if digest_of(_strip(row)) != written[0]:
                values = {k: v for k, v in row.items() if k != "id"}
                db.update("task_runs", store_id, values)
            continue
        columns, full = whole()
        rows = task_run_rows(
            store_id or new_id("tr"), run_id, writer.session_id, index, columns, full
        )
        if store_id is None:
            new.append(rows)
        else:
            now = rows_digests(rows)
            if written == now:
                continue
            if written is not None and written[1] == now[1]:  # the task row alone differs
                values = {k: v for k, v in rows.task.items() if k != "id"}
                db.update("task_runs", store_id, values)
                continue
            # written by another writer (a recovery), or its criterion runs differ: replaced
            db.delete("task_runs", [store_id])
            new.append(rows)
        if len(new) >= _INSERT_EVERY:  # inserted as they come: never all held at once
            _insert(db, new)
            new = []
    if stored:  # task runs the final report no longer has (a hook removed them)
        db.delete("task_runs", list(stored.values()))
    _insert(db, new)
