"""Helpers of the judge tests: a stub chat-completions server for faults a real one cannot be
made to produce on demand (timeouts, 500s, non-JSON, out-of-range ratings), and reply makers."""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


def completion(content: str, prompt_tokens: int = 900, completion_tokens: int = 120) -> bytes:
    """A chat-completions response body carrying ``content``."""
    return json.dumps(
        {
            "id": "chatcmpl-stub",
            "object": "chat.completion",
            "model": "stub",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": content},
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
    ).encode()


def ratings(*values: int, confidence: float = 0.8) -> str:
    """A valid reply rating principles 1..n with ``values``."""
    return json.dumps(
        {
            "ratings": [
                {"principle": i, "rating": r, "reasoning": f"reason {i}"}
                for i, r in enumerate(values, start=1)
            ],
            "confidence": confidence,
        }
    )


class StubJudge:
    """Replies from a script: each item is ``(status, body)`` or ``("sleep", seconds)``.

    The last item repeats when the script runs out. Requests are recorded, and how many were
    in flight at once (``max_in_flight``). For judge criteria scored at once, ``respond`` may
    compute each reply from the request instead (the same reply whatever the order), ``gather``
    holds the requests until that many have been in flight at once (or ``gather_timeout``
    passed), and ``hold`` holds the requests it picks until :meth:`release`.

    Each test gets its own base URL (:meth:`fresh`): a request to an earlier one (a call a
    stopped in-process session abandoned on a daemon thread, sent late) is refused with 410 and
    not recorded, so it never lands among a later test's requests.
    """

    def __init__(self) -> None:
        self.script: list[tuple[Any, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.respond: Callable[[dict[str, Any]], tuple[int, Any]] | None = None
        self.gather = 0
        self.gather_timeout = 10.0
        self.hold: Callable[[dict[str, Any]], bool] | None = None
        self.in_flight = self.max_in_flight = 0
        self.flight = threading.Condition()
        self.generation = 0  # moved on by release()
        self.prefix = "/t0/v1/"
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", 0))
                request = json.loads(self.rfile.read(length))
                if not self.path.startswith(stub.prefix):
                    self.send_error(410, "a request of an earlier test")
                    return
                stub.requests.append(request)
                stub.headers.append(dict(self.headers))
                with stub.flight:
                    stub.in_flight += 1
                    stub.max_in_flight = max(stub.max_in_flight, stub.in_flight)
                    stub.flight.notify_all()
                    generation = stub.generation
                    if stub.hold is not None and stub.hold(request):
                        # the timeouts are guards against a hang, not timings
                        stub.flight.wait_for(lambda: stub.generation != generation, timeout=120)
                    stub.flight.wait_for(
                        lambda: stub.max_in_flight >= stub.gather, timeout=stub.gather_timeout
                    )
                try:
                    step = self.step(request)
                finally:  # no longer in flight before the client can send its next request
                    with stub.flight:
                        stub.in_flight -= 1
                status, payload = step
                payload = payload if isinstance(payload, bytes) else str(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:
                    pass

            def step(self, request: dict[str, Any]) -> tuple[Any, Any]:
                if stub.respond is not None:
                    step = stub.respond(request)
                else:
                    step = stub.script.pop(0) if len(stub.script) > 1 else stub.script[0]
                if step[0] == "sleep":
                    time.sleep(step[1])
                    step = (200, completion(ratings(5)))
                return step

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.url = self.origin + self.prefix.rstrip("/")
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def reply(self, *steps: tuple[Any, Any]) -> None:
        """Set the script of replies (and forget ``respond``, ``gather``, ``hold``)."""
        self.release()
        self.script = list(steps)
        self.requests.clear()
        self.headers.clear()
        with self.flight:
            self.respond, self.gather, self.hold = None, 0, None
            self.max_in_flight = self.in_flight

    def fresh(self) -> None:
        """A new base URL and no script: what an earlier test left in flight is refused."""
        with self.flight:
            self.prefix = f"/t{self.generation + 1}/v1/"
            self.url = self.origin + self.prefix.rstrip("/")
        self.reply()

    def release(self) -> None:
        """Let the requests held so far go."""
        with self.flight:
            self.generation += 1
            self.flight.notify_all()

    def close(self) -> None:
        self.release()
        self.server.shutdown()
        self.server.server_close()


#: the example HealthBench sample: examples.jsonl, labels.jsonl and its run folder
HEALTHBENCH = Path(__file__).resolve().parents[2] / "example_benchmarks" / "healthbench"


def healthbench_project(folder: Path) -> Path:
    """The example HealthBench sample converted into ``folder`` (``hb.verial.yaml``, returned)
    with its run folder copied beside it (``folder/run``), as the README's flow makes them."""
    from pytest_verial.cli import main

    bench = folder / "hb.verial.yaml"
    assert (
        main(["convert", "healthbench", str(HEALTHBENCH / "examples.jsonl"), "-o", str(bench)]) == 0
    )
    shutil.copytree(HEALTHBENCH / "run", folder / "run")
    return bench
