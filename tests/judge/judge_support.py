"""Helpers of the judge tests: a stub chat-completions server for faults a real one cannot be
made to produce on demand (timeouts, 500s, non-JSON, out-of-range ratings), and reply makers."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
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

    The last item repeats when the script runs out. Requests are recorded.
    """

    def __init__(self) -> None:
        self.script: list[tuple[Any, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", 0))
                body = self.rfile.read(length)
                stub.requests.append(json.loads(body))
                stub.headers.append(dict(self.headers))
                step = stub.script.pop(0) if len(stub.script) > 1 else stub.script[0]
                if step[0] == "sleep":
                    time.sleep(step[1])
                    step = (200, completion(ratings(5)))
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

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def reply(self, *steps: tuple[Any, Any]) -> None:
        """Set the script of replies."""
        self.script = list(steps)
        self.requests.clear()
        self.headers.clear()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
