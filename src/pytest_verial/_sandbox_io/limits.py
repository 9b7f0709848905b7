"""Every read of agent-written data is bounded (issue 31): per file and per sandbox.

A file is opened without following it into a pipe (``O_NONBLOCK``: a FIFO planted where a
file was listed would block the read forever), its size taken from the open descriptor
(``fstat``; a sparse file counts by its size, not by the blocks it uses) and checked before a
byte is read: over the per-file limit, or bringing the distinct files read from one task run's
sandbox over the per-sandbox limit, it is a :class:`~pytest_verial._errors.SourceError` in one
line naming the file (sandbox-relative) and the limit, and the criteria reading it are errors.
The read itself is bounded too: a file that grows while it is read stops at the size admitted,
with the same kind of error, so neither limit can be passed by appending to a file.

The limits: ``--verial-max-file-size`` and ``--verial-max-sandbox-size`` (ini keys
``verial_max_file_size``, ``verial_max_sandbox_size``) for the plugin, ``verial serve
--max-file-size`` and ``--max-sandbox-size`` for the service, ``max_file_size`` and
``max_sandbox_size`` in :func:`pytest_verial.verify_task`'s config (README, "Bad input and
limits"; :mod:`pytest_verial._config.options` declares them).
"""

from __future__ import annotations

import io
import os
import stat
import threading
from pathlib import Path
from typing import Any

from .._errors import SourceError
from .sizes import ReadLimits, over_file_limit, shown_size


class Reads:
    """The reads of one task run's sandbox (or of one file, when made for it alone)."""

    def __init__(self, root: Path | None = None, limits: ReadLimits | None = None) -> None:
        #: the task folder names are given relative to (None: by their file name)
        self.root = root
        self.limits = limits if limits is not None else ReadLimits()
        self._read: dict[tuple[int, int], int] = {}
        self._total = 0
        self._lock = threading.Lock()

    def name(self, path: Path) -> str:
        """How a limit's message names ``path``: relative to the task folder (the sandbox),
        else as given."""
        if self.root is not None:
            try:
                return Path(path).relative_to(self.root).as_posix()
            except ValueError:
                pass
        return str(path)

    def admit(self, path: Path, st: os.stat_result) -> None:
        """Refuse (SourceError) a file whose size passes the per-file limit, or that would
        bring the sandbox's distinct files read past the per-sandbox limit."""
        self.charge(path, st.st_size, (st.st_dev, st.st_ino))

    def charge(self, path: Path, size: int, key: tuple[int, int]) -> None:
        """Count a file of ``size`` bytes (``key``: its device and inode) against the limits,
        as :meth:`admit` does; also for a file whose index a process kept, so that a kept
        index is held to the limits of the request that uses it, as a fresh read is."""
        limits = self.limits
        refused = over_file_limit(self.name(path), size, limits)
        if refused is not None:
            raise SourceError(refused)
        with self._lock:
            if key in self._read:
                return
            if self._total + size > limits.max_sandbox:
                raise SourceError(
                    f"{self.name(path)}: {size:,} bytes, which would bring the files read from "
                    f"this sandbox to {self._total + size:,} bytes, over the per-sandbox limit "
                    f"of {shown_size(limits.max_sandbox)} ({limits.sandbox_setting}); not read"
                )
            self._read[key] = size
            self._total += size

    def open(self, path: Path) -> io.BufferedReader:
        """``path`` opened for reading, admitted, its reads stopped at the size admitted."""
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except OSError as exc:
            raise SourceError(f"{path}: cannot read: {exc.strerror or exc}") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise SourceError(f"{path}: not a regular file; not read")
            self.admit(path, st)
            raw = _Bounded(io.FileIO(fd, "rb", closefd=True), st.st_size, self.name(path))
        except BaseException:
            os.close(fd)
            raise
        return io.BufferedReader(raw)

    def read_bytes(self, path: Path) -> bytes:
        """The whole file, admitted first and read no further than its admitted size."""
        with self.open(path) as handle:
            try:
                return handle.read()
            except OSError as exc:
                raise SourceError(f"{path}: cannot read: {exc.strerror or exc}") from None

    def check_size(self, path: Path) -> None:
        """Admit a file read by something else (an SQLite database): its size checked."""
        try:
            st = os.stat(path)
        except OSError as exc:
            raise SourceError(f"{path}: cannot read: {exc.strerror or exc}") from None
        self.admit(path, st)


class _Bounded(io.RawIOBase):
    """A file's bytes up to the size it had when admitted; a byte more is a SourceError."""

    def __init__(self, inner: io.FileIO, size: int, name: str) -> None:
        self._inner = inner
        self._left = size
        self._name = name

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        want = min(len(view), self._left + 1)
        got = self._inner.readinto(view[:want]) or 0
        self._left -= got
        if self._left < 0:
            raise SourceError(
                f"{self._name}: grew while it was read, past the size it was admitted at; not read"
            )
        return got

    def close(self) -> None:
        self._inner.close()
        super().close()


__all__ = ["ReadLimits", "Reads"]
