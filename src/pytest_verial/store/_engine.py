"""The store's engines: a database URL checked and masked, an engine made for SQLite (WAL, a
busy timeout, ``BEGIN IMMEDIATE`` for writes) or PostgreSQL (psycopg 3, NUL-free text), and
the one-line :class:`StoreError` every failure becomes, which never holds a password."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, SQLAlchemyError

from ._codec import json_text, json_value
from ._errors import LOCK_WAIT as LOCK_WAIT
from ._errors import SQLITE_MAGIC as SQLITE_MAGIC
from ._errors import StoreError as StoreError
from ._errors import check_sqlite_file as _check_sqlite_file
from ._errors import clean_message as clean_message
from ._errors import is_locked as is_locked
from ._errors import mask_url as mask_url
from ._errors import sqlite_path as sqlite_path
from ._lite import connected


def _no_nul(value: Any) -> Any:
    return value.replace("\x00", "\ufffd") if isinstance(value, str) and "\x00" in value else value


def _postgresql_events(engine: Any) -> None:
    """PostgreSQL's text cannot hold NUL, which a sandbox value quoted in a criterion's details
    can: every string parameter has its NULs replaced by U+FFFD before it is sent. Nothing is
    lost: a report is read back from its JSON columns, where a NUL is the escape ``\u0000``;
    the text columns are for queries, and a query for a NUL matches nothing, as it should."""

    @event.listens_for(engine, "before_cursor_execute", retval=True)
    def _clean_parameters(
        conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, many: bool
    ) -> tuple[str, Any]:
        return statement, [_clean_row(p) for p in parameters] if many else _clean_row(parameters)


def _clean_row(parameters: Any) -> Any:
    if isinstance(parameters, dict):
        return {k: _no_nul(v) for k, v in parameters.items()}
    if isinstance(parameters, list | tuple):
        return type(parameters)(_no_nul(v) for v in parameters)
    return parameters


def _engine_url(url: str) -> str:
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


# -- opening ---------------------------------------------------------------------------------
def _sqlite_events(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _connect(dbapi_conn: Any, _record: Any) -> None:
        connected(dbapi_conn)  # the settings the session's sqlite3 writer applies too

    @event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.info.get("verial_write") else "BEGIN")


def make_engine(url: str, *, create: bool = True) -> tuple[Engine, str, str | None]:
    """The engine of the store at ``url`` (a SQLite file is checked first, and created when
    ``create``), the URL as the engine reads it and the URL's password (kept out of every
    message); StoreError when the URL or the database cannot serve as a store."""
    masked = mask_url(url)
    try:
        parsed = make_url(_engine_url(url))
    except ArgumentError:
        raise StoreError(f"results store {masked}: not a database URL") from None
    backend = parsed.get_backend_name()
    if backend not in ("sqlite", "postgresql"):
        raise StoreError(
            f"results store {masked}: unsupported database {backend!r} "
            "(use sqlite:///PATH or postgresql://...)"
        )
    password = parsed.password if isinstance(parsed.password, str) else None
    path = sqlite_path(str(parsed)) if backend == "sqlite" else None
    if path is not None:
        _check_sqlite_file(path, masked, create)
    try:
        if backend == "sqlite":
            engine = create_engine(
                parsed,
                pool_size=1,
                max_overflow=4,
                json_serializer=json_text,
                json_deserializer=json_value,
            )
            _sqlite_events(engine)
        else:
            engine = create_engine(  # pooled: a connection costs more than a request
                parsed,
                pool_size=4,
                max_overflow=12,
                pool_pre_ping=True,  # a connection the server dropped is replaced at checkout
                connect_args={"connect_timeout": 10},
                json_serializer=json_text,
                json_deserializer=json_value,
            )
            _postgresql_events(engine)
    except (NoSuchModuleError, ImportError):
        raise StoreError(
            f"results store {masked}: PostgreSQL needs psycopg: "
            "pip install 'pytest-verial[postgres]'"
        ) from None
    except SQLAlchemyError as exc:
        raise StoreError(f"results store {masked}: {clean_message(exc, url, password)}") from None
    return engine, str(parsed), password
