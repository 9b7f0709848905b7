"""parse: hl7 / parse: x12 through the issue-4 packages (run once those are merged)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._errors import CheckError, SourceError

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.sources._files import DirectoryFiles

from .conftest import run_check

ADT = (
    "MSH|^~\\&|EHR|CLINIC|LAB|HOSP|20261121||ADT^A04|MSG001|P|2.5\r"
    "PID|1||MRN-204815^^^CLINIC||CHEN^MARIA||19680412|F\r"
    "MSH|^~\\&|EHR|CLINIC|LAB|HOSP|20261121||ADT^A08|MSG002|P|2.5\r"
    "PID|1||MRN-204815^^^CLINIC||CHEN^MARIA||19680412|F\r"
)


def _needs(kind: str) -> None:
    if importlib.util.find_spec(f"pytest_verial.{kind}") is None:
        pytest.skip(
            f"pytest_verial.{kind} (issue 4) is not merged into this tree yet; "
            "test_check.py covers the pending error meanwhile"
        )


def test_hl7_paths_read_the_first_message(tmp_path: Path) -> None:
    _needs("hl7")
    (tmp_path / "adt.hl7").write_text(ADT)
    (tmp_path / "orphan.hl7").write_text("PID|1||X\r")
    source = DirectoryFiles(tmp_path)
    out = run_check(
        {
            "pattern": "adt.hl7",
            "fields": [
                {"path": "PID.5.1", "expected": "CHEN"},
                {"path": "MSH.9.2", "expected": "A04"},
                {"path": "$rows", "expected": 2},
            ],
        },
        source,
    )
    assert out.score == 1.0, out.evidence
    with pytest.raises(SourceError, match=r"orphan.hl7: .*MSH"):
        run_check({"pattern": "orphan.hl7", "parse": "hl7", "fields": [{"path": "PID.3"}]}, source)
    with pytest.raises(CheckError, match=r"hl7 path 'PID\.\.3'"):
        run_check({"pattern": "adt.hl7", "fields": [{"path": "PID..3"}]}, source)


def test_x12_paths_read_the_first_transaction(tmp_path: Path) -> None:
    _needs("x12")
    from tests.x12.x12_build import claims_835, interchange

    (tmp_path / "era.x12").write_text(interchange([("835", "005010X221A1", claims_835(2))]))
    (tmp_path / "junk.x12").write_text("BPR*I*240.00~")
    source = DirectoryFiles(tmp_path)
    out = run_check(
        {
            "pattern": "*.x12",
            "parse": "x12",
            "fields": [
                {"path": "ST01", "expected": "835"},
                {"path": "CLP[2].CLP04", "expected": "120.00"},
            ],
        },
        source,
    )
    assert out.score == 1.0 and out.evidence["file"]["path"] == "era.x12"
    assert "unreadable" not in out.evidence  # era.x12 passes first; junk.x12 is never read
    with pytest.raises(SourceError, match=r"junk.x12: .*ISA"):
        run_check({"pattern": "junk.x12", "fields": [{"path": "BPR02"}]}, source)
