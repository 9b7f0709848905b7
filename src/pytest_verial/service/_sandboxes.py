"""The sandbox a request brings, in one of three forms, as a folder the engine reads.

- ``{"run_dir": "good-agent"}``: a run folder under ``--runs-root`` (never outside it, no link
  leading out); the task's sandbox is ``<run_dir>/<task>/`` exactly as for the plugin.
- ``{"archive": {"format": "tar.gz" | "zip", "data": "<base64>"}}``: one task's folder packed.
  Its entries are the sandbox's files, either at the archive's top or under one folder named
  as the task (key or id), which is then dropped. Unpacked by hand, entry by entry, into a
  fresh temporary folder: only regular files and folders (a link, hard link or device is
  refused), no absolute name, no ``..``, at most :data:`MAX_ENTRIES` entries and
  :data:`MAX_UNPACKED` bytes counted as they are written (so a decompression bomb stops at the
  cap, whatever its headers say; one whose headers declare more is refused before any byte is
  inflated), no encrypted zip entry or unknown compression.
- ``{"files": {"voice/turns.json": [...], "hl7/outbound/1.hl7": "MSH|..."}}``: the file-based
  sources' state inline: each path relative to the task's sandbox, a string written as text,
  any other JSON value written as JSON.

Every refusal is a :class:`~._http.Problem` naming ``body sandbox.<form>`` and the entry, in one
line: 400 for a malformed or unsafe archive, 413 over a cap.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import io
import json
import os
import re
import tarfile
import tempfile
import threading
import zipfile
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path, PurePosixPath
from typing import IO, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

from .._config.run_folder import RUN_FILES, RunConfig, RunDir
from .._errors import RunConfigError
from .._sandbox_io.sizes import shown_size
from ._http import Problem
from ._limits import ServiceLimits

#: entries a sandbox may hold (a run folder's are walked one by one for links)
MAX_ENTRIES = 10_000
#: an archive's size once base64 is decoded
MAX_ARCHIVE = 6 * 1024 * 1024
#: the bytes an archive may unpack to (all files together)
MAX_UNPACKED = 64 * 1024 * 1024
#: files given inline
MAX_FILES = 1_000
_CHUNK = 1024 * 1024
_S_IFMT, _S_IFLNK = 0o170000, 0o120000


class ArchiveIn(BaseModel):
    """One task's folder as a tar.gz or zip, base64-encoded."""

    model_config = ConfigDict(extra="forbid")
    format: Literal["tar.gz", "zip"]
    data: str = Field(
        min_length=1,
        max_length=(MAX_ARCHIVE + 2) // 3 * 4 + 4,
        description=f"the archive, base64 (at most {MAX_ARCHIVE // 1024 // 1024} MiB decoded)",
    )


def _one_form_schema(schema: dict[str, Any]) -> None:
    """State "exactly one of" in the schema: a ``oneOf`` of the three forms."""
    schema["oneOf"] = [
        {
            "title": name,
            "type": "object",
            "properties": {name: schema["properties"][name]},
            "required": [name],
            "additionalProperties": False,
        }
        for name in ("run_dir", "archive", "files")
    ]
    for name in ("run_dir", "archive", "files"):  # given, a form is never null
        prop = schema["properties"][name]
        prop.update(next(p for p in prop.pop("anyOf") if p.get("type") != "null"))
        prop.pop("default", None)


class SandboxIn(BaseModel):
    """Where the task's sandbox is: exactly one of ``run_dir``, ``archive`` or ``files``."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_one_form_schema)
    run_dir: str | None = Field(
        default=None,
        min_length=1,
        max_length=1024,
        description="run folder relative to --runs-root; the task's sandbox is <run_dir>/<task>/",
    )
    archive: ArchiveIn | None = Field(
        default=None, description="the task's folder as a tar.gz or zip (base64)"
    )
    files: dict[str, JsonValue] | None = Field(
        default=None,
        description=(
            "the task's files inline: path relative to its sandbox -> content (a string is "
            f"written as text, any other value as JSON); at most {MAX_FILES}"
        ),
    )

    @model_validator(mode="after")
    def _one_form(self) -> SandboxIn:
        given = [n for n in ("run_dir", "archive", "files") if getattr(self, n) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of run_dir, archive or files")
        return self

    @property
    def form(self) -> str:
        return "run_dir" if self.run_dir is not None else "archive" if self.archive else "files"


@dataclass(frozen=True)
class TaskFolder:
    """A task's sandbox as the engine reads it: the run folder holding ``<task key>/``, the
    run's label in the report and the path the report names."""

    run_folder: Path
    label: str
    shown: str
    kept: bool = False  # a run folder under --runs-root (else unpacked for this request)
    #: a kept run folder's task sandbox as this request's confinement check resolved it:
    #: (task key, real path); ``run_folder`` is resolved too (None: unpacked, or no sandbox)
    resolved: tuple[str, Path] | None = None


