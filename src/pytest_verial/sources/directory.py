"""A source that is just a sandbox directory and its run.yaml settings (the judge's, for now)."""

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


def judge_from_sandbox(sandbox: Any) -> DirectorySource:
    """Judge settings from run.yaml (the judge client arrives with the llm-rubric check)."""
    return _directory(sandbox, "judge", ".")
