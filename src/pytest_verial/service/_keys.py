"""API keys of the service (Verial's scopes): ``vk_...`` org keys, ``vrl_slv_...`` solver keys and
``vrl_run_...`` run tokens.

A key is shown once, when it is created; the store keeps only its SHA-256 (a key carries 256
random bits, so a plain hash cannot be reversed or brute-forced), looked up by that hash and
compared with :func:`hmac.compare_digest`. Keys never reach a log, an error or a URL. The rows
are the store's (:mod:`pytest_verial.store._repo_keys`); the key's form and its checks are here.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import UTC, datetime, timedelta

from ..store import Store
from ..store._ids import new_id
from ..store._repo_keys import (
    ApiKey,
    add_run_token,
    all_keys,
    count_active,
    insert_key,
    key_by_hash,
    revoke,
    run_token_by_hash,
)

SCOPES = ("org", "solver")
PREFIXES = {"org": "vk_", "solver": "vrl_slv_"}
RUN_PREFIX = "vrl_run_"
#: how long a run token is valid after it is made
RUN_TOKEN_TTL = timedelta(hours=24)
#: random bytes in a key (token_urlsafe: 43 characters)
KEY_BYTES = 32
#: the longest key or token looked up (anything longer is not one of ours)
MAX_KEY = 200


def key_hash(key: str) -> str:
    """The stored form of a key: SHA-256, hex."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def create_key(store: Store, scope: str, name: str | None = None) -> tuple[ApiKey, str]:
    """A new key of ``scope``: its stored record and the key (to show once)."""
    if scope not in SCOPES:
        raise ValueError(f"scope {scope!r}: use one of {', '.join(SCOPES)}")
    key = PREFIXES[scope] + secrets.token_urlsafe(KEY_BYTES)
    record = ApiKey(new_id("key"), scope, name, datetime.now(UTC), None)
    insert_key(store, record, key_hash(key))
    return record, key


def list_keys(store: Store) -> list[ApiKey]:
    """Every key, oldest first (revoked ones too)."""
    return all_keys(store)


def revoke_key(store: Store, key_id: str) -> ApiKey:
    """Revoke a key (StoreError when no key has that id); revoking twice keeps the first time."""
    return revoke(store, key_id)


def active_keys(store: Store) -> int:
    """How many keys are not revoked."""
    return count_active(store)


def issue_run_token(store: Store, run_id: str) -> tuple[str, datetime]:
    """A new run token of benchmark run ``run_id``, stored as its hash: the token (shown once)
    and when it expires."""
    token = RUN_PREFIX + secrets.token_urlsafe(KEY_BYTES)
    expires = datetime.now(UTC) + RUN_TOKEN_TTL
    add_run_token(store, run_id, new_id("rtk"), key_hash(token), expires)
    return token, expires


def _run_token(store: Store, presented: str) -> ApiKey | None:
    digest = key_hash(presented)
    row = run_token_by_hash(store, digest)
    if row is None or not hmac.compare_digest(row.hash.encode(), digest.encode()):
        return None
    if row.expires_at <= datetime.now(UTC):
        return None
    return ApiKey(row.id, "run", None, row.expires_at, None, run_id=row.run_id)


def authenticate(store: Store, presented: str) -> ApiKey | None:
    """The active key ``presented`` is, or None (unknown, malformed, revoked or expired)."""
    if len(presented) > MAX_KEY:
        return None
    if presented.startswith(RUN_PREFIX):
        return _run_token(store, presented)
    if not presented.startswith(tuple(PREFIXES.values())):
        return None
    digest = key_hash(presented)
    found = key_by_hash(store, digest)
    if found is None:
        return None
    record, stored = found
    if not hmac.compare_digest(stored.encode(), digest.encode()) or record.revoked_at is not None:
        return None
    if not presented.startswith(PREFIXES[record.scope]):
        return None
    return record


__all__ = [
    "ApiKey",
    "active_keys",
    "authenticate",
    "create_key",
    "key_hash",
    "list_keys",
    "issue_run_token",
    "revoke_key",
]
