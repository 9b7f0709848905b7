"""``POST /verify-task?async=true``: jobs in the store, run by any server process.

No broker: a job is a row of the ``jobs`` table (:mod:`pytest_verial.store._repo_jobs` holds
every statement on it). The request is answered 202 with a ``Location`` to poll. Every server
process runs one :class:`JobRunner` thread that claims the oldest claimable job (``queued``, or
``running`` past its lease) with ``SELECT ... FOR UPDATE SKIP LOCKED`` on PostgreSQL, so two
workers never claim one job, or under SQLite's write lock (``BEGIN IMMEDIATE``). A worker renews
its lease while it scores; a worker that died (kill -9, a lost host) stops renewing, and once
the lease has passed another worker claims the job again. The result is stored in the same
transaction that marks the job done, and only by the worker that holds the job, so a job is
stored once however often it was claimed. After :data:`MAX_ATTEMPTS` claims the job fails
instead of taking a worker down again.

The lease is :data:`LEASE_ENV` seconds (default 60).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable

from sqlalchemy import Connection

from ..store import Store, StoreError
from ..store._ids import new_id
from ..store._repo_idempotency import Replay
from ..store._repo_jobs import Claimed, LeaseLost, claim, finish, renew, settle
from ._http import Problem, problem_body

#: seconds a claimed job stays with its worker without a renewal
LEASE_ENV = "VERIAL_JOB_LEASE"
#: claims of one job before it fails (each claim after the first means a worker died on it)
MAX_ATTEMPTS = 3
#: how often an idle runner looks for work another process queued (seconds)
POLL = 0.5

_log = logging.getLogger("pytest_verial.service")


def lease_seconds() -> float:
    """The lease from :data:`LEASE_ENV` (0.5 to 3600 s), else 60."""
    try:
        value = float(os.environ.get(LEASE_ENV, "60"))
    except ValueError:
        return 60.0
    return min(max(value, 0.5), 3600.0)


def job_location(job_id: str) -> str:
    """Where a job is polled."""
    return f"/v1/jobs/{job_id}"


def accepted(job_id: str) -> Replay:
    """The answer to a queued request: 202 and the job to poll."""
    return Replay(202, {"id": job_id, "status": "queued", "location": job_location(job_id)})


class JobRunner:
    """One thread per server process: claims jobs and runs ``run`` on each.

    ``run(job, finish)`` scores the job and stores its result, calling ``finish(conn,
    answer)`` inside the transaction that stores it."""

    def __init__(
        self,
        store: Store,
        run: Callable[[Claimed, Callable[[Connection, Replay], None]], None],
        hide: Callable[[str], str] = str,
    ) -> None:
        self.store = store
        self.run = run
        #: what a failed job's problem may not name (the server's folders: :mod:`._hide`)
        self.hide = hide
        self.worker = f"{socket.gethostname()}:{os.getpid()}:{new_id('w')[-6:]}"
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the thread (again after :meth:`stop`: an app's lifespan may run twice)."""
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="verial-jobs", daemon=True)
        self._thread.start()

    def wake(self) -> None:
        """A job was queued by this process: look now rather than at the next poll."""
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                job = claim(self.store, self.worker, lease_seconds())
            except StoreError as exc:  # the store is away: try again later
                _log.warning("jobs: %s", exc)
                job = None
            if job is None:
                self._wake.wait(POLL)
                self._wake.clear()
                continue
            self._run(job)

    def _run(self, job: Claimed) -> None:
        if job.attempts > MAX_ATTEMPTS:
            detail = (
                f"job {job.id} was claimed {MAX_ATTEMPTS} times and its worker stopped each "
                "time: given up"
            )
            self._settle(job, Replay(500, problem_body(500, detail)))
            return
        renewing = threading.Event()
        keeper = threading.Thread(target=self._keep, args=(job, renewing), daemon=True)
        keeper.start()
        try:
            self.run(job, lambda conn, answer: finish(conn, self.store, job, self.worker, answer))
        except LeaseLost:
            _log.warning(
                "jobs: %s was claimed by another worker; its result here is dropped", job.id
            )
        except Problem as exc:
            detail = self.hide(exc.detail)
            self._settle(job, Replay(exc.status, problem_body(exc.status, detail, exc.title)))
        except StoreError as exc:  # the lease runs out and another worker tries again
            _log.warning("jobs: %s: %s", job.id, exc)
        except Exception:  # a bug must not stop the runner: the job fails, the rest go on
            _log.exception("jobs: %s failed", job.id)
            detail = "the job failed inside the server (see the server's log)"
            self._settle(job, Replay(500, problem_body(500, detail)))
        finally:
            renewing.set()
            keeper.join(timeout=5)

    def _keep(self, job: Claimed, done: threading.Event) -> None:
        """Renew the lease at a third of its length until the job is settled."""
        while not done.wait(lease_seconds() / 3):
            try:
                if not renew(self.store, job, self.worker, lease_seconds()):
                    return
            except StoreError:
                continue

    def _settle(self, job: Claimed, answer: Replay) -> None:
        try:
            settle(self.store, job, self.worker, answer)
        except (LeaseLost, StoreError) as exc:
            _log.warning("jobs: %s: %s", job.id, exc)


__all__ = ["JobRunner", "LEASE_ENV", "accepted", "job_location", "lease_seconds"]
