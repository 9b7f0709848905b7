"""x12-response: sources (files, records.jsonl), correlation, envelope problems, errors."""

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
from pytest_verial.sources._x12 import X12Snapshot

CHECK = builtin_check("x12-response")

CORPUS = Path(__file__).parent / "corpus"
VALID = CORPUS / "valid"
MALFORMED = CORPUS / "malformed"
EXPECTED = json.loads((MALFORMED / "expected.json").read_text(encoding="utf-8"))


def corpus_source() -> X12Snapshot:
    return X12Snapshot.from_folder(VALID)


def test_snapshot_reads_files_and_records() -> None:
    kinds = sorted(t.set_id for t in corpus_source().transactions())
    assert kinds == ["271", "271", "271", "277", "278", "278", "835", "999"]


def test_eligibility_by_trace_number(run_x12: Any) -> None:
    result = run_x12(
        corpus_source(),
        {
            "transaction": "271",
            "correlate_by": {"trace_number": "93175-012547"},
            "fields": [
                {"path": "EB01", "expected": "1"},
                {"path": "EB[EB01=B][EB03=98].EB07", "expected": 30},
                {"path": "EB[EB01=C,EB06=29].EB07", "op": "lt", "expected": 1000},
                {"path": "HL[HL03=22]/NM1[NM101=IL].NM109", "expected": "W123456789"},
            ],
        },
    )
    assert result["status"] == "passed", result["details"]
    evidence = result["evidence"]
    assert evidence["transaction"]["set_id"] == "271"
    assert evidence["transaction"]["version"] == "005010X279A1"
    assert evidence["envelope_problems"] == []
    assert evidence["candidates"] == 3  # two files + the records.jsonl response
    assert evidence["transaction"]["origin"].endswith("records.jsonl:1 response")  # latest


def test_transaction_pair_name_and_member_id(run_x12: Any) -> None:
    result = run_x12(
        corpus_source(),
        {
            "transaction": "276/277",
            "correlate_by": {"member_id": "XEB904417731"},
            "fields": [
                {"path": "STC01-2", "expected": "65"},
                {"path": "TRN[TRN02=CLMSTAT-7790-01]/STC.STC01-1", "expected": "F1"},
            ],
        },
    )
    assert result["score"] == 0.5
    assert result["evidence"]["fieldResults"][1]["actual"] == "P1"
    assert "expected 'F1', got 'P1'" in result["details"]


def test_prior_auth_decision_and_control_numbers(run_x12: Any) -> None:
    certified = run_x12(
        corpus_source(),
        {
            "transaction": 278,
            "correlate_by": {"trace_number": "PA-2024-0318-5521"},
            "fields": [
                {"path": "HCR01", "expected": "A1"},
                {"path": "HCR02", "op": "regex", "expected": "^BSC\\d{8}$"},
            ],
        },
    )
    assert certified["status"] == "passed"
    denied = run_x12(
        corpus_source(),
        {
            "transaction": "278",
            "correlate_by": {"interchange_control_number": "000003121"},
            "fields": [{"path": "HCR01", "expected": "A1"}],
        },
    )
    assert denied["score"] == 0
    assert denied["evidence"]["transaction"]["interchange_control_number"] == "000003121"
    by_group = run_x12(
        corpus_source(), {"correlate_by": {"group_control_number": 4501, "control_number": "0001"}}
    )
    assert by_group["evidence"]["transaction"]["set_id"] == "835"


def test_835_and_999(run_x12: Any) -> None:
    remit = run_x12(
        corpus_source(),
        {
            "transaction": "835",
            "fields": [
                {"path": "CLP[CLP01=VO0082299-01].CLP02", "expected": "4"},
                {"path": "CLP[CLP01=VO0082213-01]/SVC[*].SVC03", "expected": "210.00"},
                {"path": "CLP[*].CLP02", "expected": "4", "quantifier": "all"},
            ],
        },
    )
    assert [r["passed"] for r in remit["evidence"]["fieldResults"]] == [True, True, False]
    ack = run_x12(
        corpus_source(),
        {
            "transaction": "999",
            "fields": [
                {"path": "AK9[1].AK901", "expected": "P"},
                {"path": "AK2[AK202=0002]/IK5.IK501", "expected": "R"},
            ],
        },
    )
    assert ack["status"] == "passed"


def test_no_match(run_x12: Any) -> None:
    result = run_x12(corpus_source(), {"transaction": "271", "correlate_by": {"member_id": "NOPE"}})
    assert result["status"] == "failed" and result["score"] == 0
    assert "no X12 271 matching {'member_id': 'NOPE'}" in result["details"]
    assert "271, 277, 278, 835, 999" in result["details"]
    empty = run_x12(X12Snapshot.from_folder(Path("/nonexistent")), {"transaction": "271"})
    assert empty["status"] == "failed" and "0 transactions" in empty["details"]


