"""``fhir-resource-state``: FHIR resources found by a search, and their fields.

Verial's form runs ``resource_type?search`` and checks ``fields`` on the first result::

    assert: fhir-resource-state
    resource_type: Appointment
    search: {patient: Patient/john-smith, status: booked}
    fields: [{path: participant.0.actor.display, expected: Dr. Rivera}]

Our extensions (all optional):

- ``op`` per field (the shared comparison operators) and FHIRPath paths: a path that is not a
  plain dotted path (``name.where(use='official').family``), or a plain path that does not
  resolve as JSON (``name.family`` over a list), is evaluated as FHIRPath with the R4 model;
  ``syntax: dotted|fhirpath`` forces one.
- ``match``: ``first`` (Verial), ``any`` (the best result counts), ``all`` (every result must
  pass; the score is the mean), ``none`` (no result may pass every field; 1 or 0).
- ``count``: the number of matches, ``3`` or ``{op: gte, expected: 1}``; one more item in the
  score, which also scores when nothing matched (``count: 0``).
- ``changed_since_baseline``: only resources the agent created or changed (``fhir-baseline/``
  of the snapshot, or ``_lastUpdated`` after the run's start on a live server).
- ``validation: R4B|R5``: validate the matched resource with fhir.resources; errors go into the
  evidence and do not change the score. ``sources.fhir.validation`` in run.yaml sets it for
  every criterion of the run.

Score: no target -> 0, else passed items / all items (1.0 with none asked); ``match: none``
is one item, ``count`` one more (docs/fhir.md, Score and evidence).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal, cast

from pydantic import Field, JsonValue, field_validator

from .._compare import MISSING, FieldSpec, describe_field, field_result, fields_score
from .._contracts.check import AssertionSpec, CheckContext, CheckOutcome, CheckSpec
from .._errors import CheckError
from .._models import Model
from .._paths import resolve, split_path
from ..fhir._fhirpath import evaluate
from ..fhir._query import Query, build_query

if TYPE_CHECKING:
    from ..sources._fhir import FhirBaseline

_DOT_INDEX = re.compile(r"\.(\d+)(?=[.\[]|$)")
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:(?:\.[A-Za-z0-9_]+)|\[\d+\])*")


class FhirField(FieldSpec):
    """A field assertion; ``syntax`` says how to read ``path`` (``auto`` by default)."""

    syntax: Literal["auto", "dotted", "fhirpath"] = "auto"


class CountSpec(Model):
    """How many resources must match: ``{op: gte, expected: 1}``."""

    op: Literal["equals", "not_equals", "gt", "gte", "lt", "lte"] = "equals"
    expected: int = Field(ge=0)


class FhirResourceState(AssertionSpec):
    """The ``fhir-resource-state`` assertion."""

    kind: Literal["fhir-resource-state"] = Field(alias="assert")
    resource_type: str = Field(min_length=1)
    search: dict[str, JsonValue] = Field(default_factory=dict)
    fields: list[FhirField] = Field(default_factory=list)
    match: Literal["first", "any", "all", "none"] = "first"
    count: int | CountSpec | None = None
    changed_since_baseline: bool = False
    validation: Literal["R4B", "R5"] | None = None

    @field_validator("search")
    @classmethod
    def _no_empty_search_value(cls, value: dict[str, JsonValue]) -> dict[str, JsonValue]:
        """``subject=`` matches nothing on a FHIR server (HAPI, Medplum): a criterion that can
        never find its resource is refused at collection, naming the parameter."""
        for name, given in value.items():
            if not name.strip():
                raise ValueError("a search parameter has an empty name")
            values = given if isinstance(given, list) else [given]
            if not values or any(
                v is None or (isinstance(v, str) and not v.strip()) for v in values
            ):
                raise ValueError(
                    f"search parameter {name!r} has an empty value: it would match nothing "
                    "(give a value, or leave the parameter out)"
                )
        return value

    @field_validator("count", mode="before")
    @classmethod
    def _count_not_negative(cls, value: Any) -> Any:
        """A bare ``count`` below 0 can never be met: a collection error naming the field."""
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            raise ValueError(f"a count of resources cannot be negative, got {value}")
        return value

    def planned_search(self, source: Any) -> tuple[Query, bool]:
        """The search this criterion sends to ``source``, which a live source sends ahead
        (:class:`~pytest_verial.sources._fhir.PlansSearch`); see :func:`planned_search`."""
        return planned_search(self, source)


def actual_value(spec: FhirField, resource: dict[str, Any]) -> Any:
    """The value at ``spec.path``: a dotted JSON path, else FHIRPath (one value or a list)."""
    plain = _PLAIN.fullmatch(spec.path) is not None
    if spec.syntax == "dotted" or (spec.syntax == "auto" and plain):
        value = resolve(resource, spec.path)
        numeric = any(part.lstrip("-").isdigit() for part in split_path(spec.path))
        if value is not MISSING or spec.syntax == "dotted" or numeric:
            return value
    found = evaluate(fhirpath_indexes(spec.path), resource)
    if not found:
        return MISSING
    return found[0] if len(found) == 1 else found


def fhirpath_indexes(path: str) -> str:
    """Verial's ``.0`` indexes as FHIRPath ``[0]`` (outside quoted strings): ``item.0.x``."""
    out, quoted = [], False
    i = 0
    while i < len(path):
        ch = path[i]
        if ch == "'" and (i == 0 or path[i - 1] != "\\"):
            quoted = not quoted
        after_name = i > 0 and (path[i - 1].isalpha() or path[i - 1] in "_])")
        if not quoted and ch == "." and after_name and (m := _DOT_INDEX.match(path, i)):
            out.append(f"[{m.group(1)}]")
            i = m.end()
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _row(resource: dict[str, Any] | None) -> dict[str, JsonValue] | None:
    if resource is None:
        return None
    meta = resource.get("meta")
    meta = meta if isinstance(meta, dict) else {}
    return {
        "type": resource.get("resourceType"),
        "id": resource.get("id"),
        "version": meta.get("versionId"),
    }


