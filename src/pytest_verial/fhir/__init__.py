"""FHIR search semantics and sources for ``fhir-resource-state`` (docs/fhir.md).

No public names (README, "Public API"): the check and the ``fhir`` source are this package's
only users, through its private modules: ``_index.py`` (in-memory search), ``_query.py`` (a
criterion's ``search`` parsed), ``_snapshot.py`` (``fhir/`` of a run directory) and
``_live.py`` (a FHIR REST server). The pytest plugin does not import them until a FHIR
criterion runs.
"""

from __future__ import annotations

__all__: list[str] = []
