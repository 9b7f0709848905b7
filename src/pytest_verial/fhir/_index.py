"""An in-memory FHIR store that answers searches the way a server does.

Resources are grouped by type once, as they are streamed in. The values a search parameter
selects (its SearchParameter FHIRPath expression, compiled once) are extracted on first use of
that parameter on that type and kept, so each (type, parameter) is evaluated once per task run
however many criteria search on it. Conditional references (``Practitioner?identifier=...``,
as Synthea bulk exports write them) resolve to the one resource they identify, on first use.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from .._errors import CheckError
from . import _values as v
from ._definitions import SearchParam, resource_types, search_param
from ._fhirpath import compiled
from ._query import Clause, Query, build_query, lookup

_ABSOLUTE_REF = re.compile(r"(?:^|/)([A-Z][A-Za-z]+)/([A-Za-z0-9\-.]{1,64})(?:/_history/[^/]+)?$")

_INDEXERS: dict[str, Callable[[list[Any]], list[Any]]] = {
    "token": v.index_token,
    "string": v.index_string,
    "date": v.index_date,
    "number": v.index_number,
    "quantity": v.index_quantity,
    "uri": v.index_uri,
}


@dataclass
class SearchResult:
    """Matches of one search: the page asked for and the total number of matches."""

    resources: list[dict[str, Any]]
    total: int


def split_reference(reference: str) -> tuple[str | None, str]:
    """``"Patient/1"`` / ``"http://x/fhir/Patient/1/_history/2"`` -> ``("Patient", "1")``."""
    m = _ABSOLUTE_REF.search(reference)
    if m:
        return m.group(1), m.group(2)
    return None, reference


class FhirIndex:
    """Resources by type and by ``Type/id``, with per-parameter value caches."""

    def __init__(self) -> None:
        self.by_type: dict[str, list[dict[str, Any]]] = {}
        self.by_key: dict[str, dict[str, Any]] = {}
        #: Bundle ``fullUrl`` (e.g. ``urn:uuid:...``) -> ``Type/id``
        self.aliases: dict[str, str] = {}
        self._values: dict[tuple[str, str], list[list[Any]]] = {}
        self._conditional: dict[str, tuple[str | None, str]] = {}
        self._identifiers: dict[str, dict[tuple[str | None, str], list[str]]] = {}

    def add(self, resource: dict[str, Any], full_url: str | None = None) -> None:
        """Add one resource; a later version of the same ``Type/id`` replaces the earlier."""
        rtype = resource["resourceType"]
        key = f"{rtype}/{resource.get('id')}"
        bucket = self.by_type.setdefault(rtype, [])
        old = self.by_key.get(key) if resource.get("id") is not None else None
        if old is not None:
            bucket[bucket.index(old)] = resource
        else:
            bucket.append(resource)
        if resource.get("id") is not None:
            self.by_key[key] = resource
        if full_url:
            self.aliases[full_url] = key
        self._values.clear()
        self._conditional.clear()
        self._identifiers.clear()

    def __len__(self) -> int:
        return sum(len(b) for b in self.by_type.values())

    # --- values ---------------------------------------------------------------------------

    def values(self, rtype: str, param: SearchParam) -> list[list[Any]]:
        """Indexed values of ``param`` for each resource of ``rtype`` (cached)."""
        cache_key = (rtype, param.code)
        cached = self._values.get(cache_key)
        if cached is not None:
            return cached
        function = compiled(param.expression)
        rows: list[list[Any]] = []
        for resource in self.by_type.get(rtype, []):
            elements = function(resource)
            if param.type == "reference":
                rows.append(self._references(elements, param))
            else:
                rows.append(_INDEXERS[param.type](elements))
        self._values[cache_key] = rows
        return rows

    def _references(self, elements: list[Any], param: SearchParam) -> list[tuple[str | None, str]]:
        out: list[tuple[str | None, str]] = []
        for el in elements:
            ref = el.get("reference") if isinstance(el, dict) else el
            if not isinstance(ref, str):
                continue
            ref = self.aliases.get(ref, ref)
            if "?" in ref:
                rtype, rid = self.resolve_conditional(ref)
            else:
                rtype, rid = split_reference(ref)
            if param.ref_types and rtype not in param.ref_types:
                continue
            out.append((rtype, rid))
        return out

    # --- conditional references ----------------------------------------------------------

    def resolve_conditional(self, ref: str) -> tuple[str | None, str]:
        """``Practitioner?identifier=sys|value`` -> ``("Practitioner", id)`` of the one match.

        Synthea bulk exports refer to Practitioners, Locations and Organizations this way
        (docs/fhir.md, Snapshots). ``identifier`` (``system|value``, ``|value``, ``value``) is
        looked up in a per-type map; other non-reference parameters go through :meth:`search`.
        No match, several matches or an unusable query leave the reference as it is, typed
        (``("Practitioner", ref)``), so ``:missing`` and type modifiers still see it.
        """
        cached = self._conditional.get(ref)
        if cached is None:
            cached = self._resolve(ref)
            self._conditional[ref] = cached
        return cached

    def _resolve(self, ref: str) -> tuple[str | None, str]:
        rtype, _, query = ref.partition("?")
        rtype = rtype.rsplit("/", 1)[-1]
        if rtype not in self.by_type and not _is_type(rtype):
            return None, ref
        pairs = parse_qsl(query, keep_blank_values=True)
        if not pairs or rtype not in self.by_type:
            return rtype, ref
        if all(k == "identifier" for k, _ in pairs):
            found: set[str] | None = None
            for _, value in pairs:
                ids = set(self._identifier_ids(rtype, value))
                found = ids if found is None else found & ids
        else:
            found = self._search_ids(rtype, pairs)
        if found is not None and len(found) == 1:
            return rtype, next(iter(found))
        return rtype, ref

    def _identifier_ids(self, rtype: str, value: str) -> list[str]:
        table = self._identifiers.get(rtype)
        if table is None:
            table = {}
            param = search_param(rtype, "identifier")
            rows = self.values(rtype, param) if param is not None else []
            for resource, row in zip(self.by_type.get(rtype, []), rows, strict=False):
                rid = str(resource.get("id"))
                for system, code, _ in row:
                    table.setdefault((system, code), []).append(rid)
                    table.setdefault(("*", code), []).append(rid)
            self._identifiers[rtype] = table
        system, bar, code = value.partition("|")
        if not bar:
            return table.get(("*", value), [])
        return table.get((system or None, code), [])

    def _search_ids(self, rtype: str, pairs: list[tuple[str, str]]) -> set[str] | None:
        try:
            query = build_query(rtype, pairs)
        except CheckError:
            return None
        if any(c.param.type == "reference" for c in query.clauses):
            return None  # resolving would recurse into other conditional references
        try:
            return {str(r.get("id")) for r in self.search(query).resources}
        except CheckError:
            return None

    # --- search ---------------------------------------------------------------------------

    def search(self, query: Query) -> SearchResult:
        """Run a parsed query: AND over clauses, OR over each clause's values."""
        rtype = query.resource_type
        resources = self.by_type.get(rtype, [])
        selected = list(range(len(resources)))
        for clause in query.clauses:
            test = self._clause_test(rtype, clause)
            selected = [i for i in selected if test(i)]
        if query.sort:
            for param, descending in reversed(query.sort):
                keys = self._sort_keys(rtype, param, descending)
                present = [i for i in selected if keys[i] is not None]
                absent = [i for i in selected if keys[i] is None]
                present.sort(key=lambda i: keys[i], reverse=descending)
                selected = present + absent
        total = len(selected)
        page = selected[query.offset :]
        if query.count is not None:
            page = page[: query.count]
        return SearchResult([resources[i] for i in page], total)

    def _clause_test(self, rtype: str, clause: Clause) -> Callable[[int], bool]:
        rows = self.values(rtype, clause.param)
        if clause.modifier == "missing":
            want_missing = clause.values[0] == "true"
            return lambda i: (not rows[i]) == want_missing
        kind = clause.param.type
        if kind == "reference":
            tests = [self._reference_test(rtype, clause, value) for value in clause.values]
        else:
            tests = [_value_test(kind, value, clause.modifier) for value in clause.values]
        if clause.modifier == "not":
            return lambda i: not any(t(rows[i]) for t in tests)
        return lambda i: any(t(rows[i]) for t in tests)

    def _reference_test(self, rtype: str, clause: Clause, value: str) -> Callable[[Any], bool]:
        param, type_mod = clause.param, clause.modifier
        if clause.chain:
            targets = [type_mod] if type_mod else list(param.ref_types or param.targets)
            keys: set[tuple[str | None, str]] = set()
            first = clause.chain.split(".")[0].split(":")[0]
            usable = [t for t in targets if search_param(t, first)]
            if not usable:
                raise CheckError(
                    f"chained parameter {clause.key!r}: no target of {param.code!r} "
                    f"defines {clause.chain!r}"
                )
            for target in usable:
                inner, modifier, chain = lookup(target, clause.chain)
                sub = Query(target, (Clause(clause.chain, inner, modifier, chain, (value,)),))
                keys.update((target, str(r.get("id"))) for r in self.search(sub).resources)
            return lambda refs: any(r in keys for r in refs)
        wanted_type, wanted_id = split_reference(value)
        if wanted_type is None and "/" in value:
            return lambda refs: False
        if type_mod:
            if wanted_type is not None and wanted_type != type_mod:
                return lambda refs: False
            wanted_type = type_mod
        if wanted_type is None:
            return lambda refs: any(rid == wanted_id for _, rid in refs)
        return lambda refs: (wanted_type, wanted_id) in refs

    def _sort_keys(self, rtype: str, param: SearchParam, descending: bool) -> list[Any]:
        rows = self.values(rtype, param)
        keys: list[Any] = []
        for row in rows:
            if not row:
                keys.append(None)
                continue
            items = [_sort_value(param.type, item) for item in row]
            keys.append(max(items) if descending else min(items))
        return keys


def _is_type(name: str) -> bool:
    return name in resource_types()


def _sort_value(kind: str, item: Any) -> Any:
    if kind == "date":
        return item[0]
    if kind == "token":
        return item[1]
    if kind == "string":
        return v.normalize(item)
    if kind == "quantity":
        return item[0]
    if kind == "reference":
        return f"{item[0]}/{item[1]}"
    return item


def _value_test(kind: str, value: str, modifier: str | None) -> Callable[[Any], bool]:
    if kind == "token":
        return v.parse_token(value, modifier)
    if kind == "string":
        return v.parse_string(value, modifier)
    if kind == "date":
        return v.parse_date(value)
    if kind == "number":
        return v.parse_number(value)
    if kind == "quantity":
        return v.parse_quantity(value)
    return v.parse_uri(value, modifier)
