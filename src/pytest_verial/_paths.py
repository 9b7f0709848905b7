"""Dotted JSON paths with 0-based numeric indexes, as in Verial (``participant.0.actor.display``).

Used for FHIR resources, portal rows and parsed files. A key that itself contains dots is found
when it exists as a whole (``"a.b"`` in a row is reached by the path ``a.b``). Bracket indexes
(``participant[0].actor``) are accepted too. Segment indexes of HL7 and X12 paths are 1-based and
live in their own modules.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from ._compare import MISSING

_BRACKET = re.compile(r"\[(-?\d+)\]")


@lru_cache(maxsize=4096)
def split_path(path: str) -> tuple[str, ...]:
    """``"a.b[0].c"`` -> ``("a", "b", "0", "c")``."""
    return tuple(part for part in _BRACKET.sub(r".\1", path).split(".") if part != "")


#: a list index segment
_INDEX = re.compile(r"-?\d+")


@lru_cache(maxsize=4096)
def _steps(path: str) -> tuple[tuple[str, ...], tuple[tuple[tuple[str, int], ...], ...]]:
    """``path``'s segments, and for each segment the keys a mapping may hold there, longest
    first, each with the segment it leads to (``a.b.c`` at 0: ``a.b.c``, ``a.b``, ``a``): joined
    once per path, not per row (a check resolves its fields in every candidate row)."""
    parts = split_path(path)
    keys = tuple(
        tuple((".".join(parts[i:j]), j) for j in range(len(parts), i, -1))
        for i in range(len(parts))
    )
    return parts, keys


def resolve(obj: Any, path: str) -> Any:
    """The value at ``path`` in ``obj``, or ``MISSING`` when any step does not resolve."""
    parts, keys = _steps(path)
    current = obj
    i = 0
    while i < len(parts):
        if isinstance(current, dict):
            # Longest run of segments that is itself a key (keys with dots), else one segment.
            for key, j in keys[i]:
                if key in current:
                    current = current[key]
                    i = j
                    break
            else:
                return MISSING
        elif isinstance(current, list):
            part = parts[i]
            if not _INDEX.fullmatch(part):
                return MISSING
            index = int(part)
            if not -len(current) <= index < len(current):
                return MISSING
            current = current[index]
            i += 1
        else:
            return MISSING
    return current
