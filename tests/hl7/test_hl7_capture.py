"""The MLLP capture server over real sockets, with python-hl7's asyncio MLLP client."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from hl7.mllp import open_hl7_connection

from pytest_verial.hl7 import CaptureProcess

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.sources._hl7 import Hl7Snapshot

VALID = Path(__file__).parent / "corpus" / "valid"
TEMPLATES = [
    (VALID / n).read_bytes().decode()
    for n in (
        "adt_a01.hl7",
        "adt_a04.hl7",
        "adt_a08.hl7",
        "oru_r01.hl7",
        "orm_o01.hl7",
        "siu_s12.hl7",
    )
]


def numbered(i: int) -> str:
    """Corpus message ``i % 6`` with control id ``CAP{i:05d}`` and \\r separators."""
    text = TEMPLATES[i % len(TEMPLATES)].replace("\r\n", "\r").replace("\n", "\r")
    fields = text.split("|", 10)
    fields[9] = f"CAP{i:05d}"
    return "|".join(fields)


async def send_all(port: int, payloads: list[str]) -> list[Any]:
    reader, writer = await open_hl7_connection("127.0.0.1", port, encoding="utf-8")
    acks = []
    try:
        for text in payloads:
            writer.writeblock(text.encode("utf-8"))
            await writer.drain()
            acks.append(await asyncio.wait_for(reader.readmessage(), 10))
    finally:
        writer.close()
    return acks


def test_500_messages_acked_and_recorded(verial_hl7_capture: CaptureProcess, run_hl7: Any) -> None:
    payloads = [numbered(i) for i in range(500)]
    acks = asyncio.run(send_all(verial_hl7_capture.port, payloads))
    assert len(acks) == 500
    assert all(str(a.segment("MSA")[1]) == "AA" for a in acks)
    assert [str(a.segment("MSA")[2]) for a in acks] == [f"CAP{i:05d}" for i in range(500)]
    assert str(acks[3].segment("MSH")[9]) == "ACK^R01^ACK"
    events = verial_hl7_capture.events()
    assert len(events) == 500
    assert {e["type"] for e in events} == {"hl7_outbound"}
    assert events[499]["control_id"] == "CAP00499" and events[499]["ack_code"] == "AA"
    # the recorded events are a source the check reads
    source = Hl7Snapshot.from_task_folder(verial_hl7_capture.out_path.parent.parent)
    assert len(source.messages()) == 500
    result = run_hl7(
        source,
        {
            "correlate_by": {"control_id": "CAP00123"},
            "fields": [{"path": "OBX[2].5", "expected": "0.91"}],
        },
    )
    assert result["status"] == "passed", result["details"]


def test_malformed_message_gets_ae_and_is_recorded_with_its_error(
    verial_hl7_capture: CaptureProcess,
) -> None:
    async def go() -> list[bytes]:
        reader, writer = await open_hl7_connection("127.0.0.1", verial_hl7_capture.port)
        replies = []
        for block in (
            b"MSH|^~\\&|A|B|C|D|20240101||ADT^A01|BAD1|P|\rPID|1",  # no MSH-12
            b"\x00\x01garbage",
            numbered(1).encode(),
        ):
            writer.writeblock(block)
            await writer.drain()
            replies.append(await asyncio.wait_for(reader.readblock(), 10))
        writer.close()
        return replies

    bad, garbage, good = asyncio.run(go())
    bad_text = bad.decode()
    assert "MSA|AE|BAD1|MSH-12 (version id) is missing or empty" in bad_text
    assert "\rERR|||207^Application internal error^HL70357|E||||MSH-12" in bad_text
    assert "MSA|AE||binary data" in garbage.decode()
    assert "MSA|AA|CAP00001" in good.decode()
    events = verial_hl7_capture.events()
    assert [e["ack_code"] for e in events] == ["AE", "AE", "AA"]
    assert events[0]["error"] == "MSH-12 (version id) is missing or empty"
    assert events[0]["payload"].startswith("MSH|^~\\&|A|B")


def test_survives_client_disconnecting_mid_frame(verial_hl7_capture: CaptureProcess) -> None:
    port = verial_hl7_capture.port
    with socket.create_connection(("127.0.0.1", port)) as raw:
        raw.sendall(b"\x0b" + numbered(7).encode()[:60])  # no <FS><CR>
    with socket.create_connection(("127.0.0.1", port)) as raw:  # a frame without <VT>
        raw.sendall(b"MSH|no start block\x1c\r")
        assert b"MSA|AE||frame does not start with <VT>" in raw.recv(4096)
    acks = asyncio.run(send_all(port, [numbered(8), numbered(9)]))
    assert [str(a.segment("MSA")[2]) for a in acks] == ["CAP00008", "CAP00009"]
    events = verial_hl7_capture.events()
    accepted = [e.get("control_id") for e in events if not e.get("error")]
    assert accepted == ["CAP00008", "CAP00009"]
    # both broken frames are recorded as rejected: the truncated one is no longer dropped
    errors = [e["error"] for e in events if e.get("error")]
    assert len(errors) == 2, errors
    assert any("frame does not start with <VT>" in e for e in errors), errors
    assert any("connection closed inside a frame" in e for e in errors), errors


def test_concurrent_clients(verial_hl7_capture: CaptureProcess) -> None:
    async def go() -> list[list[Any]]:
        batches = [[numbered(c * 100 + i) for i in range(25)] for c in range(4)]
        return await asyncio.gather(*(send_all(verial_hl7_capture.port, b) for b in batches))

    results = asyncio.run(go())
    assert sum(len(r) for r in results) == 100
    assert len({e["control_id"] for e in verial_hl7_capture.events()}) == 100


def test_cli_hl7_capture_process(tmp_path: Path) -> None:
    out = tmp_path / "events.jsonl"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pytest_verial.cli",
            "hl7-capture",
            "--port",
            "0",
            "--out",
            str(out),
        ],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        match = re.search(r"listening for MLLP on 127\.0\.0\.1:(\d+)", line)
        assert match, line
        acks = asyncio.run(send_all(int(match.group(1)), [numbered(i) for i in range(3)]))
        assert len(acks) == 3
    finally:
        proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 10
        while proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0
    assert "3 messages recorded" in proc.stderr.read()
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["control_id"] for r in rows] == ["CAP00000", "CAP00001", "CAP00002"]
