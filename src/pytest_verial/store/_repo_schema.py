"""The store's schema version (alembic's ``alembic_version`` table, which the tables'
metadata does not hold), read before the store is used, and the lock that lets one process at
a time create or migrate the store."""

from __future__ import annotations

from sqlalchemy import Column, Connection, MetaData, String, Table, inspect, select

from ._tables import metadata

_VERSION = Table(
    "alembic_version",
    MetaData(),
    Column("version_num", String(32), primary_key=True),
)


def lock_schema(conn: Connection) -> None:
    """PostgreSQL: one process at a time creates or migrates (SQLite: BEGIN IMMEDIATE)."""
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql("SELECT pg_advisory_xact_lock(7219193)")


def schema_version(conn: Connection) -> tuple[str | None, bool]:
    """The store's revision (None: no ``alembic_version``) and whether it holds the sessions
    table."""
    tables = set(inspect(conn).get_table_names())
    rev = None
    if "alembic_version" in tables:
        rev = conn.execute(select(_VERSION.c.version_num)).scalar()
    return rev, "sessions" in tables


def create_schema(conn: Connection, head: str) -> None:
    """A new store: the tables as they are now, stamped with the newest revision ``head``."""
    metadata.create_all(conn)
    _VERSION.create(conn)
    conn.execute(_VERSION.insert().values(version_num=head))
