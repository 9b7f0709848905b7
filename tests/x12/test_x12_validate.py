"""validate: true runs pyx12 against the implementation guide (835 and 999 in 005010)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.sources._x12 import X12Snapshot
from tests.x12.x12_build import claims_835, interchange

VALID = Path(__file__).parent / "corpus" / "valid"
REMIT = (VALID / "835_remittance.x12").read_text(encoding="utf-8")


def source(tmp_path: Path, text: str) -> X12Snapshot:
    (tmp_path / "r.x12").write_text(text)
    return X12Snapshot([tmp_path / "r.x12"], [])


def test_valid_835_and_999_pass(tmp_path: Path, run_x12: Any) -> None:
    remit = run_x12(
        X12Snapshot([VALID / "835_remittance.x12"], []),
        {"transaction": "835", "validate": True, "fields": [{"path": "BPR02", "expected": 1230}]},
    )
    assert remit["status"] == "passed", remit["details"]
    assert remit["evidence"]["validation"]["valid"] is True
    assert remit["evidence"]["validation"]["validator"].startswith("pyx12")
    ack = run_x12(X12Snapshot([VALID / "999_ack.x12"], []), {"validate": True})
    assert ack["status"] == "passed"
    generated = interchange([("835", "005010X221A1", claims_835(50))])
    assert run_x12(source(tmp_path, generated), {"validate": True})["status"] == "passed"


def test_segment_out_of_order_fails_the_guide_row(tmp_path: Path, run_x12: Any) -> None:
    # CAS belongs right after CLP in loop 2100; moved after MOA it is out of place
    bad = REMIT.replace("CAS*CO*50*380.00~\nNM1*QC*1*NGUYEN", "NM1*QC*1*NGUYEN").replace(
        "MOA***N115~\n", "MOA***N115~\nCAS*CO*50*380.00~\n"
    )
    result = run_x12(
        source(tmp_path, bad),
        {"transaction": "835", "validate": True, "fields": [{"path": "BPR02", "expected": 1230}]},
    )
    assert result["score"] == 0.5
    row = result["evidence"]["fieldResults"][-1]
    assert row["path"] == "(implementation guide)" and row["passed"] is False
    assert "Segment CAS*CO not found" in row["actual"]
    assert result["evidence"]["validation"]["valid"] is False


def test_invalid_code_value(tmp_path: Path, run_x12: Any) -> None:
    bad = REMIT.replace("CLP*VO0082299-01*4*", "CLP*VO0082299-01*Q*")
    result = run_x12(source(tmp_path, bad), {"validate": True})
    errors = result["evidence"]["validation"]["errors"]
    assert any("not a valid code for Claim Status Code (CLP02)" in e for e in errors)
    assert result["score"] == 0


def test_guides_pyx12_lacks_are_an_error(run_x12: Any) -> None:
    result = run_x12(
        X12Snapshot([VALID / "271_eligibility.x12"], []), {"transaction": "271", "validate": True}
    )
    assert result["status"] == "error"
    assert "pyx12 cannot validate" in result["details"]
    assert "005010X279A1" in result["details"]


def test_a_file_pyx12_cannot_read_is_named_the_same_in_every_session(
    tmp_path: Path, run_x12: Any
) -> None:
    # pyx12 names a file it cannot read by the repr of the stream it was handed
    # ("<_io.StringIO object at 0x7f...>"): an address that differs in every process, which
    # made the evidence (and the report's digest) differ between two scorings of one sandbox
    short = (Path(__file__).parent / "corpus" / "malformed" / "isa_short.x12").read_text()
    result = run_x12(source(tmp_path, short), {"transaction": "271", "validate": True})
    errors = result["evidence"]["validation"]["errors"]
    assert errors, result["details"]
    assert not [e for e in errors if "object at 0x" in e], errors
    assert any("r.x12" in e and "does not look like an X12 data file" in e for e in errors)
    assert "object at 0x" not in result["details"]
