"""The agent's final output: ``output.md``, ``output.txt`` or ``output.json`` in the sandbox."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from .._sandbox_io.confine import is_file, task_root
from .._sandbox_io.jsonfiles import read_text
from .._sandbox_io.limits import Reads

if TYPE_CHECKING:
    from .._contracts.sandbox import Sandbox

OUTPUT_NAMES = ("output.md", "output.txt", "output.json")


class OutputSource(Protocol):
    """What the ``output-*`` checks and the judge need: the agent's final output."""

    #: the file the output was read from, once ``text()`` found one
    path: Path | None

    def text(self) -> str | None:
        """The output as text, or None when the task run wrote none."""
        ...

    @property
    def format(self) -> str | None:
        """``md``, ``txt`` or ``json``: how the output is written."""
        ...


class OutputSnapshot:
    """The final output of the agent; ``text()`` is None when the agent wrote none."""

    def __init__(self, directory: Path, reads: Reads | None = None) -> None:
        self.directory = directory
        self.reads = reads or Reads(directory)
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
                    self._text = read_text(candidate, self.reads)
                    break
            self._loaded = True
        return self._text

    @property
    def format(self) -> str | None:
        """``md``, ``txt`` or ``json`` after ``text()`` found a file."""
        self.text()
        return self.path.suffix.lstrip(".") if self.path else None


def from_sandbox(sandbox: Sandbox) -> OutputSnapshot:
    """The output source of a sandbox."""
    return OutputSnapshot(sandbox.path, getattr(sandbox, "reads", None))
