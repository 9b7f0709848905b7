"""Writing X12 interchanges with correct envelopes, for fixtures, examples and benchmarks.

Segments are written with ``*`` / ``:`` / ``^`` / ``~`` in the body text and translated to the
requested delimiters, so one sample can be rendered with any separator set.
"""

from __future__ import annotations

from dataclasses import dataclass

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.x12._tokenizer import Delimiters

DEFAULT = Delimiters(element="*", component=":", repetition="^", segment="~")
_GS_CODES = {
    "270": "HS",
    "271": "HB",
    "276": "HR",
    "277": "HN",
    "278": "HI",
    "835": "HP",
    "837": "HC",
    "999": "FA",
}


@dataclass(frozen=True)
class Party:
    """An ISA/GS party: qualifier, id (padded to 15) and application code."""

    qualifier: str
    id: str
    code: str


PAYER = Party("ZZ", "AETNACLRHOUSE", "AETNA")
PROVIDER = Party("ZZ", "VALLEYORTHO01", "VALLEYORTHO")


def _render(segment: str, d: Delimiters) -> str:
    table = {"*": d.element, ":": d.component, "^": d.repetition or "^"}
    return "".join(table.get(c, c) for c in segment)


def interchange(
    transactions: list[tuple[str, str, list[str]]],
    *,
    sender: Party = PAYER,
    receiver: Party = PROVIDER,
    control: int = 1001,
    date: str = "240315",
    time: str = "1319",
    delimiters: Delimiters = DEFAULT,
    newline: str = "\n",
) -> str:
    """An interchange with one group of ``(set_id, implementation_ref, body_segments)``.

    Body segments exclude ST and SE; counts and control numbers are computed.
    """
    d = delimiters
    e = d.element
    isa = e.join(
        [
            "ISA",
            "00",
            " " * 10,
            "00",
            " " * 10,
            sender.qualifier,
            sender.id.ljust(15),
            receiver.qualifier,
            receiver.id.ljust(15),
            date,
            time,
            d.repetition or "U",
            "00501",
            f"{control:09d}",
            "0",
            "P",
            d.component,
        ]
    )
    set_id = transactions[0][0]
    gs = e.join(
        [
            "GS",
            _GS_CODES.get(set_id, "HB"),
            sender.code,
            receiver.code,
            "20" + date,
            time,
            str(control),
            "X",
            transactions[0][1],
        ]
    )
    lines = [isa, gs]
    for number, (sid, ref, body) in enumerate(transactions, start=1):
        st_number = f"{number:04d}"
        # ST03 is "Not Used" in the 835 implementation guide (X221A1); GS08 names it there.
        st = f"ST*{sid}*{st_number}" if sid == "835" else f"ST*{sid}*{st_number}*{ref}"
        segs = [st, *body]
        segs.append(f"SE*{len(segs) + 1}*{st_number}")
        lines.extend(_render(s, d) for s in segs)
    lines.append(e.join(["GE", str(len(transactions)), str(control)]))
    lines.append(e.join(["IEA", "1", f"{control:09d}"]))
    return "".join(line + d.segment + newline for line in lines)


#: an 835's reassociation trace, payer and payee loops and first LX, after its BPR
HEADER_835 = [
    "TRN*1*EFT20240320001*1512345678",
    "DTM*405*20240318",
    "N1*PR*AETNA LIFE INSURANCE COMPANY",
    "N3*151 FARMINGTON AVE",
    "N4*HARTFORD*CT*061560001",
    "REF*2U*60054",
    "PER*BL*PROVIDER SERVICES*TE*8006242386",
    "N1*PE*VALLEY ORTHOPEDIC GROUP*XX*1245319599",
    "N3*2200 SUTTER ST STE 400",
    "N4*SACRAMENTO*CA*958160000",
    "REF*TJ*941234567",
    "LX*1",
]


def claims_835(count: int, *, paid_each: str = "120.00") -> list[str]:
    """The body of an 835 (005010X221A1) paying ``count`` claims, one service line each."""
    total = f"{float(paid_each) * count:.2f}"
    body = [
        f"BPR*I*{total}*C*ACH*CCP*01*011000015*DA*1234567890*1512345678**01*031100209*DA*"
        "0012345678*20240320",
        *HEADER_835,
    ]
    for n in range(1, count + 1):
        body += [
            f"CLP*PCN{n:06d}*1*180.00*{paid_each}*25.00*12*94{n:011d}*11*1",
            f"NM1*QC*1*PATIENT{n}*ALEX****MI*W{n:09d}",
            "NM1*82*1*RIVERA*ELENA****XX*1326041234",
            "DTM*232*20240301",
            f"SVC*HC:99214*180.00*{paid_each}**1",
            "DTM*472*20240301",
            "CAS*CO*45*35.00",
            "CAS*PR*3*25.00",
            "AMT*B6*145.00",
        ]
    return body
