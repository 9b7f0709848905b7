"""Interop benchmark: HL7 parse + check per message, X12 per transaction (835, 1,000 claims).

    python bench/interop.py [--repeat N]

Prints a Markdown table (median of ``--repeat`` runs each). All figures come from one process
run, so the ratios between rows are comparable; absolute times depend on the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HL7_CORPUS = ROOT / "tests" / "hl7" / "corpus" / "valid"


def timed(fn: Callable[[], Any], repeat: int) -> float:
    """Median wall time of ``fn()`` in seconds over ``repeat`` runs."""
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def context(source_name: str, source: Any, assertion: dict[str, Any]) -> tuple[Any, Any]:
    from pytest_verial import CheckContext, Task

    # private: internals with no public face (issue 32: a test is not a user)
    from pytest_verial._models import Criterion
    from pytest_verial.checks import default_registry

    check = default_registry().get(assertion["assert"])
    assert check is not None
    criterion = Criterion(id="c", assertion=assertion)
    ctx = CheckContext(
        sources={source_name: source},
        task=Task(id="t", criteria=[criterion]),
        task_key="t",
        criterion=criterion,
        criterion_id="c",
        entity=None,
        pass_threshold=1.0,
    )
    return check, (check.model.model_validate(assertion), ctx)


def hl7_rows(repeat: int) -> list[tuple[str, str]]:
    import hl7

    from pytest_verial.hl7 import Hl7Message, get, parse_stream

    # private: internals with no public face (issue 32: a test is not a user)
    from pytest_verial.hl7._parse import decode, validate_message

    texts = [
        decode(p.read_bytes()).replace("\r\n", "\r").replace("\n", "\r").strip()
        for p in sorted(HL7_CORPUS.glob("*.hl7"))
    ]
    n = 1000
    batch = [texts[i % len(texts)] for i in range(n)]
    stream = "\r".join(batch)

    class Source:
        def __init__(self, messages: list[Hl7Message]) -> None:
            self._m = messages

        def messages(self) -> list[Hl7Message]:
            return self._m

        def rejected(self) -> list[dict[str, Any]]:
            return []

    assertion = {
        "assert": "hl7-structural",
        "correlate_by": {"trigger_event": "R01"},
        "fields": [
            {"path": "PID.5.1", "expected": "CHEN"},
            {"path": "OBX[2].5", "expected": "0.91"},
            {"path": "OBX[*].11", "expected": "F", "quantifier": "all"},
            {"path": "MSH.10", "op": "exists"},
        ],
    }

    def validate_only() -> None:
        for t in batch:
            validate_message(t)

    def raw_hl7() -> None:
        for t in batch:
            hl7.parse(t)

    def parse_and_read() -> None:
        for m in parse_stream(stream, "bench"):
            get(m, "PID.5.1")

    def parse_and_check_one_each() -> None:
        # every message its own sandbox: read, parse fully, score 4 fields
        for t in batch:
            message = parse_stream(t, "bench")[0]
            message.parsed  # noqa: B018 - force the full parse
            check, (spec, ctx) = context(
                "hl7",
                Source([message]),
                {**assertion, "correlate_by": {"control_id": message.control_id}},
            )
            check.run(spec, ctx)

    def check_over_stream() -> None:
        # one sandbox of 1,000 messages, one criterion: correlation reads MSH only
        messages = parse_stream(stream, "bench")
        check, (spec, ctx) = context("hl7", Source(messages), assertion)
        check.run(spec, ctx)

    rows = []
    for label, fn in [
        ("structural validation only (capture server path)", validate_only),
        ("python-hl7 `hl7.parse` alone", raw_hl7),
        ("split + validate + first path read (parse on demand)", parse_and_read),
        ("parse + full check (4 fields) per message", parse_and_check_one_each),
    ]:
        per = timed(fn, repeat) / n
        rows.append((f"HL7: {label}", f"{per * 1e3:.3f} ms / message"))
    whole = timed(check_over_stream, repeat)
    rows.append(
        (
            "HL7: one criterion over a 1,000-message sandbox (correlate on MSH-9)",
            f"{whole * 1e3:.1f} ms total ({whole / n * 1e3:.3f} ms / message)",
        )
    )
    return rows


def mllp_rows() -> list[tuple[str, str]]:
    from hl7.mllp import open_hl7_connection

    from pytest_verial.hl7 import CaptureProcess

    text = (HL7_CORPUS / "oru_r01.hl7").read_bytes()
    n = 500

    async def send(port: int) -> None:
        reader, writer = await open_hl7_connection("127.0.0.1", port)
        for _ in range(n):
            writer.writeblock(text)
            await writer.drain()
            await reader.readblock()
        writer.close()

    with tempfile.TemporaryDirectory() as tmp, CaptureProcess(Path(tmp) / "e.jsonl") as cap:
        start = time.perf_counter()
        asyncio.run(send(cap.port))
        elapsed = time.perf_counter() - start
    return [
        (
            "MLLP capture: 500 ORU^R01 sent + ACKed + recorded, one connection",
            f"{elapsed / n * 1e3:.3f} ms / round trip ({n / elapsed:.0f} messages/s)",
        )
    ]


def x12_rows(repeat: int) -> list[tuple[str, str]]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ helpers
    from pytest_verial.x12 import Transaction, get, parse_interchanges
    from tests.x12.x12_build import claims_835, interchange

    text = interchange([("835", "005010X221A1", claims_835(1000))], control=9001)
    size = len(text)

    class Source:
        def __init__(self, transactions: list[Transaction]) -> None:
            self._t = transactions

        def transactions(self) -> list[Transaction]:
            return self._t

    assertion = {
        "assert": "x12-response",
        "transaction": "835",
        "correlate_by": {"trace_number": "EFT20240320001"},
        "fields": [
            {"path": "BPR02", "expected": "120000.00"},
            {"path": "CLP[CLP01=PCN000500].CLP04", "expected": "120.00"},
            {"path": "CLP[CLP01=PCN000999]/SVC.SVC01-2", "expected": "99214"},
            {"path": "CLP[*].CLP02", "expected": "1", "quantifier": "all"},
        ],
    }

    def parse() -> list[Transaction]:
        return parse_interchanges(text, "bench.x12")

    def parse_and_check() -> None:
        check, (spec, ctx) = context("x12", Source(parse()), assertion)
        outcome = check.run(spec, ctx)
        assert outcome.score == 1.0, outcome.details

    transactions = parse()
    assert len(transactions[0].segments) == 1000 * 9 + 15

    def one_path() -> None:
        get(transactions[0], "CLP[CLP01=PCN000999]/SVC.SVC03")

    t_parse = timed(parse, repeat)
    t_all = timed(parse_and_check, repeat)
    t_path = timed(one_path, max(repeat, 20))
    return [
        (
            f"X12 835, 1,000 claims ({size / 1024:.0f} KiB, 9,015 segments): tokenize + envelope",
            f"{t_parse * 1e3:.1f} ms / transaction",
        ),
        (
            "X12 835, 1,000 claims: parse + check (4 fields, incl. CLP[*] all)",
            f"{t_all * 1e3:.1f} ms / transaction",
        ),
        (
            "X12 835, 1,000 claims: one scoped path `CLP[CLP01=…]/SVC.SVC03`",
            f"{t_path * 1e3:.2f} ms",
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-mllp", action="store_true", help="skip the socket round trip")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "src"))
    rows = hl7_rows(args.repeat) + x12_rows(args.repeat)
    if not args.no_mllp:
        rows += mllp_rows()
    print("| measurement | median |")
    print("|---|---|")
    for label, value in rows:
        print(f"| {label} | {value} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
