"""A pytest session's writes to a SQLite store through the standard library's ``sqlite3``, not
SQLAlchemy (issue 33: importing SQLAlchemy cost a store-on session ~0.5 s of CPU, more than the
store's whole 5 % budget).

:func:`open_lite` opens an existing SQLite store at the newest schema revision with the
connection settings the SQLAlchemy engine applies (:func:`connected`: a busy timeout, foreign
keys, WAL, ``synchronous = NORMAL``; ``_engine.py`` applies the same function). Anything else (a
new file, an older or newer revision, a URL only SQLAlchemy's parser reads, any error while
opening) returns None and the session opens the store through SQLAlchemy, which creates,
migrates or refuses it and says why exactly as before.

:class:`LiteStore` runs the session writer's transactions (``BEGIN IMMEDIATE``, retried while
another process holds the lock, as ``Store.write``) over :class:`LiteDb`, the few statements
the writer needs (``_db.Db``). Values are bound as SQLAlchemy binds them on SQLite
(:data:`KINDS`): a time as ``YYYY-MM-DD HH:MM:SS.ffffff`` (its timezone dropped: UTC), a
boolean as 0 or 1, a JSON column's value as :func:`._codec.json_text`'s text (None as
``null``), so the rows are byte-equal to SQLAlchemy's (tests/store/test_store_lite.py and
test_store_v2.py prove the kinds are the tables' and the rows equal).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from ._codec import json_text
from ._errors import (
    LOCK_WAIT,
    StoreError,
    check_sqlite_file,
    clean_message,
    is_locked,
    plain_sqlite_path,
)

T = TypeVar("T")
MIGRATIONS = Path(__file__).with_name("_migrations")

#: the columns of the session's tables that SQLAlchemy binds with a conversion on SQLite (the
#: others are bound as they are): ``json``, ``time`` (DateTime) or ``bool``
KINDS: dict[str, dict[str, str]] = {
    "sessions": {
        "started_at": "time",
        "completed_at": "time",
        "git_dirty": "bool",
        "scored": "bool",
        "data": "json",
    },
    "benchmark_runs": {"scored": "bool", "created_at": "time", "data": "json"},
    "task_runs": {"data": "json"},
    "criterion_runs": {"passed": "bool", "evidence": "json", "data": "json"},
    "judge_calls": {"cached": "bool"},
}

#: the Python-side column defaults of those tables (SQLAlchemy fills a column left out)
DEFAULTS: dict[str, dict[str, Any]] = {"sessions": {"scored": False}}


def revisions() -> list[str]:
    """The schema revisions this version knows, oldest first (``migrations/versions``)."""
    names = os.listdir(MIGRATIONS / "versions")
    return sorted(n.split("_", 1)[0] for n in names if n.endswith(".py") and n[:1].isdigit())


def connected(dbapi_conn: Any) -> None:
    """A new SQLite connection's settings (both paths): transactions begun by the store, not
    the driver; a 5 s busy timeout; foreign keys; WAL (persistent: set once per new store)."""
    dbapi_conn.isolation_level = None
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA busy_timeout = 5000")
    cursor.execute("PRAGMA foreign_keys = ON")
    cursor.execute("PRAGMA journal_mode")
    if str(cursor.fetchone()[0]).lower() != "wal":
        cursor.execute("PRAGMA journal_mode = WAL")
    cursor.execute("PRAGMA synchronous = NORMAL")
    cursor.close()


def _time(value: Any) -> Any:
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise TypeError(f"SQLite DateTime type only accepts Python datetime objects: {value!r}")
    return (
        f"{value.year:04d}-{value.month:02d}-{value.day:02d} "
        f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}.{value.microsecond:06d}"
    )


def _bool(value: Any) -> Any:
    return None if value is None else int(bool(value))


_BIND: dict[str, Callable[[Any], Any]] = {"json": json_text, "time": _time, "bool": _bool}


class LiteDb:
    """The session writer's statements (``_db.Db``) on one ``sqlite3`` connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def _values(self, table: str, columns: Sequence[str], row: Mapping[str, Any]) -> list[Any]:
        kinds = KINDS[table]
        return [
            _BIND[kinds[c]](row[c]) if c in kinds else row[c]
            for c in columns  # a missing key is a KeyError, as SQLAlchemy's
        ]

    def insert(self, table: str, rows: Sequence[Mapping[str, Any]]) -> None:
        if not rows:
            return
        defaults = DEFAULTS.get(table, {})
        columns = [*rows[0], *(c for c in defaults if c not in rows[0])]
        sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
        values = [self._values(table, columns, {**defaults, **row}) for row in rows]
        self.conn.executemany(sql, values)

    def update(self, table: str, row_id: str, values: Mapping[str, Any]) -> None:
        columns = list(values)
        sets = ", ".join(f"{c} = ?" for c in columns)
        bound = [*self._values(table, columns, values), row_id]
        self.conn.execute(f"UPDATE {table} SET {sets} WHERE id = ?", bound)

    def delete(self, table: str, ids: Sequence[str]) -> int:
        count = 0
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            marks = ", ".join("?" * len(chunk))
            count += self.conn.execute(f"DELETE FROM {table} WHERE id IN ({marks})", chunk).rowcount
        return count

    def session_holding(self, digest: str) -> str | None:
        found = self.conn.execute(
            "SELECT id FROM sessions WHERE report_digest = ?", [digest]
        ).fetchone()
        return None if found is None else str(found[0])

    def task_ids(self, run_id: str) -> dict[str, str]:
        found = self.conn.execute(
            "SELECT report_id, id FROM task_runs WHERE benchmark_run_id = ?", [run_id]
        )
        return {str(report_id): str(store_id) for report_id, store_id in found}


