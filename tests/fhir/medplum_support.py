"""The Medplum test server for the FHIR tests (``tests/servers/medplum/server.mjs``, installed by
``scripts/setup.d/30-medplum.sh``): started on 127.0.0.1 on a free port, with a bearer token
required and an OAuth2 client-credentials endpoint, and stopped by its PID.

A module of its own (not ``conftest``): test modules import from it by a name no other test
directory uses, whatever conftest another directory loaded first.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from lifetime_support import tied

sys.path.insert(0, str(Path(__file__).parent))


SERVER_DIR = Path(__file__).resolve().parents[1] / "servers" / "medplum"
TOKEN = "test-token-1f8e"  # noqa: S105 - a throwaway token of the local test server
CLIENT_ID, CLIENT_SECRET = "verial-tests", "client-secret-77aa"


@dataclass
class MedplumServer:
    """A running test server."""

    origin: str
    pid: int

    @property
    def base_url(self) -> str:
        """The FHIR base URL."""
        return self.origin + "/fhir/R4"

    @property
    def token_url(self) -> str:
        """The OAuth2 token endpoint."""
        return self.origin + "/oauth2/token"

    def _call(self, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        method = "GET" if body is None else "POST"
        request = urllib.request.Request(self.origin + path, data=data, method=method)
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - local
            return json.loads(response.read())

    def seed(self, resources: list[dict[str, Any]]) -> None:
        """Load resources keeping their ids and meta."""
        self._call("/__seed", resources)

    def requests(self) -> list[dict[str, Any]]:
        """The FHIR requests the server saw since the last reset."""
        result: list[dict[str, Any]] = self._call("/__requests")["requests"]
        return result

    def reset_log(self) -> None:
        """Forget the requests seen so far (and the injected faults)."""
        self._call("/__reset", {})

    def log(self) -> dict[str, Any]:
        """``/__requests`` whole: count, max_inflight and each request's start/end/inflight."""
        result: dict[str, Any] = self._call("/__requests")
        return result

    def faults(self, rules: list[dict[str, Any]]) -> None:
        """Make FHIR requests whose path+query contain ``match`` answer ``status`` and/or
        wait ``delay`` ms more (server.mjs, ``/__faults``); ``[]`` clears them."""
        self._call("/__faults", rules)


def _start(*extra: str) -> tuple[subprocess.Popen[str], int]:
    args = [
        "node",
        "--experimental-websocket",
        str(SERVER_DIR / "server.mjs"),
        "--port",
        "0",
        "--token",
        TOKEN,
        "--client-id",
        CLIENT_ID,
        "--client-secret",
        CLIENT_SECRET,
        *extra,
    ]
    proc = subprocess.Popen(
        args, cwd=SERVER_DIR, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 90
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("READY") or time.monotonic() > deadline:
        proc.kill()
        err = proc.stderr.read() if proc.stderr else ""
        raise RuntimeError(f"Medplum test server did not start: {line!r} {err[-2000:]}")
    return proc, int(line.split()[1])


@contextmanager
def running_server(resources: list[dict[str, Any]], *extra: str) -> Iterator[MedplumServer]:
    """A server seeded with ``resources`` (``extra``: more server.mjs arguments), stopped by
    its PID on exit."""
    if shutil.which("node") is None:
        pytest.skip(
            "node is not installed: the live FHIR tests need Node >= 20 "
            "(apt-get install nodejs npm)"
        )
    if not (SERVER_DIR / "node_modules" / "@medplum" / "fhir-router").is_dir():
        pytest.skip(
            "tests/servers/medplum/node_modules is missing: run scripts/setup.d/30-medplum.sh"
        )
    proc, port = _start(*extra)
    server = MedplumServer(f"http://127.0.0.1:{port}", proc.pid)
    try:
        with tied(proc.pid, signal.SIGTERM, 10):  # stopped with this process, however it ends
            server.seed(resources)
            yield server
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()


def live_settings(server: MedplumServer, **extra: Any) -> dict[str, Any]:
    """run.yaml-style settings for the server with a bearer token from the environment."""
    os.environ["VERIAL_TEST_FHIR_TOKEN"] = TOKEN
    settings = {
        "base_url": server.base_url,
        "auth": "bearer",
        "token_env": "VERIAL_TEST_FHIR_TOKEN",
        "timeout": 10,
        "retries": 1,
        "backoff": 0.01,
    }
    settings.update(extra)
    return settings