def test_match_modes(tmp_path: Path, run_x12: Any) -> None:
    good = (VALID / "271_eligibility.x12").read_text()
    lapsed = good.replace("EB*1**30", "EB*6**30")  # inactive coverage
    rows = [
        {
            "transaction": "270/271",
            "request": "",
            "response": lapsed,
            "created_at": "2024-03-15T13:20:00Z",
        },
        {
            "transaction": "270/271",
            "request": "",
            "response": good,
            "created_at": "2024-03-15T13:19:00Z",
        },
        {"transaction": "270/271", "request": "ISA*...", "response": None},
    ]
    (tmp_path / "x12").mkdir()
    (tmp_path / "x12" / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    source = X12Snapshot.from_folder(tmp_path / "x12")
    spec = {"transaction": "271", "fields": [{"path": "EB01", "expected": "1"}]}
    assert run_x12(source, spec)["score"] == 0  # latest by created_at is the lapsed one
    assert run_x12(source, {**spec, "match": "first"})["score"] == 1
    assert run_x12(source, {**spec, "match": "any"})["score"] == 1
    every = run_x12(source, {**spec, "match": "all"})
    assert every["score"] == 0.5 and len(every["evidence"]["transactions"]) == 2


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_malformed_samples(tmp_path: Path, run_x12: Any, name: str) -> None:
    expected = EXPECTED[name]
    shutil.copy(MALFORMED / name, tmp_path / name)
    source = X12Snapshot([tmp_path / name], [])
    report = run_x12(source, {"transaction": "271", "fields": [{"path": "EB01", "expected": "1"}]})
    strict = run_x12(
        source,
        {"transaction": "271", "envelope": "strict", "fields": [{"path": "EB01", "expected": "1"}]},
    )
    assert strict["status"] == "error"
    assert name in strict["details"] and expected["fragment"] in strict["details"]
    if expected["kind"] == "error":
        assert report["status"] == "error"
        assert name in report["details"] and expected["fragment"] in report["details"]
    else:  # readable: scored, with the problem in the evidence and the details
        assert report["status"] == "passed", report["details"]
        problems = report["evidence"]["envelope_problems"]
        assert any(expected["fragment"] in p for p in problems), problems
        assert "envelope problem" in report["details"]


def test_malformed_corpus_size() -> None:
    assert len(EXPECTED) >= 20
    assert sum(1 for e in EXPECTED.values() if e["kind"] == "error") >= 12


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ('{"transaction": "271", "response": \n', "records.jsonl:1: invalid JSON line"),
        ('["x"]\n', "records.jsonl:1: expected a record object"),
        ('{"transaction": "271", "response": {"eb01": "1"}}\n', "'response' must be the X12"),
        ('{"transaction": "271", "response": "GS*HB~"}\n', "records.jsonl:1 response: does not"),
    ],
)
def test_malformed_records(tmp_path: Path, run_x12: Any, line: str, fragment: str) -> None:
    (tmp_path / "records.jsonl").write_text(line)
    result = run_x12(X12Snapshot([], [tmp_path / "records.jsonl"]), {"transaction": "271"})
    assert result["status"] == "error" and fragment in result["details"]


def test_multiple_interchanges_and_transactions_in_one_file(tmp_path: Path) -> None:
    from tests.x12.x12_build import interchange

    text = interchange(
        [
            ("271", "005010X279A1", ["BHT*0022*11*A*20240315*1319", "EB*1"]),
            ("271", "005010X279A1", ["BHT*0022*11*B*20240315*1319", "EB*6"]),
        ],
        control=7,
    )
    text += (VALID / "999_ack.x12").read_text()
    (tmp_path / "many.x12").write_text(text)
    transactions = X12Snapshot([tmp_path / "many.x12"], []).transactions()
    assert [(t.set_id, t.control_number) for t in transactions] == [
        ("271", "0001"),
        ("271", "0002"),
        ("999", "0001"),
    ]
    assert all(t.problems == [] for t in transactions)


@pytest.mark.parametrize(
    ("assertion", "fragment"),
    [
        ({"transaction": "27"}, "not an X12 set id"),
        ({"fields": [{"path": "EB[0].EB01", "expected": "1"}]}, "1-based"),
        ({"fields": [{"path": "EB[2].NM101", "expected": "1"}]}, "does not belong"),
        ({"correlate_by": {"trace": "1"}}, "correlate_by key 'trace'"),
        ({"envelope": "lenient"}, "envelope"),
    ],
)
def test_bad_assertions_are_refused_at_validation(assertion: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ValidationError, match=fragment):
        CHECK.model.model_validate({"assert": "x12-response", **assertion})
