"""API keys of the service (Verial's scopes): ``vk_...`` org keys, ``vrl_slv_...`` solver keys and
``vrl_run_...`` run tokens.

A key is shown once, when it is created; the store keeps only its SHA-256 (a key carries 256
random bits, so a plain hash cannot be reversed or brute-forced), looked up by that hash and
compared with :func:`hmac.compare_digest`. Keys never reach a log, an error or a URL. The rows
are the store's (:mod:`pytest_verial.store._repo_keys`); the key's form and its checks are here.

Each worker process keeps the principals it has found (by hash, a bounded LRU:
:class:`Principals`), so a request looks its key up once per process. Revocation is still
immediate in every process: a kept principal is used only after one read by primary key, made
on every request in the store all the workers share: its key's row
(:func:`~pytest_verial.store._repo_keys.key_active`), or for a run token its row and the key
that created its run (:func:`~pytest_verial.store._repo_keys.run_token_expiry`). verify-task
makes that read inside the write transaction that stores its task run (:func:`kept_key`): a
key revoked meanwhile stores nothing and is answered 401, as on every other path it answers
before that transaction (a replay, a queued job, an error).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
from collections import OrderedDict
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from weakref import WeakKeyDictionary

from ..store import Store
from ..store._ids import new_id
from ..store._repo_keys import (
    ApiKey,
    add_run_token,
    all_keys,
    count_active,
    insert_key,
    key_active,
    key_by_hash,
    revoke,
    run_token_by_hash,
    run_token_expiry,
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


class Principals:
    """The principals one process has found, by key hash. At most ``size`` kept, the least
    recently used dropped; an unknown key is never kept, so a caller presenting made-up keys
    cannot grow it."""

    def __init__(self, size: int = 1024) -> None:
        self._size = size
        self._kept: OrderedDict[str, ApiKey] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, digest: str) -> ApiKey | None:
        with self._lock:
            found = self._kept.get(digest)
            if found is not None:
                self._kept.move_to_end(digest)
            return found

    def keep(self, digest: str, key: ApiKey) -> None:
        with self._lock:
            self._kept[digest] = key
            self._kept.move_to_end(digest)
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)

    def drop(self, digest: str) -> None:
        with self._lock:
            self._kept.pop(digest, None)


#: each open store's principals (a process serves one store; tests open many)
_PRINCIPALS: WeakKeyDictionary[Store, Principals] = WeakKeyDictionary()
_PRINCIPALS_LOCK = threading.Lock()


def principals(store: Store) -> Principals:
    """The principals this process keeps for ``store``."""
    with _PRINCIPALS_LOCK:
        kept = _PRINCIPALS.get(store)
        if kept is None:
            kept = _PRINCIPALS[store] = Principals()
        return kept


def _run_token(store: Store, digest: str) -> ApiKey | None:
    row = run_token_by_hash(store, digest)
    if row is None or not hmac.compare_digest(row.hash.encode(), digest.encode()):
        return None
    return ApiKey(row.id, "run", None, row.expires_at, None, run_id=row.run_id)


def _key(store: Store, presented: str, digest: str) -> ApiKey | None:
    found = key_by_hash(store, digest)
    if found is None:
        return None
    record, stored = found
    if not hmac.compare_digest(stored.encode(), digest.encode()) or record.revoked_at is not None:
        return None
    if not presented.startswith(PREFIXES[record.scope]):
        return None
    return record


def kept_key(store: Store, presented: str) -> tuple[ApiKey, str] | None:
    """The org or solver key ``presented`` is and its hash, as this process found it before,
    without reading the store; None when this process has not found it (or it is a run token).
    Its row is not checked here: the caller checks it (:func:`still_active`, or
    :func:`~pytest_verial.store._repo_keys.key_active_in` in the transaction that keeps what
    the request does) before anything the key asked for is kept or answered."""
    if len(presented) > MAX_KEY or not presented.startswith(tuple(PREFIXES.values())):
        return None
    digest = key_hash(presented)
    key = principals(store).get(digest)
    return None if key is None else (key, digest)


def forget(store: Store, digest: str) -> None:
    """Drop a kept key found revoked: its next request looks it up again (and is refused)."""
    principals(store).drop(digest)


def still_active(store: Store, key: ApiKey, digest: str) -> bool:
    """Whether a key :func:`kept_key` gave is still active (one read by primary key); a revoked
    one is forgotten."""
    if key_active(store, key.id):
        return True
    forget(store, digest)
    return False


def authenticate(store: Store, presented: str) -> ApiKey | None:
    """The active key ``presented`` is, or None (unknown, malformed, revoked or expired): from
    this process's :class:`Principals` once found, checked against the store's key row on
    every call."""
    run_token = presented.startswith(RUN_PREFIX)
    if len(presented) > MAX_KEY:
        return None
    if not run_token and not presented.startswith(tuple(PREFIXES.values())):
        return None
    digest = key_hash(presented)
    kept = principals(store)
    key = kept.get(digest)
    if key is None:
        key = _run_token(store, digest) if run_token else _key(store, presented, digest)
        if key is None:
            return None
        kept.keep(digest, key)
    elif key.run_id is not None:
        expires = run_token_expiry(store, key.id)
        if expires is None:
            kept.drop(digest)
            return None
        key = replace(key, created_at=expires)
    elif not key_active(store, key.id):
        kept.drop(digest)
        return None
    if key.run_id is not None and key.created_at <= datetime.now(UTC):
        return None  # a run token past its expiry (kept as its created_at)
    return key


__all__ = [
    "ApiKey",
    "active_keys",
    "authenticate",
    "create_key",
    "forget",
    "key_hash",
    "kept_key",
    "list_keys",
    "issue_run_token",
    "revoke_key",
    "still_active",
]
