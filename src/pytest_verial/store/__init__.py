"""The results store (issue 19): every session's benchmark runs, kept in SQLite (default,
``<project>/.verial/results.db``) or PostgreSQL, listed, compared and trended; sessions and
benchmark runs are named by refs (``latest``, ``latest~N``, ``ses_…``, ``br_…``: ``_refs.py``).

See ``_core.py`` for the Store (opening, migrating, one transaction per read or write),
``_engine.py`` for the engines of both dialects, ``_rows.py`` for the typed results <-> rows
mapping, ``_tables.py`` for the tables and ``_migrations/`` for their alembic history. The SQL
is in the repository modules alone (``_repo_*.py``; a test holds every other module to it):
``_repo_reports.py`` (whole reports), ``_repo_sessions.py`` (refs, sessions, deletion,
recovery), ``_repo_task_runs.py`` (a session's rows as it runs), ``_repo_trend.py`` (listing,
trend), ``_repo_schema.py`` (the schema version), and for the service ``_repo_runs.py`` (the
three levels, phases, run changes), ``_repo_keys.py`` (keys and run tokens),
``_repo_jobs.py`` (async jobs) and ``_repo_idempotency.py`` (Idempotency-Key answers).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _lazy as lazy

if TYPE_CHECKING:
    from ._core import (
        ENV,
        MIGRATIONS,
        SessionWriter,
        Store,
        default_store_url,
        mark_interrupted,
        open_store,
        opened,
        revisions,
        store_url_from,
    )
    from ._engine import StoreError, mask_url, sqlite_path
    from ._repo_reports import ImportResult
    from ._repo_sessions import SessionRow, StoreRef
    from ._repo_trend import RunRow, TrendPoint
    from ._rows import SessionMeta, digest_of
    from ._url import project_folder

__all__ = [
    "ENV",
    "MIGRATIONS",
    "ImportResult",
    "RunRow",
    "SessionMeta",
    "SessionRow",
    "SessionWriter",
    "Store",
    "StoreError",
    "StoreRef",
    "TrendPoint",
    "default_store_url",
    "digest_of",
    "mark_interrupted",
    "mask_url",
    "open_store",
    "opened",
    "project_folder",
    "revisions",
    "sqlite_path",
    "store_url_from",
]

# loaded on first use: a `verial` command that never opens a store never imports SQLAlchemy
__getattr__, __dir__ = lazy.exports(
    __name__,
    {
        "ENV": "_core",
        "MIGRATIONS": "_core",
        "ImportResult": "_repo_reports",
        "RunRow": "_repo_trend",
        "SessionWriter": "_core",
        "Store": "_core",
        "StoreError": "_engine",
        "TrendPoint": "_repo_trend",
        "default_store_url": "_core",
        "mark_interrupted": "_core",
        "mask_url": "_engine",
        "open_store": "_core",
        "opened": "_core",
        "revisions": "_core",
        "sqlite_path": "_engine",
        "store_url_from": "_core",
        "SessionMeta": "_rows",
        "project_folder": "_url",
        "SessionRow": "_repo_sessions",
        "StoreRef": "_repo_sessions",
        "digest_of": "_rows",
    },
)
