"""An MLLP capture server: the live HL7 source an agent under test sends to.

It listens on a TCP port (127.0.0.1 by default), reads MLLP frames (``<VT>msg<FS><CR>``), answers
each with an ACK and appends one SandboxEvent row per message to a JSON Lines file::

    {"type": "hl7_outbound", "payload": "MSH|...", "created_at": "...Z", "peer": "...",
     "control_id": "MSG0001", "ack_code": "AA"}

Each message is validated structurally (:func:`pytest_verial.hl7._parse.validate_message`:
MSH, encoding characters, MSH-9/10/12, segment ids, no binary) without building the full
python-hl7 tree, so the ACK is quick; the check parses it later. A message that fails gets
``MSA|AE`` with the reason (also in an ERR segment) and is recorded with ``ack_code: "AE"``
and ``error``, so the ``hl7-structural`` check can say why nothing matched. A client that
disconnects in the middle of a frame loses that frame only; the server keeps serving.
Connections are persistent: a client may send any number of messages on one connection.

Entry points: :func:`run_capture` (blocking, for ``verial hl7-capture``),
:class:`CaptureProcess` (the same command as a child process, for fixtures),
:class:`CaptureThread` (a server on a background thread, in-process) and
:func:`add_hl7_capture_parser` (the sub-command for the ``verial`` CLI).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from ._parse import Hl7ParseError, decode, validate_message

#: Largest frame accepted (bytes); larger ones are answered AE and discarded.
FRAME_LIMIT = 16 * 1024 * 1024


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _escape(text: str) -> str:
    """Text safe inside an HL7 field with the default encoding characters."""
    out = text.replace("\\", "\\E\\").replace("|", "\\F\\").replace("^", "\\S\\")
    out = out.replace("&", "\\T\\").replace("~", "\\R\\")
    return " ".join(out.split())[:400]


def _msh_fields(text: str) -> list[str]:
    """MSH fields of a (possibly broken) message, best effort: [MSH-1, MSH-2, MSH-3, ...]."""
    first = text.lstrip().split("\r", 1)[0].split("\n", 1)[0]
    if not first.startswith("MSH") or len(first) < 4:
        return []
    sep = first[3]
    return [sep, *first[4:].split(sep)]


def build_ack(text: str, code: str, reason: str | None = None) -> str:
    """An ACK for the message ``text``: ``MSA|code|<MSH-10>`` plus ``ERR`` when rejected."""
    msh = _msh_fields(text)

    def field(n: int) -> str:
        if len(msh) < n:
            return ""
        value = msh[n - 1]
        return value if len(msh) > 1 and msh[0] == "|" and msh[1] == "^~\\&" else _escape(value)

    trigger = field(9).split("^")[1] if "^" in field(9) else ""
    segments = [
        "|".join(
            [
                "MSH",
                "^~\\&",
                "VERIAL",
                "CAPTURE",
                field(3),
                field(4),
                datetime.now(UTC).strftime("%Y%m%d%H%M%S"),
                "",
                f"ACK^{trigger}^ACK",
                uuid.uuid4().hex[:20],
                "P",
                field(12) or "2.5.1",
            ]
        ),
        "|".join(["MSA", code, field(10), _escape(reason or "")]).rstrip("|"),
    ]
    if code != "AA":
        err = "ERR|||207^Application internal error^HL70357|E||||"
        segments.append(err + _escape(reason or ""))
    return "\r".join(segments) + "\r"


class Recorder:
    """Appends event rows to the events file, one flushed line each."""

    def __init__(self, out_path: Path) -> None:
        from ..reporting._outputs import open_append

        self.out_path = out_path
        # a regular file only: never a device or a pipe (pytest_verial.reporting._outputs)
        self._handle: IO[str] = os.fdopen(open_append(out_path), "a", encoding="utf-8")
        self.count = 0

    def record(self, row: dict[str, Any]) -> None:
        """Write one row."""
        self._handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        self._handle.flush()
        self.count += 1

    def close(self) -> None:
        """Close the events file."""
        self._handle.close()


def handle_payload(data: bytes, peer: str, recorder: Recorder) -> str:
    """Validate one frame's payload, record it, and return the ACK text to send back."""
    text = decode(data)
    row: dict[str, Any] = {
        "type": "hl7_outbound",
        "payload": text,
        "created_at": _now(),
        "peer": peer,
    }
    try:
        normalised, msh = validate_message(text)
    except Hl7ParseError as exc:
        row.update(ack_code="AE", error=str(exc), control_id=None)
        recorder.record(row)
        return build_ack(text, "AE", str(exc))
    row.update(ack_code="AA", control_id=msh[9], message_type=msh[8])
    recorder.record(row)
    return build_ack(normalised, "AA")


