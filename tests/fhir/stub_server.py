"""A stub HTTP server for faults the real FHIR server cannot be made to produce.

Paths pick the fault: ``/html/...`` (an HTML page with 200), ``/500/...`` (always 500),
``/flaky/...`` (503 with Retry-After 0 on the first request of each URL, then a Bundle),
``/429/...`` (429 then a Bundle), ``/slow/...`` (answers after ``slow_seconds``),
``/notjson/...`` (``application/fhir+json`` that does not parse), ``/endless/...`` (pages of
one Patient without ``total``, each with a ``next`` link), ``/badbundle/...`` (a
Bundle whose ``entry`` is not a list), ``/outcome/...`` (an OperationOutcome with 200).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

BUNDLE = {
    "resourceType": "Bundle",
    "type": "searchset",
    "total": 1,
    "entry": [
        {"resource": {"resourceType": "Patient", "id": "stub-1", "name": [{"family": "Stub"}]}}
    ],
}


class _Handler(BaseHTTPRequestHandler):
    server: Any

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        return

    def _send(
        self, status: int, body: str, ctype: str, headers: dict[str, str] | None = None
    ) -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        self.server.hits.append(self.path)
        seen = self.server.hits.count(self.path)
        fault = self.path.strip("/").split("/", 1)[0]
        bundle = json.dumps(BUNDLE)
        if fault == "html":
            self._send(
                200,
                "<!doctype html><html><body>Sign in to continue</body></html>",
                "text/html; charset=utf-8",
            )
        elif fault == "500":
            self._send(
                500,
                json.dumps(
                    {
                        "resourceType": "OperationOutcome",
                        "issue": [
                            {
                                "severity": "fatal",
                                "code": "exception",
                                "diagnostics": "database is down",
                            }
                        ],
                    }
                ),
                "application/fhir+json",
            )
        elif fault in ("flaky", "429") and seen == 1:
            status = 503 if fault == "flaky" else 429
            self._send(status, "busy", "text/plain", {"Retry-After": "0"})
        elif fault == "slow":
            time.sleep(self.server.slow_seconds)
            self._send(200, bundle, "application/fhir+json")
        elif fault == "notjson":
            self._send(200, "{not json", "application/fhir+json")
        elif fault == "badbundle":
            self._send(200, '{"resourceType": "Bundle", "entry": 5}', "application/fhir+json")
        elif fault == "endless":
            n = len(self.server.hits)
            page = {
                "resourceType": "Bundle",
                "type": "searchset",
                "entry": [{"resource": {"resourceType": "Patient", "id": f"p{n}"}}],
                "link": [{"relation": "next", "url": f"/endless/Patient?page={n}"}],
            }
            self._send(200, json.dumps(page), "application/fhir+json")
        elif fault == "outcome":
            self._send(200, '{"resourceType": "OperationOutcome", "issue": []}', "application/json")
        else:
            self._send(200, bundle, "application/fhir+json")


class _QuietServer(ThreadingHTTPServer):
    """A client that gave up (its deadline passed) is expected, not a traceback on stderr."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@contextmanager
def stub_server(slow_seconds: float = 2.0) -> Iterator[Any]:
    """A running stub on 127.0.0.1; ``.origin`` and ``.hits`` (paths requested)."""
    server = _QuietServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.hits = []  # type: ignore[attr-defined]
    server.slow_seconds = slow_seconds  # type: ignore[attr-defined]
    server.origin = f"http://127.0.0.1:{server.server_address[1]}"  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
