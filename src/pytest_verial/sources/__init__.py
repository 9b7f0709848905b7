"""Data sources of a sandbox, one per kind (README, "Run directories" and "Extending").

A :class:`Sandbox` is the final state of one task run. Each source is built lazily on first
use, from a factory chosen by name, and cached on the sandbox, so all criteria of a task run
share one loaded source. The fixtures ``verial_<name>`` hand these objects to checks; a
conftest that overrides a fixture replaces the source for the criteria under it.

The sources themselves are declared in :mod:`pytest_verial._config.source_table`.

Public API: the names in ``__all__``: the :class:`Sandbox`, :class:`Source` and each source
kind's Protocol (what a check reads, and what a conftest's replacement for a ``verial_<name>``
fixture provides), and the built-in snapshot and files sources, which load their private
module on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._config.source_table import SOURCE_FACTORIES, SOURCE_NAMES, SOURCES
from .._contracts.sandbox import (
    Sandbox,
    SandboxCache,
    Source,
    fill_template,
    run_yaml,
    setting_number,
    setting_text,
)
from .._lazy import exports

if TYPE_CHECKING:
    from ._fhir import FhirSource, SnapshotSource
    from ._files import (
        BaseFilesSource,
        DirectoryFiles,
        FileEntry,
        FilesSource,
        GCSFiles,
        guess_content_type,
    )
    from ._hl7 import Hl7Snapshot, Hl7Source
    from ._output import OutputSnapshot, OutputSource
    from ._portal import PortalSnapshot, PortalSource
    from ._voice import Turn, VoiceSnapshot, VoiceSource
    from ._x12 import X12Snapshot, X12Source


#: public source classes -> the private module that defines them (loaded on first use)
_LAZY = {
    **dict.fromkeys(["FhirSource", "SnapshotSource"], "_fhir"),
    **dict.fromkeys(["Hl7Snapshot", "Hl7Source"], "_hl7"),
    **dict.fromkeys(["OutputSnapshot", "OutputSource"], "_output"),
    **dict.fromkeys(["PortalSnapshot", "PortalSource"], "_portal"),
    **dict.fromkeys(["Turn", "VoiceSnapshot", "VoiceSource"], "_voice"),
    **dict.fromkeys(["X12Snapshot", "X12Source"], "_x12"),
    **dict.fromkeys(
        [
            "BaseFilesSource",
            "DirectoryFiles",
            "FileEntry",
            "FilesSource",
            "GCSFiles",
            "guess_content_type",
        ],
        "_files",
    ),
}
__getattr__, __dir__ = exports(__name__, _LAZY)

__all__ = [
    "SOURCES",
    "SOURCE_FACTORIES",
    "SOURCE_NAMES",
    "BaseFilesSource",
    "DirectoryFiles",
    "FhirSource",
    "FileEntry",
    "FilesSource",
    "GCSFiles",
    "Hl7Snapshot",
    "Hl7Source",
    "OutputSnapshot",
    "OutputSource",
    "PortalSnapshot",
    "PortalSource",
    "Sandbox",
    "SandboxCache",
    "SnapshotSource",
    "Source",
    "Turn",
    "VoiceSnapshot",
    "VoiceSource",
    "X12Snapshot",
    "X12Source",
    "fill_template",
    "guess_content_type",
    "run_yaml",
    "setting_number",
    "setting_text",
]
