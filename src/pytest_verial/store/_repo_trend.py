"""The trend and listing reads of the results store that the Store's own methods do not cover:
the benchmarks it holds runs of (``verial trend`` names them when asked for an unknown one).

Its functions take the connection of the caller's transaction (``store.read(doing, fn)``), so
that the Store, which reads through them, is not imported here."""

from __future__ import annotations

from sqlalchemy import Connection, select

from ._tables import benchmark_runs


def known_benchmarks(conn: Connection) -> list[str]:
    """The benchmark refs the store holds runs of, sorted."""
    return sorted(
        str(r) for r in conn.execute(select(benchmark_runs.c.benchmark_ref).distinct()).scalars()
    )
