"""A pytest session written into the store as it runs (the controller only), on either path: a
SQLAlchemy :class:`~._core.Store` or, for the session's SQLite store, a ``sqlite3``
:class:`~._lite.LiteStore` (issue 33: no SQLAlchemy imported). Its statements go through
:class:`~._db.Db` (``_repo_batches.py``); this module imports no SQLAlchemy at its top."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from .._results import SCHEMA_ID, BenchmarkRun, Report, TaskRun
from ._errors import StoreError
from ._ids import new_id
from ._rows import SessionMeta, TaskColumns, as_utc, benchmark_run_row, parse_time, session_row

if TYPE_CHECKING:
    from sqlalchemy import Connection

    from ._db import Db
    from ._repo_batches import LightEnd

T = TypeVar("T")


class WritableStore(Protocol):
    """What a session's writer needs of its store (``_core.Store``, ``_lite.LiteStore``)."""

    url_masked: str

    def write_db(self, doing: str, work: Callable[[Db], T]) -> T: ...

    def delete_sessions(self, ids: Sequence[str]) -> int: ...

    def close(self) -> None: ...


class SqlaStore(WritableStore, Protocol):
    """A SQLAlchemy store (``_core.Store``): its transactions over a connection."""

    def read(self, doing: str, work: Callable[[Connection], T]) -> T: ...

    def write(self, doing: str, work: Callable[[Connection], T]) -> T: ...


class SessionWriter:
    """Writes one pytest session into the store as it runs (the controller only).

    :meth:`task_runs_completed` commits each batch of completed task runs, so a killed
    session keeps what the journal keeps; :meth:`finish` writes the session's end
    (aggregates, the task runs not stored yet) in one transaction.
    """

    def __init__(self, store: WritableStore, meta: SessionMeta) -> None:
        from .._results import RunStatus, Session

        self.store = store
        self.meta = meta
        self.session_id = new_id("ses")
        self.created_at = parse_time(meta.started_at) or datetime.now(UTC)
        #: report id of a benchmark run -> (store id, its task runs' report ids -> store ids)
        self.runs: dict[str, tuple[str, dict[str, str]]] = {}
        self._lock = threading.Lock()
        self._last_run: BenchmarkRun | None = None
        #: task run report id -> digests of the rows stored of it (``_repo_batches.py``)
        self.written: dict[str, tuple[str, str | None]] = {}
        #: whether a batch digests its criterion rows too (a ``pytest_verial_report`` hook
        #: may change them by the end)
        self.compare_rows = True
        session = Session(
            status=RunStatus.RUNNING, phase="started", started_at=meta.started_at, duration=0.0
        )
        extra = {
            "schema": SCHEMA_ID,
            "generator": {"name": "pytest-verial", "version": meta.plugin_version or "unknown"},
            "extensions": {},
        }
        row = session_row(self.session_id, session, meta, extra)
        store.write_db("start the session", lambda db: db.insert("sessions", [row]))

    @classmethod
    def attach(cls, store: SqlaStore, session_id: str) -> SessionWriter:
        """A writer for a session already in the store (``verial report --recover``)."""
        from ._repo_sessions import stored_session
        from ._repo_task_runs import stored_runs

        def work(conn: Connection) -> SessionWriter:
            row = stored_session(conn, session_id)
            if row is None:
                raise StoreError(f"{session_id}: no session in the store {store.url_masked}")
            writer = cls.__new__(cls)
            writer.store = store
            writer.session_id = session_id
            writer.created_at = as_utc(row.started_at) or datetime.now(UTC)
            writer.meta = SessionMeta(
                started_at=writer.created_at.isoformat(),
                origin=(row.data or {}).get("origin"),
            )
            writer._lock = threading.Lock()
            writer._last_run = None
            writer.written = {}
            writer.compare_rows = True
            writer.runs = stored_runs(conn, session_id)
            return writer

        return store.read("read the session", work)

    def _run_id(self, db: Db, run: BenchmarkRun) -> str:
        """The benchmark run's row: inserted the first time, updated when its aggregates
        changed. Nothing in memory changes here: a transaction retried starts afresh."""
        known = self.runs.get(run.id)
        row = benchmark_run_row(
            known[0] if known else new_id("br"),
            self.session_id,
            len(self.runs) if known is None else 0,
            run,
            self.created_at,
        )
        if known is None:
            db.insert("benchmark_runs", [row])
            return str(row["id"])
        if run is not self._last_run:  # the same aggregates as last time: nothing to update
            row.pop("position")
            row.pop("id")
            db.update("benchmark_runs", known[0], row)
        return known[0]

    def task_run_completed(self, benchmark_run: BenchmarkRun, task_run: TaskRun) -> None:
        """Store one completed task run (and its benchmark run so far), committed at once
        (a SQLAlchemy store: the service's and the tests' single writes)."""
        from ._repo_task_runs import _replace_task
        from ._sqla_db import SqlaDb

        store: SqlaStore = self.store  # type: ignore[assignment]
        with self._lock:

            def work(conn: Connection) -> tuple[str, str]:
                run_id = self._run_id(SqlaDb(conn), benchmark_run)
                known = self.runs.get(benchmark_run.id, (run_id, {}))[1]
                task_id = _replace_task(
                    conn, self.session_id, run_id, known.get(task_run.id), len(known), task_run
                )
                return run_id, task_id

            try:
                run_id, task_id = store.write("store a task run", work)
            except BaseException:
                self._last_run = None
                raise
            self.runs.setdefault(benchmark_run.id, (run_id, {}))[1][task_run.id] = task_id
            self._last_run = benchmark_run

    def task_runs_completed(
        self,
        runs: Mapping[str, BenchmarkRun],
        tasks: Sequence[tuple[str, TaskColumns, int, Mapping[str, Any]]],
    ) -> None:
        """A batch of completed task runs, inserted in one transaction (``_repo_batches.py``):
        each task run's columns (a typed ``TaskRun``, or the session's plain one) and its
        JSON with secrets masked."""
        from ._repo_batches import write_batch

        write_batch(self, runs, tasks)

    def finish(
        self,
        report: Report,
        hooked: bool = True,
        plain: Mapping[str, Any] | None = None,
        light: LightEnd | None = None,
    ) -> None:
        """The session's end: aggregates, the task runs not stored yet, the session's end,
        exit status and digest, in one transaction; no row written twice. What it reads of
        ``report`` (and of ``plain``, the report's ``to_json()`` when the caller made it, or
        of ``light``, what the recorder made streaming the report) is said exactly in
        ``_repo_batches.finish``'s docstring; ``hooked``: a ``pytest_verial_report`` hook
        may have changed the report."""
        from ._repo_batches import finish

        finish(self, report, hooked, plain, light)

    def interrupted(self) -> None:
        """Mark the session and its running benchmark runs interrupted (cancelled)."""
        mark_interrupted(self.store, self.session_id)  # type: ignore[arg-type]


def mark_interrupted(store: SqlaStore, session_id: str) -> None:
    """A session that died: it and its running benchmark runs become ``cancelled``."""
    from ._repo_sessions import mark_cancelled

    def work(conn: Connection) -> None:
        if not mark_cancelled(conn, session_id):
            raise StoreError(f"{session_id}: no session in the store {store.url_masked}")

    store.write("mark the session interrupted", work)
