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
    reader = _Envelopes(text, origin, delimiters, problems)
    for seg in segments:
        reader.read(seg)
    return reader.finish()


@dataclass
class _Envelopes:
    """The open interchange, group and transaction while the segments are read in order."""

    text: str
    origin: str
    delimiters: Delimiters
    problems: list[str]
    transactions: list[Transaction] = field(default_factory=list)
    isa: Segment | None = None
    gs: Segment | None = None
    open_st: Segment | None = None
    body: list[Segment] = field(default_factory=list)
    group_sets: int = 0
    interchange_groups: int = 0

    def note(self, problem: str) -> None:
        self.problems.append(problem)

    def read(self, seg: Segment) -> None:
        where = f"segment {seg.position} ({seg.id})"
        if self.open_st is not None:
            self.inside(seg, where, self.open_st)
        elif seg.id == "ISA":
            if self.isa is not None:
                self.note(f"{where}: ISA before the IEA of the previous interchange")
            self.isa, self.interchange_groups = seg, 0
            control = (seg.element(13) or "").strip()
            if not (control.isdigit() and len(control) == 9):
                self.note(f"{where}: ISA13 control number {control!r} is not 9 digits")
        elif seg.id == "GS":
            if self.gs is not None:
                self.note(f"{where}: GS before the GE of group {self.gs.element(6)!r}")
            self.gs, self.group_sets = seg, 0
            self.interchange_groups += 1
        elif seg.id == "ST":
            self.open_st, self.body = seg, [seg]
            if self.gs is None:
                self.note(f"{where}: transaction outside a GS/GE group")
        elif seg.id == "GE":
            self.group_end(seg, where)
        elif seg.id == "IEA":
            self.interchange_end(seg, where)
        else:
            self.note(f"{where}: outside any transaction (ST..SE)")

    def inside(self, seg: Segment, where: str, open_st: Segment) -> None:
        """A segment of the open transaction; its SE closes it."""
        self.body.append(seg)
        if seg.id == "ST":
            raise X12ParseError(
                f"{where}: ST before the SE of transaction {open_st.element(2)!r} "
                f"(segment {open_st.position})"
            )
        if seg.id != "SE":
            return
        count, number = _count(seg.element(1)), seg.element(2)
        if count != len(self.body):
            self.note(f"{where}: SE01 says {seg.element(1)} segments, counted {len(self.body)}")
        if number != open_st.element(2):
            self.note(f"{where}: SE02 {number!r} does not match ST02 {open_st.element(2)!r}")
        version = open_st.element(3) or (self.gs.element(8) if self.gs else None) or ""
        tx = Transaction(
            set_id=open_st.element(1) or "",
            control_number=open_st.element(2) or "",
            version=version,
            segments=list(self.body),
            envelope=[s for s in (self.isa, self.gs) if s is not None],
            delimiters=self.delimiters,
            origin=self.origin,
            source_text=self.text,
        )
        if not version.startswith("005010"):
            self.note(f"transaction {tx.control_number!r}: version {version!r}, expected 005010")
        self.transactions.append(tx)
        self.group_sets += 1
        self.open_st, self.body = None, []

    def group_end(self, seg: Segment, where: str) -> None:
        gs = self.gs
        if gs is None:
            self.note(f"{where}: GE without a GS")
        else:
            if _count(seg.element(1)) != self.group_sets:
                self.note(
                    f"{where}: GE01 says {seg.element(1)} transactions, counted {self.group_sets}"
                )
            if seg.element(2) != gs.element(6):
                self.note(f"{where}: GE02 {seg.element(2)!r} does not match GS06 {gs.element(6)!r}")
        self.gs = None

    def interchange_end(self, seg: Segment, where: str) -> None:
        isa = self.isa
        if isa is None:
            self.note(f"{where}: IEA without an ISA")
        else:
            if self.gs is not None:
                self.note(f"{where}: group {self.gs.element(6)!r} has no GE")
                self.gs = None
            if _count(seg.element(1)) != self.interchange_groups:
                self.note(
                    f"{where}: IEA01 says {seg.element(1)} groups, "
                    f"counted {self.interchange_groups}"
                )
            if (seg.element(2) or "").strip() != (isa.element(13) or "").strip():
                self.note(
                    f"{where}: IEA02 {seg.element(2)!r} does not match ISA13 "
                    f"{(isa.element(13) or '').strip()!r}"
                )
        self.isa = None

    def finish(self) -> list[Transaction]:
        """The transactions, each carrying every problem; what was left open is one more."""
        if self.open_st is not None:
            raise X12ParseError(
                f"transaction {self.open_st.element(1)}/{self.open_st.element(2)!r} starting at "
                f"segment {self.open_st.position} has no SE: the text is truncated"
            )
        if self.gs is not None:
            self.note(f"group {self.gs.element(6)!r} has no GE (truncated?)")
        if self.isa is not None:
            self.note(
                f"interchange {(self.isa.element(13) or '').strip()!r} has no IEA (truncated?)"
            )
        if not self.transactions:
            raise X12ParseError("no transaction set (ST..SE) in the interchange")
        for tx in self.transactions:
            tx.problems = list(self.problems)
        return self.transactions
