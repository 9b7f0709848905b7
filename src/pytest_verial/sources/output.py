"""The agent's final output: ``output.md``, ``output.txt`` or ``output.json`` in the sandbox."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..sandbox_io.confine import is_file, task_root
from ..sandbox_io.jsonfiles import read_text

OUTPUT_NAMES = ("output.md", "output.txt", "output.json")


class OutputSnapshot:
    """The final output of the agent; ``text()`` is None when the agent wrote none."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._loaded = False
        self._text: str | None = None
        self.path: Path | None = None

    def text(self) -> str | None:
        """The output as text, read once."""
        if not self._loaded:
            for name in OUTPUT_NAMES:
                candidate = self.directory / name
                if is_file(candidate, task_root(self.directory)):
                    self.path = candidate
                    self._text = read_text(candidate)
                    break
            self._loaded = True
        return self._text

    @property
    def format(self) -> str | None:
        """``md``, ``txt`` or ``json`` after ``text()`` found a file."""
        self.text()
        return self.path.suffix.lstrip(".") if self.path else None


def from_sandbox(sandbox: Any) -> OutputSnapshot:
    """The output source of a sandbox."""
    return OutputSnapshot(sandbox.path)
