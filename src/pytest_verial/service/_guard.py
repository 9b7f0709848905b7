"""Connections that send too slowly, or too much before a request begins, are closed (issue 31).

uvicorn closes a kept-alive connection that stays idle (``timeout_keep_alive``), but not one
that trickles a request's headers a byte at a time, nor one whose body never ends: each such
connection was held open for as long as its client liked, and a few hundred of them cost the
server its connections and memory. :class:`GuardedProtocol` is uvicorn's own HTTP protocol
(httptools when installed, else h11, as uvicorn's ``auto`` picks) with three limits of its own:

- a request's headers must be in within ``--header-timeout`` seconds of the connection
  opening, or of the answer before on a kept-alive connection;
- its body within ``--body-timeout`` seconds of its headers;
- its headers may not pass :data:`MAX_HEADER_BYTES` (a 431).

Past one, the connection is answered ``408 Request Timeout`` (or 431) as problem+json, if no
answer was begun, and closed; the server's log says so in one line, naming neither the client's
data nor any header. Everything else (``/healthz`` included) is served by the same event loop
meanwhile: a slow connection holds a few kilobytes and a timer, never a thread.
"""

from __future__ import annotations

import asyncio
import json
import logging
from functools import cache
from typing import Any

from ._http import PROBLEM, problem_body
from ._limits import ServiceLimits

#: the most bytes a request's line and headers may take (uvicorn's h11 default is 16 KiB)
MAX_HEADER_BYTES = 64 * 1024

#: seconds a refused connection's late bytes are read and dropped before it is closed
_LINGER = 1.0

_log = logging.getLogger("pytest_verial.service")


def _base() -> Any:
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        return HttpToolsProtocol
    except ImportError:  # uvicorn without httptools: its pure-Python protocol
        from uvicorn.protocols.http.h11_impl import H11Protocol

        return H11Protocol


@cache
def _limits() -> ServiceLimits:
    """The process's limits, as ``verial serve`` handed them to it (each worker reads them)."""
    return ServiceLimits.from_env()


class GuardedProtocol(_base()):  # type: ignore[misc]
    """uvicorn's HTTP protocol with a header deadline, a body deadline and a header size cap."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._waiting: str | None = None  # "headers" or "body": what the timer waits for
        self._seen: Any = None  # the request whose headers were last seen complete
        self._header_bytes = 0
        self._draining = False  # refused: what still arrives is read and dropped, then closed

    # -- uvicorn's protocol, with the deadlines around it --------------------------------------
    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._await_headers()

    def data_received(self, data: bytes) -> None:
        if self._draining:
            return
        if self._waiting == "headers":
            self._header_bytes += len(data)
        super().data_received(data)
        cycle = self.cycle
        if cycle is not None and cycle is not self._seen:  # a request's headers are in
            self._seen = cycle
            self._header_bytes = 0
            self._cancel()
            if cycle.more_body:
                self._arm("body", _limits().body_timeout)
        elif self._waiting == "body" and cycle is not None and not cycle.more_body:
            self._cancel()
        if self._waiting == "headers" and self._header_bytes > MAX_HEADER_BYTES:
            self._refuse(431, f"request headers over {MAX_HEADER_BYTES // 1024} KiB")

    def on_response_complete(self) -> None:
        super().on_response_complete()
        transport = self.transport
        if transport is not None and not transport.is_closing():
            self._await_headers()  # the next request on this connection

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        super().connection_lost(exc)

    # -- the deadlines --------------------------------------------------------------------------
    def _await_headers(self) -> None:
        self._header_bytes = 0
        self._arm("headers", _limits().header_timeout)

    def _arm(self, waiting: str, seconds: float) -> None:
        self._cancel()
        self._waiting = waiting
        self._deadline = asyncio.get_running_loop().call_later(seconds, self._expire, waiting)

    def _cancel(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline, self._waiting = None, None

    def _expire(self, waiting: str) -> None:
        self._deadline, self._waiting = None, None
        limits = _limits()
        seconds = limits.header_timeout if waiting == "headers" else limits.body_timeout
        flag = "--header-timeout" if waiting == "headers" else "--body-timeout"
        self._refuse(408, f"the request's {waiting} took over {seconds:g} s ({flag})")

    def _refuse(self, status: int, detail: str) -> None:
        """Answer ``status`` (when no answer was begun) and close the connection."""
        self._cancel()
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        cycle = self.cycle
        if cycle is None or not cycle.response_started:
            body = json.dumps(problem_body(status, detail)).encode()
            phrase = {408: "Request Timeout", 431: "Request Header Fields Too Large"}[status]
            head = (
                f"HTTP/1.1 {status} {phrase}\r\ncontent-type: {PROBLEM}\r\n"
                f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
            )
            transport.write(head.encode() + body)
        client = self.client[0] if getattr(self, "client", None) else "a client"
        _log.warning("closed a connection from %s: %s", client, detail)
        # a lingering close: the answer sent and the sending side shut, what the client still
        # sends is dropped for a moment before the connection closes, so that the close does
        # not reset the connection (and lose the answer) while its bytes are unread
        self._draining = True
        if transport.can_write_eof():
            transport.write_eof()
        asyncio.get_running_loop().call_later(_LINGER, transport.close)


__all__ = ["MAX_HEADER_BYTES", "GuardedProtocol"]
