"""Built-in checks, one module per ``assert`` type, registered in :mod:`.registry` and nowhere
else.

To add a built-in check: write ``checks/<name>.py`` with its model and a ``CHECK = CheckSpec(...)``
and add its ``assert`` name and module to ``registry.BUILTIN``. Conftests add checks through the
``pytest_verial_checks`` hook instead.
"""

from __future__ import annotations

from ._base import AssertionSpec, CheckContext, CheckOutcome, CheckSpec
from ._registry import BUILTIN, CheckRegistry, builtin_check, builtin_checks, default_registry

__all__ = [
    "BUILTIN",
    "AssertionSpec",
    "CheckContext",
    "CheckOutcome",
    "CheckRegistry",
    "CheckSpec",
    "builtin_check",
    "builtin_checks",
    "default_registry",
]
