"""Async verify-task jobs in the store: every statement on ``jobs``.

A job is a row: queued with its request (and its Idempotency-Key record, in one transaction),
claimed by the oldest-first rule with ``SELECT ... FOR UPDATE SKIP LOCKED`` on PostgreSQL (under
SQLite's write lock otherwise), its lease renewed while a worker scores it, and settled (done or
failed) in the transaction that stores its result, by the worker that still holds it. The
thread that runs jobs is the service's (:mod:`pytest_verial.service._jobs`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Connection, and_, or_, select, update

from ._core import Store
from ._ids import new_id
from ._repo_idempotency import Replay, record_in, replay_in
from ._repo_keys import ApiKey
from ._rows import as_utc
from ._tables import jobs


def _now(store: Store) -> datetime:
    """Now, as the store compares it (SQLite keeps naive UTC datetimes)."""
    now = datetime.now(UTC)
    return now.replace(tzinfo=None) if store.sqlite else now


def enqueue(
    store: Store,
    owner: ApiKey,
    request: dict[str, Any],
    accepted: Any,
    *,
    idem: str | None,
    digest: str,
) -> Replay:
    """Queue a verify-task request; ``accepted(job_id)`` is the answer (202 and its body) kept
    for the Idempotency-Key. A replay answers the earlier job."""

    def work(conn: Connection) -> Replay:
        earlier = replay_in(conn, owner.id, idem, digest) if idem is not None else None
        if earlier is not None:
            return earlier
        job_id = new_id("job")
        conn.execute(
            jobs.insert().values(
                id=job_id,
                owner=owner.id,
                kind="verify-task",
                request=request,
                status="queued",
                attempts=0,
                created_at=datetime.now(UTC),
            )
        )
        answer: Replay = accepted(job_id)
        record_in(conn, owner.id, idem, digest, answer)
        return answer

    return store.write("queue a job", work)


@dataclass(frozen=True)
class StoredJob:
    """A job as its reader sees it."""

    id: str
    owner: str
    status: str
    attempts: int
    created_at: datetime | None
    started_at: datetime | None
    finished_at: datetime | None
    response: dict[str, Any] | None


def read_job(store: Store, viewer: ApiKey, job_id: str) -> StoredJob | None:
    """The job ``job_id`` when ``viewer`` queued it or is an org key; None otherwise."""

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
                jobs.c.response,
            ).where(jobs.c.id == job_id)
        ).first()

    row = store.read("read a job", work)
    if row is None or viewer.run_id is not None or (row.owner != viewer.id and not viewer.org):
        return None
    return StoredJob(
        id=str(row.id),
        owner=str(row.owner),
        status=str(row.status),
        attempts=int(row.attempts),
        created_at=as_utc(row.created_at),
        started_at=as_utc(row.started_at),
        finished_at=as_utc(row.finished_at),
        response=dict(row.response) if row.response is not None else None,
    )


@dataclass(frozen=True)
class Claimed:
    """A job this worker holds: its id, owner, request and how often it was claimed."""

    id: str
    owner: str
    request: dict[str, Any]
    attempts: int


class LeaseLost(Exception):
    """Another worker claimed the job (this one was too slow to renew): its result is dropped."""


def claim(store: Store, worker: str, lease: float) -> Claimed | None:
    """The oldest claimable job (queued, or running past its lease), now ``worker``'s for
    ``lease`` seconds; None when there is none."""

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
                lease_until=now + timedelta(seconds=lease),
                started_at=now,
            )
        )
        return Claimed(str(row.id), str(row.owner), dict(row.request), attempts)

    return store.write("claim a job", work)


def _held(job: Claimed, worker: str) -> Any:
    return and_(
        jobs.c.id == job.id,
        jobs.c.status == "running",
        jobs.c.worker == worker,
        jobs.c.attempts == job.attempts,
    )


def renew(store: Store, job: Claimed, worker: str, lease: float) -> bool:
    """Extend ``worker``'s lease by ``lease`` seconds; False when the job is no longer its."""

    def work(conn: Connection) -> bool:
        now = _now(store)
        done = conn.execute(
            update(jobs)
            .where(_held(job, worker))
            .values(lease_until=now + timedelta(seconds=lease))
        )
        return bool(done.rowcount)

    return store.write("renew a job's lease", work)


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


def settle(store: Store, job: Claimed, worker: str, answer: Replay) -> None:
    """:func:`finish` in a write transaction of its own (a job that failed)."""
    store.write("settle a job", lambda conn: finish(conn, store, job, worker, answer))


__all__ = [
    "Claimed",
    "LeaseLost",
    "StoredJob",
    "claim",
    "enqueue",
    "finish",
    "read_job",
    "renew",
    "settle",
]
