"""hl7-structural: sources (files, MLLP framing, events), correlation, match modes, evidence."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.checks._registry import builtin_check

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.sources._hl7 import Hl7Snapshot

CHECK = builtin_check("hl7-structural")

VALID = Path(__file__).parent / "corpus" / "valid"
MALFORMED = Path(__file__).parent / "corpus" / "malformed"
EXPECTED = json.loads((MALFORMED / "expected.json").read_text(encoding="utf-8"))


def raw(name: str) -> str:
    return (VALID / name).read_bytes().decode("utf-8")


def sandbox(tmp_path: Path, **files: str | bytes) -> Hl7Snapshot:
    folder = tmp_path / "hl7_outbound"
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        target = folder / name.replace("__", ".")
        if isinstance(data, bytes):
            target.write_bytes(data)
        else:
            target.write_text(data, encoding="utf-8", newline="")
    return Hl7Snapshot.from_task_folder(tmp_path)


def corpus_source() -> Hl7Snapshot:
    return Hl7Snapshot(sorted(VALID.glob("*.hl7")), [])


@pytest.mark.parametrize("separator", ["\r", "\n", "\r\n"])
def test_segment_separators_all_read_the_same(tmp_path: Path, run_hl7: Any, separator: str) -> None:
    text = raw("oru_r01.hl7").replace("\r", separator)
    source = sandbox(tmp_path, a__hl7=text)
    result = run_hl7(
        source,
        {
            "correlate_by": {"MSH.9.1": "ORU", "MSH.9.2": "R01"},
            "fields": [
                {"path": "OBX[2].5", "expected": "0.91"},
                {"path": "PID.5.1", "expected": "CHEN"},
            ],
        },
    )
    assert result["status"] == "passed", result["details"]
    assert result["evidence"]["message"]["control_id"] == "QD-ORU-88120455"
    assert result["evidence"]["message"]["type"] == "ORU^R01^ORU_R01"


def test_mllp_framed_file_with_several_messages(tmp_path: Path, run_hl7: Any) -> None:
    framed = "".join(f"\x0b{raw(n)}\x1c\r" for n in ("adt_a01.hl7", "adt_a08.hl7", "siu_s12.hl7"))
    source = sandbox(tmp_path, stream__hl7=framed.encode("utf-8"))
    assert [m.trigger_event for m in source.messages()] == ["A01", "A08", "S12"]
    assert source.messages()[1].origin.endswith("stream.hl7 message 2")
    result = run_hl7(
        source,
        {
            "correlate_by": {"trigger_event": "S12"},
            "fields": [{"path": "AIS.3.1", "expected": "72148"}],
        },
    )
    assert result["status"] == "passed"


def test_unframed_file_with_several_messages_and_batch_envelope(tmp_path: Path) -> None:
    text = "FHS|^~\\&|X\rBHS|^~\\&|X\r" + raw("adt_a01.hl7") + raw("oru_r01.hl7") + "BTS|2\rFTS|1\r"
    source = sandbox(tmp_path, batch__hl7=text)
    assert [m.control_id for m in source.messages()] == ["ADT20240315000123", "QD-ORU-88120455"]


def test_correlate_by_any_field_path_and_trigger(run_hl7: Any) -> None:
    source = corpus_source()
    by_mrn = run_hl7(
        source,
        {
            "correlate_by": {"PID.3.1": "VO0077123", "trigger_event": "O01"},
            "fields": [{"path": "OBR.4.1", "expected": "72148"}],
        },
    )
    assert by_mrn["status"] == "passed"
    assert by_mrn["evidence"]["message"]["control_id"] == "VO-ORM-000412"
    # a repeated identifier matches on any repetition ([*] in correlate_by)
    by_member = run_hl7(
        source, {"correlate_by": {"PID.3[*].1": "W123456789", "trigger_event": "A08"}}
    )
    assert by_member["evidence"]["message"]["control_id"] == "ADT20240316004410"
    one_of = run_hl7(source, {"correlate_by": {"trigger_event": ["A04", "A05"]}})
    assert one_of["evidence"]["message"]["trigger_event"] == "A04"


def test_field_failures_give_partial_score_and_field_results(run_hl7: Any) -> None:
    result = run_hl7(
        corpus_source(),
        {
            "correlate_by": {"message_type": "ADT", "trigger_event": "A01"},
            "fields": [
                {"path": "PID.5.1", "expected": "CHEN"},
                {"path": "PID.5.2", "expected": "MARIE"},
                {"path": "PV1.2", "expected": "I"},
                {"path": "PID.3[2].1", "expected": "W123456789"},
            ],
        },
    )
    assert result["score"] == 0.75
    assert result["status"] == "failed"
    rows = result["evidence"]["field_results"]
    assert rows[1] == {"path": "PID.5.2", "expected": "MARIE", "actual": "MARIA", "passed": False}
    assert "PID.5.2: expected 'MARIE', got 'MARIA'" in result["details"]


def test_ops_and_wildcard_quantifiers(run_hl7: Any) -> None:
    base = {"correlate_by": {"trigger_event": "R01"}}
    result = run_hl7(
        corpus_source(),
        {
            **base,
            "fields": [
                {"path": "OBX[*].8", "expected": "H"},  # any
                {"path": "OBX[*].11", "expected": "F", "quantifier": "all"},  # all final
                {"path": "OBX[*].8", "expected": "N", "quantifier": "all"},  # not all N
                {"path": "OBX[1].5", "op": "gt", "expected": 99},
                {"path": "OBX[9].5", "op": "absent"},
                {"path": "PID.3[*].1", "op": "regex", "expected": "^MRN\\d+$"},
            ],
        },
    )
    passed = [r["passed"] for r in result["evidence"]["field_results"]]
    assert passed == [True, True, False, True, True, True]
    assert result["evidence"]["field_results"][2]["actual"] == ["H", "N", "N", "N", "A"]


def events_file(tmp_path: Path, rows: list[dict[str, Any]]) -> Hl7Snapshot:
    folder = tmp_path / "hl7_outbound"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "events.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return Hl7Snapshot.from_task_folder(tmp_path)


def test_events_latest_first_any_all(tmp_path: Path, run_hl7: Any) -> None:
    a08 = raw("adt_a08.hl7")
    older = a08.replace("ADT20240316004410", "OLD1").replace("4W^415^A", "4W^401^A")
    newer = a08.replace("ADT20240316004410", "NEW1")
    source = events_file(
        tmp_path,
        [
            {"type": "hl7_outbound", "payload": newer, "created_at": "2024-03-16T14:05:00Z"},
            {"type": "fhir_request", "payload": "GET /Patient"},
            {"type": "hl7_outbound", "payload": older, "created_at": "2024-03-16T13:00:00Z"},
        ],
    )
    fields = [{"path": "PV1.3.2", "expected": "401"}]
    latest = run_hl7(source, {"correlate_by": {"trigger_event": "A08"}, "fields": fields})
    assert latest["evidence"]["message"]["control_id"] == "NEW1"  # by created_at, not row order
    assert latest["score"] == 0 and "latest of 2 matching messages" in latest["details"]
    first = run_hl7(
        source, {"correlate_by": {"trigger_event": "A08"}, "fields": fields, "match": "first"}
    )
    assert first["evidence"]["message"]["control_id"] == "OLD1" and first["score"] == 1
    best = run_hl7(
        source, {"correlate_by": {"trigger_event": "A08"}, "fields": fields, "match": "any"}
    )
    assert best["evidence"]["message"]["control_id"] == "OLD1"
    every = run_hl7(
        source, {"correlate_by": {"trigger_event": "A08"}, "fields": fields, "match": "all"}
    )
    assert every["score"] == 0.5
    assert every["evidence"]["message"]["control_id"] == "NEW1"  # the worst one is shown
    assert [m["control_id"] for m in every["evidence"]["messages"]] == ["OLD1", "NEW1"]


def test_no_match_scores_zero_and_lists_what_was_sent(run_hl7: Any) -> None:
    result = run_hl7(corpus_source(), {"correlate_by": {"trigger_event": "A03"}})
    assert result["score"] == 0 and result["status"] == "failed"
    assert "no outbound HL7 message matching {'trigger_event': 'A03'}" in result["details"]
    assert "1x ORU^R01^ORU_R01" in result["details"]


def test_empty_sandbox_is_no_target_not_an_error(tmp_path: Path, run_hl7: Any) -> None:
    result = run_hl7(
        Hl7Snapshot.from_task_folder(tmp_path), {"correlate_by": {"trigger_event": "A01"}}
    )
    assert result["status"] == "failed" and "0 sent" in result["details"]


def test_rejected_capture_rows_are_counted_not_candidates(tmp_path: Path, run_hl7: Any) -> None:
    source = events_file(
        tmp_path,
        [
            {
                "type": "hl7_outbound",
                "payload": "garbage",
                "ack_code": "AE",
                "error": "message starts with 'gar', not MSH",
            },
        ],
    )
    result = run_hl7(source, {"correlate_by": {"trigger_event": "A01"}})
    assert result["status"] == "failed"
    assert result["evidence"]["rejected"] == 1
    assert "not MSH" in result["details"]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_malformed_file_is_a_criterion_error_naming_it(
    tmp_path: Path, run_hl7: Any, name: str
) -> None:
    shutil.copy(MALFORMED / name, tmp_path / name)
    source = Hl7Snapshot([tmp_path / name], [])
    result = run_hl7(source, {"correlate_by": {"trigger_event": "A04"}})
    assert result["status"] == "error"
    assert name in result["details"]
    assert EXPECTED[name] in result["details"]


def test_malformed_corpus_has_twenty_samples() -> None:
    assert len(EXPECTED) >= 20


@pytest.mark.parametrize(
    ("rows", "fragment"),
    [
        ('{"type": "hl7_outbound", "payload": \n', "events.jsonl:1: invalid JSON line"),
        ('["not", "an", "object"]\n', "events.jsonl:1: expected an event object"),
        ('{"type": "hl7_outbound"}\n', "events.jsonl:1: hl7_outbound event has no 'payload'"),
        (
            '{"type": "voice_turn"}\n{"type": "hl7_outbound", "payload": "PID|1"}\n',
            "events.jsonl:2: segment 1",
        ),
        # blank lines are skipped but still counted
        ('{"type": "voice_turn"}\n\n\n["x"]\n', "events.jsonl:4: expected an event object"),
        # lines that end in a lone CR, as the text reader splits them
        (b'{"type": "voice_turn"}\r\r{"type": "\xff"}\r', "events.jsonl:3: not UTF-8 text"),
        # a bad byte past the reader's first 8 KiB block
        (b'{"type": "voice_turn"}\n' * 900 + b'{"\xff"}\n', "events.jsonl:901: not UTF-8 text"),
    ],
)
def test_malformed_events_name_file_and_line(
    tmp_path: Path, run_hl7: Any, rows: str | bytes, fragment: str
) -> None:
    folder = tmp_path / "hl7_outbound"
    folder.mkdir()
    data = rows if isinstance(rows, bytes) else rows.encode()
    (folder / "events.jsonl").write_bytes(data)
    result = run_hl7(Hl7Snapshot.from_task_folder(tmp_path), {"correlate_by": {}})
    assert result["status"] == "error"
    assert fragment in result["details"]


@pytest.mark.parametrize(
    ("assertion", "fragment"),
    [
        ({"fields": [{"path": "PID.5.0", "expected": "x"}]}, "1-based"),
        ({"fields": [{"path": "pid-5", "expected": "x"}]}, "not SEG[n]"),
        ({"correlate_by": {"event": "A01"}}, "correlate_by key 'event'"),
        ({"match": "newest"}, "match"),
        ({"fields": [{"path": "OBX[*].5", "quantifier": "most"}]}, "quantifier"),
    ],
)
def test_bad_assertions_are_refused_at_validation(assertion: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ValidationError, match=fragment.replace("[", r"\[")):
        CHECK.model.model_validate({"assert": "hl7-structural", **assertion})


def test_wildcard_over_no_segments_is_a_missing_value(run_hl7: Any) -> None:
    """An ADT has no OBX: ``OBX[*].5`` is absent (so ``op: absent`` passes, any other fails)."""
    result = run_hl7(
        corpus_source(),
        {
            "correlate_by": {"trigger_event": "A04"},
            "fields": [
                {"path": "OBX[*].5", "op": "absent"},
                {"path": "OBX[*].5", "op": "absent", "quantifier": "all"},
                {"path": "OBX[*].5", "op": "exists"},
                {"path": "OBX[*].11", "expected": "F", "quantifier": "all"},
            ],
        },
    )
    passed = [r["passed"] for r in result["evidence"]["field_results"]]
    assert passed == [True, True, False, False]
