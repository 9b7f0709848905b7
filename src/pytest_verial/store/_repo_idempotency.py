"""Idempotency records in the store: every statement on ``idempotency``.

A request that creates or changes something and carries an ``Idempotency-Key`` leaves its
answer (status and body) under (key, owner), written in the transaction that made the change;
the same key and request again reads that answer back, the same key with another request is
:class:`IdempotencyConflict`. The request is compared by its hash (method, path, body).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, select

from ._core import Store
from ._tables import idempotency


@dataclass(frozen=True)
class Replay:
    """An answer kept for an Idempotency-Key (or about to be): its status and body."""

    status: int
    body: dict[str, Any]


class IdempotencyConflict(Exception):
    """The Idempotency-Key was used before, by this owner, for a different request."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def replay_in(conn: Connection, owner: str, key: str, digest: str) -> Replay | None:
    """The answer kept for ``owner``'s ``key``, read in the caller's transaction; None when
    there is none; IdempotencyConflict when it was kept for another request."""
    row = conn.execute(
        select(idempotency.c.request_hash, idempotency.c.status, idempotency.c.response).where(
            idempotency.c.owner == owner, idempotency.c.key == key
        )
    ).first()
    if row is None:
        return None
    if row.request_hash != digest:
        raise IdempotencyConflict(key)
    return Replay(int(row.status), dict(row.response))


def record_in(conn: Connection, owner: str, key: str | None, digest: str, answer: Replay) -> None:
    """Keep ``answer`` for replays of ``key`` (None: nothing kept), in the caller's
    transaction."""
    if key is None:
        return
    conn.execute(
        idempotency.insert().values(
            key=key,
            owner=owner,
            request_hash=digest,
            status=answer.status,
            response=answer.body,
            created_at=datetime.now(UTC),
        )
    )


def find_replay(store: Store, owner: str, key: str, digest: str) -> Replay | None:
    """:func:`replay_in` in a read transaction of its own."""
    return store.read("read an idempotency key", lambda conn: replay_in(conn, owner, key, digest))


__all__ = ["IdempotencyConflict", "Replay", "find_replay", "record_in", "replay_in"]
