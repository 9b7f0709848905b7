"""X12 EDI responses of a sandbox (docs/x12.md, "The source").

Snapshot layout, under the task's sandbox directory::

    x12/*.x12 (.edi, .txt)   X12 interchanges; every transaction set in them is a response
    x12/records.jsonl        {transaction, request, response[, created_at]} rows, as Verial's
                             X12 simulator records them; ``response`` is the X12 text

Live: run.yaml ``sources: {x12: {records: PATH}}`` reads a records file (relative to the run
directory, ``{task}`` replaced by the task key).

Transactions are ordered by ``created_at`` when records carry it, else by file name and
position. A file or record that cannot be read as X12 makes the source unreadable: a
SourceError naming the file (or record line) and the segment. Envelope problems are kept on
each transaction for the evidence.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from .._errors import SourceError
from .._sandbox_io.confine import task_root, walk
from .._sandbox_io.jsonfiles import read_text
from .._sandbox_io.limits import Reads
from ..x12._envelope import Transaction, parse_interchanges
from ..x12._tokenizer import X12ParseError
from ._messages import live_file, oldest_first, rows, stamped

if TYPE_CHECKING:
    from .._contracts.sandbox import Sandbox

SUFFIXES = (".x12", ".edi", ".txt")


@runtime_checkable
class X12Source(Protocol):
    """What ``x12-response`` needs: every response transaction, oldest first."""

    def transactions(self) -> list[Transaction]:
        """Every transaction set found, oldest first."""
        ...


def parse_x12_text(text: str, origin: str) -> list[Transaction]:
    """Transactions of one X12 text; a SourceError naming ``origin`` when unreadable."""
    try:
        return parse_interchanges(text, origin)
    except X12ParseError as exc:
        raise SourceError(f"invalid X12: {origin}: {exc}") from None


class X12Snapshot:
    """Transactions read from files and records files; parsed once on first use."""

    def __init__(self, files: list[Path], records: list[Path], reads: Reads | None = None) -> None:
        self.files = files
        self.records = records
        #: the task run's bounded reads (:mod:`pytest_verial._sandbox_io.limits`)
        self.reads = reads or Reads()
        self._transactions: list[Transaction] | None = None

    @classmethod
    def from_folder(cls, directory: Path, reads: Reads | None = None) -> X12Snapshot:
        """The snapshot of a task folder's ``x12/`` directory: its X12 files and ``*.jsonl``
        records, read confined to the task folder."""
        root = task_root(directory.parent)
        files = walk(directory, root, lambda p: p.suffix.lower() in SUFFIXES)
        records = walk(directory, root, lambda p: p.suffix == ".jsonl")
        return cls(files, records, reads or Reads(directory.parent))

    def transactions(self) -> list[Transaction]:
        if self._transactions is None:
            self._transactions = self._load()
        return self._transactions

    def _load(self) -> list[Transaction]:
        found: list[Transaction] = []
        for path in self.files:
            text = read_text(path, self.reads)
            if not text.strip():
                size = "0 bytes" if not text else "only blank space"
                raise SourceError(f"invalid X12: {path}: empty file ({size}): no interchange in it")
            found.extend(parse_x12_text(text, str(path)))
        for path in self.records:
            found.extend(self._records(path))
        return oldest_first(found)

    def _records(self, path: Path) -> list[Transaction]:
        found = []
        for where, row in rows(path, "a record", self.reads):
            response = row.get("response")
            if response is None:
                continue  # a request still waiting for its response
            if not isinstance(response, str):
                raise SourceError(
                    f"{where}: 'response' must be the X12 text, found {type(response).__name__}"
                )
            found.extend(stamped(parse_x12_text(response, f"{where} response"), row))
        return found


#: run.yaml ``sources.x12`` keys
SETTINGS = frozenset({"records"})


def from_sandbox(sandbox: Sandbox) -> X12Snapshot:
    """The x12 source of a sandbox: a live records file from run.yaml, else ``x12/``."""
    records = live_file(sandbox, "x12", "records", SETTINGS)
    reads = getattr(sandbox, "reads", None)
    if records:
        return X12Snapshot([], [records], reads)
    return X12Snapshot.from_folder(sandbox.path / "x12", reads)
