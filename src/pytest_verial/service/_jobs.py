"""``POST /v1/verify-task?async=true``: jobs in the store, run by any server process.

No broker: a job is a row of the ``jobs`` table. :func:`enqueue` writes it (with its
Idempotency-Key record, in one transaction) and the request is answered 202 with a
``Location`` to poll. Every server process runs one :class:`JobRunner` thread that claims the
oldest claimable job (``queued``, or ``running`` past its lease) with ``SELECT ... FOR UPDATE
SKIP LOCKED`` on PostgreSQL, so two workers never claim one job, or under SQLite's write lock
(``BEGIN IMMEDIATE``). A worker renews its lease while it scores; a worker that died (kill -9,
a lost host) stops renewing, and once the lease has passed another worker claims the job again.
The result is stored in the same transaction that marks the job done, and only by the worker
that holds the job, so a job is stored once however often it was claimed. After
:data:`MAX_ATTEMPTS` claims the job fails instead of taking a worker down again.

The lease is :data:`LEASE_ENV` seconds (default 60).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Connection, and_, or_, select, update

from ..store import Store, StoreError
from ..store._ids import new_id
from ..store._rows import as_utc
from ..store._tables import jobs
from ._http import Problem, problem_body
from ._keys import ApiKey
from ._runs import Replay, record_answer, replay_in

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


def _now(store: Store) -> datetime:
    """Now, as the store compares it (SQLite keeps naive UTC datetimes)."""
    now = datetime.now(UTC)
    return now.replace(tzinfo=None) if store.sqlite else now


def job_location(job_id: str) -> str:
    return f"/v1/jobs/{job_id}"


def _accepted(job_id: str) -> dict[str, Any]:
    return {"id": job_id, "status": "queued", "location": job_location(job_id)}


# -- the request side ------------------------------------------------------------------------------
def enqueue(
    store: Store,
    key: ApiKey,
    request: dict[str, Any],
    *,
    idem: str | None,
    digest: str,
) -> Replay:
    """Queue a verify-task request; 202 with the job (the earlier job on a replay)."""

    def work(conn: Connection) -> Replay:
        earlier = replay_in(conn, key, idem, digest) if idem is not None else None
        if earlier is not None:
            return earlier
        job_id = new_id("job")
        now = datetime.now(UTC)
        conn.execute(
            jobs.insert().values(
                id=job_id,
                owner=key.id,
                kind="verify-task",
                request=request,
                status="queued",
                attempts=0,
                created_at=now,
            )
        )
        return record_answer(conn, key, idem, digest, Replay(202, _accepted(job_id)))

    return store.write("queue a job", work)


def read_job(store: Store, key: ApiKey, job_id: str) -> dict[str, Any]:
    """A job as its owner (or an org key) sees it; 404 for anyone else."""

    def work(conn: Connection) -> Any:
        return conn.execute(
            select(
                jobs.c.id,
                jobs.c.owner,
                jobs.c.status,
                jobs.c.attempts,
                jobs.c.created_at,
                jobs.c.started_at,
                jobs.c.finished_at,
                jobs.c.response_status,
                jobs.c.response,
            ).where(jobs.c.id == job_id)
        ).first()

    row = store.read("read a job", work)
    if row is None or (row.owner != key.id and not key.org) or key.run_id is not None:
        raise Problem(404, f"no job {job_id}")
    out: dict[str, Any] = {
        "id": row.id,
        "status": row.status,
        "attempts": row.attempts,
        "created_at": _iso(row.created_at),
        "started_at": _iso(row.started_at),
        "finished_at": _iso(row.finished_at),
        "result": None,
        "error": None,
    }
    if row.status == "done":
        out["result"] = row.response
    elif row.status == "failed":
        out["error"] = row.response
    return out


def _iso(value: datetime | None) -> str | None:
    when = as_utc(value)
    return when.isoformat() if when else None


# -- the worker side -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Claimed:
    """A job this worker holds: its id, owner, request and how often it was claimed."""

    id: str
    owner: str
    request: dict[str, Any]
    attempts: int


class LeaseLost(Exception):
    """Another worker claimed the job (this one was too slow to renew): its result is dropped."""


def claim(store: Store, worker: str) -> Claimed | None:
    """The oldest claimable job, now this worker's; None when there is none."""

    def work(conn: Connection) -> Claimed | None:
        now = _now(store)
        row = conn.execute(
            select(jobs.c.id, jobs.c.owner, jobs.c.request, jobs.c.attempts)
            .where(
                or_(
                    jobs.c.status == "queued",
                    and_(jobs.c.status == "running", jobs.c.lease_until < now),
                )
            )
            .order_by(jobs.c.created_at, jobs.c.id)
            .limit(1)
            .with_for_update(skip_locked=True)  # rendered on PostgreSQL; SQLite holds its lock
        ).first()
        if row is None:
            return None
        attempts = int(row.attempts) + 1
        conn.execute(
            update(jobs)
            .where(jobs.c.id == row.id)
            .values(
                status="running",
                worker=worker,
                attempts=attempts,
                lease_until=now + timedelta(seconds=lease_seconds()),
                started_at=now,
            )
        )
        return Claimed(str(row.id), str(row.owner), dict(row.request), attempts)

    return store.write("claim a job", work)


def renew(store: Store, job: Claimed, worker: str) -> bool:
    """Extend this worker's lease; False when the job is no longer its own."""

    def work(conn: Connection) -> bool:
        now = _now(store)
        done = conn.execute(
            update(jobs)
            .where(_held(job, worker))
            .values(lease_until=now + timedelta(seconds=lease_seconds()))
        )
        return bool(done.rowcount)

    return store.write("renew a job's lease", work)


def _held(job: Claimed, worker: str) -> Any:
    return and_(
        jobs.c.id == job.id,
        jobs.c.status == "running",
        jobs.c.worker == worker,
        jobs.c.attempts == job.attempts,
    )


def finish(conn: Connection, store: Store, job: Claimed, worker: str, answer: Replay) -> None:
    """Mark the job done or failed with ``answer``, in the caller's transaction (the one that
    stores its result); LeaseLost when another worker holds it now."""
    done = conn.execute(
        update(jobs)
        .where(_held(job, worker))
        .values(
            status="done" if answer.status < 400 else "failed",
            finished_at=_now(store),
            lease_until=None,
            response_status=answer.status,
            response=answer.body,
            request={},  # the sandbox it brought is not kept
        )
    )
    if not done.rowcount:
        raise LeaseLost(job.id)


class JobRunner:
    """One thread per server process: claims jobs and runs ``run`` on each.

    ``run(job, finish)`` scores the job and stores its result, calling ``finish(conn,
    answer)`` inside the transaction that stores it."""

    def __init__(
        self,
        store: Store,
        run: Callable[[Claimed, Callable[[Connection, Replay], None]], None],
    ) -> None:
        self.store = store
        self.run = run
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
                job = claim(self.store, self.worker)
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
            self._settle(job, Replay(exc.status, problem_body(exc.status, exc.detail, exc.title)))
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
                if not renew(self.store, job, self.worker):
                    return
            except StoreError:
                continue

    def _settle(self, job: Claimed, answer: Replay) -> None:
        try:
            self.store.write(
                "settle a job", lambda conn: finish(conn, self.store, job, self.worker, answer)
            )
        except (LeaseLost, StoreError) as exc:
            _log.warning("jobs: %s: %s", job.id, exc)


__all__ = ["JobRunner", "LEASE_ENV", "enqueue", "job_location", "lease_seconds", "read_job"]
