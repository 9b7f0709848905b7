"""Every file pytest-verial writes goes through here: checked first, then written atomically.

The rule (README, "An output that cannot be written"): an output is a regular file, never a
device, named pipe, socket or folder; never an input of the same command or session (benchmark
files, anything inside a run folder, shards, journals, baselines, resumed reports, the report a
command reads) nor a session's journal; and two outputs never name one file. Paths are compared
as the file system sees them: symbolic links and ``..`` resolved (:func:`os.path.realpath`), and
an existing file by its device and inode, so a hard link or a bind mount is the same file.

- :func:`check_outputs` refuses, before any work is done, with :class:`OutputRefused` (a
  ``ValueError`` whose message is one line, starting with the output's label). The plugin turns
  it into a usage error (exit 4); the ``verial`` commands print it and exit 4.
- :func:`write_text_atomic` replaces a file with new text: a temporary file in the target's own
  folder (the real one, when the path is a symbolic link), fsynced, then renamed over the target,
  so a reader sees the old file or the new one, never a part. It refuses a target that is not a
  regular file, however it got there since the check.
- :func:`open_append` opens a file to append to (the journal, ``$GITHUB_STEP_SUMMARY``) and
  verifies on the open descriptor that it is a regular file; :func:`append_text` appends with one
  ``O_APPEND`` write and cuts a failed write back off.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

#: the exit status of a ``verial`` command that refuses an output (pytest's usage error is 4 too)
EXIT_REFUSED = 4

#: the first bytes of a pytest-verial journal (``journal.py`` writes the schema key first)
_JOURNAL_HEAD = b'{"journal": "pytest-verial/journal/'


class OutputRefused(ValueError):
    """An output path that must not be written; the message is one line naming it."""


class Output(NamedTuple):
    """One file a command or session will write.

    ``mode``: ``"replace"`` (written by :func:`write_text_atomic`), ``"append"``
    (:func:`open_append`), ``"journal"`` (appended to, and may already be a journal: its own, left
    by a crashed session), ``"foreign"`` (written by someone else, pytest's ``--junitxml``, which
    opens the path: only compared with the inputs and the other outputs).
    """

    label: str
    path: Path | str | None
    mode: str = "replace"


class _Key(NamedTuple):
    real: Path
    inode: tuple[int, int] | None


def _key(path: Path | str) -> _Key:
    real = Path(os.path.realpath(os.path.expanduser(str(path))))
    try:
        st = os.stat(real)
    except OSError:
        return _Key(real, None)
    return _Key(real, (st.st_dev, st.st_ino))


def _kind(mode: int) -> str:
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a file"


def _special(label: str, shown: Path | str, real: Path) -> OutputRefused | None:
    """The refusal when ``real`` exists and is not a regular file."""
    try:
        st = os.stat(real)
    except OSError:
        return None
    if stat.S_ISDIR(st.st_mode):
        return OutputRefused(f"{label}: {shown} is a directory, not a file")
    if not stat.S_ISREG(st.st_mode):
        return OutputRefused(
            f"{label}: {shown} is not a regular file ({_kind(st.st_mode)}); refusing to replace it"
        )
    return None


def _is_journal(real: Path) -> bool:
    try:
        with real.open("rb") as handle:
            return handle.read(len(_JOURNAL_HEAD)) == _JOURNAL_HEAD
    except OSError:
        return False


def _how(path: Path | str, key: _Key, shown: Path | str, other: _Key) -> str:
    """``is``, or ``is a link to`` / ``is a hard link to`` when the names differ."""
    if os.path.abspath(os.path.expanduser(path)) == os.path.abspath(os.path.expanduser(shown)):
        return "is"
    if key.real == other.real:
        return "is a link to"
    return "is a hard link to"


def _inside(
    key: _Key, folders: list[tuple[str, Path | str, _Key]]
) -> tuple[str, Path | str] | None:
    """The input folder holding ``key`` (by path, or by an ancestor's device and inode)."""
    ancestors: set[tuple[int, int]] = set()
    for parent in key.real.parents:
        try:
            st = os.stat(parent)
        except OSError:
            continue
        ancestors.add((st.st_dev, st.st_ino))
    for label, shown, folder in folders:
        if key.real.is_relative_to(folder.real):
            return label, shown
        if folder.inode is not None and folder.inode in ancestors:
            return label, shown
    return None


def check_outputs(
    outputs: Iterable[Output | tuple[str, Path | str | None]],
    inputs: Iterable[tuple[str, Path | str | None]] = (),
) -> None:
    """Refuse (:class:`OutputRefused`, one line) outputs that must not be written.

    ``outputs``: (label, path[, mode]) for each file about to be written, ``None`` paths skipped.
    ``inputs``: (what it is, path) for each file or folder read; an output inside an input folder
    is refused too. Then each output's folder is created and probed with a temporary file, so a
    folder nothing can be created in (read-only, ``/proc``) is refused now, not after the work.
    """
    files: list[tuple[str, Path | str, _Key]] = []
    folders: list[tuple[str, Path | str, _Key]] = []
    for what, path in inputs:
        if path is None:
            continue
        key = _key(path)
        (folders if key.real.is_dir() else files).append((what, path, key))
    seen: list[tuple[str, Path | str, _Key]] = []
    probe: list[tuple[str, Path]] = []
    for item in outputs:
        label, path, mode = Output(*item)
        if path is None:
            continue
        key = _key(path)
        for other_label, _shown, other in seen:
            if key.real == other.real or (key.inode is not None and key.inode == other.inode):
                raise OutputRefused(f"{other_label} and {label} name the same file {path}")
        for what, shown, other in files:
            if key.real == other.real or (key.inode is not None and key.inode == other.inode):
                raise OutputRefused(
                    f"{label}: {path} {_how(path, key, shown, other)} {what} {shown}, an input: "
                    "refusing to overwrite it"
                )
        folder = _inside(key, folders)
        if folder is not None:
            where = "is" if key.real == _key(folder[1]).real else "is inside"
            raise OutputRefused(
                f"{label}: {path} {where} {folder[0]} {folder[1]}, an input: "
                "refusing to write into it"
            )
        seen.append((label, path, key))
        if mode == "foreign":
            continue
        special = _special(label, path, key.real)
        if special is not None:
            raise special
        if mode != "journal" and _is_journal(key.real):
            raise OutputRefused(
                f"{label}: {path} is a pytest-verial journal (a session's results until its "
                "report is written): refusing to overwrite it"
            )
        for parent in key.real.parents:
            if parent.exists():
                if not parent.is_dir():
                    raise OutputRefused(f"{label}: {parent} is a file, not a directory")
                break
        probe.append((label, key.real))
    for label, real in probe:
        _probe(label, real)


def refused(
    command: str,
    outputs: Iterable[Output | tuple[str, Path | str | None]],
    inputs: Iterable[tuple[str, Path | str | None]] = (),
) -> bool:
    """:func:`check_outputs` for a ``verial`` command: False when every output may be written;
    else True, with the one line printed on stderr (``verial COMMAND: ...``); the command then
    exits with :data:`EXIT_REFUSED`."""
    import sys

    from .._display import escape

    try:
        check_outputs(outputs, inputs)
    except OutputRefused as exc:
        print(f"verial {command}: {escape(str(exc))}", file=sys.stderr)
        return True
    return False


def _probe(label: str, real: Path) -> None:
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".probe", dir=real.parent)
        os.close(fd)
        os.unlink(name)
    except OSError as exc:
        raise OutputRefused(
            f"{label}: cannot write in {real.parent}: {exc.strerror or exc}"
        ) from None


