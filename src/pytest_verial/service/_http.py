"""HTTP plumbing of the service: problem+json errors and the request body guard.

Every error the service returns, validation errors and unknown routes included, is an
``application/problem+json`` body (RFC 9457: ``type``, ``title``, ``status``, ``detail``) whose
``detail`` is one line naming the field concerned. Request bodies are capped in size and JSON
nesting depth before any parser sees them.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Awaitable, Callable
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ._logs import query_credential

PROBLEM = "application/problem+json"
#: default cap on a request body (bytes)
MAX_BODY = 8 * 1024 * 1024
#: deepest JSON nesting a request body may have
MAX_DEPTH = 64

_log = logging.getLogger("pytest_verial.service")


class Problem(Exception):
    """An error answered as problem+json: ``status`` and a one-line ``detail``."""

    def __init__(
        self,
        status: int,
        detail: str,
        *,
        title: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail.splitlines()[0] if detail else ""
        self.title = title or HTTPStatus(status).phrase
        self.headers = headers or {}


def problem_body(status: int, detail: str, title: str | None = None) -> dict[str, Any]:
    """A problem's JSON; its ``detail`` one line whatever it quotes (a client's id may hold a
    line break)."""
    detail = " ".join(detail.splitlines())
    phrase = title or HTTPStatus(status).phrase
    slug = HTTPStatus(status).phrase.lower().replace(" ", "-").replace("'", "")
    return {
        "type": f"urn:verial:problem:{slug}",
        "title": phrase,
        "status": status,
        "detail": detail,
    }


def problem_response(
    status: int, detail: str, *, title: str | None = None, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(
        problem_body(status, detail, title),
        status_code=status,
        media_type=PROBLEM,
        headers=headers,
    )


def _field(loc: Any) -> str:
    parts = [str(p) for p in loc or ()]
    if parts and parts[0] in ("body", "query", "path", "header"):
        where = parts[0]
        rest = ".".join(parts[1:])
        return f"{where} {rest}" if rest else where
    return ".".join(parts)


def validation_detail(exc: RequestValidationError) -> str:
    """One line: each problem's field and message (``query limit: ...``)."""
    errors = list(exc.errors())
    parts = []
    for error in errors[:5]:
        if error.get("type") == "json_invalid":
            parts.append("body: not valid JSON")
            continue
        message = str(error.get("msg", "invalid")).replace("\n", " ")
        parts.append(f"{_field(error.get('loc'))}: {message}")
    more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
    return "; ".join(parts) + more


#: the JSON Schema of every error body (RFC 9457 problem details as the service writes them)
PROBLEM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["type", "title", "status", "detail"],
    "properties": {
        "type": {"type": "string"},
        "title": {"type": "string"},
        "status": {"type": "integer", "minimum": 400, "maximum": 599},
        "detail": {"type": "string"},
    },
}


