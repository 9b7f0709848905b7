"""Verial's HL7 v2 paths: ``SEG.field.component.subcomponent``, 1-based as in the standard.

Grammar (whitespace not allowed)::

    path     := segment ("." field ("." component ("." subcomponent)?)?)?
    segment  := ID ("[" (N | "*") "]")?          PID, OBX[2], OBX[*]
    field    := N ("[" (N | "*") "]")?           5, 3[2], 3[*]

- ``OBX[2].5`` is OBX-5 of the second OBX segment; without an index the first segment counts.
- ``PID.3[2].1`` is component 1 of the second repetition of PID-3; without an index the first
  repetition counts (``PID.3.1`` = ``PID.3[1].1``).
- ``[*]`` on a segment or a repetition yields a list of values (one per segment/repetition).
- MSH is numbered as the standard does: ``MSH.1`` is the field separator (``|``), ``MSH.2`` the
  encoding characters (``^~\\&``), ``MSH.3`` the sending application, ``MSH.9.2`` the trigger
  event, ``MSH.10`` the control id.
- Values are text with escape sequences decoded (``\\F\\`` -> ``|``, ``\\S\\`` -> ``^``,
  ``\\T\\`` -> ``&``, ``\\R\\`` -> ``~``, ``\\E\\`` -> ``\\``, ``\\Xhh\\``). A path that stops above
  the leaf (``PID.5`` of ``DOE^JOHN``) gives that part's text as written, separators included;
  a path that stops at a component holding subcomponents (``PID.3.4`` of ``…^^^HOSP&1.2.3&ISO``)
  gives its first subcomponent (``HOSP``), as python-hl7's ``extract_field`` and HAPI's Terser
  do: name ``PID.3.4.2`` for another one.
- A segment that is not in the message gives ``MISSING`` (the path does not resolve); a field,
  repetition or component that is absent or empty gives ``None`` (HL7: not valued).

Public API: :func:`parse_path`, :func:`get`, :func:`get_all`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .._compare import MISSING

_PATH = re.compile(
    r"(?P<seg>[A-Z][A-Z0-9]{2})(?:\[(?P<segi>\d+|\*)\])?"
    r"(?:\.(?P<field>\d+)(?:\[(?P<rep>\d+|\*)\])?"
    r"(?:\.(?P<comp>\d+)(?:\.(?P<sub>\d+))?)?)?\Z"
)

ALL = "*"


class Hl7PathError(ValueError):
    """A path that does not follow the grammar above."""


@dataclass(frozen=True)
class Hl7Path:
    """A parsed path. Indexes are 1-based; ``"*"`` means every one; None means not given."""

    segment: str
    segment_index: int | str | None
    field: int | None
    repetition: int | str | None
    component: int | None
    subcomponent: int | None

    @property
    def multiple(self) -> bool:
        """True when the path has a ``[*]`` and so yields a list."""
        return ALL in (self.segment_index, self.repetition)


def _index(text: str | None, what: str, path: str) -> int | str | None:
    if text is None or text == ALL:
        return text
    value = int(text)
    if value < 1:
        raise Hl7PathError(f"HL7 path {path!r}: {what} index {value} must be 1 or more (1-based)")
    return value


@lru_cache(maxsize=4096)
def parse_path(path: str) -> Hl7Path:
    """Parse ``"PID.3[2].1"`` into an :class:`Hl7Path`; Hl7PathError explains a bad path."""
    match = _PATH.match(path.strip())
    if not match:
        raise Hl7PathError(
            f"HL7 path {path!r} is not SEG[n].field[r].component.subcomponent "
            "(e.g. PID.5.1, PID.3[2].1, OBX[2].5, OBX[*].5)"
        )
    g = match.groupdict()
    numbers = {k: _index(g[k], k, path) for k in ("field", "comp", "sub")}
    if any(v == 0 for v in numbers.values()):
        raise Hl7PathError(f"HL7 path {path!r}: indexes are 1-based")
    if g["seg"] == "MSH" and g["field"] in ("1", "2") and (g["rep"] or g["comp"]):
        raise Hl7PathError(f"HL7 path {path!r}: MSH-1 and MSH-2 have no components")
    return Hl7Path(
        segment=g["seg"],
        segment_index=_index(g["segi"], "segment", path),
        field=numbers["field"],  # type: ignore[arg-type]
        repetition=_index(g["rep"], "repetition", path),
        component=numbers["comp"],  # type: ignore[arg-type]
        subcomponent=numbers["sub"],  # type: ignore[arg-type]
    )


def _child(node: Any, index: int) -> Any:
    """Child ``index`` (1-based) of a python-hl7 container; a bare string is its own child 1."""
    if isinstance(node, str):
        return node if index == 1 else None
    return node[index - 1] if index <= len(node) else None


def _leaf(message: Any, node: Any) -> Any:
    while not isinstance(node, str) and node is not None and len(node) == 1:
        node = node[0]
    if node is None:
        return None
    text = node if isinstance(node, str) else str(node)
    if text == "":
        return None
    if isinstance(node, str) and message.esc in text:
        return message.unescape(text)
    return text


def _from_segment(message: Any, segment: Any, p: Hl7Path) -> Any:
    if p.field is None:
        return str(segment)
    if p.field >= len(segment):
        return [] if p.repetition == ALL else None
    field = segment[p.field]
    if p.segment in ("MSH", "BHS", "FHS") and p.field in (1, 2):
        return str(field)
    if p.repetition is None and p.component is None:
        return _leaf(message, field)
    repetitions = range(1, len(field) + 1) if p.repetition == ALL else [p.repetition or 1]
    values = []
    for r in repetitions:
        node = _child(field, r)  # type: ignore[arg-type]
        if p.component is not None and node is not None:
            node = _child(node, p.component)
            # a path that stops at a component holding subcomponents reads the first one
            node = _child(node, p.subcomponent or 1) if node is not None else None
        values.append(_leaf(message, node))
    return values if p.repetition == ALL else values[0]


def get(message: Any, path: str | Hl7Path) -> Any:
    """The value at ``path`` in ``message`` (an ``hl7.Message``, an Hl7Message, or text).

    Returns text, None (present but not valued), a list (paths with ``[*]``), or ``MISSING``
    when the segment is not in the message. Raises Hl7PathError for a malformed path.

    >>> get(msg, "PID.5.1")      # family name
    >>> get(msg, "MSH.9.2")      # trigger event
    >>> get(msg, "OBX[*].5")     # every observation value
    """
    p = parse_path(path) if isinstance(path, str) else path
    if p.segment == "MSH" and p.segment_index is None and p.field is not None:
        fields = getattr(message, "msh", None)
        if fields is not None:
            value = _from_msh_fields(fields, p)
            if value is not _SLOW:
                return value
    message = _as_message(message)
    segments = [s for s in message if str(s[0]) == p.segment]
    if p.segment_index == ALL:
        values = [_from_segment(message, s, p) for s in segments]
        if p.repetition == ALL:
            return [v for sub in values for v in sub]
        return values
    index = p.segment_index if isinstance(p.segment_index, int) else 1
    if index > len(segments):
        return MISSING
    return _from_segment(message, segments[index - 1], p)


def get_all(message: Any, path: str | Hl7Path) -> list[Any]:
    """The values at ``path`` as a list: every match of ``[*]``, else ``[value]`` or ``[]``."""
    value = get(message, path)
    if value is MISSING:
        return []
    return value if isinstance(value, list) else [value]


_SLOW = object()


def _from_msh_fields(msh: list[str], p: Hl7Path) -> Any:
    """MSH values straight from the split header, without python-hl7 (escapes: ``_SLOW``)."""
    assert p.field is not None
    if p.field > len(msh):
        return [] if p.repetition == ALL else None
    value = msh[p.field - 1]
    if p.field in (1, 2):
        return value
    enc = msh[1]
    if len(enc) > 2 and enc[2] in value:
        return _SLOW
    if p.repetition is None and p.component is None:
        return value or None
    reps = value.split(enc[1]) if len(enc) > 1 else [value]
    picked = range(1, len(reps) + 1) if p.repetition == ALL else [p.repetition or 1]
    out = []
    for r in picked:
        node: str | None = reps[r - 1] if r <= len(reps) else None  # type: ignore[operator]
        subcomponent = p.subcomponent or (1 if p.component is not None else None)
        for index, sep in ((p.component, enc[0]), (subcomponent, enc[3:4])):
            if index is not None and node is not None:
                parts = node.split(sep) if sep else [node]
                node = parts[index - 1] if index <= len(parts) else None
        out.append(node or None)
    return out if p.repetition == ALL else out[0]


def _as_message(message: Any) -> Any:
    """An ``hl7.Message`` from an Hl7Message or text."""
    if isinstance(message, str):
        from ._parse import parse_message

        message = parse_message(message, "<text>")
    return getattr(message, "parsed", message)
