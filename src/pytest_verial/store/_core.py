"""The results store: open (create, migrate, refuse), write sessions and imports, read runs
back as the typed results of :mod:`pytest_verial._results`.

:class:`Store` is the façade: each of its reads and writes runs one transaction
(:meth:`Store.read`, :meth:`Store.write`) around a function of a repository module
(``_repo_*.py``), which alone holds the store's SQL; the engines are made in ``_engine.py``.

SQLite (the default, ``<rootdir>/.verial/results.db``) runs in WAL mode with a busy timeout,
and every write transaction starts ``BEGIN IMMEDIATE`` and is retried while another process
holds the lock, so "database is locked" never reaches a user. PostgreSQL is reached through
psycopg 3. Every error is a :class:`StoreError` with a one-line message that never holds a
password.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, TypeVar

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from .._heap import no_gc
from .._results import Report
from ._engine import (
    LOCK_WAIT,
    StoreError,
    clean_message,
    is_locked,
    make_engine,
    mask_url,
)
from ._lite import MIGRATIONS as MIGRATIONS
from ._lite import revisions as revisions
from ._repo_reports import ImportResult, _report, _scores, insert_report
from ._repo_schema import create_schema, lock_schema, schema_version
from ._repo_sessions import (
    RefError,
    SessionRow,
    StoreRef,
    delete_runs,
    delete_sessions,
    list_sessions,
    prune_runs,
    resolve_ref,
    run_ids,
    session_of_run,
)
from ._repo_trend import (
    RunRow,
    TrendPoint,
    _benchmark_filter,
    agent_filter,
    list_runs,
    trend_points,
)
from ._rows import SessionMeta
from ._sqla_db import SqlaDb
from ._url import ENV as ENV
from ._url import default_store_url as default_store_url
from ._url import store_url_from as store_url_from
from ._writer import SessionWriter as SessionWriter
from ._writer import mark_interrupted as mark_interrupted

if TYPE_CHECKING:
    from ..reporting._scores import ReportScores

T = TypeVar("T")


class Store:
    """An open results store (see :func:`open_store`)."""

    def __init__(self, engine: Engine, url: str, password: str | None) -> None:
        self.engine = engine
        self.url = url
        self.url_masked = mask_url(url)
        self._password = password
        self.sqlite = engine.dialect.name == "sqlite"

    # -- plumbing -------------------------------------------------------------------------
    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def error(self, exc: BaseException, doing: str) -> StoreError:
        """A one-line StoreError for a database error while ``doing`` something."""
        return StoreError(
            f"results store {self.url_masked}: cannot {doing}: "
            f"{clean_message(exc, self.url, self._password)}"
        )

    def write(self, doing: str, work: Callable[[Connection], T]) -> T:
        """Run ``work`` in one write transaction, retried while another process holds the
        SQLite lock (up to :data:`LOCK_WAIT` seconds)."""
        deadline = time.monotonic() + LOCK_WAIT
        delay = 0.01
        while True:
            try:
                with self.engine.connect() as conn:
                    conn.info["verial_write"] = True
                    try:
                        with conn.begin():
                            return work(conn)
                    finally:
                        conn.info.pop("verial_write", None)
            except DBAPIError as exc:
                if is_locked(exc) and time.monotonic() < deadline:
                    time.sleep(delay)
                    delay = min(delay * 2, 0.5)
                    continue
                raise self.error(exc, doing) from None
            except SQLAlchemyError as exc:
                raise self.error(exc, doing) from None

    def write_db(self, doing: str, work: Callable[[SqlaDb], T]) -> T:
        """:meth:`write` with the session writer's statements (``_db.Db``)."""
        return self.write(doing, lambda conn: work(SqlaDb(conn)))

    def read(self, doing: str, work: Callable[[Connection], T]) -> T:
        """Run ``work`` in one read transaction (retried on a lock like :meth:`write`)."""
        deadline = time.monotonic() + LOCK_WAIT
        while True:
            try:
                with self.engine.connect() as conn, conn.begin():
                    return work(conn)
            except DBAPIError as exc:
                if is_locked(exc) and time.monotonic() < deadline:
                    time.sleep(0.05)
                    continue
                raise self.error(exc, doing) from None
            except SQLAlchemyError as exc:
                raise self.error(exc, doing) from None

    # -- writing --------------------------------------------------------------------------
    def begin_session(self, meta: SessionMeta) -> SessionWriter:
        """Start storing a pytest session (the controller only): its row is written now."""
        return SessionWriter(self, meta)

    def import_report(self, report: Report, *, origin: str | None = None) -> ImportResult:
        """Store a whole report; the same report (same digest) twice is stored once."""
        with no_gc():
            return self._import(report, origin)

    def _import(self, report: Report, origin: str | None) -> ImportResult:
        return self.write(
            "import the report", lambda conn: insert_report(conn, report, origin=origin)
        )

    # -- reading --------------------------------------------------------------------------
    def list_runs(
        self,
        *,
        benchmark: str | None = None,
        agent: str | None = None,
        since: datetime | None = None,
        limit: int | None = None,
    ) -> list[RunRow]:
        """Benchmark runs, newest first."""
        when = None
        if since is not None:
            when = self._time(since if since.tzinfo else since.replace(tzinfo=UTC))
        return self.read(
            "list runs",
            lambda conn: list_runs(conn, benchmark=benchmark, agent=agent, since=when, limit=limit),
        )

    def _time(self, value: datetime) -> datetime:
        """A time as the columns hold it (SQLite: naive UTC)."""
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if self.sqlite else value

    def resolve_ref(self, ref: str) -> StoreRef:
        """The session or benchmark run a ref names: ``latest`` (the newest session),
        ``latest~N`` (the Nth session before it), ``ses_…`` or ``br_…`` (an id or a unique
        prefix): see :mod:`pytest_verial.store._repo_sessions`."""

        def work(conn: Connection) -> StoreRef:
            try:
                return resolve_ref(conn, ref)
            except RefError as exc:
                raise StoreError(str(exc)) from None

        return self.read("resolve a ref", work)

    def resolve(self, ref: str) -> str:
        """A benchmark run's id from a ref naming one (``br_…``: an id or a unique prefix);
        a ref naming a session (``latest``, ``ses_…``) is a StoreError."""
        found = self.resolve_ref(ref)
        if found.kind != "run":
            raise StoreError(
                f"{ref.strip()}: names a session ({found.id}); give a benchmark run (br_...)"
            )
        return found.id

    def run_ids(self, ref: StoreRef) -> list[str]:
        """The benchmark runs a resolved ref stands for (a session's, in order)."""
        return self.read("read a session", lambda conn: run_ids(conn, ref))

    def report_of(self, ref: StoreRef) -> Report:
        """The report a resolved ref names: a session's whole report, or one benchmark run
        with its session block."""
        if ref.kind == "session":
            return self.report_of_session(ref.id)
        return self.report_of_run(ref.id)

    def scores_of(self, ref: StoreRef) -> ReportScores:
        """The scores alone (what ``verial compare`` reads) of a session's benchmark runs or
        of one benchmark run: never their evidence or snapshots."""

        def work(conn: Connection) -> ReportScores:
            return _scores(conn, run_ids(conn, ref))

        with no_gc():
            return self.read("read a run", work)

    def list_sessions(
        self,
        *,
        benchmark: str | None = None,
        agent: str | None = None,
        since: datetime | None = None,
        limit: int | None = None,
    ) -> list[SessionRow]:
        """Sessions holding a benchmark run (of ``benchmark``, by ``agent``), newest first."""
        where = []
        if benchmark:
            where.append(_benchmark_filter(benchmark))
        if agent:
            where.append(agent_filter(agent))
        when = None
        if since is not None:
            when = self._time(since if since.tzinfo else since.replace(tzinfo=UTC))
        return self.read(
            "list sessions",
            lambda conn: list_sessions(conn, where=where, since=when, limit=limit),
        )

    def report_of_run(self, run_id: str) -> Report:
        """One benchmark run with its session block, as a report."""
        with no_gc():
            return self.read("read a run", lambda conn: _report(conn, run_id=run_id))

    def scores_of_run(self, run_id: str) -> ReportScores:
        """One benchmark run's scores alone (what ``verial compare`` reads): the score
        columns of its task and criterion runs, never their evidence or snapshots."""
        with no_gc():
            return self.read("read a run", lambda conn: _scores(conn, [run_id]))

    def report_of_session(self, session_id: str) -> Report:
        """The whole report of a session (``verial export``)."""
        with no_gc():
            return self.read("read a session", lambda conn: _report(conn, session_id=session_id))

    def recover_session(self, session_id: str, report: Report) -> None:
        """A session that died: its report recovered from the journal replaces what the
        store holds of it, and it is marked interrupted."""
        SessionWriter.attach(self, session_id).finish(report)
        mark_interrupted(self, session_id)

    def session_of_run(self, run_id: str) -> str:
        """The session a benchmark run belongs to."""

        def work(conn: Connection) -> str:
            found = session_of_run(conn, run_id)
            if found is None:
                raise StoreError(f"{run_id}: no benchmark run in the store {self.url_masked}")
            return str(found)

        return self.read("read a run", work)

    def trend(
        self,
        benchmark: str,
        *,
        task: str | None = None,
        last: int | None = None,
        per_task: bool = True,
    ) -> list[TrendPoint]:
        """Per benchmark run of ``benchmark`` (ref, slug or file), oldest first: its score,
        axes and per-task scores (only ``task`` when given; none when not ``per_task``: a plot
        of the run score of a benchmark of many tasks reads no task run)."""

        def work(conn: Connection) -> list[TrendPoint]:
            return trend_points(conn, benchmark, task=task, last=last, per_task=per_task)

        return self.read("read the trend", work)

    def delete_runs(self, ids: Sequence[str]) -> int:
        """Delete benchmark runs (and a session left with none); how many were deleted."""
        wanted = list(dict.fromkeys(ids))

        def work(conn: Connection) -> int:
            return delete_runs(conn, wanted)

        return self.write("delete runs", work)

    def delete_sessions(self, ids: Sequence[str]) -> int:
        """Delete whole sessions (and their runs)."""
        return self.write("delete sessions", lambda conn: delete_sessions(conn, ids))

    def prune(self, *, keep: int | None = None, older_than_days: float | None = None) -> int:
        """Delete old runs: beyond the ``keep`` newest of each benchmark and/or created more
        than ``older_than_days`` ago (both when both are given); how many were deleted."""
        if keep is None and older_than_days is None:
            return 0

        def work(conn: Connection) -> int:
            return prune_runs(conn, keep=keep, older_than_days=older_than_days)

        return self.write("prune runs", work)


