"""The files source of a captured run: the sandbox's ``sftp/`` directory tree.

Symbolic links are followed only when their target stays inside the task folder (checked
again when the file is read, :mod:`pytest_verial._sandbox_io.confine`); a link that points out,
``sftp/`` itself included, makes the source an error naming the link. Links to directories
are listed in :attr:`.BaseFilesSource.refused`. A missing ``sftp/`` is an empty tree: the agent
dropped nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..._errors import SourceError
from ..._sandbox_io.confine import inside, task_root
from ..._sandbox_io.limits import Reads
from .base import DEFAULT_MAX_READ_BYTES, BaseFilesSource, FileEntry, guess_content_type


class DirectoryFiles(BaseFilesSource):
    """Files under a directory, confined to it."""

    def __init__(
        self,
        root: Path,
        max_read_bytes: int = DEFAULT_MAX_READ_BYTES,
        task: Path | None = None,
        reads: Reads | None = None,
    ) -> None:
        super().__init__(max_read_bytes)
        self.root = root
        #: the task folder nothing is read outside of (default: the folder holding ``sftp/``)
        self.task = task if task is not None else root.parent
        #: the task run's bounded reads (:mod:`pytest_verial._sandbox_io.limits`)
        self.reads = reads or Reads(self.task)

    @property
    def path(self) -> Path:
        """The ``sftp/`` directory (as the earlier directory source named it)."""
        return self.root

    @property
    def exists(self) -> bool:
        """False when the agent wrote nothing to SFTP."""
        return self.root.is_dir()

    def describe(self) -> str:
        return f"{self.root}/"

    def _real_root(self) -> Path:
        return inside(self.root, task_root(self.task))

    def _list(self) -> list[FileEntry]:
        if not self.root.is_dir():
            return []
        self._real_root()  # sftp/ itself must not lead out of the task folder
        found: list[FileEntry] = []
        stack = [(self.root, "")]
        while stack:
            directory, relative = stack.pop()
            try:
                items = list(os.scandir(directory))
            except OSError as exc:
                raise SourceError(f"{directory}: cannot list: {exc.strerror or exc}") from None
            for item in items:
                name = f"{relative}{item.name}"
                if item.is_symlink():
                    target = inside(Path(item.path), task_root(self.task))
                    if not target.is_file():
                        self.refused.append(name)
                        continue
                    found.append(self._entry(name, target))
                elif item.is_dir(follow_symlinks=False):
                    stack.append((Path(item.path), name + "/"))
                elif item.is_file(follow_symlinks=False):
                    found.append(self._entry(name, Path(item.path)))
        return found

    @staticmethod
    def _entry(name: str, path: Path) -> FileEntry:
        try:
            size = path.stat().st_size
        except OSError as exc:
            raise SourceError(f"{path}: cannot stat: {exc.strerror or exc}") from None
        return FileEntry(name, size, guess_content_type(name))

    def _fetch(self, entry: FileEntry) -> bytes:
        real = Path(os.path.realpath(self.root / entry.path))
        if not real.is_relative_to(task_root(self.task)):
            raise SourceError(f"{self.root / entry.path}: refused: it resolves outside {self.task}")
        try:
            size = os.stat(real).st_size
            if size > self.max_read_bytes:
                raise SourceError(
                    f"{self.root / entry.path}: {size} bytes, above the size limit of "
                    f"{self.max_read_bytes} bytes (sources.files.max_read_bytes); not read"
                )
            # admitted by its size (per file and per sandbox), read no further than that
            return self.reads.read_bytes(self.root / entry.path)
        except OSError as exc:
            where = self.root / entry.path
            raise SourceError(f"{where}: cannot read: {exc.strerror or exc}") from None
