"""HL7 paths against hand-checked values of the corpus messages (every documented form)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_verial import MISSING
from pytest_verial.hl7 import Hl7PathError, get, get_all, parse_path, parse_stream

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.hl7._parse import decode

VALID = Path(__file__).parent / "corpus" / "valid"


def message(name: str):  # type: ignore[no-untyped-def]
    return parse_stream(decode((VALID / name).read_bytes()), name)[0]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        # MSH offsets: MSH-1 is the field separator, MSH-2 the encoding characters.
        ("MSH.1", "|"),
        ("MSH.2", "^~\\&"),
        ("MSH.3", "EPICADT"),
        ("MSH.4", "SUTTERHEALTH"),
        ("MSH.7", "20240315081200"),
        ("MSH.9", "ADT^A01^ADT_A01"),
        ("MSH.9.1", "ADT"),
        ("MSH.9.2", "A01"),
        ("MSH.9.3", "ADT_A01"),
        ("MSH.10", "ADT20240315000123"),
        ("MSH.12", "2.5.1"),
        ("MSH.18", "UNICODE UTF-8"),
        # fields, components, the first repetition by default
        ("PID.5.1", "CHEN"),
        ("PID.5.2", "MARIA"),
        ("PID.5.5", "MS"),
        ("PID.7", "19780412"),
        ("PID.3.1", "MRN00482913"),
        ("PID.3[1].4", "SUTTER"),
        # field repetitions
        ("PID.3[2].1", "W123456789"),
        ("PID.3[2].4", "AETNA"),
        ("PID.3[2].5", "MB"),
        ("PID.3[3].1", "123-45-6789"),
        ("PID.3[*].5", ["MR", "MB", "SS"]),
        ("PID.13[2].4", "maria.chen@example.org"),
        # sub-components (EVN-5.9 is an HD: namespace&universal id&type)
        # a path stopping at a component that holds sub-components reads the first one, as
        # python-hl7's extract_field and HAPI's Terser do
        ("EVN.5.9", "SUTTER"),
        ("EVN.5.9.1", "SUTTER"),
        ("EVN.5.9.2", "1.2.840.114350"),
        ("EVN.5.9.3", "ISO"),
        # above the leaf: the part's text as written
        ("PID.5", "CHEN^MARIA^LIN^^MS"),
        ("PV1.3", "4W^412^B^SUTTER^^^^4 WEST"),
        ("IN1.4", "AETNA LIFE INSURANCE COMPANY"),
        ("IN1.36", "W123456789"),
        # present but empty, or past the end: not valued
        ("PID.5.4", None),
        ("PID.4", None),
        ("PID.99", None),
        ("PID.3[9].1", None),
    ],
)
def test_adt_a01_paths(path: str, expected: object) -> None:
    assert get(message("adt_a01.hl7"), path) == expected


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("OBX.5", "112"),
        ("OBX[1].3.1", "2345-7"),
        ("OBX[2].5", "0.91"),
        ("OBX[2].3.2", "Creatinine"),
        ("OBX[4].6.1", "mmol/L"),
        (
            "OBX[*].5",
            ["112", "0.91", "4.1", "139", "Specimen slightly hemolyzed\\ repeat if K & Cr rise"],
        ),
        ("OBX[*].8", ["H", "N", "N", "N", "A"]),
        # escapes: \E\ -> \, \T\ -> &, \F\ -> |
        ("OBX[5].5", "Specimen slightly hemolyzed\\ repeat if K & Cr rise"),
        ("NTE.3", "Fasting status: unknown| drawn 05:30"),
        ("OBR.4.1", "80048"),
        ("ORC.1", "RE"),
    ],
)
def test_oru_r01_repeated_segments_and_escapes(path: str, expected: object) -> None:
    assert get(message("oru_r01.hl7"), path) == expected


def test_escapes_in_components_and_repetitions() -> None:
    msg = message("adt_a08.hl7")
    assert get(msg, "AL1.5") == "Hives&swelling"  # \T\
    assert get(msg, "PID.11[2].1") == "PO BOX 1187"
    assert get(msg, "PID.11[2].7") == "M"
    assert get(msg, "EVN.5.2") == "GARCIA"


def test_escape_sequences_each_decoded() -> None:
    text = (
        "MSH|^~\\&|A|B|C|D|20240101||ORU^R01|E1|P|2.5.1\r"
        "OBX|1|TX|X||a\\F\\b\\S\\c\\T\\d\\R\\e\\E\\f\\X41\\"
    )
    assert get(text, "OBX.5") == "a|b^c&d~e\\fA"


def test_other_encoding_characters() -> None:
    text = "MSH#!*%@#A#B#C#D#20240101##ADT!A04#X9#P#2.5.1\rPID#1##ID1*ID2!!!AUTH##DOE!JANE"
    assert get(text, "MSH.1") == "#"
    assert get(text, "MSH.2") == "!*%@"
    assert get(text, "MSH.9.2") == "A04"
    assert get(text, "PID.3[2].4") == "AUTH"
    assert get(text, "PID.5.2") == "JANE"


def test_missing_segment_is_missing_and_wildcard_empty() -> None:
    msg = message("siu_s12.hl7")
    assert get(msg, "OBX.5") is MISSING
    assert get(msg, "OBX[*].5") == []
    assert get(msg, "AIS[2].3.1") is MISSING
    assert get(msg, "AIS.3.1") == "72148"
    assert get(msg, "SCH.11.4") == "20240322140000"
    assert get(msg, "SCH.25") == "Booked"
    assert get_all(msg, "AIP.3.2") == ["RIVERA"]


def test_orm_o01_and_a04_paths() -> None:
    orm = message("orm_o01.hl7")
    assert get(orm, "ORC.1") == "NW"
    assert get(orm, "OBR.4.1") == "72148"
    assert get(orm, "DG1[2].3.1") == "M51.26"
    assert get(orm, "DG1[*].3.1") == ["M54.16", "M51.26"]
    assert get(orm, "MSH.12") == "2.3.1"
    a04 = message("adt_a04.hl7")
    assert get(a04, "PID.5.1") == "O'BRIEN"
    assert get(a04, "PID.5.4") == "JR"
    assert get(a04, "IN1.36") == "XEB904417731"


@pytest.mark.parametrize(
    "bad",
    [
        "PID",
        "pid.5",
        "PID.0",
        "PID.5.0",
        "PID[0].5",
        "PID.5..1",
        "PID.-1",
        "PID.5.1.1.1",
        "MSH.2.1",
        "PID.a",
        "",
    ],
)
def test_bad_paths_are_refused(bad: str) -> None:
    if bad == "PID":
        assert parse_path(bad).field is None  # a whole segment is a valid path
        return
    with pytest.raises(Hl7PathError):
        parse_path(bad)


@pytest.mark.parametrize("name", sorted(p.name for p in VALID.glob("*.hl7")))
def test_msh_read_from_the_header_equals_python_hl7(name: str) -> None:
    msg = message(name)
    paths = [
        "MSH.1",
        "MSH.2",
        "MSH.3",
        "MSH.4",
        "MSH.7",
        "MSH.9",
        "MSH.9.1",
        "MSH.9.2",
        "MSH.9.3",
        "MSH.9.4",
        "MSH.10",
        "MSH.12",
        "MSH.15",
        "MSH.18",
        "MSH.30",
        "MSH.9[*].1",
        "MSH.9[2].1",
        "MSH.4.1.1",
        "MSH.4.1.2",
    ]
    for path in paths:
        assert get(msg, path) == get(msg.parsed, path), path


def test_msh_with_escapes_falls_back_to_python_hl7() -> None:
    text = "MSH|^~\\&|LAB\\T\\CO|B|C|D|20240101||ORU^R01|E1|P|2.5.1"
    msg = parse_stream(text, "x")[0]
    assert get(msg, "MSH.3") == "LAB&CO"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("MSH.3", "APP&1.2&ISO"),  # a field: its text as written
        ("MSH.3.1", "APP"),  # a component holding sub-components: the first
        ("MSH.3.1.2", "1.2"),
        ("PID.3.4", "HOSP"),
        ("PID.3.4.3", "ISO"),
        ("PID.3[*].4", ["HOSP", "CLINIC"]),
        ("PID.3.1", "123"),  # a component without sub-components: unchanged
    ],
)
def test_a_component_with_subcomponents_reads_the_first(path: str, expected: object) -> None:
    text = (
        "MSH|^~\\&|APP&1.2&ISO|FAC|||20260101||ADT^A01|1|P|2.5\r"
        "PID|1||123^^^HOSP&1.2.3&ISO^MR~456^^^CLINIC&9.9&L^MB||DOE^JOHN"
    )
    assert get(text, path) == expected
