"""Writes the malformed X12 corpus and ``malformed/expected.json``.

``expected.json`` maps each file to ``{"fragment": ..., "kind": "error" | "envelope"}``:
``error`` samples cannot be read (every criterion reading them is an error); ``envelope``
samples are readable but their envelope is wrong: the problem is in the evidence, and with
``envelope: strict`` the criterion is an error. Run this file to regenerate.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent
OUT = HERE / "malformed"
GOOD = (HERE / "valid" / "271_eligibility.x12").read_text(encoding="utf-8")
LINES = GOOD.splitlines()


def replace_line(prefix: str, new: str) -> str:
    """GOOD with the first line starting with ``prefix`` replaced."""
    lines = list(LINES)
    index = next(i for i, line in enumerate(lines) if line.startswith(prefix))
    lines[index] = new
    return "\n".join(lines) + "\n"


def drop_line(prefix: str) -> str:
    """GOOD without the first line starting with ``prefix``."""
    lines = list(LINES)
    index = next(i for i, line in enumerate(lines) if line.startswith(prefix))
    del lines[index]
    return "\n".join(lines) + "\n"


ISA = LINES[0]
SAMPLES: dict[str, tuple[str | bytes, str, str]] = {
    "no_isa.x12": ("\n".join(LINES[1:]), "does not start with an ISA", "error"),
    "binary_garbage.x12": (bytes(range(256)) * 3, "binary data", "error"),
    "utf16.x12": (GOOD.encode("utf-16"), "binary data", "error"),
    "isa_truncated.x12": ("ISA*00*          *00*    ", "of 16 elements", "error"),
    "isa_only.x12": ("ISA", "ISA segment is truncated", "error"),
    "truncated_mid_transaction.x12": (
        GOOD[: GOOD.index("EB*C*IND*30*PR**29")],
        "has no SE",
        "error",
    ),
    "body_uses_other_element_separator.x12": (
        ISA + "\n" + "\n".join(line.replace("*", "|") for line in LINES[1:]),
        "does not start with a segment id",
        "error",
    ),
    "body_uses_newlines_not_terminator.x12": (
        ISA + "\n" + "\n".join(line.rstrip("~") for line in LINES[1:]),
        "line break",
        "error",
    ),
    "isa16_missing.x12": (GOOD.replace("*P*:~\n", "*P*~", 1), "not a segment terminator", "error"),
    "alnum_element_separator.x12": (GOOD.replace("*", "X"), "letter, digit or space", "error"),
    "st_inside_st.x12": (
        replace_line("SE*", "ST*271*0002*005010X279A1~\nBHT*0022*11*X*20240315*1319~\nSE*3*0002~"),
        "ST before the SE",
        "error",
    ),
    "no_transaction.x12": (
        "\n".join([ISA, LINES[1], "GE*0*1001~", "IEA*1*000001001~"]),
        "no transaction set",
        "error",
    ),
    "hl7_in_x12_file.x12": (
        "MSH|^~\\&|A|B|C|D|20240101||ADT^A01|1|P|2.5.1\r",
        "does not start with an ISA",
        "error",
    ),
    "json_in_x12_file.x12": (
        '{"eligibility": {"active": true}}',
        "does not start with an ISA",
        "error",
    ),
    "lowercase_segment.x12": (
        replace_line("DMG*", "dmg*D8*19780412*F~"),
        "does not start with a segment id",
        "error",
    ),
    "se_count_wrong.x12": (
        replace_line("SE*", "SE*28*0001~"),
        "SE01 says 28 segments, counted 29",
        "envelope",
    ),
    "se_control_mismatch.x12": (
        replace_line("SE*", "SE*29*0002~"),
        "SE02 '0002' does not match",
        "envelope",
    ),
    "ge_count_wrong.x12": (
        replace_line("GE*", "GE*2*1001~"),
        "GE01 says 2 transactions",
        "envelope",
    ),
    "ge_control_mismatch.x12": (
        replace_line("GE*", "GE*1*1999~"),
        "GE02 '1999' does not match",
        "envelope",
    ),
    "iea_count_wrong.x12": (
        replace_line("IEA*", "IEA*3*000001001~"),
        "IEA01 says 3 groups",
        "envelope",
    ),
    "iea_control_mismatch.x12": (
        replace_line("IEA*", "IEA*1*000009999~"),
        "IEA02 '000009999' does not match",
        "envelope",
    ),
    "isa_short.x12": (
        GOOD.replace("AETNACLRHOUSE  ", "AETNACLRHOUSE ", 1),
        "ISA segment is 105 characters",
        "envelope",
    ),
    "isa13_not_numeric.x12": (
        GOOD.replace("000001001", "00000100A", 1),
        "ISA13 control number",
        "envelope",
    ),
    "missing_iea.x12": (drop_line("IEA*"), "has no IEA", "envelope"),
    "missing_ge.x12": (drop_line("GE*"), "has no GE", "envelope"),
    "version_4010.x12": (
        GOOD.replace("005010X279A1", "004010X092A1"),
        "expected 005010",
        "envelope",
    ),
    "segment_outside_transaction.x12": (
        replace_line("GE*", "NTE*ADD*STRAY~\nGE*1*1001~"),
        "outside any transaction",
        "envelope",
    ),
}


def main() -> None:
    """Write every sample and the expectations."""
    OUT.mkdir(parents=True, exist_ok=True)
    for name, (data, _, _) in SAMPLES.items():
        path = OUT / name
        if isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_text(data, encoding="utf-8")
    expected = {name: {"fragment": f, "kind": k} for name, (_, f, k) in SAMPLES.items()}
    (OUT / "expected.json").write_text(json.dumps(expected, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
