"""FHIR search semantics and sources for ``fhir-resource-state`` (docs/fhir.md).

Public API: the names in ``__all__``, each loaded from its private module on first use (the
FHIR code and its libraries are not imported by the pytest plugin until a FHIR criterion
runs): :class:`FhirIndex` (in-memory search), :class:`Query` and :func:`build_query` (a
criterion's ``search`` parsed), :class:`FhirSnapshot` (``fhir/`` of a run directory),
:class:`LiveFhir` (a FHIR REST server).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:
    from ._index import FhirIndex, SearchResult
    from ._live import LiveFhir
    from ._query import Query, build_query
    from ._snapshot import FhirSnapshot, iter_resources

__getattr__, __dir__ = exports(
    __name__,
    {
        **dict.fromkeys(["FhirIndex", "SearchResult"], "_index"),
        "LiveFhir": "_live",
        **dict.fromkeys(["Query", "build_query"], "_query"),
        **dict.fromkeys(["FhirSnapshot", "iter_resources"], "_snapshot"),
    },
)

__all__ = [
    "FhirIndex",
    "FhirSnapshot",
    "LiveFhir",
    "Query",
    "SearchResult",
    "build_query",
    "iter_resources",
]
