"""The FHIR snapshot of a sandbox: ``fhir/`` and ``fhir-baseline/`` read into a search index.

Files, in name order, recursively: ``*.json`` holding one resource or a Bundle (entries
flattened, nested Bundles too), ``*.ndjson`` / ``*.jsonl`` with one resource or Bundle per line
(streamed, never read whole). The directory is read once per task run, on the first search
(in the service, once while its files stay as they are: :mod:`pytest_verial._sandbox_io.kept`).
Anything that is not FHIR — invalid JSON, a Bundle entry without a resource, an unknown or
missing ``resourceType`` — is a :class:`~pytest_verial._errors.SourceError` naming the file,
the line or entry, for every criterion that reads the snapshot.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .. import _heap as heap
from .._errors import SourceError
from .._sandbox_io.confine import task_root, walk
from .._sandbox_io.jsonfiles import iter_jsonl_lines, read_json
from .._sandbox_io.kept import FHIR_INDEXES
from .._sandbox_io.limits import Reads
from ._definitions import resource_types
from ._index import FhirIndex, SearchResult
from ._query import Query

SUFFIXES = (".json", ".ndjson", ".jsonl")


def _check(resource: Any, where: str) -> dict[str, Any]:
    if not isinstance(resource, dict):
        found = type(resource).__name__
        raise SourceError(f"{where}: expected a FHIR resource object, found {found}")
    rtype = resource.get("resourceType")
    if not isinstance(rtype, str):
        raise SourceError(f"{where}: resource has no resourceType")
    if rtype not in resource_types():
        raise SourceError(f"{where}: unknown resourceType {rtype!r} (not a FHIR R4 resource)")
    rid = resource.get("id")
    if rid is not None and not isinstance(rid, str):
        raise SourceError(f"{where}: {rtype}.id must be a string, found {rid!r}")
    return resource


#: Bundles inside Bundles are flattened to this depth at most
MAX_BUNDLE_DEPTH = 50


def _flatten(
    resource: Any, where: str, depth: int = 0
) -> Iterator[tuple[dict[str, Any], str | None]]:
    resource = _check(resource, where)
    if resource["resourceType"] != "Bundle":
        yield resource, None
        return
    if depth >= MAX_BUNDLE_DEPTH:
        raise SourceError(f"{where}: Bundles nested deeper than {MAX_BUNDLE_DEPTH}")
    entries = resource.get("entry") or []
    if not isinstance(entries, list):
        raise SourceError(f"{where}: Bundle.entry must be a list")
    for n, entry in enumerate(entries):
        here = f"{where}: Bundle entry {n}"
        if not isinstance(entry, dict) or "resource" not in entry:
            raise SourceError(f"{here} has no resource")
        inner = _check(entry["resource"], here)
        if inner["resourceType"] == "Bundle":
            yield from _flatten(
                inner, f"{where}: Bundle entry {n}" if depth < 3 else where, depth + 1
            )
        else:
            full_url = entry.get("fullUrl")
            yield inner, full_url if isinstance(full_url, str) else None


def iter_resources(
    directory: Path, reads: Reads | None = None
) -> Iterator[tuple[dict[str, Any], str | None]]:
    """Every resource of a snapshot directory with its Bundle ``fullUrl``, streamed; each
    file admitted by its size first (``reads``: the task run's budget)."""
    if not directory.is_dir():
        return
    # Confined to the task folder (fhir/ and fhir-baseline/ sit directly in it).
    files = walk(directory, task_root(directory.parent), lambda p: p.suffix in SUFFIXES)
    reads = reads or Reads(directory.parent)
    for path in files:
        if path.suffix == ".json":
            yield from _flatten(read_json(path, reads), str(path))
        else:
            for lineno, item in iter_jsonl_lines(path, reads):
                yield from _flatten(item, f"{path}:{lineno}")


class FhirSnapshot:
    """A sandbox's ``fhir/`` directory as a searchable store."""

    kind = "snapshot"

    def __init__(
        self, directory: Path, baseline: Path | None = None, reads: Reads | None = None
    ) -> None:
        self.directory = directory
        self.baseline_directory = baseline
        #: the task run's bounded reads (:mod:`pytest_verial._sandbox_io.limits`)
        self.reads = reads or Reads(directory.parent)
        self._index: FhirIndex | None = None
        self._baseline: dict[str, dict[str, Any]] | None = None
        self._error: SourceError | None = None
        self._lock = threading.Lock()

    def describe(self) -> str:
        """Where the data comes from, for messages."""
        return str(self.directory)

    @property
    def index(self) -> FhirIndex:
        """The loaded index (read on first use; a load error is kept and raised again)."""
        with self._lock:
            if self._error is not None:
                raise self._error
            if self._index is None:
                try:
                    self._index = FHIR_INDEXES.load(
                        str(self.directory),
                        lambda: walk(self.directory, task_root(self.directory.parent)),
                        lambda: _load(self.directory, self.reads),
                        self.reads,
                    )
                except SourceError as exc:
                    self._error = exc
                    raise
            return self._index

    def search(self, query: Query) -> SearchResult:
        """Resources matching ``query``."""
        return self.index.search(query)

    def changed(self, resource: dict[str, Any]) -> bool:
        """True when ``resource`` is new or differs from ``fhir-baseline/`` (meta ignored)."""
        baseline = self._baseline_map()
        old = baseline.get(f"{resource['resourceType']}/{resource.get('id')}")
        return old is None or _content(old) != _content(resource)

    def _baseline_map(self) -> dict[str, dict[str, Any]]:
        if self._baseline is None:
            found: dict[str, dict[str, Any]] = {}
            if self.baseline_directory is not None:
                for resource, _ in iter_resources(self.baseline_directory, self.reads):
                    found[f"{resource['resourceType']}/{resource.get('id')}"] = resource
            self._baseline = found
        return self._baseline


def _content(resource: dict[str, Any]) -> dict[str, Any]:
    return {k: val for k, val in resource.items() if k != "meta"}


#: snapshots above this size are loaded with the cyclic garbage collector held off (see _load)
LARGE_SNAPSHOT_BYTES = 8_000_000


def _load(directory: Path, reads: Reads) -> FhirIndex:
    index = FhirIndex()
    files = walk(directory, task_root(directory.parent))
    if sum(p.stat().st_size for p in files) < LARGE_SNAPSHOT_BYTES:
        for resource, full_url in iter_resources(directory, reads):
            index.add(resource, full_url)
        return index
    # Parsed resources are only added while loading, never freed, and hold no reference
    # cycles (plain JSON). The cyclic collector's repeated passes over the growing heap would
    # cost more than the parsing, and later it would walk them again on every full
    # collection. So: no collection while loading, then, inside a criterion item (heap.py's
    # scope), what is alive moves out of its sight until the scope ends; reference counting
    # still frees the resources with the sandbox. bench/fhir.py: 100,000 resources load in
    # about 2x the bare json.loads time, not 4x.
    with heap.no_gc():
        for resource, full_url in iter_resources(directory, reads):
            index.add(resource, full_url)
    heap.keep()
    return index


__all__ = ["FhirSnapshot", "iter_resources"]