def _migrate(store: Store) -> None:
    """Create a new store at the newest schema, migrate an older one (alembic), refuse a newer
    one or a database that is not a store, untouched."""
    known = revisions()
    head = known[-1]
    rev, has_tables = store.read("read the store's version", schema_version)
    if rev == head:
        return
    if rev is not None and rev not in known:
        raise StoreError(
            f"results store {store.url_masked} was written by a newer pytest-verial "
            f"(schema {rev}; this one knows up to {head}): upgrade pytest-verial to use it"
        )
    if rev is None and has_tables:
        raise StoreError(
            f"results store {store.url_masked} holds tables but no schema version: "
            "not a pytest-verial store (left untouched)"
        )

    def upgrade(conn: Connection) -> None:
        lock_schema(conn)
        again, tables = schema_version(conn)
        if again == head:
            return
        if again is None and not tables:  # a new store: the tables as they are now, stamped
            create_schema(conn, head)
            return
        from alembic import command
        from alembic.config import Config

        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS))
        config.attributes["connection"] = conn
        command.upgrade(config, "head")

    store.write("migrate the store", upgrade)


def open_store(url: str, *, create: bool = True) -> Store:
    """Open (creating and migrating it when needed) the results store at ``url``."""
    engine, engine_url, password = make_engine(url, create=create)
    store = Store(engine, engine_url, password)
    store.url_masked = mask_url(url)
    try:
        _migrate(store)
    except BaseException:
        engine.dispose()
        raise
    return store


@contextmanager
def opened(url: str, *, create: bool = True) -> Iterator[Store]:
    """``with opened(url) as store:``: open, then close."""
    store = open_store(url, create=create)
    try:
        yield store
    finally:
        store.close()
