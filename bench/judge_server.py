"""The judge servers of ``bench/judge.py`` and ``bench/judge_concurrency.py``: llama.cpp's server
with SmolLM2-135M as the wire tests start it (tests/judge/model_server.py), or a stub
OpenAI-compatible chat-completions server whose answers the script writes. Each is a context
manager that yields the OpenAI base URL (``.../v1``) and stops the server on the way out.
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "judge"))  # the wire tests' model server helpers

from local_model import (  # noqa: E402
    MODEL_ALIAS,
    server_missing,
    start_model_server,
    stop_model_server,
)

__all__ = ["MODEL_ALIAS", "Answer", "model_judge", "server_missing", "stub_judge"]

#: a stub's answer to one request body: the message content and the ``usage`` of the reply
Answer = Callable[[dict[str, Any]], tuple[str, dict[str, int]]]


@contextmanager
def model_judge(parallel: int = 1) -> Iterator[str]:
    """llama.cpp's server with SmolLM2 (``parallel``: requests decoded together)."""
    base, proc = start_model_server(ctx=4096, threads=2, timeout=120, parallel=parallel)
    try:
        yield base
    finally:
        stop_model_server(proc)


@contextmanager
def stub_judge(answer: Answer) -> Iterator[str]:
    """A stub judge on 127.0.0.1 replying to each POST with what ``answer`` says."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            content, usage = answer(body)
            reply = json.dumps(
                {
                    "choices": [{"message": {"role": "assistant", "content": content}}],
                    "usage": usage,
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
