"""Built-in checks, one module per ``assert`` type, registered here and nowhere else.

To add a built-in check: write ``checks/<name>.py`` with its model and a ``CHECK = CheckSpec(...)``
and add the module name to ``_BUILTIN_MODULES``. Conftests add checks through the
``pytest_verial_checks`` hook instead.
"""

from __future__ import annotations

import importlib
from functools import lru_cache

from .base import AssertionSpec, CheckContext, CheckOutcome, CheckSpec
from .registry import CheckRegistry

_BUILTIN_MODULES = (
    "fhir",
    "portal",
    "voice",
    "hl7",
    "x12",
    "files",
    "output_format",
    "output_length",
    "output_sections",
    "output_match",
    "output_schema",
    "llm_rubric",
    "output_consistency",
)


@lru_cache(maxsize=1)
def builtin_checks() -> tuple[CheckSpec, ...]:
    """Every built-in check, in registration order."""
    specs = []
    for module in _BUILTIN_MODULES:
        specs.append(importlib.import_module(f"{__name__}.{module}").CHECK)
    return tuple(specs)


def default_registry() -> CheckRegistry:
    """A registry holding only the built-in checks."""
    return CheckRegistry(builtin_checks())


__all__ = [
    "AssertionSpec",
    "CheckContext",
    "CheckOutcome",
    "CheckRegistry",
    "CheckSpec",
    "builtin_checks",
    "default_registry",
]
