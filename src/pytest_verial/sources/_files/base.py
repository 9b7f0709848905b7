"""What every files source shares: entries, confined glob matching, caches and counters.

A files source is the tree under one sandbox's SFTP prefix. It is listed once per task run
(lazily, on the first criterion that asks) and each object is read at most once, only when a
criterion needs its content. Names are always relative to the prefix, ``/``-separated, and are
*confined*: a name or pattern with an absolute start, a ``.``/``..`` or empty segment, a
backslash, a NUL or a percent-encoded separator never matches anything.
"""

from __future__ import annotations

import bisect
import mimetypes
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol, runtime_checkable

import regex

from ..._errors import CriterionError, SourceError

#: default limit on the bytes of one file read into memory (``sources.files.max_read_bytes``)
DEFAULT_MAX_READ_BYTES = 16 * 1024 * 1024

_GLOB_CHARS = "*?["
_ENCODED = re.compile(r"%(?:2f|5c|2e|00)", re.IGNORECASE)


@dataclass(frozen=True)
class FileEntry:
    """One file under the prefix, as listed (no content)."""

    path: str
    size: int
    content_type: str | None = None
    updated: str | None = None

    def evidence(self) -> dict[str, Any]:
        """The entry as plain JSON for evidence."""
        return {"path": self.path, "size": self.size, "content_type": self.content_type}


_EXTRA_TYPES = {
    ".ndjson": "application/x-ndjson",
    ".jsonl": "application/x-ndjson",
    ".hl7": "x-application/hl7-v2+er7",
    ".x12": "application/edi-x12",
    ".edi": "application/edi-x12",
    ".csv": "text/csv",
    ".json": "application/json",
    ".txt": "text/plain",
}


def guess_content_type(name: str) -> str | None:
    """The content type a file on disk is given (GCS objects carry their own)."""
    suffix = "." + name.rsplit(".", 1)[-1].lower() if "." in name.rsplit("/", 1)[-1] else ""
    if suffix in _EXTRA_TYPES:
        return _EXTRA_TYPES[suffix]
    return mimetypes.guess_type(name, strict=False)[0]


def unsafe_reason(relative: str) -> str | None:
    """Why ``relative`` (a name or a pattern) could leave the prefix, or None when it cannot."""
    if not relative:
        return "it is empty"
    if "\x00" in relative:
        return "it contains a NUL byte"
    if "\\" in relative:
        return "it contains a backslash (use '/')"
    if relative.startswith("/") or re.match(r"[A-Za-z]:", relative):
        return "it is absolute (paths are relative to the prefix)"
    if relative.startswith("~"):
        return "it starts with '~'"
    if _ENCODED.search(relative):
        return "it contains a percent-encoded separator or dot"
    for segment in relative.split("/"):
        if segment in ("", ".", ".."):
            return f"it has an empty, '.' or '..' segment ({relative!r})"
    return None


def safe_name(relative: str) -> bool:
    """True when a listed name stays inside the prefix."""
    return unsafe_reason(relative) is None


#: seconds one glob may take on one file name (the sandbox names the files: docs/files.md)
GLOB_TIMEOUT = 2.0


class BoundedGlob:
    """A glob's regex, run by the ``regex`` package with :data:`GLOB_TIMEOUT` per name.

    File names come from the sandbox (the agent chose them) and globs like ``*a*a*a*a*b`` make
    Python's ``re`` backtrack for minutes on a long name; ``regex`` handles these in linear-ish
    time, and the timeout bounds whatever it does not.
    """

    def __init__(self, glob: str, pattern: str) -> None:
        self.glob = glob
        self.pattern = pattern
        self._compiled = regex.compile(pattern)

    def match(self, name: str) -> Any:
        """The match at the start of ``name``, or None; a SourceError past the timeout."""
        try:
            return self._compiled.match(name, timeout=GLOB_TIMEOUT)
        except TimeoutError:
            raise SourceError(
                f"pattern {self.glob!r} timed out after {GLOB_TIMEOUT:g} s on a file name of "
                f"{len(name):,} characters; refused"
            ) from None


@lru_cache(maxsize=1024)
def compile_glob(pattern: str) -> BoundedGlob:
    """A regex for a glob relative to the prefix.

    ``*`` and ``?`` never cross ``/``; ``[abc]`` / ``[!abc]`` are classes; a whole ``**``
    segment matches any number of directories (``outbound/**/*.json``), or, last, anything
    below (``outbound/**``).
    """
    segments = pattern.split("/")
    out: list[str] = []
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            if not last and segments[index + 1] == "**":
                continue  # "**/**" is "**"
            out.append(".+" if last else "(?:[^/]+/)*")
            continue
        out.append(_segment(segment) + ("" if last else "/"))
    return BoundedGlob(pattern, "".join(out) + r"\Z")


def _segment(segment: str) -> str:
    out, i = [], 0
    while i < len(segment):
        c = segment[i]
        if c == "*":
            while i + 1 < len(segment) and segment[i + 1] == "*":
                i += 1
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = segment.find("]", i + 2)
            if end == -1:
                out.append(re.escape(c))
            else:
                body = segment[i + 1 : end]
                negate = body[:1] in ("!", "^")
                body = body[1:] if negate else body
                body = body.replace("\\", "\\\\").replace("/", "")
                out.append(("[^/" if negate else "[") + body + "]")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def literal_prefix(pattern: str) -> str:
    """The part of ``pattern`` before its first glob character (narrows the search)."""
    cut = min((pattern.find(c) for c in _GLOB_CHARS if c in pattern), default=len(pattern))
    return pattern[:cut]