@contextmanager
def task_folder(
    sandbox: SandboxIn,
    root: Path,
    task_key: str,
    task_id: str,
    limits: ServiceLimits | None = None,
) -> Iterator[TaskFolder]:
    """The folder of ``sandbox`` for one task; an unpacked one is removed afterwards.
    ``limits``: what an archive or inline files may unpack to (a 413 past them)."""
    limits = limits or ServiceLimits()
    if sandbox.run_dir is not None:
        folder = run_folder(root, sandbox.run_dir)
        check_run_files(root, folder, sandbox.run_dir)
        real = check_links(root, folder / task_key, sandbox.run_dir)
        resolved = None if real is None else (task_key, real)
        yield TaskFolder(folder, sandbox.run_dir, sandbox.run_dir, kept=True, resolved=resolved)
        return
    with tempfile.TemporaryDirectory(prefix="verial-sandbox-") as tmp:
        target = Path(tmp) / task_key
        target.mkdir()
        if sandbox.archive is not None:
            _unpack(sandbox.archive, target, {task_key, task_id}, limits)
            yield TaskFolder(Path(tmp), "upload", f"archive ({sandbox.archive.format})")
        else:
            assert sandbox.files is not None
            _write_files(sandbox.files, target, limits)
            yield TaskFolder(Path(tmp), "inline", "inline files")


# -- a run folder under --runs-root ----------------------------------------------------------------
#: the longest name of one folder a file system holds (bytes; POSIX NAME_MAX on Linux, macOS)
NAME_MAX = 255


def run_folder(root: Path, run_dir: str) -> Path:
    """The run folder ``run_dir`` names under ``root`` (--runs-root, resolved); never outside
    it."""
    if "\x00" in run_dir or "\\" in run_dir:
        raise Problem(400, "body sandbox.run_dir: must be a relative path with '/' separators")
    rel = PurePosixPath(run_dir)
    if rel.is_absolute() or re.match(r"^[A-Za-z]:", run_dir):
        raise Problem(400, "body sandbox.run_dir: must be relative to --runs-root, not absolute")
    if ".." in rel.parts:
        raise Problem(400, "body sandbox.run_dir: '..' is not allowed")
    if any(len(part.encode("utf-8", "surrogatepass")) > NAME_MAX for part in rel.parts):
        # no file system holds such a name (ENAMETOOLONG): said before one is asked
        raise Problem(400, f"body sandbox.run_dir: a name longer than {NAME_MAX} bytes")
    base = root  # resolved by create_app
    try:
        folder = (base / rel).resolve()
        if not folder.is_relative_to(base):
            raise Problem(
                400, f"body sandbox.run_dir: {_shown(run_dir)} leads outside --runs-root (a link)"
            )
        found = folder.is_dir()
    except (OSError, ValueError):  # a path the system refuses (too long as a whole, ...)
        found = False
    if not found:
        raise Problem(
            400, f"body sandbox.run_dir: no run folder {_shown(run_dir)} under --runs-root"
        )
    return folder


def _shown(run_dir: str) -> str:
    """The run folder as the caller named it, cut short when long (a detail stays one line)."""
    return run_dir if len(run_dir) <= 120 else run_dir[:100] + "..."


def check_run_files(base: Path, folder: Path, run_dir: str) -> None:
    """The run folder's ``run.yaml`` (or ``run.yml``, ``run.json``) is not a link leading
    outside --runs-root: the service would read another file's settings (a 400 naming it as
    the caller named the run folder, never the server's path)."""
    for name in RUN_FILES:
        path = folder / name
        if path.is_symlink() and not path.resolve().is_relative_to(base):
            raise Problem(
                400, f"body sandbox.run_dir: {run_dir}/{name} is a link outside --runs-root"
            )


