"""The trend and listing reads of the results store that the Store's own methods do not cover:
the benchmarks it holds runs of (``verial trend`` names them when asked for an unknown one)."""

from __future__ import annotations

from sqlalchemy import Connection, select

from ._core import Store
from ._tables import benchmark_runs


def known_benchmarks(store: Store) -> list[str]:
    """The benchmark refs the store holds runs of, sorted."""

    def work(conn: Connection) -> list[str]:
        return sorted(
            str(r)
            for r in conn.execute(select(benchmark_runs.c.benchmark_ref).distinct()).scalars()
        )

    return store.read("list the benchmarks", work)
