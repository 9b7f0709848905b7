"""X12 tokenizer and paths against hand-checked values of the 005010 corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_verial import MISSING
from pytest_verial.x12 import (
    Transaction,
    X12PathError,
    get,
    get_all,
    parse_interchanges,
    parse_path,
)

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.x12._tokenizer import read_delimiters

VALID = Path(__file__).parent / "corpus" / "valid"


def tx(name: str) -> Transaction:
    return parse_interchanges((VALID / name).read_text(encoding="utf-8"), name)[0]


def test_delimiters_come_from_isa() -> None:
    standard, length, problems = read_delimiters((VALID / "271_eligibility.x12").read_text())
    assert (standard.element, standard.component, standard.repetition, standard.segment) == (
        "*",
        ":",
        "^",
        "~",
    )
    assert length == 106 and problems == []
    other, _, _ = read_delimiters((VALID / "271_other_delimiters.x12").read_text())
    assert (other.element, other.component, other.repetition, other.segment) == (
        "|",
        ">",
        "{",
        "\n",
    )


ELIGIBILITY = [
    ("EB01", "1"),  # first EB segment
    ("EB[2].EB01", "C"),
    ("EB[2].EB03", "30"),
    ("EB[2].EB07", "1500"),
    ("EB[3].EB06", "29"),
    ("EB[EB01=B].EB07", "30"),  # sibling-qualified: the copay
    ("EB[EB01=B].EB03", "98"),
    ("EB[EB01=A].EB08", ".2"),
    ("EB[EB01=C,EB06=29].EB07", "875.5"),  # two conditions
    ("EB[EB01=C][2].EB07", "875.5"),  # condition, then index
    ("EB[EB01=1][2].EB03", "MR"),
    ("EB[EB01=1][2].EB11", "Y"),
    ("EB[EB01=1].EB03[2]", "1"),  # repetition of EB03
    ("EB[EB01=1].EB03[11]", "UC"),
    ("EB[EB01=1].EB05", "GOLD PPO 1500"),
    ("EB[EB03=MR].EB11", "Y"),  # condition matches a repetition too
    ("EB[*].EB01", ["1", "C", "C", "G", "B", "A", "1"]),
    ("EB[EB01=C][*].EB06", ["23", "29"]),
    ("NM1[NM101=IL].NM109", "W123456789"),
    ("NM1[NM101=IL].NM103", "CHEN"),
    ("HL[HL03=22]/NM1.NM109", "W123456789"),  # loop scoping by HL
    ("HL[HL03=20]/NM1.NM103", "AETNA"),
    ("HL[HL03=21]/NM1[NM101=1P].NM109", "1245319599"),
    ("HL[HL03=22]/EB[EB01=B].EB07", "30"),
    ("LS/NM1.NM103", "AETNA PRECERTIFICATION"),  # LS..LE loop
    ("TRN[*].TRN02", ["93175-012547", "270RESP0001"]),
    ("TRN[TRN01=1].TRN02", "270RESP0001"),
    ("DTP[DTP01=291].DTP03", "20240101-20241231"),
    ("DMG03", "F"),
    ("N4[1].N402", "CA"),
    ("ISA13", "000001001"),  # envelope
    ("ISA06", "AETNACLRHOUSE  "),
    ("GS06", "1001"),
    ("GS08", "005010X279A1"),
    ("ST02", "0001"),
    ("SE01", "29"),
    ("EB[EB01=B].EB04", "PR"),
    ("EB[EB01=B].EB05", None),  # empty element
    ("EB[EB01=B].EB13", None),  # past the end
    ("EB[9].EB01", MISSING),  # no ninth EB
    ("EB[EB01=X].EB03", MISSING),
    ("MSG01", "PRIOR AUTHORIZATION REQUIRED FOR ADVANCED IMAGING (MRI, CT, PET)"),
]


@pytest.mark.parametrize(("path", "expected"), ELIGIBILITY)
@pytest.mark.parametrize("name", ["271_eligibility.x12", "271_other_delimiters.x12"])
def test_271_paths_with_any_delimiters(name: str, path: str, expected: object) -> None:
    value = get(tx(name), path)
    if path == "ISA13" and name == "271_other_delimiters.x12":
        expected = "000001002"
    if path == "GS06" and name == "271_other_delimiters.x12":
        expected = "1002"
    assert value == expected


@pytest.mark.parametrize(
    ("name", "path", "expected"),
    [
        ("277_claim_status.x12", "STC01-1", "F1"),
        ("277_claim_status.x12", "STC01-2", "65"),
        ("277_claim_status.x12", "STC[3].STC01-3", "PR"),
        ("277_claim_status.x12", "STC[*].STC01-2", ["65", "65", "20"]),
        ("277_claim_status.x12", "TRN[TRN02=CLMSTAT-7790-01]/STC.STC01-2", "20"),
        ("277_claim_status.x12", "HL[HL03=22][2]/NM1.NM109", "W123456789"),
        (
            "277_claim_status.x12",
            "HL[HL03=22][*]/TRN.TRN02",
            ["CLMSTAT-7781-01", "CLMSTAT-7790-01"],
        ),
        ("277_claim_status.x12", "STC[1].STC04", "450.00"),
        ("277_claim_status.x12", "REF[REF01=1K][2].REF02", "2024079UX0451"),
        ("277_claim_status.x12", "SVC01-2", "72148"),
        ("278_prior_auth_certified.x12", "HCR01", "A1"),
        ("278_prior_auth_certified.x12", "HCR02", "BSC24078812"),
        ("278_prior_auth_certified.x12", "UM03", "62"),
        ("278_prior_auth_certified.x12", "UM04-1", "11"),
        ("278_prior_auth_certified.x12", "HI01-2", "M5416"),
        ("278_prior_auth_certified.x12", "HI02-2", "M5126"),
        ("278_prior_auth_certified.x12", "HL[HL03=SS]/HCR.HCR02", "BSC24078812-01"),
        ("278_prior_auth_certified.x12", "HL[HL03=SS]/SV1.SV101-2", "72148"),
        ("278_prior_auth_certified.x12", "DTP[DTP01=AAH].DTP03", "20240322-20240621"),
        ("278_prior_auth_denied.x12", "HCR01", "A3"),
        ("278_prior_auth_denied.x12", "HCR03", "CT"),
        ("835_remittance.x12", "BPR02", "1230.00"),
        ("835_remittance.x12", "BPR16", "20240320"),
        ("835_remittance.x12", "TRN02", "EFT20240320001"),
        ("835_remittance.x12", "CLP[CLP01=VO0082299-01].CLP02", "4"),
        ("835_remittance.x12", "CLP[CLP01=VO0082213-01].CLP04", "1110.00"),
        ("835_remittance.x12", "CLP[CLP01=VO0082213-01]/SVC[*].SVC03", ["900.00", "210.00"]),
        ("835_remittance.x12", "CLP[CLP01=VO0082213-01]/SVC[2].SVC01-2", "99214"),
        ("835_remittance.x12", "CLP[CLP01=VO0082299-01]/CAS.CAS02", "50"),
        ("835_remittance.x12", "CLP[2]/SVC.SVC01-3", "GP"),
        ("835_remittance.x12", "CLP[*].CLP01", ["VO0082213-01", "VO0082299-01", "VO0082301-01"]),
        ("835_remittance.x12", "N1[N101=PE].N104", "1245319599"),
        ("999_ack.x12", "AK9[1].AK901", "P"),
        ("999_ack.x12", "AK2[AK202=0002]/IK5.IK501", "R"),
        ("999_ack.x12", "AK2[AK202=0001]/IK5.IK501", "A"),
        ("999_ack.x12", "IK3[1].IK301", "NM1"),
        ("999_ack.x12", "IK4[1].IK402", "67"),
        ("999_ack.x12", "AK1[1].AK103", "005010X279A1"),
    ],
)
def test_other_transactions(name: str, path: str, expected: object) -> None:
    assert get(tx(name), path) == expected


def test_get_all_reads_every_segment_of_an_unindexed_path() -> None:
    eligibility = tx("271_eligibility.x12")
    assert get_all(eligibility, "TRN02") == ["93175-012547", "270RESP0001"]
    assert get_all(eligibility, "NM109") == ["60054", "1245319599", "W123456789", "60054"]
    assert get(eligibility, "NM109") == "60054"


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "eb01",
        "EB 01",
        "EB[0].EB01",
        "EB[2].NM101",
        "EB[EB01].EB03",
        "EB[2]EB03",
        "EB01-0",
        "EB00",
        "EB03[0]",
        "EB[x=1].EB01",
        "/EB01",
    ],
)
def test_bad_paths_are_refused(bad: str) -> None:
    with pytest.raises(X12PathError):
        parse_path(bad)


def test_whole_segment_path() -> None:
    assert get(tx("999_ack.x12"), "IK5[2]") == "IK5*R*5"