def _reject_frame(reason: str, peer: str, recorder: Recorder) -> str:
    """Record a frame that is not an HL7 message at all, and the AE that answers it."""
    recorder.record(
        {
            "type": "hl7_outbound",
            "payload": "",
            "created_at": _now(),
            "peer": peer,
            "ack_code": "AE",
            "error": reason,
        }
    )
    return build_ack("", "AE", reason)


async def _serve_client(reader: Any, writer: Any, recorder: Recorder) -> None:
    from hl7.mllp import InvalidBlockError  # type: ignore[import-untyped]

    peername = writer.get_extra_info("peername") or ("?", 0)
    peer = f"{peername[0]}:{peername[1]}"
    try:
        while True:
            try:
                block = await reader.readblock()
            except asyncio.IncompleteReadError as exc:
                if exc.partial.strip(b"\r\n\t "):  # closed inside a frame: never silently
                    _reject_frame(
                        f"connection closed inside a frame: {len(exc.partial):,} bytes of a "
                        "truncated message dropped",
                        peer,
                        recorder,
                    )
                return
            except InvalidBlockError:
                ack = _reject_frame(
                    "frame does not start with <VT> (0x0b): not MLLP", peer, recorder
                )
            except ValueError:
                ack = _reject_frame(f"frame longer than {FRAME_LIMIT} bytes", peer, recorder)
            else:
                ack = handle_payload(block, peer, recorder)
            writer.writeblock(ack.encode("utf-8"))
            await writer.drain()
    except (ConnectionError, OSError):
        return
    finally:
        writer.close()


async def start_capture(host: str, port: int, recorder: Recorder) -> asyncio.Server:
    """Start the MLLP server on the running loop; port 0 picks a free port."""
    from hl7.mllp import start_hl7_server

    async def on_client(reader: Any, writer: Any) -> None:
        await _serve_client(reader, writer, recorder)

    server: asyncio.Server = await start_hl7_server(on_client, host, port, limit=FRAME_LIMIT)
    return server


def run_capture(host: str, port: int, out_path: Path | str) -> int:
    """Serve until interrupted (Ctrl-C / SIGTERM); the ``verial hl7-capture`` command.

    Prints ``hl7-capture: listening for MLLP on HOST:PORT, ...`` on stderr once bound (with
    ``port=0`` that line tells the chosen port) and the number of messages at exit.
    """
    recorder = Recorder(Path(out_path))

    async def main() -> None:
        server = await start_capture(host, port, recorder)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        bound = server.sockets[0].getsockname()
        print(
            f"hl7-capture: listening for MLLP on {bound[0]}:{bound[1]}, writing {out_path}",
            file=sys.stderr,
            flush=True,
        )
        async with server:
            await stop.wait()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
    finally:
        recorder.close()
        print(f"hl7-capture: {recorder.count} messages recorded", file=sys.stderr)
    return 0


