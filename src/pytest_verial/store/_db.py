"""The few statements a pytest session's writer runs (issue 33): :class:`Db`, run over a
SQLAlchemy connection (``_core.SqlaDb``: PostgreSQL, a store SQLAlchemy opened) or a
``sqlite3`` one (``_lite.LiteDb``: the session's SQLite store, without importing SQLAlchemy).
Rows are dicts of column -> Python value, as ``_rows`` makes them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol


class Db(Protocol):
    """One write transaction's statements on the session's tables."""

    def insert(self, table: str, rows: Sequence[Mapping[str, Any]]) -> None:
        """Insert ``rows`` (each with the same columns) into ``table``."""
        ...

    def update(self, table: str, row_id: str, values: Mapping[str, Any]) -> None:
        """Set the columns of ``values`` on the row of ``table`` whose id is ``row_id``."""
        ...

    def delete(self, table: str, ids: Sequence[str]) -> int:
        """Delete the rows of ``table`` with these ids (their children cascade); how many."""
        ...

    def session_holding(self, digest: str) -> str | None:
        """The id of the session whose ``report_digest`` is ``digest``, if any."""
        ...

    def task_ids(self, run_id: str) -> dict[str, str]:
        """The task runs stored of a benchmark run: report id -> store id."""
        ...
