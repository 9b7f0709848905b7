"""Writes the valid X12 corpus (005010) from hand-written transaction bodies.

The bodies follow the ASC X12 implementation guides (271 X279A1, 277 X212, 278 X217, 835
X221A1, 999 X231A1); envelopes (ISA/GS/ST/SE/GE/IEA) are computed by
``interchange`` of tests/x12/x12_build.py. Run ``python tests/x12/corpus/make_corpus.py`` to
regenerate; the files are committed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository root

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.x12._tokenizer import Delimiters
from tests.x12.x12_build import HEADER_835, PAYER, PROVIDER, Party, interchange

HERE = Path(__file__).parent / "valid"

BODY_271 = [
    "BHT*0022*11*10001234*20240315*1319",
    "HL*1**20*1",
    "NM1*PR*2*AETNA*****PI*60054",
    "HL*2*1*21*1",
    "NM1*1P*2*VALLEY ORTHOPEDIC GROUP*****XX*1245319599",
    "HL*3*2*22*0",
    "TRN*2*93175-012547*9877281234",
    "TRN*1*270RESP0001*9AETNA0001",
    "NM1*IL*1*CHEN*MARIA*L***MI*W123456789",
    "REF*6P*GRP778812*AETNA GOLD PPO",
    "N3*4417 MAPLE AVE*APT 2B",
    "N4*SACRAMENTO*CA*95819",
    "DMG*D8*19780412*F",
    "INS*Y*18*001*25",
    "DTP*291*RD8*20240101-20241231",
    "EB*1**30^1^33^35^47^86^88^98^AL^MH^UC*PR*GOLD PPO 1500",
    "EB*C*IND*30*PR**23*1500*****Y",
    "EB*C*IND*30*PR**29*875.5*****Y",
    "EB*G*IND*30*PR**23*4000*****Y",
    "EB*B*IND*98*PR**27*30*****Y",
    "EB*A*IND*30*PR****.2****Y",
    "EB*1*IND*MR*PR*******Y",
    "MSG*PRIOR AUTHORIZATION REQUIRED FOR ADVANCED IMAGING (MRI, CT, PET)",
    "LS*2120",
    "NM1*X3*2*AETNA PRECERTIFICATION*****PI*60054",
    "PER*IC*PRECERT*TE*8008007070",
    "LE*2120",
]

BODY_270 = [
    "BHT*0022*13*10001234*20240315*1318",
    "HL*1**20*1",
    "NM1*PR*2*AETNA*****PI*60054",
    "HL*2*1*21*1",
    "NM1*1P*2*VALLEY ORTHOPEDIC GROUP*****XX*1245319599",
    "HL*3*2*22*0",
    "TRN*1*93175-012547*9877281234",
    "NM1*IL*1*CHEN*MARIA*L***MI*W123456789",
    "DMG*D8*19780412*F",
    "DTP*291*D8*20240315",
    "EQ*30",
]

BODY_277 = [
    "BHT*0010*08*CS20240320001*20240320*0915*DG",
    "HL*1**20*1",
    "NM1*PR*2*BLUE SHIELD OF CALIFORNIA*****PI*940360524",
    "HL*2*1*21*1",
    "NM1*41*2*VALLEY ORTHOPEDIC GROUP*****46*VALLEYORTHO01",
    "HL*3*2*19*1",
    "NM1*1P*2*VALLEY ORTHOPEDIC GROUP*****XX*1245319599",
    "HL*4*3*22*0",
    "NM1*QC*1*OBRIEN*THOMAS*J***MI*XEB904417731",
    "TRN*2*CLMSTAT-7781-01",
    "STC*F1:65*20240319**450.00*450.00*20240319**20240322*EFT0032211",
    "REF*1K*2024078UX0012",
    "REF*EJ*VO0077123-01",
    "DTP*472*RD8*20240301-20240301",
    "SVC*HC:72148*450.00*450.00",
    "STC*F1:65*20240319",
    "DTP*472*D8*20240301",
    "HL*5*3*22*0",
    "NM1*QC*1*CHEN*MARIA*L***MI*W123456789",
    "TRN*2*CLMSTAT-7790-01",
    "STC*P1:20:PR*20240319",
    "REF*1K*2024079UX0451",
    "REF*EJ*VO0082213-01",
    "DTP*472*RD8*20240305-20240305",
]

BODY_278 = [
    "BHT*0007*11*PA-2024-0318-5521*20240318*1432",
    "HL*1**20*1",
    "NM1*X3*2*BLUE SHIELD OF CALIFORNIA*****PI*940360524",
    "HL*2*1*21*1",
    "NM1*1P*2*VALLEY ORTHOPEDIC GROUP*****XX*1245319599",
    "HL*3*2*22*1",
    "NM1*IL*1*OBRIEN*THOMAS*J***MI*XEB904417731",
    "DMG*D8*19650723*M",
    "HL*4*3*EV*1",
    "TRN*2*PA-2024-0318-5521*1245319599",
    "UM*HS*I*62*11:B**U",
    "HCR*A1*BSC24078812",
    "DTP*AAH*RD8*20240322-20240621",
    "HI*ABK:M5416*ABF:M5126",
    "NM1*SJ*1*RIVERA*ELENA****XX*1326041234",
    "HL*5*4*SS*0",
    "TRN*2*PA-2024-0318-5521-1*1245319599",
    "UM*HS*I*62*22:B",
    "HCR*A1*BSC24078812-01",
    "SV1*HC:72148*0*UN*1",
]

BODY_278_DENIED = [
    "BHT*0007*11*PA-2024-0320-5610*20240320*1011",
    "HL*1**20*1",
    "NM1*X3*2*AETNA*****PI*60054",
    "HL*2*1*21*1",
    "NM1*1P*2*VALLEY ORTHOPEDIC GROUP*****XX*1245319599",
    "HL*3*2*22*1",
    "NM1*IL*1*CHEN*MARIA*L***MI*W123456789",
    "HL*4*3*EV*0",
    "TRN*2*PA-2024-0320-5610*1245319599",
    "UM*HS*I*62*11:B",
    "HCR*A3**CT",
    "MSG*RESUBMIT WITH 6 WEEKS OF PHYSICAL THERAPY NOTES",
    "HI*ABK:M5416",
]

BODY_835 = [
    "BPR*I*1230.00*C*ACH*CCP*01*011000015*DA*1234567890*1512345678**01*031100209*DA*"
    "0012345678*20240320",
    *HEADER_835,
    "CLP*VO0082213-01*1*1450.00*1110.00*150.00*12*2024079UX0451*11*1",
    "NM1*QC*1*CHEN*MARIA*L***MI*W123456789",
    "NM1*82*1*RIVERA*ELENA****XX*1326041234",
    "DTM*232*20240305",
    "SVC*HC:72148*1200.00*900.00**1",
    "DTM*472*20240305",
    "CAS*CO*45*150.00",
    "CAS*PR*1*150.00",
    "AMT*B6*1050.00",
    "SVC*HC:99214*250.00*210.00**1",
    "DTM*472*20240305",
    "CAS*CO*45*40.00",
    "AMT*B6*210.00",
    "CLP*VO0082299-01*4*380.00*0*0*12*2024080UX0012*11*1",
    "CAS*CO*50*380.00",
    "NM1*QC*1*NGUYEN*LINH****MI*W554433221",
    "MOA***N115",
    "DTM*232*20240306",
    "SVC*HC:97110:GP*380.00*0**4",
    "DTM*472*20240306",
    "CLP*VO0082301-01*2*160.00*120.00*40.00*12*2024081UX0077*11*1",
    "NM1*QC*1*OBRIEN*THOMAS*J***MI*XEB904417731",
    "SVC*HC:99213*160.00*120.00**1",
    "DTM*472*20240307",
    "CAS*PR*2*40.00",
]

BODY_999 = [
    "AK1*HS*1001*005010X279A1",
    "AK2*270*0001*005010X279A1",
    "IK5*A",
    "AK2*270*0002*005010X279A1",
    "IK3*NM1*8*2100*8",
    "IK4*9*67*1",
    "IK5*R*5",
    "AK9*P*2*2*1",
]

CLEARINGHOUSE = Party("ZZ", "AVAILITY", "AVAILITY")


def main() -> None:
    """Write every valid sample."""
    HERE.mkdir(parents=True, exist_ok=True)
    files = {
        "271_eligibility.x12": interchange([("271", "005010X279A1", BODY_271)], control=1001),
        "277_claim_status.x12": interchange([("277", "005010X212", BODY_277)], control=2044),
        "278_prior_auth_certified.x12": interchange(
            [("278", "005010X217", BODY_278)], control=3110
        ),
        "278_prior_auth_denied.x12": interchange(
            [("278", "005010X217", BODY_278_DENIED)], control=3121, newline=""
        ),
        "835_remittance.x12": interchange([("835", "005010X221A1", BODY_835)], control=4501),
        "999_ack.x12": interchange(
            [("999", "005010X231A1", BODY_999)],
            sender=CLEARINGHOUSE,
            receiver=PROVIDER,
            control=5007,
        ),
        "271_other_delimiters.x12": interchange(
            [("271", "005010X279A1", BODY_271)],
            control=1002,
            delimiters=Delimiters(element="|", component=">", repetition="{", segment="\n"),
            newline="",
        ),
    }
    for name, text in files.items():
        (HERE / name).write_text(text, encoding="utf-8")
    request = interchange(
        [("270", "005010X279A1", BODY_270)], sender=PROVIDER, receiver=PAYER, control=901
    )
    with (HERE / "records.jsonl").open("w", encoding="utf-8") as out:
        row = {
            "transaction": "270/271",
            "request": request,
            "response": files["271_eligibility.x12"],
            "created_at": "2024-03-15T13:19:02Z",
        }
        out.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
