"""Issue 31: a real ``verial serve`` closes connections that send their headers or body too
slowly (408), or too many header bytes (431), and answers ``/healthz`` meanwhile. Raw sockets
against the server process; its limits set low (``--header-timeout 1 --body-timeout 1``) so the
test waits seconds, not minutes. No timing is asserted: only that the server closes them."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from service_support import EXAMPLES, Server, serve


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("slow")
    store = f"sqlite:///{folder / 'store.db'}"
    limits = ("--header-timeout", "1", "--body-timeout", "1")
    with serve(folder, store, str(EXAMPLES / "files.verial.yaml"), *limits) as running:
        yield running


def _connect(server: Server) -> socket.socket:
    host, port = server.url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=30)
    return sock


def _answer(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (30 s at most)."""
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    return received


def _problem(raw: bytes, status: int) -> dict[str, object]:
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.startswith(f"HTTP/1.1 {status} ".encode()), raw[:200]
    assert b"connection: close" in head.lower()
    answer: dict[str, object] = json.loads(body)
    assert answer["status"] == status
    return answer


def test_slow_headers_are_answered_408_and_closed(server: Server) -> None:
    sock = _connect(server)
    with sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        for _ in range(8):  # one header byte every 0.3 s: never a whole request
            try:
                sock.sendall(b"X")
            except OSError:
                break  # closed already
            time.sleep(0.3)
        raw = _answer(sock)
    problem = _problem(raw, 408)
    assert problem["detail"] == "the request's headers took over 1 s (--header-timeout)"
    # the server's log says so in one line, naming neither the data nor any header
    log = Path(server.log).read_text(encoding="utf-8", errors="replace")
    line = "closed a connection from 127.0.0.1: the request's headers took over 1 s"
    assert line in log
    assert "XXXX" not in log and "Host: x" not in log


def test_a_body_that_never_ends_is_answered_408_and_closed(server: Server) -> None:
    sock = _connect(server)
    with sock:
        sock.sendall(
            b"POST /v1/verify-task HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b'Content-Length: 1000\r\n\r\n{"benchmark":'
        )
        raw = _answer(sock)
    assert _problem(raw, 408)["detail"] == "the request's body took over 1 s (--body-timeout)"


def test_too_many_header_bytes_are_a_431(server: Server) -> None:
    sock = _connect(server)
    with sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        try:
            for n in range(200):  # 200 KiB of headers, sent as fast as it takes them
                sock.sendall(f"X-Filler-{n}: ".encode() + b"a" * 1024 + b"\r\n")
        except OSError:
            pass  # the server closed it mid-way
        raw = _answer(sock)
    assert _problem(raw, 431)["detail"] == "request headers over 64 KiB"


def test_healthz_answers_while_slow_connections_are_open(server: Server) -> None:
    slow = [_connect(server) for _ in range(30)]
    try:
        for sock in slow:
            sock.sendall(b"POST /v1/verify-task HTTP/1.1\r\nHost: x\r\n")
        for _ in range(5):
            assert httpx.get(server.url + "/healthz", timeout=10).json() == {"status": "ok"}
        for sock in slow:  # all of them closed by the server in the end
            assert _answer(sock).startswith(b"HTTP/1.1 408 ")
    finally:
        for sock in slow:
            sock.close()
    # kept-alive requests that are quick are not cut: three on one connection
    with httpx.Client(base_url=server.url) as client:
        for _ in range(3):
            assert client.get("/healthz").status_code == 200
