"""Sources whose checks arrive in later issues: the sandbox directory, as it is.

Each factory hands its check the source's directory (``fhir/``, ``hl7_outbound/``, ``sftp/``,
``x12/``) so the fixtures exist and can be overridden today; the FHIR, HL7, files and X12
checks replace these factories with their parsed sources.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class DirectorySource:
    """A source directory of a sandbox, plus its live settings from run.yaml."""

    name: str
    path: Path
    settings: dict[str, Any]

    @property
    def exists(self) -> bool:
        """False when the agent wrote nothing to this source."""
        return self.path.is_dir()


def _directory(sandbox: Any, name: str, folder: str) -> DirectorySource:
    return DirectorySource(name, sandbox.path / folder, sandbox.settings(name))


def fhir_from_sandbox(sandbox: Any) -> DirectorySource:
    """The ``fhir/`` directory."""
    return _directory(sandbox, "fhir", "fhir")


def hl7_from_sandbox(sandbox: Any) -> DirectorySource:
    """The ``hl7_outbound/`` directory."""
    return _directory(sandbox, "hl7", "hl7_outbound")


def files_from_sandbox(sandbox: Any) -> DirectorySource:
    """The ``sftp/`` directory."""
    return _directory(sandbox, "files", "sftp")


def x12_from_sandbox(sandbox: Any) -> DirectorySource:
    """The ``x12/`` directory."""
    return _directory(sandbox, "x12", "x12")


def judge_from_sandbox(sandbox: Any) -> DirectorySource:
    """Judge settings from run.yaml (the judge client arrives with the llm-rubric check)."""
    return _directory(sandbox, "judge", ".")
