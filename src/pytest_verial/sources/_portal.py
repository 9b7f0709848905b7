"""Payer-portal state rows: ``portal/<resource>.json|.jsonl`` and ``portal.sqlite`` tables.

``<resource>.json`` holds a list of rows (or ``{"rows": [...]}`` / ``{"data": [...]}``, or one
row object); ``.jsonl`` one row per line. In SQLite, every table is a resource; TEXT columns
that hold a JSON object or array are parsed, so paths can reach inside them
(``payload.diagnosis_codes.0``). A live portal database is named in run.yaml as
``sources: {portal: {database_url_env: PORTAL_DB_URL}}`` (``sqlite:///path`` URLs).
"""

from __future__ import annotations

import os
import re
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .._errors import RunConfigError, SourceError
from .._safeparse import DataError, load_json
from .._sandbox_io.confine import inside, is_dir, is_file, task_root
from .._sandbox_io.jsonfiles import iter_jsonl, read_json
from .._sandbox_io.limits import Reads
from .._secrets import register_setting

if TYPE_CHECKING:
    from .._contracts.sandbox import Sandbox

Row = dict[str, Any]


@runtime_checkable
class PortalSource(Protocol):
    """What ``portal-state-match`` needs from a portal."""

    def tables(self) -> list[str]:
        """Names of the resources (tables) that exist."""
        ...

    def rows(self, resource: str) -> list[Row] | None:
        """The rows of ``resource``, or None when it does not exist."""
        ...


class PortalSnapshot:
    """Portal rows captured in a sandbox directory; each table read once, on first use."""

    def __init__(
        self,
        directory: Path,
        sqlite_files: list[Path] | None = None,
        *,
        files: bool = True,
        reads: Reads | None = None,
    ) -> None:
        self.directory = directory
        #: the task run's bounded reads (:mod:`pytest_verial._sandbox_io.limits`)
        self.reads = reads or Reads(directory.parent)
        #: False for a live database: it replaces the snapshot, files do not shadow it
        self.read_files = files
        #: the task folder nothing is read outside of (a live database is named, not confined)
        self.root = task_root(directory.parent)
        candidates = sqlite_files if sqlite_files is not None else [directory / "portal.sqlite"]
        self.sqlite_files = [
            p for p in candidates if (is_file(p, self.root) if files else p.is_file())
        ]
        self._cache: dict[str, list[Row] | None] = {}

    def _files(self) -> dict[str, Path]:
        if not self.read_files or not is_dir(self.directory, self.root):
            return {}
        found: dict[str, Path] = {}
        for path in sorted(self.directory.iterdir()):
            if path.suffix in (".json", ".jsonl") and inside(path, self.root).is_file():
                found.setdefault(path.stem, path)
        return found

    def tables(self) -> list[str]:
        names = set(self._files())
        for db in self.sqlite_files:
            self.reads.check_size(db)
            names.update(_sqlite_tables(db))
        return sorted(names)

    def rows(self, resource: str) -> list[Row] | None:
        if resource not in self._cache:
            self._cache[resource] = self._load(resource)
        return self._cache[resource]

    def _load(self, resource: str) -> list[Row] | None:
        file = self._files().get(resource)
        if file is not None:
            return _rows_from_file(file, self.reads)
        for db in self.sqlite_files:
            self.reads.check_size(db)  # a database is read by SQLite: its size, before it
            if resource in _sqlite_tables(db):
                return _sqlite_rows(db, resource)
        return None


def _rows_from_file(path: Path, reads: Reads) -> list[Row]:
    if path.suffix == ".jsonl":
        rows = list(iter_jsonl(path, reads))
    else:
        data = read_json(path, reads)
        if isinstance(data, dict):
            data = data.get("rows", data.get("data", [data]))
        rows = data
    if not isinstance(rows, list):
        raise SourceError(f"{path}: expected a list of rows, found {type(rows).__name__}")
    for index, row in enumerate(rows):
        if not isinstance(row, dict):
            raise SourceError(f"{path}: row {index} is a {type(row).__name__}, not an object")
    return rows


def _connect(path: Path) -> sqlite3.Connection:
    try:
        return sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise SourceError(f"{path}: cannot open SQLite database: {exc}") from None


def _sqlite_tables(path: Path) -> list[str]:
    conn = _connect(path)
    try:
        cursor = conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
        return [name for (name,) in cursor if not name.startswith("sqlite_")]
    except sqlite3.DatabaseError as exc:
        raise SourceError(f"{path}: not a readable SQLite database: {exc}") from None
    finally:
        conn.close()


def _sqlite_rows(path: Path, table: str) -> list[Row]:
    conn = _connect(path)
    conn.row_factory = sqlite3.Row
    try:
        quoted = '"' + table.replace('"', '""') + '"'
        return [
            {key: _maybe_json(row[key]) for key in row.keys()}  # noqa: SIM118 - sqlite3.Row
            for row in conn.execute(f"SELECT * FROM {quoted}")  # noqa: S608 - name from sqlite_master
        ]
    except sqlite3.DatabaseError as exc:
        raise SourceError(f"{path}: cannot read table {table!r}: {exc}") from None
    finally:
        conn.close()


def _maybe_json(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, str) and value[:1] in ("{", "[") and value[-1:] in ("}", "]"):
        try:
            return load_json(value, "")
        except DataError:  # not JSON (or refused: too deep, NaN, huge ints): keep the text
            return value
    return value


#: run.yaml ``sources.portal`` keys
SETTINGS = frozenset({"database_url", "database_url_env"})


def from_sandbox(sandbox: Sandbox) -> PortalSnapshot:
    """The portal source of a sandbox: a live SQLite database from run.yaml, else the snapshot."""
    from .._contracts.sandbox import setting_text
    from ._messages import confined

    settings = sandbox.settings("portal", SETTINGS)
    url = setting_text(sandbox, "portal", settings, "database_url")
    env = setting_text(sandbox, "portal", settings, "database_url_env")
    if env:
        url = register_setting("database_url_env", os.environ.get(env))
        if not url:
            raise RunConfigError(f"run.yaml sources.portal.database_url_env: ${env} is not set")
    if url:
        match = re.fullmatch(r"sqlite:///(.+)", url)
        if not match:
            raise RunConfigError("sources.portal: only sqlite:///PATH database URLs are supported")
        db = Path(match.group(1))
        if not db.is_absolute():
            db = sandbox.run.path / db
        confined(sandbox, db, "run.yaml sources.portal.database_url")
        if not db.is_file():
            raise SourceError(f"sources.portal: live database {db} does not exist")
        return PortalSnapshot(
            sandbox.path / "portal",
            sqlite_files=[db],
            files=False,
            reads=getattr(sandbox, "reads", None),
        )
    directory = sandbox.path / "portal"
    return PortalSnapshot(
        directory,
        [directory / "portal.sqlite", sandbox.path / "portal.sqlite"],
        reads=getattr(sandbox, "reads", None),
    )
