"""What a process keeps of sandbox files it has indexed, by the files' identity (issue 33):
``verial serve`` scores the same run folder again and again, and a FHIR snapshot or an HL7
folder is read and indexed once while its files stay as they were.

A file's identity is its path, size, modification time (ns), change time (ns), inode and device:
a file written again, replaced or renamed over has another one, so a changed sandbox is read
again on the next request. Only the service turns keeping on (:func:`keep_indexes`): a pytest
session reads each task run's sandbox once already (its sandbox cache), and keeping snapshots
beyond their task run would only hold memory. What is kept is bounded in entries and in the
bytes of the files behind them, least recently used dropped, so a caller bringing ever new
sandboxes cannot grow it.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from pathlib import Path
from typing import Any, Generic, TypeVar

from .limits import Reads

T = TypeVar("T")

#: a set of files as they are now: (path, size, mtime_ns, ctime_ns, inode, device) each
Identity = tuple[tuple[str, int, int, int, int, int], ...]


def identity(paths: Iterable[Path]) -> tuple[Identity, int] | None:
    """The identity of ``paths`` and their total size, or None when one cannot be read."""
    found = []
    total = 0
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            return None
        found.append((str(path), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev))
        total += st.st_size
    return tuple(found), total


class Kept(Generic[T]):
    """Values by key, at most ``entries`` of them and ``max_bytes`` of files behind them."""

    def __init__(self, entries: int, max_bytes: int) -> None:
        self.entries = entries
        self.max_bytes = max_bytes
        self.on = False
        self._items: OrderedDict[Hashable, tuple[T, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> T | None:
        with self._lock:
            found = self._items.get(key)
            if found is None:
                return None
            self._items.move_to_end(key)
            return found[0]

    def put(self, key: Hashable, value: T, size: int) -> None:
        if size > self.max_bytes:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            self._items[key] = (value, size)
            self._bytes += size
            while len(self._items) > self.entries or self._bytes > self.max_bytes:
                _, (_, dropped) = self._items.popitem(last=False)
                self._bytes -= dropped

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0

    def __len__(self) -> int:
        return len(self._items)

    def load(
        self, name: str, paths: Callable[[], list[Path]], make: Callable[[], T], reads: Reads
    ) -> T:
        """``make()``, or what it made for the same files before (keeping on): ``name`` says
        what is indexed (a folder), ``paths()`` lists the files it reads, ``reads`` are the
        task run's bounded reads. Kept only when the files did not change while it was made.
        What was kept is charged to ``reads`` as a fresh read would be (SourceError over a
        limit): a sandbox is held to the same limits, with the same outcome, whether its
        index was kept or not."""
        if not self.on:
            return make()
        before = identity(paths())
        if before is None:
            return make()
        key = (name, before[0])
        found = self.get(key)
        if found is not None:
            for path, size, _, _, inode, device in before[0]:
                reads.charge(Path(path), size, (device, inode))
            return found
        value = make()
        if identity(paths()) == before:
            self.put(key, value, before[1])
        return value


#: FHIR snapshot indexes (``fhir/`` of a task folder) and HL7 message lists
#: (bounded by the files' bytes: an index takes a few times its files in memory)
FHIR_INDEXES: Kept[Any] = Kept(entries=32, max_bytes=64 * 1024 * 1024)
HL7_MESSAGES: Kept[Any] = Kept(entries=64, max_bytes=16 * 1024 * 1024)


def keep_indexes(on: bool = True) -> None:
    """Keep sandbox indexes in this process (the service), or stop and forget them."""
    for kept in (FHIR_INDEXES, HL7_MESSAGES):
        kept.on = on
        if not on:
            kept.clear()


__all__ = ["FHIR_INDEXES", "HL7_MESSAGES", "Identity", "Kept", "identity", "keep_indexes"]
