"""The ``fhir`` source of a sandbox: the ``fhir/`` snapshot, or a live server from run.yaml.

Both kinds answer ``search(query, need_all=True) -> SearchResult`` and ``describe()``; the
snapshot also knows ``fhir-baseline/`` (``changed(resource)``), a live server is asked for
``_lastUpdated`` after the baseline time instead (``baseline_since`` in its settings, else the
run's ``started_at``). A conftest can override ``verial_fhir`` with any object that has
``search``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .._errors import CriterionError
from ..fhir._index import SearchResult
from ..fhir._live import LiveFhir
from ..fhir._query import Query
from ..fhir._settings import check_settings
from ..fhir._snapshot import FhirSnapshot

if TYPE_CHECKING:
    from .._sandbox_io.limits import Reads

if TYPE_CHECKING:
    from .._contracts.sandbox import Sandbox


@runtime_checkable
class FhirSource(Protocol):
    """What the ``fhir-resource-state`` check needs from a FHIR source."""

    kind: str

    def search(self, query: Query, need_all: bool = True) -> SearchResult:
        """Resources of ``query.resource_type`` matching the query, and the total."""

    def describe(self) -> str:
        """Where the data comes from (a directory or a base URL)."""


class FhirBaseline(FhirSource, Protocol):
    """A FHIR snapshot that knows ``fhir-baseline/``, for ``changed_since_baseline``."""

    def changed(self, resource: dict[str, Any]) -> bool:
        """True when ``resource`` is new or differs from the baseline."""


class SnapshotSource(FhirSnapshot):
    """The ``fhir/`` directory, with the :class:`FhirSource` signature.

    ``settings`` are run.yaml's ``sources.fhir`` (without a server): ``validation: R4B|R5``
    there validates every matched resource of the run unless a criterion says otherwise.
    """

    def __init__(
        self,
        directory: Path,
        baseline: Path | None = None,
        settings: dict[str, Any] | None = None,
        reads: Reads | None = None,
    ) -> None:
        super().__init__(directory, baseline, reads)
        self.settings = settings or {}

    def search(self, query: Query, need_all: bool = True) -> SearchResult:
        """All matches (a snapshot has no pages to save)."""
        return super().search(query)


def from_sandbox(sandbox: Sandbox) -> SnapshotSource | LiveFhir:
    """A live server when run.yaml's ``sources.fhir`` names one, else the snapshot."""
    where = _run_file(sandbox)
    settings = check_settings(sandbox.settings("fhir"), where)
    if any(settings.get(k) for k in ("base_url", "base_url_env", "fhir_base_url")):
        if not settings.get("baseline_since"):
            started = getattr(getattr(sandbox.run, "config", None), "started_at", None)
            if started:
                settings["baseline_since"] = started
        live = LiveFhir(settings, where)
        live.planner = lambda: _planned(sandbox, live)
        return live
    return SnapshotSource(
        sandbox.path / "fhir",
        sandbox.path / "fhir-baseline",
        settings,
        getattr(sandbox, "reads", None),
    )


@runtime_checkable
class PlansSearch(Protocol):
    """A criterion's assertion that searches a FHIR source (``fhir-resource-state`` does), so a
    live source can send its search ahead, with the task run's others."""

    def planned_search(self, source: Any) -> tuple[Query, bool]:
        """The search sent to ``source``, and whether it needs every page (CriterionError when
        it cannot be built)."""


def planned_searches(specs: Iterable[object], source: Any) -> list[tuple[Query, bool]]:
    """The searches of the assertions among ``specs`` that plan one, in order; one that cannot
    be built is left out (its criterion reports why when it runs)."""
    planned = []
    for spec in specs:
        if isinstance(spec, PlansSearch):
            with contextlib.suppress(CriterionError):
                planned.append(spec.planned_search(source))
    return planned


def _planned(sandbox: Sandbox, live: LiveFhir) -> list[tuple[Query, bool]]:
    """The searches the task run's criteria in this session will send, in their order."""
    criteria = sandbox.planned_criteria() if hasattr(sandbox, "planned_criteria") else []
    return planned_searches((c.spec for c in criteria), live)


def _run_file(sandbox: Sandbox) -> str:
    """The run.yaml (or run.yml / run.json) holding the settings, for messages."""
    run_path = getattr(getattr(sandbox, "run", None), "path", None)
    if run_path is None:
        return "run.yaml"
    for name in ("run.yaml", "run.yml", "run.json"):
        if (Path(run_path) / name).is_file():
            return str(Path(run_path) / name)
    return str(Path(run_path) / "run.yaml")


__all__ = ["FhirSource", "LiveFhir", "SnapshotSource", "from_sandbox"]