def _score_fields(spec: FhirResourceState, resource: dict[str, Any]) -> list[dict[str, JsonValue]]:
    return [field_result(f, actual_value(f, resource)) for f in spec.fields]


def _select(
    spec: FhirResourceState, candidates: list[dict[str, Any]]
) -> tuple[float, dict[str, Any] | None, list[dict[str, JsonValue]], str]:
    """(score of the fields part, target, its field results, how it was chosen)."""
    if not candidates:
        if spec.match == "none":
            return 1.0, None, [], "no resource matched, as required"
        return 0.0, None, [], "no resource matched"
    scored = [(fields_score(r := _score_fields(spec, c)), i, r) for i, c in enumerate(candidates)]
    if spec.match == "first":
        score, index, results = scored[0]
        how = "first result"
    elif spec.match == "any":
        score, index, results = max(scored, key=lambda s: (s[0], -s[1]))
        how = f"best of {len(candidates)} results"
    elif spec.match == "all":
        worst = min(scored, key=lambda s: (s[0], s[1]))
        score = sum(s[0] for s in scored) / len(scored)
        index, results = worst[1], worst[2]
        how = f"all {len(candidates)} results (mean; worst shown)"
    else:
        violating = [s for s in scored if s[0] == 1.0]
        if violating:
            index, results = violating[0][1], violating[0][2]
            how = f"{len(violating)} result(s) matched, none allowed"
            return 0.0, candidates[index], results, how
        return 1.0, None, [], f"none of {len(candidates)} results matched every field"
    return score, candidates[index], results, how


def _fields_part(
    spec: FhirResourceState, score: float, target: dict[str, Any] | None
) -> tuple[float, int]:
    """(passed items, items) of the part ``count`` is added to (docs/fhir.md, Score).

    ``match: none`` is one item, 1 or 0, whatever the number of fields; otherwise each field
    is an item, all failed without a target (the count still scores: ``count: 0`` passes).
    """
    if spec.match == "none":
        return score, 1
    items = len(spec.fields)
    return (score * items if target is not None else 0.0), items


