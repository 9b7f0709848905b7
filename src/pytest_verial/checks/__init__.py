"""Built-in checks, one module per ``assert`` type, registered here and nowhere else.

To add a built-in check: write ``checks/<name>.py`` with its model and a ``CHECK = CheckSpec(...)``
and add its ``assert`` name and module to ``BUILTIN``. Conftests add checks through the
``pytest_verial_checks`` hook instead.
"""

from __future__ import annotations

import importlib
from functools import cache

from .base import AssertionSpec, CheckContext, CheckOutcome, CheckSpec
from .registry import CheckRegistry

#: ``assert`` name -> the module under ``checks/`` that defines its ``CHECK``. A module is
#: imported when a criterion first needs its check, so a run of portal checks never loads the
#: FHIR, HL7, X12 or judge code (issue 12: start-up and collection time).
BUILTIN: dict[str, str] = {
    "fhir-resource-state": "fhir",
    "portal-state-match": "portal",
    "voice-transcript": "voice",
    "hl7-structural": "hl7",
    "x12-response": "x12",
    "sftp-file-present": "files",
    "output-format": "output_format",
    "output-length": "output_length",
    "output-sections": "output_sections",
    "output-match": "output_match",
    "output-json-schema": "output_schema",
    "llm-rubric": "llm_rubric",
    "output-consistency": "output_consistency",
}


@cache
def builtin_check(name: str) -> CheckSpec:
    """The built-in check registered as ``name`` (its module is imported on first use)."""
    spec: CheckSpec = importlib.import_module(f"{__name__}.{BUILTIN[name]}").CHECK
    if spec.name != name:  # the table above and the module disagree: a bug of ours
        raise RuntimeError(f"checks/{BUILTIN[name]}.py defines {spec.name!r}, not {name!r}")
    return spec


def builtin_checks() -> tuple[CheckSpec, ...]:
    """Every built-in check, in registration order (imports them all)."""
    return tuple(builtin_check(name) for name in BUILTIN)


def default_registry() -> CheckRegistry:
    """A registry holding only the built-in checks."""
    return CheckRegistry(builtins=BUILTIN)


__all__ = [
    "AssertionSpec",
    "CheckContext",
    "CheckOutcome",
    "CheckRegistry",
    "CheckSpec",
    "builtin_check",
    "builtin_checks",
    "default_registry",
]