@runtime_checkable
class FilesSource(Protocol):
    """What ``sftp-file-present`` needs from a files source."""

    def describe(self) -> str:
        """Where the files live, for messages (``sftp/`` or ``gs://bucket/prefix/``)."""
        ...

    def match(self, pattern: str) -> list[FileEntry]:
        """The entries matching ``pattern``, sorted by path."""
        ...

    def read(self, entry: FileEntry) -> bytes:
        """The content of ``entry`` (read once, then cached)."""
        ...

    def memo(self, key: tuple[Any, ...], make: Callable[[], Any]) -> Any:
        """A per-source cache for derived values (parsed documents)."""
        ...


class BaseFilesSource:
    """Listing once, matching with an index, reading at most once per object.

    Subclasses implement :meth:`_list` (all entries, unfiltered) and :meth:`_fetch`.
    A listing failure is cached too: a bucket that is down costs one attempt per task run.
    """

    def __init__(self, max_read_bytes: int = DEFAULT_MAX_READ_BYTES) -> None:
        self.max_read_bytes = max_read_bytes
        self.list_calls = 0
        self.downloads = 0
        self.refused: list[str] = []
        self._entries: list[FileEntry] | None = None
        self._names: list[str] = []
        self._list_error: SourceError | None = None
        self._content: dict[str, bytes] = {}
        self._memo: dict[tuple[Any, ...], Any] = {}
        self._lock = threading.RLock()
        # reads: ``_state`` guards the tables briefly; each object has its own lock, held while
        # it downloads, so a criterion waits only for the objects it reads (a live source may
        # download several at once, see GCSFiles). Never taken while holding another's.
        self._state = threading.Lock()
        self._reading: dict[str, threading.Lock] = {}
        self._read_errors: dict[str, CriterionError] = {}

    def describe(self) -> str:
        raise NotImplementedError

    def _list(self) -> list[FileEntry]:
        raise NotImplementedError

    def _fetch(self, entry: FileEntry) -> bytes:
        raise NotImplementedError

    def entries(self) -> list[FileEntry]:
        """Every confined entry under the prefix, sorted by path (listed on first call)."""
        with self._lock:
            if self._list_error is not None:
                raise self._list_error
            if self._entries is None:
                self.list_calls += 1
                try:
                    listed = self._list()
                except SourceError as exc:
                    self._list_error = exc
                    raise
                kept = []
                for entry in listed:
                    if safe_name(entry.path):
                        kept.append(entry)
                    else:
                        self.refused.append(entry.path)
                kept.sort(key=lambda e: e.path)
                self._entries = kept
                self._names = [e.path for e in kept]
            return self._entries

    def match(self, pattern: str) -> list[FileEntry]:
        reason = unsafe_reason(pattern)
        if reason is not None:
            raise SourceError(f"pattern {pattern!r} refused: {reason}")
        entries = self.entries()
        regex = compile_glob(pattern)
        start = literal_prefix(pattern)
        lo = bisect.bisect_left(self._names, start)
        found = []
        for index in range(lo, len(entries)):
            name = self._names[index]
            if not name.startswith(start):
                break
            if regex.match(name):
                found.append(entries[index])
        return found

    def read(self, entry: FileEntry) -> bytes:
        """The object's bytes, downloaded at most once (a failed download is tried again by
        the next criterion that reads it, after the one that met the failure)."""
        with self._state:
            cached = self._content.get(entry.path)
            if cached is not None:
                return cached
            if entry.size > self.max_read_bytes:
                raise SourceError(
                    f"{self.describe()}{entry.path}: {entry.size} bytes, above the size limit of "
                    f"{self.max_read_bytes} bytes (sources.files.max_read_bytes); not read"
                )
            lock = self._reading.setdefault(entry.path, threading.Lock())
        with lock:
            with self._state:
                cached = self._content.get(entry.path)
                failed = self._read_errors.pop(entry.path, None)
            if cached is not None:
                return cached
            if failed is not None:  # met ahead of time by a download this criterion needed
                raise failed
            return self._download(entry)

    def read_ahead(self, entry: FileEntry) -> None:
        """Download ``entry`` now for a criterion that will read it; a failure is kept for that
        criterion's :meth:`read` (a worker of a live source's pool calls this)."""
        with self._state:
            lock = self._reading.setdefault(entry.path, threading.Lock())
        with lock:
            with self._state:
                if entry.path in self._content or entry.path in self._read_errors:
                    return
            try:
                self._download(entry)
            except CriterionError as exc:
                with self._state:
                    self._read_errors[entry.path] = exc

    def _download(self, entry: FileEntry) -> bytes:
        """Fetch and keep (the object's own lock held)."""
        with self._state:
            self.downloads += 1
        data = self._fetch(entry)
        with self._state:
            self._content[entry.path] = data
        return data

    def memo(self, key: tuple[Any, ...], make: Callable[[], Any]) -> Any:
        with self._lock:
            if key not in self._memo:
                try:
                    self._memo[key] = (True, make())
                except CriterionError as exc:
                    self._memo[key] = (False, exc)
            ok, value = self._memo[key]
            if not ok:
                raise value
            return value

    def close(self) -> None:
        """Drop cached content."""
        with self._state:
            self._content.clear()
            self._read_errors.clear()
        self._memo.clear()


__all__ = [
    "DEFAULT_MAX_READ_BYTES",
    "BaseFilesSource",
    "FileEntry",
    "FilesSource",
    "compile_glob",
    "guess_content_type",
    "literal_prefix",
    "safe_name",
    "unsafe_reason",
]
