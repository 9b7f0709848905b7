"""An X12 tokenizer whose delimiters come from the ISA segment, as the standard says.

The ISA segment has fixed-width elements, so its 4th character is the element separator, ISA11
the repetition separator (version 00402 and later; ``U`` before), ISA16 the component
separator and the character right after ISA16 the segment terminator. Any characters may be
used, including control characters; line breaks after terminators are ignored.

Errors that make the text unreadable raise :class:`X12ParseError` naming the segment; oddities
that still leave the segments readable (an ISA that is not 106 characters, a missing final
terminator) are returned as problems for the envelope report.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

ISA_LENGTH = 106
_SEGMENT_ID = re.compile(r"[A-Z][A-Z0-9]{1,2}\Z")


class X12ParseError(ValueError):
    """Text that cannot be read as X12; the message says where and why."""


@dataclass(frozen=True)
class Delimiters:
    """The four X12 delimiters of one interchange."""

    element: str
    component: str
    repetition: str | None
    segment: str


class Segment(NamedTuple):
    """One segment: its id, its elements (``elements[0]`` is the id) and its 1-based position."""

    id: str
    elements: tuple[str, ...]
    position: int

    def element(self, number: int) -> str | None:
        """Element ``number`` (1-based, ``EB03`` -> 3) as text; None when absent or empty."""
        if number < len(self.elements) and self.elements[number] != "":
            return self.elements[number]
        return None

    def text(self, delimiters: Delimiters) -> str:
        """The segment as written, without its terminator."""
        return delimiters.element.join(self.elements)


def _printable(char: str) -> str:
    return repr(char) if char.isprintable() else f"0x{ord(char):02x}"


def read_delimiters(text: str) -> tuple[Delimiters, int, list[str]]:
    """Delimiters declared by the ISA at the start of ``text``, the ISA's length, problems."""
    if not text.startswith("ISA"):
        start = text[:20].encode("unicode_escape").decode("ascii")
        raise X12ParseError(f"does not start with an ISA segment (starts with {start!r})")
    if len(text) < 4:
        raise X12ParseError("ISA segment is truncated")
    element = text[3]
    if element.isalnum() or element == " ":
        raise X12ParseError(
            f"ISA element separator {_printable(element)} is a letter, digit or space"
        )
    parts = text[:400].split(element, 16)
    if len(parts) < 17 or len(parts[16]) < 2:
        raise X12ParseError(
            f"ISA has {min(len(parts), 17) - 1} of 16 elements before the text ends "
            f"(truncated, or the element separator {_printable(element)} is not used)"
        )
    component, segment = parts[16][0], parts[16][1]
    length = sum(len(p) for p in parts[:16]) + 16 + 2
    if segment.isalnum() or segment == " ":
        raise X12ParseError(
            f"ISA16 is followed by {_printable(segment)}, not a segment terminator "
            f"(ISA is {length - 1}+ characters; expected {ISA_LENGTH})"
        )
    if len({element, component, segment}) < 3 or component.isalnum():
        raise X12ParseError(
            f"ISA delimiters clash: element {_printable(element)}, component "
            f"{_printable(component)}, segment {_printable(segment)}"
        )
    problems = []
    if length != ISA_LENGTH:
        problems.append(f"ISA segment is {length} characters, expected {ISA_LENGTH}")
    repetition: str | None = parts[11] if len(parts[11]) == 1 else None
    version = parts[12]
    if repetition is not None and (repetition.isalnum() or version < "00402"):
        repetition = None
    if repetition in (element, component, segment):
        problems.append(f"ISA11 repetition separator {_printable(parts[11])} clashes")
        repetition = None
    return Delimiters(element, component, repetition, segment), length, problems


def tokenize(text: str) -> tuple[Delimiters, list[Segment], list[str]]:
    """Split X12 text into segments; returns delimiters, segments and non-fatal problems."""
    text = text.lstrip("\ufeff \t\r\n")
    if "\x00" in text:
        raise X12ParseError(f"binary data (NUL byte at character {text.index(chr(0))})")
    delimiters, _, problems = read_delimiters(text)
    pieces = text.split(delimiters.segment)
    tail = pieces[-1].strip("\r\n\t ")
    if tail:
        problems.append(f"text ends without a segment terminator after {tail[:20]!r} (truncated?)")
    segments: list[Segment] = []
    for raw in pieces:
        raw = raw.strip("\r\n")
        if not raw.strip():
            continue
        if "\n" in raw or "\r" in raw:
            shown = raw[:30].encode("unicode_escape").decode("ascii")
            raise X12ParseError(
                f"segment {len(segments) + 1} ({shown!r}) contains a line break: the ISA "
                f"declares {_printable(delimiters.segment)} as segment terminator but the text "
                "seems to end segments with line breaks"
            )
        elements = tuple(raw.split(delimiters.element))
        seg_id = elements[0].strip()
        if not _SEGMENT_ID.match(seg_id):
            shown = raw[:30].encode("unicode_escape").decode("ascii")
            raise X12ParseError(
                f"segment {len(segments) + 1} ({shown!r}) does not start with a segment id "
                f"(wrong separators or garbage; element separator {_printable(delimiters.element)},"
                f" segment terminator {_printable(delimiters.segment)})"
            )
        segments.append(Segment(seg_id, (seg_id, *elements[1:]), len(segments) + 1))
    return delimiters, segments, problems