def check_links(base: Path, folder: Path, run_dir: str) -> Path | None:
    """The task's sandbox is its own folder: the folder itself stays inside --runs-root and is
    no link into its own run folder (another task's sandbox), and no link inside it, at any
    depth, leads out of it (not to a sibling task's folder either). Each refusal is a 400
    naming the link as the caller would (``run_dir/task/...``), never the server's path.
    Answers the folder resolved (None when there is none)."""
    if not os.path.lexists(folder):
        return None
    task = f"{run_dir}/{folder.name}"
    real = folder.resolve()
    if not real.is_relative_to(base):
        raise Problem(400, f"body sandbox.run_dir: {task} leads outside --runs-root")
    if folder.is_symlink() and real.is_relative_to(folder.parent.resolve()):
        raise Problem(
            400,
            f"body sandbox.run_dir: {task} is a link to another task's folder in {run_dir}; "
            "each task is scored on its own folder",
        )
    if not real.is_dir():
        return real
    seen = 0
    pending = [real]
    while pending:  # scandir's entries know links without a stat each
        with os.scandir(pending.pop()) as entries:
            for entry in entries:
                seen += 1
                if seen > MAX_ENTRIES:
                    raise Problem(
                        400, f"body sandbox.run_dir: over {MAX_ENTRIES} entries in {task}"
                    )
                if entry.is_symlink():
                    target = Path(entry.path).resolve()
                    if not target.is_relative_to(real):
                        where = f"{task}/{Path(entry.path).relative_to(real).as_posix()}"
                        outside = (
                            "its task's folder" if target.is_relative_to(base) else "--runs-root"
                        )
                        raise Problem(
                            400, f"body sandbox.run_dir: {where} is a link outside {outside}"
                        )
                elif entry.is_dir(follow_symlinks=False):
                    pending.append(Path(entry.path))
    return real


class RunConfigs:
    """The run folders under --runs-root, each ``run.yaml`` parsed once and again only when
    one of its files changes (a stat of each instead of a parse per request); each read under
    the service's limits (``run.yaml`` and every file a criterion reads)."""

    def __init__(
        self, limits: ServiceLimits | None = None, root: Path | None = None, size: int = 256
    ) -> None:
        self._size = size
        self._limits = (limits or ServiceLimits()).read_limits()
        #: --runs-root: every file run.yaml names (a live events or records file, a database)
        #: must stay in it
        self._root = root
        self._kept: OrderedDict[Path, tuple[tuple[Any, ...], RunConfig]] = OrderedDict()
        self._lock = threading.Lock()

    def run_dir(self, folder: Path, label: str) -> RunDir:
        """The run folder ``folder`` (RunConfigError as RunDir raises it, naming run.yaml as
        the caller named the run folder, ``label``: never the server's path)."""
        stamp = tuple(_stamp(folder / name) for name in RUN_FILES)
        with self._lock:
            kept = self._kept.get(folder)
        if kept is not None and kept[0] == stamp:
            return RunDir(folder, label, kept[1], limits=self._limits, files_root=self._root)
        try:
            run = RunDir(folder, label, limits=self._limits, files_root=self._root)
        except RunConfigError as exc:
            raise RunConfigError(str(exc).replace(str(folder), label)) from None
        with self._lock:
            self._kept[folder] = (stamp, run.config)
            self._kept.move_to_end(folder)
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)
        return run


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


# -- names -----------------------------------------------------------------------------------------
def _relative(name: str, where: str) -> PurePosixPath | None:
    """A safe relative path for an entry name; None for the archive's top (``./``)."""
    shown = json.dumps(name[:200])
    if not name or "\x00" in name or "\\" in name:
        raise Problem(400, f"body sandbox.{where}: entry {shown}: not a '/'-separated path")
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        raise Problem(400, f"body sandbox.{where}: entry {shown}: an absolute path")
    parts = [p for p in PurePosixPath(name).parts if p != "."]
    if ".." in parts:
        raise Problem(400, f"body sandbox.{where}: entry {shown}: '..' leads out of the sandbox")
    return PurePosixPath(*parts) if parts else None


