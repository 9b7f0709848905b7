"""The results store (issue 19): every session's benchmark runs, kept in SQLite (default,
``<project>/.verial/results.db``) or PostgreSQL, listed, compared and trended; sessions and
benchmark runs are named by refs (``latest``, ``latest~N``, ``ses_…``, ``br_…``:
``_repo_sessions.py``).

Public API (README, "Public API"): what the CLI, the recorder and the service use from outside
the package: :func:`open_store`, :class:`Store`, :class:`StoreError` and :func:`revisions`
(the schema revisions ``/healthz`` reports). ``_core.py`` opens and reads, ``_rows.py`` maps
typed results to rows, ``_tables.py`` holds the tables and ``_migrations/`` their alembic
history. The service reads and writes only through the repositories: ``_repo_runs.py`` (the
three levels, phases, run changes), ``_repo_keys.py`` (keys and run tokens), ``_repo_jobs.py``
(async jobs) and ``_repo_idempotency.py`` (Idempotency-Key answers).

Loaded on first use: a ``verial`` command or a ``--verial-store none`` session that never
opens a store never imports SQLAlchemy. ``_PUBLIC`` is the one table; the ``TYPE_CHECKING``
imports and ``__all__`` repeat it, and tests/core/test_public_api.py fails when they disagree.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _lazy as lazy

if TYPE_CHECKING:
    from ._core import Store, StoreError, open_store, revisions

#: public name -> the private module that defines it
_PUBLIC = dict.fromkeys(["Store", "StoreError", "open_store", "revisions"], "_core")
__getattr__, __dir__ = lazy.exports(__name__, _PUBLIC)

__all__ = ["Store", "StoreError", "open_store", "revisions"]
