"""What routes depend on, named once (``Annotated[..., Depends(...)]``, as the FastAPI template's
``api/deps.py``): the store, the verifier, the principal and the Idempotency-Key.

Principals (Verial's): an organization key (``vk_``) sees every run and is the only one that
reads task runs and criterion runs (``/task-runs/{id}``, ``/criterion-runs/{id}``) and uses the
internal routes; a solver key (``vrl_slv_``) creates runs and verifies tasks, and sees the runs
it created; a run's bearer token (``vrl_run_``) starts, completes and reads that run. A request
without a valid key is a 401; what a key may not see is a 404, as if it were not there.

The dependencies that only read the app's state or a principal already found are ``async``:
FastAPI runs a plain ``def`` dependency in its threadpool, one hop each. The principal itself
reads the store (once, by primary key, when this process knows the key: :mod:`._keys`).
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import Depends, Header, Request, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from ..store import Store
from ..store._repo_idempotency import Replay, find_replay
from ..store._repo_keys import ApiKey
from ._http import Problem
from ._keys import authenticate
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


def principal(
    request: Request,
    store: StoreDep,
    _credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> ApiKey:
    """The key or run token of ``Authorization: Bearer ...``; 401 without a valid one."""
    authorization = request.headers.get("authorization")
    if not authorization:
        raise Problem(401, "missing Authorization: Bearer KEY", headers=_CHALLENGE)
    scheme, _, token = authorization.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or " " in token:
        raise Problem(401, "malformed Authorization: use 'Bearer KEY'", headers=_CHALLENGE)
    key = authenticate(store, token)
    if key is None:
        raise Problem(401, "unknown, revoked or expired key", headers=_CHALLENGE)
    return key


PrincipalDep = Annotated[ApiKey, Depends(principal)]


async def key_holder(key: PrincipalDep) -> ApiKey:
    """An org or solver key: a run token only starts, completes and reads its run (403)."""
    if key.run_id is not None:
        raise Problem(
            403, "a run's bearer token starts and completes its task runs; this needs a key"
        )
    return key


async def org_creator(key: PrincipalDep) -> ApiKey:
    """An org key, for the internal routes that create (403 for any other key)."""
    if not key.org:
        raise Problem(403, "this internal route needs an organization key (vk_...)")
    return key


async def org_viewer(key: PrincipalDep) -> ApiKey:
    """An org key; any other principal sees nothing here (its reads are 404s)."""
    return key if key.org else NOBODY


KeyDep = Annotated[ApiKey, Depends(key_holder)]
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
    "answer_with",
    "bearer",
    "replay",
    "request_hash",
]