class _Budget:
    """What may still be unpacked: entries, bytes in all and in one entry (the service's
    per-sandbox and per-file limits, the sandbox at most :data:`MAX_UNPACKED`)."""

    def __init__(self, where: str, limits: ServiceLimits) -> None:
        self.where = where
        self.entries = 0
        self.cap = min(MAX_UNPACKED, limits.max_sandbox_size)
        self.left = self.cap
        self.declared = 0
        self.per_file = limits.max_file_size

    def entry(self) -> None:
        self.entries += 1
        if self.entries > MAX_ENTRIES:
            raise Problem(413, f"body sandbox.{self.where}: over {MAX_ENTRIES} entries")

    def take(self, size: int, name: PurePosixPath | str) -> None:
        self.left -= size
        if self.left < 0:
            raise self.over(name)

    def declare(self, size: int, name: str) -> None:
        """An entry's size as its header gives it: refused before any byte is inflated when
        it passes the per-file limit or the sizes declared so far pass the cap (the bytes
        written are still counted)."""
        if size > self.per_file:
            raise self.too_large(name)
        self.declared += size
        if self.declared > self.cap:
            raise self.over(name)

    def written(self, size: int, name: PurePosixPath | str) -> None:
        """One entry has had ``size`` bytes written so far (whatever its header said)."""
        if size > self.per_file:
            raise self.too_large(name)

    def over(self, name: PurePosixPath | str) -> Problem:
        return Problem(
            413,
            f"body sandbox.{self.where}: unpacks to over {shown_size(self.cap)} "
            f"(at {name}; verial serve --max-sandbox-size)",
        )

    def too_large(self, name: PurePosixPath | str) -> Problem:
        return Problem(
            413,
            f"body sandbox.{self.where}: entry {name}: over the per-file limit of "
            f"{shown_size(self.per_file)} (verial serve --max-file-size)",
        )


def _write(target: Path, rel: PurePosixPath, source: IO[bytes], budget: _Budget) -> None:
    """Copy ``source`` into ``target/rel``, a new regular file, counting every byte."""
    path = target.joinpath(*rel.parts)
    _folder(path.parent, rel, budget.where)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        raise Problem(400, f"body sandbox.{budget.where}: entry {rel} is given twice") from None
    except OSError as exc:  # a file where a folder was needed, or the reverse
        raise Problem(
            400, f"body sandbox.{budget.where}: entry {rel}: {exc.strerror or exc}"
        ) from None
    written = 0
    with os.fdopen(fd, "wb") as out:
        while chunk := source.read(_CHUNK):
            budget.take(len(chunk), rel)
            written += len(chunk)
            budget.written(written, rel)
            out.write(chunk)


def _folder(path: Path, rel: PurePosixPath, where: str) -> None:
    """``path`` and its parents as folders; an entry's name taken by a file is the request's
    error (named by the entry, never by the server's temporary path)."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise Problem(
            400, f"body sandbox.{where}: entry {rel}: a file where a folder was needed"
        ) from None
    except OSError as exc:
        raise Problem(400, f"body sandbox.{where}: entry {rel}: {exc.strerror or exc}") from None


# -- archives --------------------------------------------------------------------------------------
def _unpack(archive: ArchiveIn, target: Path, task_names: set[str], limits: ServiceLimits) -> None:
    where = "archive"
    try:
        raw = base64.b64decode(archive.data, validate=True)
    except (binascii.Error, ValueError):
        raise Problem(400, f"body sandbox.{where}.data: not base64") from None
    if len(raw) > MAX_ARCHIVE:
        raise Problem(
            413, f"body sandbox.{where}: over {MAX_ARCHIVE // 1024 // 1024} MiB once decoded"
        )
    budget = _Budget(where, limits)
    try:
        if archive.format == "zip":
            with zipfile.ZipFile(io.BytesIO(raw)) as zf:
                _extract(_zip_entries(zf), target, budget, task_names)
        else:
            with (
                gzip.GzipFile(fileobj=io.BytesIO(raw), mode="rb") as gz,
                tarfile.open(fileobj=_Inflated(gz, budget), mode="r:") as tar,
            ):
                _extract(_tar_entries(tar), target, budget, task_names)
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError, ValueError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise Problem(
            400, f"body sandbox.{where}: not a readable {archive.format}: {reason}"
        ) from None


class _Inflated:
    """A tar.gz's tar stream as tarfile reads it, every byte inflated counted: file data and
    header records alike (a GNU long-name or pax record is read whole into memory by tarfile,
    so one whose header declares 1.5 GB was inflated before any check). A read or a seek that
    would take the stream past the archive's cap is a 413 before a byte of it is inflated."""

    def __init__(self, inner: gzip.GzipFile, budget: _Budget) -> None:
        self._inner = inner
        self._budget = budget

    def _within(self, end: int) -> None:
        if end > self._budget.cap:
            raise Problem(
                413,
                f"body sandbox.{self._budget.where}: inflates to over "
                f"{shown_size(self._budget.cap)}, header records included (verial serve "
                "--max-sandbox-size)",
            )

    def read(self, size: int = -1) -> bytes:
        position = self._inner.tell()
        if size < 0:
            size = self._budget.cap - position + 1
        self._within(position + size)
        return self._inner.read(size)

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        target = offset + (self._inner.tell() if whence == io.SEEK_CUR else 0)
        if whence == io.SEEK_END:
            raise io.UnsupportedOperation("a tar.gz stream has no known end")
        self._within(target)
        return self._inner.seek(target)

    def tell(self) -> int:
        return self._inner.tell()

    def write(self, data: bytes) -> int:
        raise io.UnsupportedOperation("an archive is only read")

    def close(self) -> None:
        """The gzip stream is closed by its own ``with``."""


