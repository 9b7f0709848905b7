"""A FHIR search as data: the criterion's ``search`` object parsed and checked against the spec.

``search: {patient: Patient/john-smith, status: booked}`` becomes a :class:`Query` of
clauses. A value with commas is an OR (``status: booked,arrived``); a list value repeats the
parameter, an AND (``date: [ge2024-01-01, lt2024-02-01]``). Keys may carry a modifier
(``name:exact``), a type (``subject:Patient``) and a chain (``subject:Patient.name``).
Result parameters ``_sort``, ``_count`` and ``_offset`` shape the result; ``_include``,
``_summary``, ``_elements``, ``_total`` and ``_format`` are passed through and ignored when
matching. Unknown parameters are refused the way a strict server refuses them.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from .._errors import CheckError
from ._definitions import SEARCHABLE_TYPES, SearchParam, param_codes, resource_types, search_param

#: result parameters that do not select resources
PASSTHROUGH = {"_include", "_revinclude", "_summary", "_elements", "_total", "_format", "_pretty"}
MODIFIERS = {
    "token": {"not", "text", "missing"},
    "string": {"exact", "contains", "missing"},
    "date": {"missing"},
    "number": {"missing"},
    "quantity": {"missing"},
    "uri": {"below", "above", "missing"},
    "reference": {"missing"},
}


@dataclass(frozen=True)
class Clause:
    """One occurrence of one search parameter: its values are ORed."""

    key: str
    param: SearchParam
    modifier: str | None
    #: the rest of a chained key (``name`` in ``subject:Patient.name``)
    chain: str | None
    values: tuple[str, ...]


@dataclass(frozen=True)
class Query:
    """A parsed, validated search on one resource type."""

    resource_type: str
    clauses: tuple[Clause, ...]
    sort: tuple[tuple[SearchParam, bool], ...] = ()
    count: int | None = None
    offset: int = 0
    #: every parameter as given, in order (for the wire and for the evidence)
    pairs: tuple[tuple[str, str], ...] = field(default=())

    def text(self) -> str:
        """Readable form: ``Appointment?patient=Patient/john-smith&status=booked``."""
        if not self.pairs:
            return self.resource_type
        return self.resource_type + "?" + "&".join(f"{k}={v}" for k, v in self.pairs)

    def url_path(self) -> str:
        """The relative URL to send to a server, percent-encoded."""
        if not self.pairs:
            return self.resource_type
        encoded = "&".join(
            f"{quote(k, safe=':._-')}={quote(v, safe=':/|,._-')}" for k, v in self.pairs
        )
        return f"{self.resource_type}?{encoded}"


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None or isinstance(value, (dict, list)):
        raise CheckError(f"search value {value!r} must be a string, number or boolean")
    return str(value)


def _pairs(search: Mapping[str, Any] | list[tuple[str, Any]]) -> list[tuple[str, str]]:
    items = search.items() if isinstance(search, Mapping) else search
    pairs: list[tuple[str, str]] = []
    for key, value in items:
        for one in value if isinstance(value, list) else [value]:
            pairs.append((str(key), _text(one)))
    return pairs


def unknown_param(resource_type: str, code: str) -> CheckError:
    """The error a strict server gives for an undefined parameter, with close matches."""
    close = difflib.get_close_matches(code, param_codes(resource_type), n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    return CheckError(f"unknown search parameter {code!r} for {resource_type}{hint}")


def lookup(resource_type: str, key: str) -> tuple[SearchParam, str | None, str | None]:
    """Split ``code[:modifier][.chain]`` and find the parameter definition."""
    head, _, chain = key.partition(".")
    code, _, modifier = head.partition(":")
    param = search_param(resource_type, code)
    if param is None:
        raise unknown_param(resource_type, code)
    if param.type not in SEARCHABLE_TYPES or not param.expression:
        raise CheckError(
            f"search parameter {code!r} of {resource_type} has type {param.type!r}, "
            "which snapshot search does not support"
        )
    mod = modifier or None
    if mod is not None and param.type == "reference":
        if mod != "missing" and mod not in resource_types():
            raise CheckError(f"modifier {mod!r} of reference parameter {code!r} is not supported")
        if mod != "missing" and param.targets and mod not in param.targets:
            raise CheckError(f"{code!r} of {resource_type} cannot refer to {mod}")
    elif mod is not None and mod not in MODIFIERS[param.type]:
        allowed = ", ".join(sorted(MODIFIERS[param.type]))
        raise CheckError(
            f"modifier {mod!r} is not supported on {param.type} parameter {code!r} "
            f"(supported: {allowed})"
        )
    if chain and param.type != "reference":
        raise CheckError(f"{key!r}: only reference parameters can be chained")
    return param, mod, chain or None


def build_query(
    resource_type: str, search: Mapping[str, Any] | list[tuple[str, Any]], validate: bool = True
) -> Query:
    """Parse a criterion's ``search`` for ``resource_type``; errors are :class:`CheckError`."""
    if resource_type not in resource_types():
        close = difflib.get_close_matches(resource_type, sorted(resource_types()), n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        raise CheckError(f"unknown FHIR R4 resource type {resource_type!r}{hint}")
    pairs = _pairs(search)
    clauses: list[Clause] = []
    sort: list[tuple[SearchParam, bool]] = []
    count: int | None = None
    offset = 0
    for key, value in pairs:
        if key in PASSTHROUGH:
            continue
        if key in ("_count", "_offset"):
            try:
                number = int(value)
            except ValueError:
                raise CheckError(f"{key} must be a whole number, not {value!r}") from None
            if number < 0:
                raise CheckError(f"{key} must not be negative")
            if key == "_count":
                count = number
            else:
                offset = number
            continue
        if key == "_sort":
            for part in filter(None, (p.strip() for p in value.split(","))):
                descending = part.startswith("-")
                code = part.lstrip("-")
                param = search_param(resource_type, code)
                if param is None:
                    raise unknown_param(resource_type, code)
                sort.append((param, descending))
            continue
        if not validate:
            continue
        param, modifier, chain = lookup(resource_type, key)
        if modifier == "missing" and value not in ("true", "false"):
            raise CheckError(f"{key} must be true or false, not {value!r}")
        values = tuple(v for v in _split_or(value))
        clauses.append(Clause(key, param, modifier, chain, values))
    return Query(resource_type, tuple(clauses), tuple(sort), count, offset, tuple(pairs))


def _split_or(value: str) -> list[str]:
    """Split on commas not escaped with a backslash (``a,b`` is a OR b)."""
    parts, current, escaped = [], [], False
    for ch in value:
        if escaped:
            current.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == ",":
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts
