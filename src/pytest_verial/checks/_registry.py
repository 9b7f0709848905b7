"""The check registry: ``assert`` value -> :class:`CheckSpec`. Refuses duplicates."""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Iterator
from functools import cache

from .._contracts.check import CheckSpec

#: ``assert`` name -> the module under ``checks/`` that defines its ``CHECK``. A module is
#: imported when a criterion first needs its check, so a run of portal checks never loads the
#: FHIR, HL7, X12 or judge code (issue 12: start-up and collection time).
BUILTIN: dict[str, str] = {
    "fhir-resource-state": "_fhir",
    "portal-state-match": "_portal",
    "voice-transcript": "_voice",
    "hl7-structural": "_hl7",
    "x12-response": "_x12",
    "sftp-file-present": "_files",
    "output-format": "_output_format",
    "output-length": "_output_length",
    "output-sections": "_output_sections",
    "output-match": "_output_match",
    "output-json-schema": "_output_schema",
    "llm-rubric": "_llm_rubric",
    "output-consistency": "_output_consistency",
}


@cache
def builtin_check(name: str) -> CheckSpec:
    """The built-in check registered as ``name`` (its module is imported on first use)."""
    spec: CheckSpec = importlib.import_module(f"{__package__}.{BUILTIN[name]}").CHECK
    if spec.name != name:  # the table above and the module disagree: a bug of ours
        raise RuntimeError(f"checks/{BUILTIN[name]}.py defines {spec.name!r}, not {name!r}")
    return spec


def builtin_checks() -> tuple[CheckSpec, ...]:
    """Every built-in check, in registration order (imports them all)."""
    return tuple(builtin_check(name) for name in BUILTIN)


class CheckRegistry:
    """A mapping of ``assert`` names to checks, built once per benchmark file's scope.

    ``builtins`` are ``assert`` names of built-in checks (:data:`BUILTIN`), registered
    without importing them: each is loaded by :func:`builtin_check` when
    first asked for, so a benchmark of portal checks never imports the FHIR or X12 code.
    """

    def __init__(self, specs: Iterable[CheckSpec] = (), builtins: Iterable[str] = ()) -> None:
        self._specs: dict[str, CheckSpec | None] = dict.fromkeys(builtins)
        for spec in specs:
            self.register(spec)

    def register(self, spec: CheckSpec) -> None:
        """Add a check; a second check with the same ``assert`` name is an error."""
        if spec.name in self._specs:
            raise ValueError(f"assert type {spec.name!r} is registered twice")
        self._specs[spec.name] = spec

    def get(self, name: str) -> CheckSpec | None:
        """The check for ``name``, or None (an unsupported assertion, scored 0 at run time)."""
        if name not in self._specs:
            return None
        spec = self._specs[name]
        if spec is None:
            spec = self._specs[name] = builtin_check(name)
        return spec

    def names(self) -> list[str]:
        """All registered ``assert`` names, sorted."""
        return sorted(self._specs)

    def __iter__(self) -> Iterator[CheckSpec]:
        for name in list(self._specs):
            spec = self.get(name)
            assert spec is not None
            yield spec

    def __contains__(self, name: object) -> bool:
        return name in self._specs


def default_registry() -> CheckRegistry:
    """A registry holding only the built-in checks."""
    return CheckRegistry(builtins=BUILTIN)
