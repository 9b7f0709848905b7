"""Damaged X12 never crashes: only X12ParseError, and readable results answer every path."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_verial.x12 import X12ParseError, get, get_all, parse_interchanges

VALID = Path(__file__).parent / "corpus" / "valid"
SAMPLES = [p.read_text(encoding="utf-8") for p in sorted(VALID.glob("*.x12"))]
PATHS = [
    "EB01",
    "EB[EB01=B].EB07",
    "HL[HL03=22]/NM1.NM109",
    "STC01-2",
    "CLP[*].CLP02",
    "ISA13",
    "GS06",
    "TRN[*].TRN02",
    "EB03[2]",
    "SVC01-2",
]


@st.composite
def damaged(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(SAMPLES))
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, max(0, len(text) - 1)))
        kind = draw(st.sampled_from(["cut", "delete", "insert", "replace"]))
        junk = draw(st.text(alphabet="*:^~|\n\x00AZ09 ", min_size=1, max_size=4))
        if kind == "cut":
            text = text[:at]
        elif kind == "delete":
            text = text[:at] + text[at + len(junk) :]
        elif kind == "insert":
            text = text[:at] + junk + text[at:]
        else:
            text = text[:at] + junk + text[at + len(junk) :]
    return text


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged())
def test_damaged_interchanges_fail_cleanly(text: str) -> None:
    try:
        transactions = parse_interchanges(text, "fuzz.x12")
    except X12ParseError as exc:
        assert str(exc)
        return
    for tx in transactions:
        for path in PATHS:
            get(tx, path)
            get_all(tx, path)
