"""What the ``hl7`` and ``x12`` sources share: both read the messages an agent sent from files
in the task folder and from rows of a JSON Lines file (events, records), a live one named in
run.yaml when set, and hand them over oldest first.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from .._errors import SourceError
from .._sandbox_io.jsonfiles import iter_jsonl_lines
from .._sandbox_io.limits import Reads

if TYPE_CHECKING:
    from .._contracts.sandbox import Sandbox


class Sent(Protocol):
    """A parsed message or transaction, stamped with its row's ``created_at`` when it has one."""

    created_at: str | None


S = TypeVar("S", bound=Sent)


def live_file(sandbox: Sandbox, source: str, key: str, known: frozenset[str]) -> Path | None:
    """The file run.yaml's ``sources.<source>.<key>`` names for this task run (``{task}``
    replaced by the task key, a relative path taken from the run folder); None when unset, a
    SourceError when no such file exists."""
    from .._contracts.sandbox import fill_template, setting_text

    value = setting_text(sandbox, source, sandbox.settings(source, known), key)
    if not value:
        return None
    path = Path(fill_template(sandbox, source, key, value, {"task": sandbox.task_key}))
    if not path.is_absolute():
        path = sandbox.run.path / path
    confined(sandbox, path, f"run.yaml sources.{source}.{key}")
    if not path.is_file():
        raise SourceError(f"{source} {key} file {path} (run.yaml sources.{source}.{key}) not found")
    return path


def confined(sandbox: Sandbox, path: Path, setting: str) -> None:
    """A file run.yaml names stays inside the run's ``files_root`` when it has one (the
    service's --runs-root: run.yaml is written with the run folder, not by the operator); a
    SourceError naming the setting, never the path, otherwise."""
    root = getattr(getattr(sandbox, "run", None), "files_root", None)
    if root is None:
        return
    real = Path(os.path.realpath(path))
    if not (real == root or real.is_relative_to(root)):
        raise SourceError(f"{setting}: names a file outside --runs-root; refused")


def rows(path: Path, what: str, reads: Reads | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(path:line, row)`` for each row of a JSON Lines file, streamed; a row that is not an
    object is a SourceError: ``expected <what> object``."""
    for lineno, row in iter_jsonl_lines(path, reads):  # blank lines skipped, still counted
        where = f"{path}:{lineno}"
        if not isinstance(row, dict):
            raise SourceError(f"{where}: expected {what} object, found {type(row).__name__}")
        yield where, row


def stamped(sent: list[S], row: dict[str, Any]) -> list[S]:
    """``sent``, each given the row's ``created_at`` (as text; None without one)."""
    created = row.get("created_at")
    for item in sent:
        item.created_at = str(created) if created is not None else None
    return sent


def oldest_first(sent: Sequence[S]) -> list[S]:
    """By ``created_at`` when any row carried one, else as read (file name and position).
    Stable: messages without a time keep their place relative to each other."""
    if any(s.created_at for s in sent):
        return sorted(sent, key=lambda s: s.created_at or "")
    return list(sent)
