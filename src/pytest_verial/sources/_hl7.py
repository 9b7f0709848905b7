"""Outbound HL7 v2 messages of a sandbox (docs/hl7.md, "The source"): files, SandboxEvent rows,
live capture.

Snapshot layout, under the task's sandbox directory::

    hl7_outbound/*.hl7          one or more messages per file, MLLP-framed or not,
                                segments separated by \\r, \\n or \\r\\n
    hl7_outbound/events.jsonl   SandboxEvent rows {type: "hl7_outbound", payload, created_at}
    events.jsonl                a sandbox-wide SandboxEvent export (other types ignored)

Live: run.yaml ``sources: {hl7: {events: PATH}}`` reads the events file that
``verial hl7-capture`` (or the ``verial_hl7_capture`` fixture) writes; a relative PATH is taken
from the run directory, and ``{task}`` in it is replaced by the task key.

Messages are ordered by ``created_at`` when the rows carry it, else by file name and position;
"latest" is the last one. Rows of other event types are ignored. Rows the capture rejected
(``ack_code: AE`` with an ``error``) are not candidates; they are counted as ``rejected``. A file
or row that cannot be parsed makes the source unreadable (a SourceError naming the file, row
and segment), so the criteria reading it are errors rather than silent misses.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .._errors import SourceError
from .._sandbox_io.confine import is_file, task_root, walk
from .._sandbox_io.jsonfiles import read_bytes
from .._sandbox_io.kept import HL7_MESSAGES
from .._sandbox_io.limits import Reads
from ..hl7._parse import Hl7Message, Hl7ParseError, decode, parse_stream
from ._messages import live_file, oldest_first, rows, stamped

if TYPE_CHECKING:
    from .._contracts.sandbox import Sandbox

EVENT_TYPE = "hl7_outbound"


@runtime_checkable
class Hl7Source(Protocol):
    """What ``hl7-structural`` needs: the outbound messages, oldest first."""

    def messages(self) -> list[Hl7Message]:
        """Every accepted outbound message, oldest first."""
        ...

    def rejected(self) -> list[dict[str, Any]]:
        """Rows recorded with an error (the capture answered AE)."""
        ...


class Hl7Snapshot:
    """Messages read from files and events files; parsed once on first use."""

    def __init__(self, files: list[Path], events: list[Path], reads: Reads | None = None) -> None:
        self.files = files
        self.events = events
        #: the task run's bounded reads (:mod:`pytest_verial._sandbox_io.limits`)
        self.reads = reads or Reads()
        self._messages: list[Hl7Message] | None = None
        self._rejected: list[dict[str, Any]] = []
        self._warnings: list[str] = []

    @classmethod
    def from_task_folder(cls, task_folder: Path, reads: Reads | None = None) -> Hl7Snapshot:
        """The snapshot of a task folder: its ``hl7_outbound/`` files (``*.hl7``, events
        ``*.jsonl``) and a sandbox-wide ``events.jsonl``, read confined to the folder."""
        directory = task_folder / "hl7_outbound"
        root = task_root(task_folder)
        files = walk(directory, root, lambda p: p.suffix == ".hl7")
        events = walk(directory, root, lambda p: p.suffix == ".jsonl")
        if is_file(task_folder / "events.jsonl", root):  # a sandbox-wide SandboxEvent export
            events.append(task_folder / "events.jsonl")
        return cls(files, events, reads or Reads(task_folder))

    def messages(self) -> list[Hl7Message]:
        if self._messages is None:
            self._messages, self._rejected, self._warnings = HL7_MESSAGES.load(
                "hl7", lambda: [*self.files, *self.events], self._read, self.reads
            )
        return self._messages

    def _read(self) -> tuple[list[Hl7Message], list[dict[str, Any]], list[str]]:
        """The messages, the rejected rows and the warnings (kept together by the service:
        :mod:`pytest_verial._sandbox_io.kept`)."""
        self._rejected, self._warnings = [], []
        return self._load(), self._rejected, self._warnings

    def rejected(self) -> list[dict[str, Any]]:
        self.messages()
        return self._rejected

    def warnings(self) -> list[str]:
        """What was ignored while reading, one line each (empty files, bytes outside frames)."""
        self.messages()
        return self._warnings

    def _load(self) -> list[Hl7Message]:
        found: list[Hl7Message] = []
        for path in self.files:
            data = read_bytes(path, self.reads)
            try:
                found.extend(parse_stream(decode(data), str(path), self._warnings))
            except Hl7ParseError as exc:
                raise SourceError(f"invalid HL7: {exc}") from None
        for path in self.events:
            found.extend(self._events(path))
        return oldest_first(found)

    def _events(self, path: Path) -> list[Hl7Message]:
        found = []
        for where, row in rows(path, "an event", self.reads):
            if row.get("type", EVENT_TYPE) != EVENT_TYPE:
                continue
            if row.get("error") or row.get("ack_code") in ("AE", "AR"):
                self._rejected.append(
                    {
                        "origin": where,
                        "error": row.get("error"),
                        "created_at": row.get("created_at"),
                    }
                )
                continue
            payload = row.get("payload")
            if isinstance(payload, dict):  # {payload: {message: "..."}} as some exports nest it
                payload = payload.get("message") or payload.get("payload")
            if not isinstance(payload, str) or not payload.strip():
                raise SourceError(f"{where}: hl7_outbound event has no 'payload' text")
            try:
                found.extend(stamped(parse_stream(payload, where), row))
            except Hl7ParseError as exc:
                raise SourceError(f"invalid HL7: {exc}") from None
        return found


#: run.yaml ``sources.hl7`` keys
SETTINGS = frozenset({"events"})


def from_sandbox(sandbox: Sandbox) -> Hl7Snapshot:
    """The hl7 source of a sandbox: the live events file from run.yaml, else ``hl7_outbound/``."""
    events = live_file(sandbox, "hl7", "events", SETTINGS)
    reads = getattr(sandbox, "reads", None)
    if events:
        return Hl7Snapshot([], [events], reads)
    return Hl7Snapshot.from_task_folder(sandbox.path, reads)
