"""Writes the malformed HL7 corpus and ``malformed/expected.json`` (file -> error fragment).

Each sample is broken in one way seen in real feeds; the fragment is what the criterion error
must say. Run ``python tests/hl7/corpus/make_malformed.py`` to regenerate.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent
OUT = HERE / "malformed"

GOOD = (HERE / "valid" / "adt_a04.hl7").read_bytes().decode("utf-8")
MSH = (
    "MSH|^~\\&|REGADT|VALLEYORTHO|HL7ENGINE|SUTTERHEALTH|20240318093000||"
    "ADT^A04^ADT_A01|VO1|P|2.5.1"
)
PID = "PID|1||VO0077123^^^VALLEYORTHO^MR||OBRIEN^THOMAS"

SAMPLES: dict[str, tuple[bytes, str]] = {
    "msh_only.hl7": (b"MSH", "truncated before its encoding characters"),
    "no_msh.hl7": (f"{PID}\rPV1|1|O".encode(), "before any MSH"),
    "binary_garbage.hl7": (bytes(range(256)) * 4, "binary data"),
    "utf16.hl7": (GOOD.encode("utf-16"), "binary data"),
    "mllp_truncated.hl7": (b"\x0b" + GOOD.encode()[:200], "not closed"),
    "mllp_second_frame_truncated.hl7": (
        b"\x0b" + GOOD.encode() + b"\x1c\r\x0b" + GOOD.encode()[:90],
        "frame 2 is not closed",
    ),
    "tab_segment_separator.hl7": (f"{MSH}\t{PID}\tPV1|1|O".encode(), "MSH-12 version"),
    "pipe_segment_separator.hl7": (
        f"{MSH}|{PID}".replace("2.5.1|PID", "2.5.1PID").encode(),
        "MSH-12 version",
    ),
    "wrong_field_separator_in_body.hl7": (
        f"{MSH}\r{PID.replace('|', '!')}".encode(),
        "not a segment id",
    ),
    "encoding_chars_too_short.hl7": (MSH.replace("^~\\&", "^").encode(), "MSH-2 encoding"),
    "encoding_chars_repeat.hl7": (MSH.replace("^~\\&", "^^\\&").encode(), "MSH-2 encoding"),
    "alnum_field_separator.hl7": (MSH.replace("|", "A").encode(), "field separator"),
    "missing_message_type.hl7": (MSH.replace("ADT^A04^ADT_A01", "").encode(), "MSH-9"),
    "missing_control_id.hl7": (MSH.replace("|VO1|", "||").encode(), "MSH-10"),
    "missing_version.hl7": (MSH.rsplit("|", 1)[0].encode(), "MSH-12"),
    "truncated_msh.hl7": (MSH[:40].encode(), "MSH-9"),
    "lowercase_segment.hl7": (f"{MSH}\rpid|1||X".encode(), "not a segment id"),
    "long_segment_id.hl7": (f"{MSH}\rPIDX|1||X".encode(), "not a segment id"),
    "control_characters.hl7": (f"{MSH}\rPID|1||\x07\x08X".encode(), "binary data"),
    "xml_document.hl7": (b'<?xml version="1.0"?><ClinicalDocument/>', "before any MSH"),
    "fhir_json.hl7": (b'{"resourceType": "Patient", "id": "maria-chen"}', "before any MSH"),
    "csv_export.hl7": (b"mrn,family,given\nVO0077123,OBRIEN,THOMAS\n", "before any MSH"),
    "version_not_numeric.hl7": (MSH.replace("|2.5.1", "|V2").encode(), "MSH-12 version"),
    "second_message_broken.hl7": (
        (GOOD + "\r\n" + MSH.replace("|VO1|", "||")).encode(),
        "message 2: MSH-10",
    ),
}


def main() -> None:
    """Write every sample and the expectations."""
    OUT.mkdir(parents=True, exist_ok=True)
    for name, (data, _) in SAMPLES.items():
        (OUT / name).write_bytes(data)
    expected = {name: fragment for name, (_, fragment) in SAMPLES.items()}
    (OUT / "expected.json").write_text(json.dumps(expected, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
