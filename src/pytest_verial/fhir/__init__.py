"""FHIR search semantics and sources for ``fhir-resource-state``.

``definitions`` (the R4 SearchParameter table), ``query`` (a criterion's ``search`` parsed),
``values`` (per-type matching), ``index`` (in-memory search), ``snapshot`` (``fhir/`` of a run
directory), ``live`` (a FHIR REST server), ``fhirpath`` (compiled, cached FHIRPath).
"""

from __future__ import annotations

from ._index import FhirIndex, SearchResult
from ._query import Query, build_query

__all__ = ["FhirIndex", "Query", "SearchResult", "build_query"]