class CaptureThread:
    """A capture server on its own event loop in a daemon thread (fixtures, tests)."""

    def __init__(self, out_path: Path, host: str = "127.0.0.1", port: int = 0) -> None:
        self.out_path = Path(out_path)
        self.host = host
        self.port = port
        self.recorder = Recorder(self.out_path)
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.Server | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def start(self) -> CaptureThread:
        """Start listening; returns once the port is bound."""
        self._thread.start()
        future = asyncio.run_coroutine_threadsafe(
            start_capture(self.host, self.port, self.recorder), self._loop
        )
        self._server = future.result(timeout=10)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def events(self) -> list[dict[str, Any]]:
        """The rows recorded so far."""
        text = self.out_path.read_text(encoding="utf-8") if self.out_path.exists() else ""
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def stop(self) -> None:
        """Stop listening, close the events file and end the thread."""
        if self._server is not None:
            server = self._server

            async def close() -> None:
                server.close()
                await server.wait_closed()

            asyncio.run_coroutine_threadsafe(close(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self.recorder.close()

    def __enter__(self) -> CaptureThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class CaptureProcess:
    """``verial hl7-capture`` in a child process (the fixture's server; stopped by its PID).

    A separate process keeps the client under test and the server from sharing one GIL.
    """

    def __init__(self, out_path: Path, host: str = "127.0.0.1", port: int = 0) -> None:
        self.out_path = Path(out_path)
        self.host = host
        self.port = port
        self._proc: subprocess.Popen[str] | None = None
        self.stderr_tail = ""

    def start(self, timeout: float = 20.0) -> CaptureProcess:
        """Start the child and wait until it reports its bound port."""
        self.out_path.parent.mkdir(parents=True, exist_ok=True)
        self._proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pytest_verial.hl7._capture",
                "--port",
                str(self.port),
                "--out",
                str(self.out_path),
                "--host",
                self.host,
            ],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        assert self._proc.stderr is not None
        ready: list[str] = []
        reader = threading.Thread(
            target=lambda: ready.append(self._proc.stderr.readline()),  # type: ignore[union-attr]
            daemon=True,
        )
        reader.start()
        reader.join(timeout)
        line = ready[0] if ready else ""
        if " on " not in line:
            self.stop()
            raise RuntimeError(f"hl7-capture did not start: {line or 'no output'}")
        self.port = int(line.split(" on ", 1)[1].split(",", 1)[0].rsplit(":", 1)[1])
        return self

    def events(self) -> list[dict[str, Any]]:
        """The rows recorded so far."""
        text = self.out_path.read_text(encoding="utf-8") if self.out_path.exists() else ""
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def stop(self) -> int | None:
        """SIGTERM the child (by PID), wait for it, return its exit code."""
        proc = self._proc
        if proc is None:
            return None
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        if proc.stderr is not None:
            self.stderr_tail = proc.stderr.read()
            proc.stderr.close()
        self._proc = None
        return proc.returncode

    def __enter__(self) -> CaptureProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def configure_parser(parser: argparse.ArgumentParser) -> None:
    """Options of ``verial hl7-capture``: ``--port P --out events.jsonl [--host H]``."""
    parser.description = (
        "Listen for HL7 v2 over MLLP, ACK each message (AA, or AE with the reason when it "
        "cannot be parsed) and append it to an events file as SandboxEvent rows."
    )
    parser.add_argument("--port", type=int, required=True, help="TCP port (0: any free port)")
    parser.add_argument("--out", required=True, help="events file to append to (JSON Lines)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")


def run_from_args(args: argparse.Namespace) -> int:
    """Run the capture with parsed ``verial hl7-capture`` arguments; exit 2 on a usage error,
    4 when ``--out`` is not a regular file (a folder, a device, a pipe)."""
    from ..reporting._outputs import EXIT_REFUSED, Output, OutputRefused, check_outputs

    if not 0 <= args.port <= 65535:
        print(f"hl7-capture: --port {args.port} is not a TCP port (0-65535)", file=sys.stderr)
        return 2
    try:
        check_outputs([Output("--out", Path(args.out), "append")])
    except OutputRefused as exc:
        print(f"hl7-capture: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    try:
        return run_capture(args.host, args.port, args.out)
    except OSError as exc:
        print(
            f"hl7-capture: cannot listen on {args.host}:{args.port} or write {args.out}: "
            f"{exc.strerror or exc}",
            file=sys.stderr,
        )
        return 2


def add_hl7_capture_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``hl7-capture`` sub-command to an argparse ``subparsers`` object."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "hl7-capture", help="listen for HL7 v2 over MLLP and record each message"
    )
    configure_parser(parser)
    parser.set_defaults(func=run_from_args)
    return parser


def main(argv: list[str] | None = None) -> int:
    """``python -m pytest_verial.hl7._capture --port P --out FILE`` (what ``verial
    hl7-capture`` runs; the capture fixture starts it this way)."""
    parser = argparse.ArgumentParser(prog="verial")
    sub = parser.add_subparsers(dest="command", required=True)
    add_hl7_capture_parser(sub)
    ns = parser.parse_args(["hl7-capture", *(argv if argv is not None else sys.argv[1:])])
    return int(ns.func(ns))


if __name__ == "__main__":
    raise SystemExit(main())
