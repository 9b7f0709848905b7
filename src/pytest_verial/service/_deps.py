"""What routes depend on, named once (``Annotated[..., Depends(...)]``, as the FastAPI template's
``api/deps.py``): the store, the verifier, the principal and the Idempotency-Key.

Principals (Verial's): an organization key (``vk_``) sees every run and is the only one that
reads task runs and criterion runs (``/task-runs/{id}``, ``/criterion-runs/{id}``) and uses the
internal routes; a solver key (``vrl_slv_``) creates runs and verifies tasks, and sees the runs
it created; a run's bearer token (``vrl_run_``) starts, completes and reads that run. A request
without a valid key is a 401; what a key may not see is a 404, as if it were not there.

The dependencies that only read the app's state or a principal already found are ``async``:
FastAPI runs a plain ``def`` dependency in its threadpool, one hop each. The principal itself
reads the store (once, by primary key, when this process knows the key: :mod:`._keys`);
verify-task's (:func:`verifying_key`) makes that read in the transaction that stores its task
run instead, so the request runs one transaction.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import Depends, Header, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy import Connection

from ..store import Store
from ..store._repo_idempotency import Replay, find_replay
from ..store._repo_keys import ApiKey, key_active_in
from ._http import Problem
from ._keys import authenticate, forget, kept_key, still_active
from ._requests import IDEMPOTENCY_PATTERN
from ._verifier import Verifier

#: the OpenAPI security scheme of every protected route
bearer = HTTPBearer(
    auto_error=False,
    scheme_name="bearer",
    description="an org key (vk_...), a solver key (vrl_slv_...) or a run's bearer token "
    "(vrl_run_...)",
)
_CHALLENGE = {"WWW-Authenticate": "Bearer"}
REFUSED = "unknown, revoked or expired key"
#: a principal that sees nothing (a solver key on an org key's route)
NOBODY = ApiKey("nobody", "none", None, datetime(2000, 1, 1, tzinfo=UTC), None, run_id="-")


async def get_store(request: Request) -> Store:
    store: Store = request.app.state.store
    return store


async def get_verifier(request: Request) -> Verifier:
    verifier: Verifier = request.app.state.verifier
    return verifier


StoreDep = Annotated[Store, Depends(get_store)]
VerifierDep = Annotated[Verifier, Depends(get_verifier)]


def _token(request: Request) -> str:
    """The key of ``Authorization: Bearer ...``; 401 when missing or malformed."""
    authorization = request.headers.get("authorization")
    if not authorization:
        raise Problem(401, "missing Authorization: Bearer KEY", headers=_CHALLENGE)
    scheme, _, token = authorization.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or " " in token:
        raise Problem(401, "malformed Authorization: use 'Bearer KEY'", headers=_CHALLENGE)
    return token


def _principal(store: Store, token: str) -> ApiKey:
    key = authenticate(store, token)
    if key is None:
        raise Problem(401, REFUSED, headers=_CHALLENGE)
    return key


def principal(
    request: Request,
    store: StoreDep,
    _credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> ApiKey:
    """The key or run token of ``Authorization: Bearer ...``; 401 without a valid one."""
    return _principal(store, _token(request))


PrincipalDep = Annotated[ApiKey, Depends(principal)]


def _holder(key: ApiKey) -> ApiKey:
    if key.run_id is not None:
        raise Problem(
            403, "a run's bearer token starts and completes its task runs; this needs a key"
        )
    return key


async def key_holder(key: PrincipalDep) -> ApiKey:
    """An org or solver key: a run token only starts, completes and reads its run (403)."""
    return _holder(key)


@dataclass(frozen=True)
class Unchecked:
    """A key this process found before, used by verify-task before its row is read again
    (``request.state.unchecked``): see :func:`verifying_key`."""

    key: ApiKey
    digest: str


async def verifying_key(
    request: Request,
    store: StoreDep,
    _credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> ApiKey:
    """verify-task's :func:`key_holder`. A key this process found before is used without a
    read of its own (no transaction, no threadpool hop): its row is read in the transaction
    that stores the task run (:func:`check_in`), and first on every path that answers before
    it (:func:`check_now`: a replay, a queued job, any error, the request's own validation
    error), so a revoked key is refused there with the 401 it gets today and nothing it asked
    for is kept. Any other key is looked up as :func:`principal` does."""
    token = _token(request)
    found = kept_key(store, token)
    if found is None:
        return _holder(await run_in_threadpool(_principal, store, token))
    request.state.unchecked = Unchecked(*found)
    return found[0]


def check_now(request: Request, store: Store) -> None:
    """The 401 a revoked key gets, when this request's key was used unchecked (one read by
    primary key); nothing when it was checked already."""
    unchecked: Unchecked | None = getattr(request.state, "unchecked", None)
    if unchecked is None:
        return
    request.state.unchecked = None
    if not still_active(store, unchecked.key, unchecked.digest):
        raise Problem(401, REFUSED, headers=_CHALLENGE)


async def refused_unchecked(request: Request) -> Problem | None:
    """:func:`check_now` for the app's validation-error handler: the 401 of a revoked key
    verify-task used unchecked, which comes before the 400 of what it sent."""
    if getattr(request.state, "unchecked", None) is None:
        return None
    try:
        await run_in_threadpool(check_now, request, request.app.state.store)
    except Problem as refused:
        return refused
    return None


def check_in(request: Request, store: Store) -> Callable[[Connection, Any], None] | None:
    """What checks this request's unchecked key inside the write transaction that keeps what
    it did (a 401 rolls it back); None when the key was checked already."""
    unchecked: Unchecked | None = getattr(request.state, "unchecked", None)
    if unchecked is None:
        return None

    def check(conn: Connection, _answer: Any) -> None:
        if not key_active_in(conn, unchecked.key.id):
            forget(store, unchecked.digest)
            raise Problem(401, REFUSED, headers=_CHALLENGE)

    return check


async def org_creator(key: PrincipalDep) -> ApiKey:
    """An org key, for the internal routes that create (403 for any other key)."""
    if not key.org:
        raise Problem(403, "this internal route needs an organization key (vk_...)")
    return key


async def org_viewer(key: PrincipalDep) -> ApiKey:
    """An org key; any other principal sees nothing here (its reads are 404s)."""
    return key if key.org else NOBODY


KeyDep = Annotated[ApiKey, Depends(key_holder)]
VerifyingKeyDep = Annotated[ApiKey, Depends(verifying_key)]
OrgCreatorDep = Annotated[ApiKey, Depends(org_creator)]
OrgViewerDep = Annotated[ApiKey, Depends(org_viewer)]
IdempotencyKeyDep = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        pattern=IDEMPOTENCY_PATTERN,
        description="the same key and body again answer the first answer (status and body) "
        "and change nothing; the same key with another body is a 422",
    ),
]


def request_hash(method: str, path: str, body: Any) -> str:
    """What an Idempotency-Key is bound to: the method, path and body."""
    text = json.dumps([method, path, body], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def replay(store: Store, key: ApiKey, idem: str | None, digest: str) -> Replay | None:
    """The answer kept for this request's Idempotency-Key, if any."""
    return None if idem is None else find_replay(store, key.id, idem, digest)


def answer_with(response: Response, answer: Replay, location: str | None = None) -> dict[str, Any]:
    """Set the response's status (and ``Location`` on a 201) from a kept or new answer."""
    response.status_code = answer.status
    if location is not None and answer.status == 201:
        response.headers["Location"] = location
    return answer.body


__all__ = [
    "IdempotencyKeyDep",
    "KeyDep",
    "OrgCreatorDep",
    "OrgViewerDep",
    "PrincipalDep",
    "StoreDep",
    "VerifierDep",
    "Unchecked",
    "VerifyingKeyDep",
    "answer_with",
    "bearer",
    "check_in",
    "check_now",
    "refused_unchecked",
    "replay",
    "request_hash",
]
