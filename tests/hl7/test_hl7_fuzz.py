"""Damaged HL7 never crashes: only Hl7ParseError (or SourceError from python-hl7)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._errors import SourceError
from pytest_verial.hl7 import Hl7ParseError, get, parse_stream

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.hl7._parse import decode

VALID = Path(__file__).parent / "corpus" / "valid"
SAMPLES = [decode(p.read_bytes()) for p in sorted(VALID.glob("*.hl7"))]
PATHS = [
    "MSH.9.2",
    "MSH.10",
    "PID.5.1",
    "PID.3[2].1",
    "OBX[*].5",
    "OBX[2].5",
    "EVN.5.9.2",
    "PID.3[*].4",
    "SCH.11.4",
]


@st.composite
def damaged(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(SAMPLES))
    if draw(st.booleans()):
        text = "\x0b" + text + "\x1c\r"
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, max(0, len(text) - 1)))
        kind = draw(st.sampled_from(["cut", "delete", "insert"]))
        junk = draw(st.text(alphabet="|^~\\&\r\n\x0b\x1c\x00MSHPIDFTXE12 ", min_size=1, max_size=4))
        if kind == "cut":
            text = text[:at]
        elif kind == "delete":
            text = text[:at] + text[at + len(junk) :]
        else:
            text = text[:at] + junk + text[at:]
    return text


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged())
def test_damaged_messages_fail_cleanly(text: str) -> None:
    try:
        messages = parse_stream(text, "fuzz.hl7")
    except Hl7ParseError as exc:
        assert str(exc)
        return
    for message in messages:
        for path in PATHS:
            try:
                get(message, path)
            except SourceError as exc:
                assert "fuzz.hl7" in str(exc)
