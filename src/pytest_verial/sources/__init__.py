"""Data sources of a sandbox, one per kind (README, "Run directories" and "Extending").

A :class:`Sandbox` is the final state of one task run. Each source is built lazily on first
use, from a factory chosen by name, and cached on the sandbox, so all criteria of a task run
share one loaded source. The fixtures ``verial_<name>`` hand these objects to checks; a
conftest that overrides a fixture replaces the source for the criteria under it.

The sources themselves are declared in :mod:`pytest_verial._config.source_table`.

Public API (README, "Public API"): the :class:`Sandbox` with its cache and the source names
(the plugin builds them), :class:`Source` and each source kind's Protocol: what a check reads
through ``ctx.source(name)``, and what a conftest's replacement for a ``verial_<name>`` fixture
provides. The built-in sources behind them are private (``sources._<kind>``). ``_PUBLIC`` is
the one table of the Protocols, which load their module on first use; the ``TYPE_CHECKING``
imports and ``__all__`` repeat it, and tests/core/test_public_api.py fails when they disagree.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._config.source_table import SOURCE_NAMES
from .._contracts.sandbox import Sandbox, SandboxCache, Source
from .._lazy import exports

if TYPE_CHECKING:
    from ._fhir import FhirSource
    from ._files.base import FilesSource
    from ._hl7 import Hl7Source
    from ._output import OutputSource
    from ._portal import PortalSource
    from ._voice import VoiceSource
    from ._x12 import X12Source

#: public name -> the private module that defines it (loaded on first use)
_PUBLIC = {
    "FhirSource": "_fhir",
    "FilesSource": "_files.base",
    "Hl7Source": "_hl7",
    "OutputSource": "_output",
    "PortalSource": "_portal",
    "VoiceSource": "_voice",
    "X12Source": "_x12",
}
__getattr__, __dir__ = exports(__name__, _PUBLIC)

__all__ = [
    "SOURCE_NAMES",
    "FhirSource",
    "FilesSource",
    "Hl7Source",
    "OutputSource",
    "PortalSource",
    "Sandbox",
    "SandboxCache",
    "Source",
    "VoiceSource",
    "X12Source",
]