def problems(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` for the errors a route answers, as problem+json."""
    return {
        code: {
            "description": HTTPStatus(code).phrase,
            "content": {PROBLEM: {"schema": PROBLEM_SCHEMA}},
        }
        for code in codes
    }


def document_errors(schema: dict[str, Any]) -> dict[str, Any]:
    """The app's OpenAPI with FastAPI's stock 422 ("Validation Error", a schema no answer
    has: validation errors are 400 problems here) removed where a route does not answer 422
    itself, and no unused validation schemas left behind."""
    for item in schema.get("paths", {}).values():
        for operation in item.values():
            responses = operation.get("responses", {})
            stock = responses.get("422", {}).get("content", {}).get("application/json")
            if stock is not None:
                del responses["422"]
    components = schema.get("components", {}).get("schemas", {})
    for name in ("HTTPValidationError", "ValidationError"):
        components.pop(name, None)
    return schema


def document_parameters(schema: dict[str, Any]) -> dict[str, Any]:
    """An optional parameter (a header, a query value) is left out when not given, never sent
    as null: its schema is the value's alone (FastAPI writes ``anyOf [..., null]``)."""
    for item in schema.get("paths", {}).values():
        for operation in item.values():
            for parameter in operation.get("parameters", []):
                inner = parameter.get("schema", {})
                kinds = inner.get("anyOf")
                if parameter.get("required") or not kinds:
                    continue
                given = [k for k in kinds if k.get("type") != "null"]
                if len(given) == 1 and len(given) < len(kinds):
                    del inner["anyOf"]
                    inner.update(given[0])
    return schema


def _hidden(request: Request, detail: str) -> str:
    """``detail`` without the server's folders (:mod:`._hide`)."""
    paths = getattr(request.app.state, "server_paths", None)
    return detail if paths is None else str(paths.text(detail))


def install_problem_handlers(
    app: FastAPI, refuse: Callable[[Request], Awaitable[Problem | None]] | None = None
) -> None:
    """Every error becomes problem+json naming no server path; a validation error is a 400,
    the store's answers become 404 (not visible), 409 (the run's state), 422 (an
    Idempotency-Key used for another request) and 503 (the store is unavailable).
    ``refuse``: the problem a request gets before its validation error, if any (verify-task's
    key used unchecked and revoked meanwhile: :func:`._deps.refused_unchecked`)."""
    from ..store import StoreError
    from ..store._repo_idempotency import IdempotencyConflict
    from ..store._repo_runs import NotVisible, RunConflict

    def answer(request: Request, status: int, detail: str, **kw: Any) -> JSONResponse:
        return problem_response(status, _hidden(request, detail), **kw)

    @app.exception_handler(Problem)
    async def _problem(request: Request, exc: Problem) -> JSONResponse:
        return answer(request, exc.status, exc.detail, title=exc.title, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        refused = None if refuse is None else await refuse(request)
        if refused is not None:  # the caller's own refusal comes before what it sent
            return answer(request, refused.status, refused.detail, headers=refused.headers)
        return answer(request, 400, validation_detail(exc))

    @app.exception_handler(NotVisible)
    async def _not_visible(request: Request, exc: NotVisible) -> JSONResponse:
        return answer(request, 404, str(exc))

    @app.exception_handler(RunConflict)
    async def _conflict(request: Request, exc: RunConflict) -> JSONResponse:
        return answer(request, 409, str(exc))

    @app.exception_handler(IdempotencyConflict)
    async def _reused(request: Request, exc: IdempotencyConflict) -> JSONResponse:
        detail = (
            f"header Idempotency-Key: {exc.key!r} was already used with a different request "
            "(use a new key for a new request)"
        )
        return answer(request, 422, detail)

    @app.exception_handler(StoreError)
    async def _store(request: Request, exc: StoreError) -> JSONResponse:
        # its one line goes to the server's log (the URL's password masked); the client
        # learns only that the store is unavailable
        _log.error("%s", exc)
        return answer(request, 503, "the results store is unavailable; try again")

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        detail = exc.detail if isinstance(exc.detail, str) else HTTPStatus(exc.status_code).phrase
        if exc.status_code == 404 and detail == "Not Found":
            detail = f"no route {request.url.path}"
        elif exc.status_code == 405:
            detail = f"{request.method} is not allowed on {request.url.path}"
        return answer(request, exc.status_code, detail, headers=dict(exc.headers or {}))

    @app.exception_handler(Exception)
    async def _crash(request: Request, exc: Exception) -> JSONResponse:
        _log.exception("internal error")
        return answer(request, 500, f"internal error ({type(exc).__name__})")


#: a JSON string once its escapes are gone: dropped, in C, before the brackets are counted
_STRING = re.compile(rb'"[^"]*"')
#: every byte but the four brackets
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def structure(body: bytes) -> bytes:
    """A JSON text without the contents of its strings: escaped backslashes, then escaped
    quotes, then the strings removed by C code (``replace``, a regular expression), so what is
    left to scan in Python is brackets, numbers and literals (an archive's base64 is gone)."""
    if b"\\" in body:
        body = body.replace(b"\\\\", b"").replace(b'\\"', b"")
    return _STRING.sub(b'""', body)


def json_depth(body: bytes, skeleton: bytes | None = None) -> int:
    """The deepest nesting of ``[``/``{`` in a JSON text (strings skipped; ``skeleton``: its
    :func:`structure`, when already made). Only the brackets are walked in Python, so no pass
    holds the interpreter for long."""
    depth = deepest = 0
    bare = structure(body) if skeleton is None else skeleton
    for byte in bare.translate(None, _NOT_BRACKETS):
        if byte in (0x5B, 0x7B):
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_DEPTH:
                    return deepest
        else:
            depth -= 1
    return deepest


#: what a JSON number that is not finite looks like where a value begins (the body's start, or
#: after ``:``, ``,`` or ``[``): NaN, Infinity (Python's json reads both) or an exponent large
#: enough to overflow (``1e999``). A body without any is not parsed here; base64 never matches
_MAYBE_NON_FINITE = re.compile(
    rb"(?:^|[:,\[])\s*-?(?:NaN|Infinity|[0-9]+(?:\.[0-9]*)?[eE][+-]?0*[1-9][0-9]{2,})"
)


def non_finite_field(body: bytes, skeleton: bytes | None = None) -> str | None:
    """The field (``config.cost``, ``task.criteria.0.weight``; ``""`` for the body itself) of
    the first number in a JSON body that is not finite, None when there is none or the body is
    not JSON (its validation says so). pydantic would take such a number as ``inf`` or ``nan``
    and the store would keep null: refused instead, naming the field. Looked for in the body's
    :func:`structure` (``skeleton``), parsed only when it may hold one."""
    bare = structure(body) if skeleton is None else skeleton
    if not _MAYBE_NON_FINITE.search(bare):
        return None
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return None
    pending: list[tuple[str, object]] = [("", data)]
    while pending:
        where, value = pending.pop()
        if isinstance(value, float) and not math.isfinite(value):
            return where
        if isinstance(value, dict):
            items = list(value.items())
        elif isinstance(value, list):
            items = [(str(i), v) for i, v in enumerate(value)]
        else:
            continue
        for key, inner in reversed(items):  # depth first, in document order
            pending.append((f"{where}.{key}" if where else str(key), inner))
    return None


#: bodies larger than this are scanned (depth, non-finite numbers) off the event loop: a pure
#: Python pass over megabytes would hold every other request (issue 31, bench/service_attack.py)
_ON_THE_LOOP = 64 * 1024


def _scan(body: bytes) -> tuple[int, str | None]:
    """A body's JSON depth and the field of its first non-finite number (see above)."""
    skeleton = structure(body)
    depth = json_depth(body, skeleton)
    return depth, (non_finite_field(body, skeleton) if depth <= MAX_DEPTH else None)


def _nul_in_url(scope: Scope) -> bool:
    query = bytes(scope.get("query_string") or b"").lower()
    return "\x00" in str(scope.get("path", "")) or b"%00" in query or b"\x00" in query


class BodyGuard:
    """ASGI middleware: a body over ``limit`` bytes is a 413, one nested deeper than
    :data:`MAX_DEPTH` or holding a number that is not finite a 400, and a URL holding a NUL
    character or a credential in its query (:func:`~._logs.query_credential`) a 400, before the
    application reads anything."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY) -> None:
        self.app = app
        self.limit = limit

    async def _refuse(self, send: Send, status: int, detail: str) -> None:
        body = json.dumps(problem_body(status, detail)).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", PROBLEM.encode()),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and _nul_in_url(scope):
            # no id, ref or filter holds one; PostgreSQL refuses it in text (a 503 otherwise)
            await self._refuse(send, 400, "the URL holds a NUL character (%00)")
            return
        credential = (
            query_credential(scope.get("query_string") or b"") if scope["type"] == "http" else None
        )
        if credential is not None:  # a URL is kept by logs, proxies and histories
            await self._refuse(
                send,
                400,
                f"query {credential}: a credential in a URL is refused; send the key only in "
                "Authorization: Bearer",
            )
            return
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        length = headers.get(b"content-length")
        too_big = f"request body over {self.limit} bytes"
        if length is not None and (not length.isdigit() or int(length) > self.limit):
            await self._refuse(send, 413, too_big)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                await self._refuse(send, 413, too_big)
                return
            chunks.append(chunk)
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        if len(body) > _ON_THE_LOOP:  # scanned in a worker thread: /healthz is not kept waiting
            depth, field = await run_in_threadpool(_scan, body)
        else:
            depth, field = _scan(body)
        if depth > MAX_DEPTH:
            await self._refuse(send, 400, f"body: JSON nested deeper than {MAX_DEPTH} levels")
            return
        if field is not None:
            where = f"body {field}" if field else "body"
            await self._refuse(
                send, 400, f"{where}: not a finite number (NaN, Infinity and 1e999 are refused)"
            )
            return
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)