def write_text_atomic(path: Path | str, text: str) -> Path:
    """Replace ``path`` with ``text`` (UTF-8) atomically; the real path written.

    :class:`OutputRefused` when the target is a folder, a device, a pipe or a socket (a rename
    would replace it); ``OSError`` when the write fails, with the temporary file removed.
    """
    return write_chunks_atomic(path, (text,))


def write_chunks_atomic(path: Path | str, chunks: Iterable[str]) -> Path:
    """:func:`write_text_atomic` of the text ``chunks`` make, written as each is made (a
    report streamed one task run at a time: the whole text is never in memory). An exception
    raised while making them removes the temporary file, as a failed write does."""
    real = Path(os.path.realpath(os.path.expanduser(str(path))))
    refused = _special("cannot write", path, real)
    if refused is not None:
        raise refused
    real.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tmp", dir=real.parent)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)  # as open() would; mkstemp makes it owner-only
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            for chunk in chunks:
                handle.write(chunk)
            handle.flush()
            os.fsync(handle.fileno())
        refused = _special("cannot write", path, real)  # replaced by a device meanwhile?
        if refused is not None:
            raise refused
        os.replace(tmp, real)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return real


def open_append(path: Path | str) -> int:
    """A descriptor open for appending to ``path`` (created if missing), a regular file.

    The type is checked on the open descriptor, so a path swapped for a device or a pipe after
    :func:`check_outputs` is refused all the same (:class:`OutputRefused`); a named pipe is
    opened without blocking, so it cannot hang the caller.
    """
    real = Path(os.path.realpath(os.path.expanduser(str(path))))
    refused = _special("cannot append", path, real)
    if refused is not None:
        raise refused
    real.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    try:
        fd = os.open(real, flags, 0o666)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a named pipe with no reader
            raise OutputRefused(
                f"cannot append: {path} is not a regular file (a named pipe)"
            ) from None
        raise
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise OutputRefused(
            f"cannot append: {path} is not a regular file ({_kind(mode)}); refusing to write it"
        )
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    return fd


def append_text(path: Path | str, text: str) -> Path:
    """Append ``text`` (UTF-8) to the regular file ``path``; the real path written.

    One ``O_APPEND`` write: other writers appending to the same file (a CI step's own lines)
    keep theirs, which replacing the file would lose. A failed write (disk full) is cut back
    off, so the file is as it was.
    """
    fd = open_append(path)
    try:
        start = os.fstat(fd).st_size
        data = text.encode("utf-8")
        try:
            while data:
                data = data[os.write(fd, data) :]
        except OSError:
            os.ftruncate(fd, start)
            raise
    finally:
        os.close(fd)
    return Path(os.path.realpath(path))
