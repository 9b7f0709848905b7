"""The results store (issue 19): every session's benchmark runs, kept in SQLite (default,
``<project>/.verial/results.db``) or PostgreSQL, listed, compared and trended; sessions and
benchmark runs are named by refs (``latest``, ``latest~N``, ``ses_…``, ``br_…``:
``_repo_sessions.py``).

Public API (README, "Public API"): what the CLI, the recorder and the service use from outside
the package: :func:`open_store`, :class:`Store`, :class:`StoreError` and :func:`revisions`
(the schema revisions ``/healthz`` reports).

See ``_core.py`` for the Store (opening, migrating, one transaction per read or write),
``_engine.py`` for the engines of both dialects, ``_rows.py`` for the typed results <-> rows
mapping, ``_tables.py`` for the tables and ``_migrations/`` for their alembic history. The SQL
is in the repository modules alone (``_repo_*.py``; a test holds every other module to it):
``_repo_reports.py`` (whole reports), ``_repo_sessions.py`` (refs, sessions, deletion,
recovery), ``_repo_task_runs.py`` (a session's rows as it runs), ``_repo_trend.py`` (listing,
trend), ``_repo_schema.py`` (the schema version), and for the service ``_repo_runs.py`` (the
three levels, phases, run changes), ``_repo_keys.py`` (keys and run tokens),
``_repo_jobs.py`` (async jobs) and ``_repo_idempotency.py`` (Idempotency-Key answers).

Loaded on first use: a ``verial`` command or a ``--verial-store none`` session that never
opens a store never imports SQLAlchemy. ``_PUBLIC`` is the one table; the ``TYPE_CHECKING``
imports and ``__all__`` repeat it, and tests/core/test_public_api.py fails when they disagree.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _lazy as lazy

if TYPE_CHECKING:
    from ._core import Store, open_store
    from ._errors import StoreError
    from ._lite import revisions

#: public name -> the private module that defines it
_PUBLIC = {"Store": "_core", "StoreError": "_errors", "open_store": "_core", "revisions": "_lite"}
__getattr__, __dir__ = lazy.exports(__name__, _PUBLIC)

__all__ = ["Store", "StoreError", "open_store", "revisions"]
