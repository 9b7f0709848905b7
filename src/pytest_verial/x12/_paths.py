"""X12 paths: segments, elements, components; qualified by index, sibling element or scope.

Grammar (one syntax, documented in docs/x12.md)::

    path      := element | step ("/" step)* ("." element)?
    step      := SEG qualifier*                 EB, EB[2], EB[*], EB[EB01=1], HL[HL03=22]
    qualifier := "[" N "]" | "[*]" | "[" cond ("," cond)* "]"
    cond      := element "=" value              EB01=1, STC01-1=A1, EB03=30
    element   := SEG NN ("[" R "]")? ("-" C)?   EB03, STC01-2, EB03[2], SVC01-2

- Indexes are 1-based as in the standards: ``EB[2].EB03`` is EB03 of the second EB segment;
  ``EB01`` alone means the first EB segment; ``STC01-2`` is component 2 of STC01; ``EB03[2]``
  is the second repetition of EB03 (repetition separator from ISA11).
- ``[EB01=1]`` keeps the segments whose EB01 is ``1`` (sibling-qualified); a condition on a
  repeating element matches any repetition; several conditions in one bracket must all hold;
  brackets apply left to right, so ``EB[EB01=B][2]`` is the second EB with EB01 ``B``.
- ``A/B`` is loop scoping: the B segments after each selected A segment and before the next
  segment with A's id (or the end of the enclosing scope). ``HL[HL03=22]/EB[EB01=1].EB03``
  reads the subscriber loop; ``CLP[CLP01=PCN-17]/SVC[*].SVC03`` the service lines of a claim.
- ``[*]`` anywhere makes the result a list (possibly empty); otherwise each step takes the
  first segment selected and the result is one value.
- ``ISA``, ``GS`` elements (``ISA13``, ``GS06``) read the transaction's envelope.
- Values are text. An element present but empty, or past the end of its segment, is None; a
  path whose segment is not found is ``MISSING``.

Public API: :func:`parse_path`, :func:`get`, :func:`get_all`.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .._compare import MISSING
from ._tokenizer import Delimiters, Segment

ALL = "*"
_SEG = r"[A-Z][A-Z0-9]{1,2}"
_ELEMENT = re.compile(
    rf"(?P<seg>{_SEG}?)(?P<num>\d{{2}})(?:\[(?P<rep>\d+)\])?(?:-(?P<comp>\d+))?\Z"
)
_STEP = re.compile(rf"(?P<seg>{_SEG})(?P<quals>(?:\[[^\]]*\])*)\Z")
_QUAL = re.compile(r"\[([^\]]*)\]")


class X12PathError(ValueError):
    """A path that does not follow the grammar above."""


@dataclass(frozen=True)
class ElementRef:
    """``EB03[2]-1``: segment, element, repetition, component (1-based; None = not given)."""

    segment: str
    number: int
    repetition: int | None
    component: int | None


@dataclass(frozen=True)
class Step:
    """One segment step with its qualifiers: ints, ``"*"`` or condition tuples."""

    segment: str
    qualifiers: tuple[Any, ...]


@dataclass(frozen=True)
class X12Path:
    """A parsed path."""

    steps: tuple[Step, ...]
    element: ElementRef | None

    @property
    def multiple(self) -> bool:
        """True when a ``[*]`` makes the result a list."""
        return any(q == ALL for step in self.steps for q in step.qualifiers)


def parse_element(text: str, path: str) -> ElementRef:
    """``"STC01-2"`` -> ElementRef; X12PathError when malformed."""
    match = _ELEMENT.match(text)
    if not match or not match["seg"]:
        raise X12PathError(
            f"X12 path {path!r}: {text!r} is not an element reference like EB03, STC01-2, EB03[2]"
        )
    number = int(match["num"])
    rep = int(match["rep"]) if match["rep"] else None
    comp = int(match["comp"]) if match["comp"] else None
    if number < 1 or rep == 0 or comp == 0:
        raise X12PathError(f"X12 path {path!r}: element, repetition and component are 1-based")
    return ElementRef(match["seg"], number, rep, comp)


def _qualifier(text: str, path: str) -> Any:
    text = text.strip()
    if text == ALL:
        return ALL
    if text.isdigit():
        if int(text) < 1:
            raise X12PathError(f"X12 path {path!r}: segment index [{text}] is 1-based")
        return int(text)
    conds = []
    for part in text.split(","):
        name, eq, value = part.partition("=")
        if not eq:
            raise X12PathError(
                f"X12 path {path!r}: [{text}] is not an index, [*] or ELEMENT=value conditions"
            )
        conds.append((parse_element(name.strip(), path), value.strip()))
    return tuple(conds)


def _outside(text: str, char: str) -> list[int]:
    """Positions of ``char`` in ``text`` outside ``[...]``."""
    depth, found = 0, []
    for i, c in enumerate(text):
        if c == "[":
            depth += 1
        elif c == "]":
            depth = max(0, depth - 1)
        elif c == char and depth == 0:
            found.append(i)
    return found


@lru_cache(maxsize=4096)
def parse_path(path: str) -> X12Path:
    """Parse an X12 path (see the module docstring); X12PathError explains a bad one."""
    text = path.strip()
    if not text:
        raise X12PathError("empty X12 path")
    if _ELEMENT.match(text) and "/" not in text:
        ref = parse_element(text, path)
        return X12Path((Step(ref.segment, ()),), ref)
    dots = _outside(text, ".")
    head, tail = (text[: dots[-1]], text[dots[-1] + 1 :]) if dots else (text, "")
    steps = []
    cuts = [-1, *_outside(head, "/"), len(head)]
    for part in (head[a + 1 : b] for a, b in zip(cuts, cuts[1:], strict=False)):
        match = _STEP.match(part)
        if not match:
            raise X12PathError(
                f"X12 path {path!r}: {part!r} is not a segment step like EB, EB[2], EB[EB01=1]"
            )
        quals = tuple(_qualifier(q, path) for q in _QUAL.findall(match["quals"]))
        steps.append(Step(match["seg"], quals))
    element = parse_element(tail, path) if tail else None
    if element is not None and element.segment != steps[-1].segment:
        raise X12PathError(
            f"X12 path {path!r}: element {tail!r} does not belong to segment {steps[-1].segment}"
        )
    return X12Path(tuple(steps), element)


def element_value(segment: Segment, ref: ElementRef, delimiters: Delimiters) -> str | None:
    """The text of ``ref`` in ``segment`` (None when absent or empty)."""
    value = segment.element(ref.number)
    if value is None:
        return None
    if ref.repetition is not None:
        reps = value.split(delimiters.repetition) if delimiters.repetition else [value]
        value = reps[ref.repetition - 1] if ref.repetition <= len(reps) else None
    if value is not None and ref.component is not None:
        comps = value.split(delimiters.component)
        value = comps[ref.component - 1] if ref.component <= len(comps) else None
    return value or None


def _holds(segment: Segment, conds: tuple[Any, ...], delimiters: Delimiters) -> bool:
    for ref, wanted in conds:
        value = element_value(segment, ref, delimiters)
        if value is None:
            return False
        options = {value}
        if ref.repetition is None and delimiters.repetition:
            options.update(value.split(delimiters.repetition))
        if wanted not in options:
            return False
    return True


def _positions(transaction: Any, segments: list[Segment], segment_id: str) -> list[int]:
    if segments is transaction.segments and hasattr(transaction, "positions"):
        return transaction.positions(segment_id)  # type: ignore[no-any-return]
    return [i for i, seg in enumerate(segments) if seg.id == segment_id]


def _select(
    positions: list[int],
    segments: list[Segment],
    lo: int,
    hi: int,
    step: Step,
    delimiters: Delimiters,
    every: bool,
) -> list[int]:
    chosen = positions[bisect_left(positions, lo) : bisect_left(positions, hi)]
    explicit = False
    for qual in step.qualifiers:
        if qual == ALL:
            explicit = True
        elif isinstance(qual, int):
            chosen = chosen[qual - 1 : qual] if qual <= len(chosen) else []
            explicit = True
        else:
            chosen = [i for i in chosen if _holds(segments[i], qual, delimiters)]
    return chosen if explicit or every else chosen[:1]


def _end(positions: list[int], start: int, hi: int) -> int:
    """The next position of the anchor's segment id after ``start``, capped at ``hi``."""
    after = bisect_right(positions, start)
    return min(positions[after], hi) if after < len(positions) else hi