def _validate(resource: dict[str, Any], release: str) -> list[str]:
    try:
        if release == "R5":
            from fhir.resources import get_fhir_model_class
        else:
            from fhir.resources.R4B import get_fhir_model_class
    except ImportError:
        raise CheckError(
            "validation needs fhir.resources (a dependency): pip install fhir.resources"
        ) from None
    from pydantic import ValidationError

    try:
        model = get_fhir_model_class(resource["resourceType"])
    except (KeyError, ValueError):
        return [f"{resource.get('resourceType')!r} is not a {release} resource type"]
    try:
        model.model_validate(resource)
    except ValidationError as exc:
        return [f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:20]]
    return []


def planned_search(spec: FhirResourceState, source: Any) -> tuple[Query, bool]:
    """The search ``spec`` sends to ``source``, and whether it needs every page.

    The check and a live source's prefetch
    (:func:`pytest_verial.sources._fhir.planned_searches`) both use it, so a task
    run's searches are known, and sent, before its criteria run.
    """
    search = dict(spec.search)
    live = getattr(source, "kind", "") == "live"
    if spec.changed_since_baseline and live:
        since = _settings(source).get("baseline_since")
        if not since:
            raise CheckError(
                "changed_since_baseline on a live server needs "
                "sources.fhir.baseline_since or started_at in run.yaml"
            )
        search["_lastUpdated"] = [*_as_list(search.get("_lastUpdated")), f"gt{since}"]
    query = build_query(spec.resource_type, search, getattr(source, "validate_params", True))
    need_all = (
        spec.match != "first"
        or spec.count is not None
        or (spec.changed_since_baseline and not live)
    )
    return query, need_all


def check(spec: FhirResourceState, ctx: CheckContext) -> CheckOutcome:
    """Search, pick the target(s), compare fields."""
    source = ctx.source("fhir")
    live = getattr(source, "kind", "") == "live"
    query, need_all = planned_search(spec, source)
    result = source.search(query, need_all)
    candidates = result.resources
    total = result.total
    if spec.changed_since_baseline and not live:
        baseline = cast("FhirBaseline", source)  # a snapshot: live servers filter by time
        candidates = [r for r in candidates if baseline.changed(r)]
        total = len(candidates)
    score, target, results, how = _select(spec, candidates)
    passed, items = _fields_part(spec, score, target)
    evidence: dict[str, JsonValue] = {
        "fieldResults": results,  # type: ignore[dict-item]
        "resource": _row(target),
        "query": query.text(),
        "total": total,
    }
    if spec.match != "first":
        evidence["match"] = spec.match
    if spec.count is not None:
        count = spec.count if isinstance(spec.count, CountSpec) else CountSpec(expected=spec.count)
        row = field_result(FieldSpec(path="count", expected=count.expected, op=count.op), total)
        count_passed = bool(row["passed"])
        wanted = str(count.expected) if count.op == "equals" else f"{count.op} {count.expected}"
        evidence["count_result"] = row
        score = (passed + (1.0 if count_passed else 0.0)) / (items + 1)
    # Most specific first: the criterion, the benchmark, then the run's sources.fhir.
    release = (
        spec.validation
        or (ctx.benchmark.fhir_validation if ctx.benchmark else None)
        or _settings(source).get("validation")
    )
    if release and target is not None:
        if release not in ("R4B", "R5"):
            raise CheckError(f"sources.fhir.validation must be R4B or R5, not {release!r}")
        evidence["validation_errors"] = list[JsonValue](_validate(target, release))
    ok = sum(1 for r in results if r["passed"])
    where = f"{target['resourceType']}/{target.get('id')}" if target is not None else "no target"
    details = f"{where} ({how}; {total} found by {query.text()})"
    if results:
        details += f": {ok} of {len(results)} fields passed"
        failed = next((r for r in results if not r["passed"]), None)
        if failed is not None:
            details += f"; {describe_field(failed)}"
    if spec.count is not None:
        details += f"; count {total}, expected {wanted}" + ("" if count_passed else " (FAIL)")
    return CheckOutcome(score, details, evidence)


def _settings(source: Any) -> dict[str, Any]:
    settings = getattr(source, "settings", None)
    return settings if isinstance(settings, dict) else {}


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


CHECK = CheckSpec(name="fhir-resource-state", model=FhirResourceState, run=check, sources=("fhir",))
