"""A TCP server on 127.0.0.1 that accepts connections and never answers (a test's thread)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class SilentServer:
    """Where it listens and how many connections it accepted."""

    origin: str
    accepted: int = 0
    _held: list[socket.socket] = field(default_factory=list)


@contextmanager
def silent_server() -> Iterator[SilentServer]:
    """Accept every connection, read nothing, answer nothing; closed when the test ends."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    listener.settimeout(0.1)
    server = SilentServer(f"http://127.0.0.1:{listener.getsockname()[1]}")
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except (TimeoutError, OSError):
                continue
            server.accepted += 1
            server._held.append(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        stop.set()
        thread.join(timeout=5)
        for conn in server._held:
            conn.close()
        listener.close()
