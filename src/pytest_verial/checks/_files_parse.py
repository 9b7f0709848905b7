"""Decoding and parsing the content of one file for ``sftp-file-present``.

``parse`` kinds and how ``fields`` paths address them:

==========  ===========================================================================
``json``    the document; dotted 0-based paths as elsewhere (``claims.0.claim_id``)
``ndjson``  a list, one item per non-blank line (``0.claim_id``); ``.jsonl`` too
``csv``     a list of rows keyed by the header (``row.column``: ``0.claim_id``); every
            cell is text; a row with more or fewer cells than the header is an error
``text``    ``{"text": ..., "lines": [...]}`` (``text``, ``lines.0``)
``hl7``     HL7 v2 paths (``PID.5.1``, ``OBX[2].5``) on the file's first message, through the
            hl7-structural check's path code
``x12``     X12 paths (``EB01``, ``STC01-2``, ``EB[2].EB03``) on the file's first transaction,
            through the x12-response check's path code
==========  ===========================================================================

In json/ndjson/csv/text documents a ``*`` segment collects over a list or object:
``*.claim_id`` is the list of every row's ``claim_id`` (use ``op: contains`` or ``in``).

Bad content is a :class:`~pytest_verial._errors.SourceError` naming the file and, where known,
the line: invalid JSON, a ragged or unterminated CSV, binary data where text is expected, an
empty file where a document is expected.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._compare import MISSING
from .._errors import CheckError, SourceError
from .._paths import resolve
from .._safeparse import DataError, load_json

PARSE_KINDS = ("json", "ndjson", "csv", "text", "hl7", "x12")
#: file extension -> parse kind, used when ``parse`` is not given but content is needed
BY_EXTENSION = {
    "json": "json",
    "ndjson": "ndjson",
    "jsonl": "ndjson",
    "csv": "csv",
    "txt": "text",
    "md": "text",
    "hl7": "hl7",
    "x12": "x12",
    "edi": "x12",
}

Resolver = Callable[[Any, str], Any]


@dataclass(frozen=True)
class Parsed:
    """A parsed file: the document, how paths resolve in it, and its row count if any."""

    doc: Any
    resolver: Resolver
    rows: int | None = None
    wildcards: bool = True

    def get(self, path: str) -> Any:
        """The value at ``path``, or ``MISSING``."""
        if self.wildcards and "*" in path.split("."):
            return _collect(self.doc, path.split("."), self.resolver)
        return self.resolver(self.doc, path)


def _collect(doc: Any, parts: list[str], resolver: Resolver) -> Any:
    star = parts.index("*")
    head, tail = ".".join(parts[:star]), parts[star + 1 :]
    container = resolver(doc, head) if head else doc
    if isinstance(container, dict):
        items = list(container.values())
    elif isinstance(container, list):
        items = container
    else:
        return MISSING
    if not tail:
        return items
    values = []
    for item in items:
        value = _collect(item, tail, resolver) if "*" in tail else resolver(item, ".".join(tail))
        if value is not MISSING:
            values.append(value)
    return values


def decode(data: bytes, where: str) -> str:
    """UTF-8 text (a BOM is dropped); binary data is a SourceError naming the file."""
    if b"\x00" in data[:8192]:
        raise SourceError(f"{where}: binary data where text was expected (NUL byte found)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SourceError(f"{where}: not UTF-8 text (invalid byte at offset {exc.start})") from None


def parse(kind: str, data: bytes, where: str, delimiter: str = ",") -> Parsed:
    """Parse ``data`` as ``kind``: the one place each format is dispatched."""
    text = decode(data, where)
    if kind in ("hl7", "x12"):
        return _structured(kind, text, where)
    if kind == "text":
        lines = text.splitlines()
        return Parsed({"text": text, "lines": lines}, resolve, len(lines))
    if not text.strip():
        expected = {"json": "a JSON document", "ndjson": "JSON lines", "csv": "a CSV header row"}
        raise SourceError(f"{where}: empty file, expected {expected[kind]}")
    if kind == "json":
        doc = _json(text, where)
        return Parsed(doc, resolve, len(doc) if isinstance(doc, list) else None)
    if kind == "ndjson":
        rows = _ndjson(text, where)
        return Parsed(rows, resolve, len(rows))
    if kind == "csv":
        rows = _csv(text, where, delimiter)
        return Parsed(rows, resolve, len(rows))
    raise CheckError(f"unknown parse kind {kind!r}; use one of {', '.join(PARSE_KINDS)}")


def _json(text: str, where: str) -> Any:
    try:
        return load_json(text, where)
    except DataError as exc:
        raise SourceError(str(exc)) from None


def _ndjson(text: str, where: str) -> list[Any]:
    rows = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                rows.append(load_json(line, where))
            except DataError as exc:
                raise SourceError(f"{where}:{lineno}: {_line_problem(exc)}") from None
    return rows


def _csv(text: str, where: str, delimiter: str) -> list[dict[str, str]]:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    try:
        header = next(reader, None)
        while header is not None and not any(cell.strip() for cell in header):
            header = next(reader, None)
        if header is None:
            raise SourceError(f"{where}: empty file, expected a CSV header row")
        header = [cell.strip() for cell in header]
        duplicated = sorted({c for c in header if header.count(c) > 1})
        if duplicated:
            raise SourceError(f"{where}:{reader.line_num}: CSV header repeats columns {duplicated}")
        rows = []
        for row in reader:
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            if len(row) != len(header):
                raise SourceError(
                    f"{where}:{reader.line_num}: CSV row has {len(row)} fields, "
                    f"the header has {len(header)}"
                )
            rows.append(dict(zip(header, row, strict=True)))
    except csv.Error as exc:
        raise SourceError(f"{where}:{reader.line_num}: invalid CSV: {exc}") from None
    return rows


def _structured(kind: str, text: str, where: str) -> Parsed:
    """HL7 v2 / X12 through the hl7-structural and x12-response packages.

    ``parse_stream`` / ``parse_interchanges`` give the file's messages / transactions and
    ``get(item, path)`` reads a path, exactly as in those checks. Fields read the *first*
    message or transaction of the file; ``$rows`` counts them.
    """
    split: Callable[[str, str], Any]
    get: Callable[[Any, str], Any]
    if kind == "hl7":
        from ..hl7._parse import parse_stream
        from ..hl7._paths import get as get_hl7

        split, get = parse_stream, get_hl7
    else:
        from ..x12 import get as get_x12
        from ..x12 import parse_interchanges

        split, get = parse_interchanges, get_x12
    try:
        items = list(split(text, where))
    except ValueError as exc:  # Hl7ParseError / X12ParseError name the origin themselves
        message = str(exc)
        raise SourceError(message if where in message else f"{where}: {message}") from None
    if not items:
        unit = "message" if kind == "hl7" else "transaction"
        raise SourceError(f"{where}: no {kind.upper()} {unit} found")

    def resolver(doc: Any, path: str) -> Any:
        try:
            return get(doc[0], path)
        except ValueError as exc:  # Hl7PathError / X12PathError
            raise CheckError(f"{kind} path {path!r}: {exc}") from None

    return Parsed(items, resolver, len(items), wildcards=False)


def _line_problem(exc: DataError) -> str:
    """A JSON Lines row's problem: syntax errors read "invalid JSON line: ..."."""
    return exc.problem.replace("invalid JSON:", "invalid JSON line:", 1)
