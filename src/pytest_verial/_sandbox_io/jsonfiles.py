"""Reading JSON, JSON Lines and YAML data files with errors that name the file and line.

Every read is bounded (:mod:`.limits`): ``reads`` is the task run's sandbox's budget, whose
per-file and per-sandbox limits are checked before a file is read; without one, a file is read
under the default limits on its own.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .._errors import SourceError
from .._safeparse import DataError, load_json
from .limits import Reads


def read_bytes(path: Path, reads: Reads | None = None) -> bytes:
    """The file's bytes; an unreadable file, or one over a limit, is a SourceError naming
    it."""
    return (reads or Reads()).read_bytes(path)


def read_text(path: Path, reads: Reads | None = None) -> str:
    """The file as UTF-8 text; a binary or unreadable file is a SourceError naming it."""
    data = read_bytes(path, reads)
    if b"\x00" in data[:8192]:
        raise SourceError(f"{path}: binary data where text was expected")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SourceError(f"{path}: not UTF-8 text (byte {exc.start})") from None


def read_json(path: Path, reads: Reads | None = None) -> Any:
    """Parse a JSON file; errors name the file, line and column."""
    text = read_text(path, reads)
    if not text.strip():
        size = "0 bytes" if not text else "only blank space"
        raise SourceError(f"{path}: empty file ({size}): no JSON in it")
    try:
        return load_json(text, str(path))
    except DataError as exc:
        raise SourceError(exc.located()) from None


def iter_jsonl(path: Path, reads: Reads | None = None) -> Iterator[Any]:
    """Parse a JSON Lines file one line at a time; blank lines are skipped."""
    for _, row in iter_jsonl_lines(path, reads):
        yield row


def iter_jsonl_lines(path: Path, reads: Reads | None = None) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` of each line of a JSON Lines file, streamed (a line at a time,
    the file admitted by its size first); blank lines are skipped. Errors name the file and
    the line."""
    budget = reads or Reads()
    handle = io.TextIOWrapper(budget.open(path), encoding="utf-8-sig")
    with handle:
        lineno = 0
        try:
            for lineno, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    row = load_json(line, str(path))
                except DataError as exc:
                    raise SourceError(f"{path}:{lineno}: {_line_problem(exc)}") from None
                yield lineno, row
        except UnicodeDecodeError:
            where = _first_bad_line(path, budget) or lineno + 1
            raise SourceError(f"{path}:{where}: not UTF-8 text") from None


def _first_bad_line(path: Path, reads: Reads) -> int | None:
    """The number of the first line that is not UTF-8 (text is decoded in blocks, so the
    lines read before the error may stop short of it), None when the file cannot be read.
    Lines end as the text reader ends them: ``\n``, ``\r\n`` or a lone ``\r``."""
    lineno = 0
    try:
        with reads.open(path) as handle:
            for raw in handle:
                body = raw[:-2] if raw.endswith(b"\r\n") else raw.rstrip(b"\n")
                for piece in body.split(b"\r"):  # a byte of a UTF-8 sequence is never \r
                    lineno += 1
                    try:
                        piece.decode("utf-8")
                    except UnicodeDecodeError:
                        return lineno
    except (OSError, SourceError):
        return None
    return None


def _line_problem(exc: DataError) -> str:
    """A JSON Lines row's problem: syntax errors read "invalid JSON line: ..."."""
    return exc.detail().replace("invalid JSON:", "invalid JSON line:", 1)
