"""Public names of a package loaded on first use (PEP 562).

Every pytest run in an environment with this package imports the plugin, and with it the
packages it lives in. So a package's ``__init__`` names what it exports without importing
it; the defining module loads the first time a name is asked for::

    __getattr__, __dir__ = lazy.exports(__name__, {"verify_task": "inline", ...})
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def exports(
    package: str, table: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``, whose ``table`` maps each public name
    to the submodule (relative to the package) that defines it; a leading dot names a module
    of the parent package (``"._compare"`` in ``pytest_verial.checks``)."""

    def getattr_(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module}", package), name)
        setattr(sys.modules[package], name, value)  # later lookups skip this function
        return value

    def dir_() -> list[str]:
        return sorted({*vars(sys.modules[package]), *table})

    return getattr_, dir_