def _evaluate(transaction: Any, p: X12Path, every: bool) -> list[Any]:
    first = p.steps[0].segment
    segments = transaction.envelope if first in ("ISA", "GS") else transaction.segments
    delimiters = transaction.delimiters
    ranges = [(0, len(segments))]
    chosen: list[int] = []
    for n, step in enumerate(p.steps):
        positions = _positions(transaction, segments, step.segment)
        chosen = []
        for lo, hi in ranges:
            chosen.extend(_select(positions, segments, lo, hi, step, delimiters, every))
        if n < len(p.steps) - 1:
            ranges = [
                (i + 1, _end(positions, i, hi)) for lo, hi in ranges for i in chosen if lo <= i < hi
            ]
    if p.element is None:
        return [segments[i].text(delimiters) for i in chosen]
    return [element_value(segments[i], p.element, delimiters) for i in chosen]


def get(transaction: Any, path: str | X12Path) -> Any:
    """The value at ``path`` in a transaction (:class:`~pytest_verial.x12._envelope.Transaction`).

    Returns text, None (element empty/absent), a list (paths with ``[*]``), or ``MISSING`` when
    no segment is selected. Raises X12PathError for a malformed path.

    >>> get(tx, "EB[EB01=1].EB03")      # service types of the active-coverage EB
    >>> get(tx, "STC01-2")              # claim status code
    """
    p = parse_path(path) if isinstance(path, str) else path
    values = _evaluate(transaction, p, every=False)
    if p.multiple:
        return values
    return values[0] if values else MISSING


def get_all(transaction: Any, path: str | X12Path) -> list[Any]:
    """Values of ``path`` in *every* segment selected, unindexed steps included.

    ``get_all(tx, "TRN02")`` gives the TRN02 of every TRN segment (used by ``correlate_by``).
    """
    p = parse_path(path) if isinstance(path, str) else path
    return _evaluate(transaction, p, every=True)
