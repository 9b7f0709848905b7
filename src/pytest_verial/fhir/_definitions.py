"""FHIR R4 search parameter definitions, from the specification's SearchParameter resources.

The table is package data (``data/search-parameters-r4.json``) extracted by
``scripts/extract_search_params.py``: for each base resource type and parameter code, its type,
its FHIRPath expression (cut down to that base's branches) and its reference targets.
Parameters on ``Resource`` and ``DomainResource`` (``_id``, ``_lastUpdated``, ``_tag`` ...)
apply to every type.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

#: search parameter types we evaluate on a snapshot; ``composite`` and ``special`` are refused.
SEARCHABLE_TYPES = ("token", "reference", "string", "date", "number", "quantity", "uri")

_RESOLVE_IS = re.compile(r"\.where\(\s*resolve\(\)\s+is\s+([A-Za-z]+)\s*\)")


@dataclass(frozen=True)
class SearchParam:
    """One search parameter of one resource type."""

    code: str
    base: str
    type: str
    #: FHIRPath over the resource, with ``where(resolve() is X)`` removed (see ``ref_types``)
    expression: str
    #: allowed reference targets from the definition
    targets: tuple[str, ...]
    #: the types a ``resolve() is X`` filter kept, or empty for any
    ref_types: tuple[str, ...] = ()


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    text = (
        resources.files(__package__)
        .joinpath("data/search-parameters-r4.json")
        .read_text(encoding="utf-8")
    )
    data: dict[str, Any] = json.loads(text)
    return data


@lru_cache(maxsize=1)
def resource_types() -> frozenset[str]:
    """Every concrete R4 resource type name."""
    return frozenset(_table()["resource_types"])


def _strip_resolve(expression: str) -> tuple[str, tuple[str, ...]]:
    kept = tuple(dict.fromkeys(_RESOLVE_IS.findall(expression)))
    return _RESOLVE_IS.sub("", expression), kept


@lru_cache(maxsize=4096)
def search_param(resource_type: str, code: str) -> SearchParam | None:
    """The definition of ``code`` on ``resource_type``, or None when the spec has none."""
    params = _table()["params"]
    for base in (resource_type, "DomainResource", "Resource"):
        row = params.get(base, {}).get(code)
        if row is None:
            continue
        kind, expression, targets = row[0], row[1], row[2]
        if base != resource_type:
            expression = re.sub(rf"\b{base}\.", f"{resource_type}.", expression)
        expression, ref_types = _strip_resolve(expression)
        return SearchParam(code, base, kind, expression, tuple(targets), ref_types)
    return None


def param_codes(resource_type: str) -> list[str]:
    """Every parameter code defined for ``resource_type`` (its own and the common ones)."""
    params = _table()["params"]
    codes = set(params.get(resource_type, {}))
    codes.update(params.get("Resource", {}), params.get("DomainResource", {}))
    return sorted(codes)
