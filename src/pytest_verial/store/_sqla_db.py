"""The session writer's statements (:class:`._db.Db`) on a SQLAlchemy connection: PostgreSQL,
and a SQLite store SQLAlchemy opened (a new one, one it migrated; ``verial report --recover``).
The same statements on ``sqlite3`` are ``_lite.LiteDb``'s."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, delete, select, update

from ._tables import metadata


class SqlaDb:
    """The session writer's statements (``_db.Db``) on a SQLAlchemy connection."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def insert(self, table: str, rows: Sequence[Mapping[str, Any]]) -> None:
        if rows:
            self.conn.execute(metadata.tables[table].insert(), list(rows))

    def update(self, table: str, row_id: str, values: Mapping[str, Any]) -> None:
        found = metadata.tables[table]
        self.conn.execute(update(found).where(found.c.id == row_id).values(dict(values)))

    def delete(self, table: str, ids: Sequence[str]) -> int:
        found = metadata.tables[table]
        return int(self.conn.execute(delete(found).where(found.c.id.in_(list(ids)))).rowcount)

    def session_holding(self, digest: str) -> str | None:
        table = metadata.tables["sessions"]
        found = self.conn.execute(select(table.c.id).where(table.c.report_digest == digest))
        held = found.scalar()
        return None if held is None else str(held)

    def task_ids(self, run_id: str) -> dict[str, str]:
        table = metadata.tables["task_runs"]
        found = self.conn.execute(
            select(table.c.report_id, table.c.id).where(table.c.benchmark_run_id == run_id)
        )
        return {str(r.report_id): str(r.id) for r in found}
