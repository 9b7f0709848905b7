"""Keys and run tokens in the store (the service's principals): every statement on
``api_keys`` and ``run_tokens``.

The store keeps a key's SHA-256 only (made by the service, :mod:`pytest_verial.service._keys`);
what a key is and how it is shown lives here as :class:`ApiKey`, the principal every repository
function that reads runs takes to decide what it may see.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, bindparam, func, select, update

from ._core import Store
from ._engine import StoreError
from ._rows import as_utc
from ._tables import api_keys, run_owners, run_tokens


@dataclass(frozen=True)
class ApiKey:
    """A stored key (never the key itself), or a run token (scope ``run``)."""

    id: str
    scope: str
    name: str | None
    created_at: datetime
    revoked_at: datetime | None
    #: a run token (scope ``run``): the one benchmark run it may see and complete
    run_id: str | None = None

    @property
    def org(self) -> bool:
        """An organization key (``vk_``): sees every run and the internal routes."""
        return self.scope == "org"

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "scope": self.scope,
            "name": self.name,
            "created_at": self.created_at.isoformat(),
            "revoked_at": self.revoked_at.isoformat() if self.revoked_at else None,
        }


def _key(row: Any) -> ApiKey:
    return ApiKey(
        id=str(row.id),
        scope=str(row.scope),
        name=row.name,
        created_at=as_utc(row.created_at) or datetime.now(UTC),
        revoked_at=as_utc(row.revoked_at),
    )


def insert_key(store: Store, record: ApiKey, digest: str) -> None:
    """Store a new key by its hash."""

    def work(conn: Connection) -> None:
        conn.execute(
            api_keys.insert().values(
                id=record.id,
                scope=record.scope,
                name=record.name,
                hash=digest,
                created_at=record.created_at,
            )
        )

    store.write("store a key", work)


def all_keys(store: Store) -> list[ApiKey]:
    """Every key, oldest first (revoked ones too)."""

    def work(conn: Connection) -> list[ApiKey]:
        rows = conn.execute(select(api_keys).order_by(api_keys.c.created_at, api_keys.c.id))
        return [_key(r) for r in rows]

    return store.read("list keys", work)


def revoke(store: Store, key_id: str) -> ApiKey:
    """Revoke a key (StoreError when no key has that id); revoking twice keeps the first time."""

    def work(conn: Connection) -> ApiKey:
        row = conn.execute(select(api_keys).where(api_keys.c.id == key_id)).first()
        if row is None:
            raise StoreError(f"{key_id}: no such key (verial keys list shows them)")
        if row.revoked_at is None:
            conn.execute(
                update(api_keys).where(api_keys.c.id == key_id).values(revoked_at=datetime.now(UTC))
            )
            row = conn.execute(select(api_keys).where(api_keys.c.id == key_id)).first()
        return _key(row)

    return store.write("revoke a key", work)


def count_active(store: Store) -> int:
    """How many keys are not revoked."""

    def work(conn: Connection) -> int:
        query = select(func.count()).select_from(api_keys).where(api_keys.c.revoked_at.is_(None))
        return int(conn.execute(query).scalar_one())

    return store.read("count keys", work)


def key_by_hash(store: Store, digest: str) -> tuple[ApiKey, str] | None:
    """The key stored under ``digest`` and the hash as stored (compared by the caller in
    constant time), or None."""

    def work(conn: Connection) -> tuple[ApiKey, str] | None:
        row = conn.execute(select(api_keys).where(api_keys.c.hash == digest)).first()
        return None if row is None else (_key(row), str(row.hash))

    return store.read("check a key", work)


def insert_run_token(
    conn: Connection, run_id: str, token_id: str, digest: str, expires: datetime
) -> None:
    """Store a run token of benchmark run ``run_id`` by its hash, in the caller's transaction."""
    conn.execute(
        run_tokens.insert().values(
            id=token_id, benchmark_run_id=run_id, hash=digest, expires_at=expires
        )
    )


@dataclass(frozen=True)
class StoredRunToken:
    """A run token's row: its id, its run, its hash as stored and when it expires."""

    id: str
    run_id: str
    hash: str
    expires_at: datetime


def run_token_by_hash(store: Store, digest: str) -> StoredRunToken | None:
    """The run token stored under ``digest``, or None: also None when the key that created its
    run (the key that minted it) is revoked, so revoking a key ends every token it minted at
    once. Checked here, in the store, on every request, so no server process can keep a revoked
    token alive."""

    def work(conn: Connection) -> Any:
        query = (
            select(run_tokens)
            .select_from(_tokens_with_their_key())
            .where(run_tokens.c.hash == digest, api_keys.c.revoked_at.is_(None))
        )
        return conn.execute(query).first()

    row = store.read("check a run token", work)
    if row is None:
        return None
    expires = as_utc(row.expires_at) or datetime.now(UTC)
    return StoredRunToken(str(row.id), str(row.benchmark_run_id), str(row.hash), expires)


def _tokens_with_their_key() -> Any:
    """Run tokens joined to the key that created their run (its ``revoked_at`` decides)."""
    return run_tokens.join(
        run_owners, run_owners.c.benchmark_run_id == run_tokens.c.benchmark_run_id
    ).join(api_keys, api_keys.c.id == run_owners.c.key_id)


def run_token_expiry(store: Store, token_id: str) -> datetime | None:
    """When run token ``token_id`` expires, or None when it is gone or the key that created
    its run is revoked: the check of a run token the service keeps in memory, by primary keys
    (the token, its run's owner row, that key)."""

    def work(conn: Connection) -> Any:
        query = (
            select(run_tokens.c.expires_at)
            .select_from(_tokens_with_their_key())
            .where(run_tokens.c.id == token_id, api_keys.c.revoked_at.is_(None))
        )
        return conn.execute(query).scalar()

    found = store.read("check a run token", work)
    return None if found is None else as_utc(found)


def key_active_in(conn: Connection, key_id: str) -> bool:
    """Whether key ``key_id`` exists and is not revoked, read in the caller's transaction (the
    service's verify-task checks the key it kept in memory in the transaction that stores its
    answer): one read by primary key."""
    return conn.execute(_ACTIVE, {"key_id": key_id}).first() is not None


#: :func:`key_active_in`'s statement, built once (verify-task runs it on every request: no
#: statement construction nor cache-key generation per call)
_ACTIVE = select(api_keys.c.id).where(
    api_keys.c.id == bindparam("key_id"), api_keys.c.revoked_at.is_(None)
)


def key_active(store: Store, key_id: str) -> bool:
    """Whether key ``key_id`` exists and is not revoked (a queued job runs only then; a
    principal the service keeps in memory is used only then): one read by primary key."""
    return store.read("check a key", lambda conn: key_active_in(conn, key_id))


def add_run_token(store: Store, run_id: str, token_id: str, digest: str, expires: datetime) -> None:
    """Store another run token of benchmark run ``run_id`` (a replayed create answers a fresh
    one: tokens are never kept to be shown again)."""
    store.write(
        "store a run token",
        lambda conn: insert_run_token(conn, run_id, token_id, digest, expires),
    )


__all__ = [
    "ApiKey",
    "StoredRunToken",
    "add_run_token",
    "all_keys",
    "count_active",
    "insert_key",
    "insert_run_token",
    "key_active",
    "key_active_in",
    "key_by_hash",
    "revoke",
    "run_token_by_hash",
    "run_token_expiry",
]