def _strip_top(names: list[PurePosixPath], task_names: set[str]) -> int:
    """1 when every entry lies under one folder named as the task (then dropped), else 0."""
    tops = {n.parts[0] for n in names}
    if len(tops) == 1 and tops <= task_names and any(len(n.parts) > 1 for n in names):
        return 1
    return 0


@dataclass(frozen=True)
class _Entry:
    """One archive entry as :func:`_extract` sees it, whatever the format."""

    name: str
    link: bool
    #: neither a regular file nor a folder (a device, a FIFO: tar only)
    special: bool
    folder: bool
    #: the size its header declares (the bytes written are counted whatever it says)
    size: int
    #: why its data cannot be read (an encrypted zip entry, an unknown compression), or None
    unreadable: str | None
    #: the entry's data (read when written, counted)
    open: Callable[[], IO[bytes]]


def _tar_entries(tar: tarfile.TarFile) -> Iterator[_Entry]:
    for member in tar:  # headers only: file data is read when written, counted
        special = not (member.isreg() or member.isdir())
        link = member.issym() or member.islnk()
        data = partial(_tar_data, tar, member)
        yield _Entry(member.name, link, special, member.isdir(), member.size, None, data)


def _tar_data(tar: tarfile.TarFile, member: tarfile.TarInfo) -> IO[bytes]:
    source = tar.extractfile(member)
    assert source is not None  # a regular file
    return source


def _zip_entries(zf: zipfile.ZipFile) -> Iterator[_Entry]:
    for info in zf.infolist():
        link = (info.external_attr >> 16) & _S_IFMT == _S_IFLNK
        data = partial(zf.open, info)
        yield _Entry(
            info.filename, link, False, info.is_dir(), info.file_size, _unreadable(info), data
        )


def _unreadable(info: zipfile.ZipInfo) -> str | None:
    if info.flag_bits & 0x1:
        return "encrypted"
    if info.compress_type not in _ZIP_METHODS:
        return f"compression method {info.compress_type} is not supported"
    return None


#: the compression methods zipfile reads (stored, deflate, bzip2, lzma)
_ZIP_METHODS = frozenset(
    {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA}
)


def _extract(
    entries: Iterable[_Entry], target: Path, budget: _Budget, task_names: set[str]
) -> None:
    """Every entry checked (count, path, kind) before any is written, then written, its
    bytes counted; the task's folder at the top is dropped."""
    kept: list[tuple[PurePosixPath, _Entry]] = []
    for entry in entries:
        budget.entry()
        rel = _relative(entry.name, budget.where)
        if entry.link:
            raise Problem(400, f"body sandbox.{budget.where}: entry {entry.name}: a link")
        if entry.special:
            raise Problem(
                400, f"body sandbox.{budget.where}: entry {entry.name}: not a file or folder"
            )
        if entry.unreadable and not entry.folder:
            raise Problem(
                400, f"body sandbox.{budget.where}: entry {entry.name}: {entry.unreadable}"
            )
        budget.declare(entry.size, entry.name)
        if rel is not None:
            kept.append((rel, entry))
    cut = _strip_top([rel for rel, _ in kept], task_names)
    for rel, entry in kept:
        rel = PurePosixPath(*rel.parts[cut:]) if len(rel.parts) > cut else PurePosixPath()
        if entry.folder or not rel.parts:
            _folder(target.joinpath(*rel.parts), rel, budget.where)
            continue
        with entry.open() as source:
            _write(target, rel, source, budget)


# -- inline files ----------------------------------------------------------------------------------
def _write_files(files: dict[str, Any], target: Path, limits: ServiceLimits) -> None:
    budget = _Budget("files", limits)
    if len(files) > MAX_FILES:
        raise Problem(413, f"body sandbox.files: over {MAX_FILES} files")
    for name, content in files.items():
        budget.entry()
        rel = _relative(name, "files")
        if rel is None:
            raise Problem(400, f"body sandbox.files: entry {json.dumps(name)}: not a file path")
        data = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        _write(target, rel, io.BytesIO(data.encode("utf-8")), budget)
