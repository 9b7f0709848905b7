"""X12 envelopes: interchanges (ISA/IEA), groups (GS/GE) and transaction sets (ST/SE).

:func:`parse_interchanges` turns X12 text into :class:`Transaction` objects, each with its own
segments (ST..SE) and its envelope (ISA, GS). Envelope problems that leave the transactions
readable are collected, not raised, and every transaction of an interchange carries them:

- ISA not 106 characters, ISA13 not 9 digits, a missing final terminator;
- SE01 segment count, GE01 transaction count, IEA01 group count that do not match;
- SE02 / GE02 / IEA02 control numbers that differ from ST02 / GS06 / ISA13;
- a missing SE, GE or IEA at the end of a closed transaction; segments outside ST..SE;
- a version other than 005010.

What makes the text unreadable raises :class:`X12ParseError`: no ISA, garbage, a transaction
cut off before its SE (a truncated file), an ST inside another transaction, no ST at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ._tokenizer import Delimiters, Segment, X12ParseError, tokenize

#: Transaction sets this project documents and tests (all of version 005010).
KNOWN_SETS = {
    "270": "eligibility inquiry",
    "271": "eligibility response",
    "276": "claim status request",
    "277": "claim status response",
    "278": "services review (prior authorization)",
    "835": "payment/remittance advice",
    "837": "claim",
    "999": "implementation acknowledgment",
}


@dataclass
class Transaction:
    """One transaction set (ST..SE) with its envelope."""

    set_id: str
    control_number: str
    version: str
    segments: list[Segment]
    envelope: list[Segment]
    delimiters: Delimiters
    origin: str
    problems: list[str] = field(default_factory=list)
    created_at: str | None = None
    #: the whole text the transaction was read from (for validators)
    source_text: str = field(default="", repr=False)
    _index: dict[str, list[int]] | None = field(default=None, repr=False)

    def positions(self, segment_id: str) -> list[int]:
        """Indexes into ``segments`` of every segment with this id, ascending (cached)."""
        if self._index is None:
            index: dict[str, list[int]] = {}
            for i, seg in enumerate(self.segments):
                index.setdefault(seg.id, []).append(i)
            self._index = index
        return self._index.get(segment_id, [])

    def summary(self) -> dict[str, object]:
        """``{set_id, control_number, version, ...}`` for evidence."""
        isa = next((s for s in self.envelope if s.id == "ISA"), None)
        gs = next((s for s in self.envelope if s.id == "GS"), None)
        return {
            "set_id": self.set_id,
            "control_number": self.control_number,
            "version": self.version,
            "group_control_number": gs.element(6) if gs else None,
            "interchange_control_number": (isa.element(13) or "").strip() if isa else None,
            "origin": self.origin,
            "segments": len(self.segments),
        }


def _count(value: str | None) -> int | None:
    text = (value or "").strip()
    return int(text) if text.isascii() and text.isdigit() else None  # not "٣" or "1_0"


def parse_interchanges(text: str, origin: str) -> list[Transaction]:
    """Every transaction in ``text`` (one or more interchanges), with envelope problems."""
    delimiters, segments, problems = tokenize(text)
    transactions: list[Transaction] = []
    isa: Segment | None = None
    gs: Segment | None = None
    open_st: Segment | None = None
    body: list[Segment] = []
    group_sets = interchange_groups = 0
    current: list[Transaction] = []  # transactions of the current interchange

    def note(problem: str) -> None:
        problems.append(problem)

    for seg in segments:
        where = f"segment {seg.position} ({seg.id})"
        if open_st is not None:
            body.append(seg)
            if seg.id == "ST":
                raise X12ParseError(
                    f"{where}: ST before the SE of transaction {open_st.element(2)!r} "
                    f"(segment {open_st.position})"
                )
            if seg.id != "SE":
                continue
            count, number = _count(seg.element(1)), seg.element(2)
            if count != len(body):
                note(f"{where}: SE01 says {seg.element(1)} segments, counted {len(body)}")
            if number != open_st.element(2):
                note(f"{where}: SE02 {number!r} does not match ST02 {open_st.element(2)!r}")
            version = open_st.element(3) or (gs.element(8) if gs else None) or ""
            tx = Transaction(
                set_id=open_st.element(1) or "",
                control_number=open_st.element(2) or "",
                version=version,
                segments=list(body),
                envelope=[s for s in (isa, gs) if s is not None],
                delimiters=delimiters,
                origin=origin,
                source_text=text,
            )
            if not version.startswith("005010"):
                note(f"transaction {tx.control_number!r}: version {version!r}, expected 005010")
            transactions.append(tx)
            current.append(tx)
            group_sets += 1
            open_st, body = None, []
        elif seg.id == "ISA":
            if isa is not None:
                note(f"{where}: ISA before the IEA of the previous interchange")
            isa, interchange_groups, current = seg, 0, []
            control = (seg.element(13) or "").strip()
            if not (control.isdigit() and len(control) == 9):
                note(f"{where}: ISA13 control number {control!r} is not 9 digits")
        elif seg.id == "GS":
            if gs is not None:
                note(f"{where}: GS before the GE of group {gs.element(6)!r}")
            gs, group_sets = seg, 0
            interchange_groups += 1
        elif seg.id == "ST":
            open_st, body = seg, [seg]
            if gs is None:
                note(f"{where}: transaction outside a GS/GE group")
        elif seg.id == "GE":
            if gs is None:
                note(f"{where}: GE without a GS")
            else:
                if _count(seg.element(1)) != group_sets:
                    note(f"{where}: GE01 says {seg.element(1)} transactions, counted {group_sets}")
                if seg.element(2) != gs.element(6):
                    note(f"{where}: GE02 {seg.element(2)!r} does not match GS06 {gs.element(6)!r}")
            gs = None
        elif seg.id == "IEA":
            if isa is None:
                note(f"{where}: IEA without an ISA")
            else:
                if gs is not None:
                    note(f"{where}: group {gs.element(6)!r} has no GE")
                    gs = None
                if _count(seg.element(1)) != interchange_groups:
                    note(
                        f"{where}: IEA01 says {seg.element(1)} groups, counted {interchange_groups}"
                    )
                if (seg.element(2) or "").strip() != (isa.element(13) or "").strip():
                    note(
                        f"{where}: IEA02 {seg.element(2)!r} does not match ISA13 "
                        f"{(isa.element(13) or '').strip()!r}"
                    )
            isa = None
        else:
            note(f"{where}: outside any transaction (ST..SE)")
    if open_st is not None:
        raise X12ParseError(
            f"transaction {open_st.element(1)}/{open_st.element(2)!r} starting at segment "
            f"{open_st.position} has no SE: the text is truncated"
        )
    if gs is not None:
        note(f"group {gs.element(6)!r} has no GE (truncated?)")
    if isa is not None:
        note(f"interchange {(isa.element(13) or '').strip()!r} has no IEA (truncated?)")
    if not transactions:
        raise X12ParseError("no transaction set (ST..SE) in the interchange")
    for tx in transactions:
        tx.problems = list(problems)
    return transactions
