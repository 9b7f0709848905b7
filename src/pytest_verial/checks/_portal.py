"""``portal-state-match``: rows of a payer-portal table, correlated by a key.

Verial's example::

    assert: portal-state-match
    correlate_by: {resource: prior_auth_requests, key: request_id}
    assertions: [{path: status, expected: submitted}]

Target rows: with ``key`` and ``value``, the rows whose ``key`` equals ``value``; with ``key``
alone, the value comes from the task's entity when it has a field of that name, else every row
that has the key; with neither, every row. Among candidates the best-scoring row counts (the
first on ties) and the evidence names it by ``row_key``.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Literal

from pydantic import Field, JsonValue

from .._compare import MISSING, FieldSpec, as_number, field_result, fields_score, values_equal
from .._contracts.check import AssertionSpec, CheckContext, CheckOutcome, CheckSpec
from .._models import Model
from .._paths import resolve


class CorrelateBy(Model):
    """Which table, and which row(s) of it."""

    resource: str = Field(min_length=1)
    key: str | None = None
    value: JsonValue = None


class PortalStateMatch(AssertionSpec):
    """The ``portal-state-match`` assertion."""

    kind: Literal["portal-state-match"] = Field(alias="assert")
    correlate_by: CorrelateBy
    assertions: list[FieldSpec] = Field(default_factory=list)


def _candidates(
    spec: PortalStateMatch, rows: list[dict[str, Any]], ctx: CheckContext
) -> tuple[list[tuple[int, dict[str, Any]]], Any]:
    key, value = spec.correlate_by.key, spec.correlate_by.value
    if key is not None and value is None and ctx.entity is not None:
        value = ctx.entity.fields().get(key)
    indexed = list(enumerate(rows))
    if key is None:
        return indexed, None
    if value is None:
        return [(i, r) for i, r in indexed if resolve(r, key) not in (None, MISSING)], None
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        found = _key_index(rows, key).get(_index_key(value), [])
        return [(i, rows[i]) for i in found if values_equal(value, resolve(rows[i], key))], value
    return [(i, r) for i, r in indexed if values_equal(value, resolve(r, key))], value


#: (id(rows), key) -> (rows, {index key: row positions}); rows kept so the id stays theirs
_INDEXES: OrderedDict[tuple[int, str], tuple[list[Any], dict[Any, list[int]]]] = OrderedDict()


def _index_key(value: Any) -> Any:
    """Values that ``values_equal`` may call equal share a key (``"271"`` and ``271``)."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return ("other", repr(value))
    number = as_number(value)  # the same rule as values_equal (ASCII digits only)
    return ("text", value) if number is None else ("number", number)


def _key_index(rows: list[dict[str, Any]], key: str) -> dict[Any, list[int]]:
    """Row positions by correlation value, built once per table and key (not per criterion)."""
    cache_key = (id(rows), key)
    hit = _INDEXES.get(cache_key)
    if hit is not None and hit[0] is rows:
        _INDEXES.move_to_end(cache_key)
        return hit[1]
    index: dict[Any, list[int]] = {}
    for position, row in enumerate(rows):
        actual = resolve(row, key)
        if actual is not MISSING:
            index.setdefault(_index_key(actual), []).append(position)
    _INDEXES[cache_key] = (rows, index)
    while len(_INDEXES) > 32:
        _INDEXES.popitem(last=False)
    return index


def check(spec: PortalStateMatch, ctx: CheckContext) -> CheckOutcome:
    """Score the best candidate row of the table."""
    portal = ctx.source("portal")
    resource = spec.correlate_by.resource
    rows = portal.rows(resource)
    if rows is None:
        tables = ", ".join(portal.tables()) or "none"
        return CheckOutcome(
            0.0,
            f"portal table {resource!r} not found (tables: {tables})",
            {"assertionResults": [], "row_key": None, "candidates": 0},
        )
    candidates, value = _candidates(spec, rows, ctx)
    if not candidates:
        key = spec.correlate_by.key
        wanted = (
            f" with {key} = {value!r}" if value is not None else (f" with {key}" if key else "")
        )
        return CheckOutcome(
            0.0,
            f"no row in portal table {resource!r}{wanted} ({len(rows)} rows)",
            {"assertionResults": [], "row_key": value, "candidates": 0},
        )
    best: tuple[float, int, list[dict[str, JsonValue]]] | None = None
    for index, row in candidates:
        results = [field_result(f, resolve(row, f.path)) for f in spec.assertions]
        score = fields_score(results)
        if best is None or score > best[0]:
            best = (score, index, results)
        if score == 1.0:
            break
    assert best is not None
    score, index, results = best
    row = rows[index]
    key = spec.correlate_by.key
    row_key = resolve(row, key) if key else index
    passed = sum(1 for r in results if r["passed"])
    details = f"row {row_key!r} of {resource!r}: {passed} of {len(results)} assertions passed" + (
        f" (best of {len(candidates)} candidate rows)" if len(candidates) > 1 else ""
    )
    evidence: dict[str, JsonValue] = {
        "assertionResults": results,  # type: ignore[dict-item]
        "row_key": None if row_key is MISSING else row_key,
        "row_index": index,
        "candidates": len(candidates),
    }
    return CheckOutcome(score, details, evidence)


CHECK = CheckSpec(name="portal-state-match", model=PortalStateMatch, run=check, sources=("portal",))
