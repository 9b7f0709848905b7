"""API keys of the service (Verial's scopes): ``vk_...`` org keys and ``vrl_slv_...`` solver keys.

A key is shown once, when it is created; the store keeps only its SHA-256 (a key carries 256
random bits, so a plain hash cannot be reversed or brute-forced), looked up by that hash and
compared with :func:`hmac.compare_digest`. Keys never reach a log, an error or a URL.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Connection, func, select, update

from ..store import Store, StoreError
from ..store._ids import new_id
from ..store._rows import as_utc
from ..store._tables import api_keys, run_tokens

SCOPES = ("org", "solver")
PREFIXES = {"org": "vk_", "solver": "vrl_slv_"}
RUN_PREFIX = "vrl_run_"
#: how long a run token is valid after its run is created
RUN_TOKEN_TTL = timedelta(hours=24)
#: random bytes in a key (token_urlsafe: 43 characters)
KEY_BYTES = 32


@dataclass(frozen=True)
class ApiKey:
    """A stored key (never the key itself)."""

    id: str
    scope: str
    name: str | None
    created_at: datetime
    revoked_at: datetime | None
    #: a run token (scope ``run``): the one benchmark run it may see and complete
    run_id: str | None = None

    @property
    def org(self) -> bool:
        return self.scope == "org"

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "scope": self.scope,
            "name": self.name,
            "created_at": self.created_at.isoformat(),
            "revoked_at": self.revoked_at.isoformat() if self.revoked_at else None,
        }


def key_hash(key: str) -> str:
    """The stored form of a key: SHA-256, hex."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def _row(r: object) -> ApiKey:
    return ApiKey(
        id=r.id,  # type: ignore[attr-defined]
        scope=r.scope,  # type: ignore[attr-defined]
        name=r.name,  # type: ignore[attr-defined]
        created_at=as_utc(r.created_at) or datetime.now(UTC),  # type: ignore[attr-defined]
        revoked_at=as_utc(r.revoked_at),  # type: ignore[attr-defined]
    )


def create_key(store: Store, scope: str, name: str | None = None) -> tuple[ApiKey, str]:
    """A new key of ``scope``: its stored record and the key (to show once)."""
    if scope not in SCOPES:
        raise ValueError(f"scope {scope!r}: use one of {', '.join(SCOPES)}")
    key = PREFIXES[scope] + secrets.token_urlsafe(KEY_BYTES)
    record = ApiKey(new_id("key"), scope, name, datetime.now(UTC), None)

    def work(conn: Connection) -> None:
        conn.execute(
            api_keys.insert().values(
                id=record.id,
                scope=scope,
                name=name,
                hash=key_hash(key),
                created_at=record.created_at,
            )
        )

    store.write("store a key", work)
    return record, key


def list_keys(store: Store) -> list[ApiKey]:
    """Every key, oldest first (revoked ones too)."""

    def work(conn: Connection) -> list[ApiKey]:
        rows = conn.execute(select(api_keys).order_by(api_keys.c.created_at, api_keys.c.id))
        return [_row(r) for r in rows]

    return store.read("list keys", work)


def revoke_key(store: Store, key_id: str) -> ApiKey:
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
        return _row(row)

    return store.write("revoke a key", work)


def active_keys(store: Store) -> int:
    """How many keys are not revoked."""

    def work(conn: Connection) -> int:
        return int(
            conn.execute(
                select(func.count()).select_from(api_keys).where(api_keys.c.revoked_at.is_(None))
            ).scalar_one()
        )

    return store.read("count keys", work)


def new_run_token(conn: Connection, run_id: str, now: datetime) -> tuple[str, datetime]:
    """A run token for benchmark run ``run_id`` (stored as its hash, inside the caller's
    transaction): the token and when it expires."""
    token = RUN_PREFIX + secrets.token_urlsafe(KEY_BYTES)
    expires = now + RUN_TOKEN_TTL
    conn.execute(
        run_tokens.insert().values(
            id=new_id("rtk"), benchmark_run_id=run_id, hash=key_hash(token), expires_at=expires
        )
    )
    return token, expires


def _run_token(store: Store, presented: str) -> ApiKey | None:
    digest = key_hash(presented)

    def work(conn: Connection) -> Any:
        return conn.execute(select(run_tokens).where(run_tokens.c.hash == digest)).first()

    row = store.read("check a run token", work)
    if row is None or not hmac.compare_digest(str(row.hash).encode(), digest.encode()):
        return None
    expires = as_utc(row.expires_at) or datetime.now(UTC)
    if expires <= datetime.now(UTC):
        return None
    return ApiKey(str(row.id), "run", None, expires, None, run_id=str(row.benchmark_run_id))


def authenticate(store: Store, presented: str) -> ApiKey | None:
    """The active key ``presented`` is, or None (unknown, malformed, revoked or expired)."""
    if presented.startswith(RUN_PREFIX) and len(presented) <= 200:
        return _run_token(store, presented)
    if not presented.startswith(tuple(PREFIXES.values())) or len(presented) > 200:
        return None
    digest = key_hash(presented)

    def work(conn: Connection) -> tuple[ApiKey, str] | None:
        row = conn.execute(select(api_keys).where(api_keys.c.hash == digest)).first()
        return None if row is None else (_row(row), str(row.hash))

    found = store.read("check a key", work)
    if found is None:
        return None
    record, stored = found
    if not hmac.compare_digest(stored.encode(), digest.encode()) or record.revoked_at is not None:
        return None
    if not presented.startswith(PREFIXES[record.scope]):
        return None
    return record