class LiteStore:
    """An open SQLite store for a pytest session's writer (see the module)."""

    sqlite = True

    def __init__(self, conn: sqlite3.Connection, url: str) -> None:
        self.conn = conn
        self.url = url
        self.url_masked = url  # a plain sqlite:/// URL holds no password
        self._lock = threading.Lock()

    def close(self) -> None:
        self.conn.close()

    def error(self, exc: BaseException, doing: str) -> StoreError:
        """A one-line StoreError for a database error while ``doing`` something."""
        return StoreError(
            f"results store {self.url_masked}: cannot {doing}: {clean_message(exc, self.url, None)}"
        )

    def write_db(self, doing: str, work: Callable[[LiteDb], T]) -> T:
        """Run ``work`` in one ``BEGIN IMMEDIATE`` transaction, retried while another process
        holds the lock (up to :data:`LOCK_WAIT` seconds), as ``Store.write``."""
        deadline = time.monotonic() + LOCK_WAIT
        delay = 0.01
        while True:
            try:
                with self._lock:
                    return self._transaction(work)
            except sqlite3.Error as exc:
                if is_locked(exc) and time.monotonic() < deadline:
                    time.sleep(delay)
                    delay = min(delay * 2, 0.5)
                    continue
                raise self.error(exc, doing) from None

    def _transaction(self, work: Callable[[LiteDb], T]) -> T:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            done = work(LiteDb(self.conn))
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")
        return done

    def delete_sessions(self, ids: Sequence[str]) -> int:
        """Delete whole sessions (their runs go with them: foreign keys cascade)."""

        return self.write_db("delete sessions", lambda db: db.delete("sessions", list(ids)))


def open_lite(url: str) -> LiteStore | None:
    """The store at ``url`` for a session's writer through ``sqlite3``, or None when SQLAlchemy
    must open it (see the module). StoreError when the file is a folder or not a SQLite
    database (the same line ``open_store`` says)."""
    path = plain_sqlite_path(url)
    if path is None or not path.is_file():
        return None
    check_sqlite_file(path, url, create=False)
    try:
        conn = sqlite3.connect(path, check_same_thread=False)
    except sqlite3.Error:
        return None
    try:
        connected(conn)
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        rev = None
        if "alembic_version" in tables:
            found = conn.execute("SELECT version_num FROM alembic_version").fetchone()
            rev = None if found is None else found[0]
    except sqlite3.Error:
        conn.close()
        return None
    if rev != revisions()[-1] or "sessions" not in tables:
        conn.close()
        return None
    return LiteStore(conn, url)


def needs_sqlalchemy(url: str) -> bool:
    """Whether a pytest session on the store at ``url`` may import SQLAlchemy: not when it is a
    plain ``sqlite:///`` URL of an existing file, which :func:`open_lite` opens (unless it is
    at another schema revision: then SQLAlchemy is imported when the session opens it)."""
    path = plain_sqlite_path(url)
    return path is None or not path.is_file()
