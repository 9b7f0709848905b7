"""An append-only journal of criterion runs beside the JSON report, and recovery from it.

A session that dies without reaching ``pytest_sessionfinish`` (``os._exit`` in a check, an
out-of-memory kill, SIGKILL, a power cut) writes no report. So that it loses at most the task
run in flight, the controller appends every criterion run it receives to
``<report>.journal.jsonl``: a header line (the benchmark files with their SHA-256, the run
directories, the selected node ids, the settings that shape the report), then one JSON line per
criterion run. Each line reaches the kernel with one ``write`` as it arrives (a crash of the
process loses nothing written); the file is fsynced in batches (issue 33): at a boundary after
every :data:`BATCH_TASK_RUNS` completed task runs, or when a criterion run arrives
:data:`BATCH_SECONDS` or more after the last boundary, whichever comes first, and at the end of
the session (a crash of the machine loses at most the task runs completed since the last
boundary). The journal is removed once the final report is written. Lines pass through the same
redaction as the report.

:func:`recover` rebuilds the report from a journal with the same
:func:`~pytest_verial.reporting._build.build_report` the session uses: completed task runs
keep their scores, the task run in flight is ``cancelled``, and ``session.recovered`` says
where it came from (README, "Interrupted and crashed runs"). A torn last line (a crash
mid-write) is ignored; any other damage is refused with the line it is on.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import socket
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._config.run_folder import RunDir
from .._engine import now_iso
from .._errors import BenchmarkFileError, RunConfigError
from .._loader import BenchmarkPlan, load_benchmark
from .._secrets import redact_json
from .._version import __version__
from ._outputs import open_append
from ._seal import check_link, link

if TYPE_CHECKING:  # the result models load when a journal is read, not while one is written
    from .._results import Report

JOURNAL_SCHEMA = "pytest-verial/journal/v3"
#: the journal of the previous release: its criterion runs' evidence has the v2 keys
#: (:func:`pytest_verial._evidence.evidence_from_v2` converts them once its digests check out)
JOURNAL_V2 = "pytest-verial/journal/v2"


#: a batch boundary after this many completed task runs ...
BATCH_TASK_RUNS = 100
#: ... or when a criterion run arrives this many seconds after the last boundary
BATCH_SECONDS = 1.0


def journal_path(report: Path) -> Path:
    """Where the journal of a report lives: ``<report>.journal.jsonl`` beside it."""
    return report.with_name(report.name + ".journal.jsonl")


def report_of_journal(journal: Path) -> Path | None:
    """The report a journal belongs to, by the journal's own name (never by its content):
    ``<report>.journal.jsonl``, also moved aside as ``….kept``; None for any other name."""
    cut = journal.name.rfind(".journal.jsonl")
    return journal.with_name(journal.name[:cut]) if cut > 0 else None


def journal_inputs(header: dict[str, Any]) -> list[tuple[str, str | None]]:
    """What rebuilding from a journal reads: its benchmark files and run folders."""
    inputs: list[tuple[str, str | None]] = []
    for entry in header.get("files") or []:
        if isinstance(entry, dict):
            inputs.append(("the benchmark file", _text(entry.get("path"))))
            for run in entry.get("runs") or []:
                if isinstance(run, dict):
                    inputs.append(("the run folder", _text(run.get("path"))))
    return inputs


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def recovered_path(report: Path) -> Path:
    """Where a later session puts the report it recovered: ``<stem>.recovered<suffix>``."""
    return report.with_name(f"{report.stem}.recovered{report.suffix or '.json'}")


#: every line ends with this member: its digest chained to the line before (:func:`_seal.link`)
_CHAIN = b',"chain":"'


def _line(value: Any, previous: str) -> tuple[bytes, str]:
    """One journal line and its digest: ``{..., "chain": "<digest>"}`` where the digest covers
    the previous line's digest and this line's bytes before the ``chain`` member."""
    text = json.dumps(redact_json(value), ensure_ascii=False, default=str)
    body = text[:-1].encode("utf-8", "surrogatepass")
    stated = link(previous, body)
    return body + _CHAIN + stated.encode("ascii") + b'"}\n', stated


def sha256_of(path: Path) -> str:
    """The SHA-256 of a file's bytes (a benchmark file read again at recovery must match)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


class JournalBusy(Exception):
    """The journal is locked by a session that is still running."""


class Journal:
    """The writing side: one open file, locked while the session lives."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self._chain = ""  # the digest of the last line written
        self._written: set[str] = set()
        self._selected: set[str] = set()  # the header's: nothing else is journaled
        self._unsynced = False  # lines written since the last fsync

    @property
    def open(self) -> bool:
        """True once the header is written and until the journal is closed."""
        return self._fd is not None

    def start(self, header: dict[str, Any]) -> None:
        """Create the journal (replacing a stale one) and write its header line."""
        fd = open_append(self.path)  # a regular file only (:mod:`._outputs`)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise JournalBusy(f"{self.path} is being written by another running session") from None
        os.ftruncate(fd, 0)
        self._fd = fd
        self._chain = ""
        self._written.clear()
        self._selected = set(header.get("selected") or ())
        self._write({"journal": JOURNAL_SCHEMA, **header}, sync=True)

    def record(self, nodeid: str, record: dict[str, Any]) -> None:
        """Append one criterion run (fsynced at the next :meth:`flush`). A node id is written
        once (recovery refuses a second line for one node id as an edit)."""
        if self._fd is not None and nodeid in self._selected and nodeid not in self._written:
            self._written.add(nodeid)
            self._write({"nodeid": nodeid, "record": record}, sync=False)
            self._unsynced = True

    def flush(self) -> None:
        """A batch boundary: what was written since the last one, fsynced once."""
        if self._fd is not None and self._unsynced:
            os.fsync(self._fd)
            self._unsynced = False

    def _write(self, value: Any, sync: bool) -> None:
        assert self._fd is not None
        data, self._chain = _line(value, self._chain)
        while data:
            data = data[os.write(self._fd, data) :]
        if sync:
            os.fsync(self._fd)

    def close(self, remove: bool) -> None:
        """Release the lock; ``remove`` once the final report is safely written (else the
        last batch is fsynced first)."""
        if self._fd is None:
            return
        if not remove:
            with contextlib.suppress(OSError):
                self.flush()
        fd, self._fd = self._fd, None
        if remove:
            self.path.unlink(missing_ok=True)
        os.close(fd)


def make_header(
    report: Path,
    junit: Path | None,
    files: Iterable[tuple[str, BenchmarkPlan]],
    file_runs: Mapping[str, Iterable[RunDir]],
    selected: Iterable[str],
    data: dict[str, Any],
) -> dict[str, Any]:
    """The header line: what :func:`recover` needs besides the criterion runs."""
    return {
        "report": str(report.resolve()),
        "junit": str(junit.resolve()) if junit else None,
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "files": [
            {
                "display": display,
                "path": str(plan.path.resolve()),
                "sha256": sha256_of(plan.path),
                "scored": plan.scored,  # its generated criterion ids depend on it
                "runs": [
                    {
                        "path": str(r.path.resolve()),
                        "label": r.label,
                        "id": r.config.id,
                        "agent": r.config.agent,
                    }
                    for r in file_runs[display]
                ],
            }
            for display, plan in files
        ],
        "selected": sorted(selected),
        "plugin": __version__,
        **data,
    }


def read_journal(path: Path) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The header and the criterion runs (by node id) of a journal; ValueError when unusable."""
    lines = _read_lines(path)
    values: list[Any] = []
    for number, line in enumerate(lines, start=1):
        try:
            values.append(json.loads(line.decode("utf-8")))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            raise ValueError(f"{path}:{number}: damaged line (not JSON): cannot recover") from None
    header, *rows = values
    schema = _checked_header(path, header)
    _check_chain(path, lines)
    return header, _records(path, rows, set(header["selected"]), schema)


def _read_lines(path: Path) -> list[bytes]:
    """The journal's complete lines, read under a shared lock (JournalBusy while a session
    still writes it); a last line cut by a crash is left out."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as exc:
        raise ValueError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            raise JournalBusy(
                f"{path} is being written by a session that is still running"
            ) from None
        with os.fdopen(os.dup(fd), "rb") as handle:
            raw = handle.read()
    except OSError as exc:  # a directory, an unreadable device
        raise ValueError(f"{path}: cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    lines = raw.split(b"\n")
    lines.pop()  # b"" when the file ends with a newline; else a line cut by a crash: ignored
    if not lines:
        raise ValueError(f"{path}: empty, or cut before its header: nothing to recover")
    return lines


def _checked_header(path: Path, header: Any) -> str:
    """The journal schema of ``header``; ValueError when it is not a header this version
    recovers (another schema or version, a field missing)."""
    schema = header.get("journal") if isinstance(header, dict) else None
    if isinstance(schema, str) and schema.startswith("pytest-verial/journal/"):
        if schema not in (JOURNAL_SCHEMA, JOURNAL_V2):
            raise ValueError(
                f"{path}:1: a {schema} journal (this version reads {JOURNAL_SCHEMA} and "
                f"{JOURNAL_V2}): recover it with the version that wrote it"
            )
    else:
        raise ValueError(f"{path}:1: not a pytest-verial journal ({JOURNAL_SCHEMA})")
    for key, kind in (("files", list), ("selected", list), ("report", str), ("started_at", str)):
        if not isinstance(header.get(key), kind):
            raise ValueError(f"{path}:1: header field {key!r} missing or not a {kind.__name__}")
    if header.get("plugin") != __version__:
        raise ValueError(
            f"{path}:1: written by pytest-verial {header.get('plugin')}, this is {__version__}: "
            "recover it with that version"
        )
    return schema


def _check_chain(path: Path, lines: list[bytes]) -> None:
    """ValueError naming the first line whose digest does not continue the chain."""
    previous = ""
    for number, line in enumerate(lines, start=1):
        cut = line.rfind(_CHAIN)
        if cut < 0 or not line.endswith(b'"}'):
            raise ValueError(
                f"{path}:{number}: the line carries no integrity digest (edited): cannot recover"
            )
        stated = line[cut + len(_CHAIN) : -2].decode("ascii", "replace")
        why = check_link(previous, line[:cut], stated)
        if why is not None:
            raise ValueError(f"{path}:{number}: cannot recover: {why}")
        previous = stated


def _records(
    path: Path, rows: list[Any], selected: set[str], schema: str
) -> dict[str, dict[str, Any]]:
    """The criterion run lines (line 2 on) by node id: each once, each selected."""
    records: dict[str, dict[str, Any]] = {}
    lines_of: dict[str, int] = {}
    for number, row in enumerate(rows, start=2):
        if not (
            isinstance(row, dict)
            and isinstance(row.get("nodeid"), str)
            and isinstance(row.get("record"), dict)
        ):
            raise ValueError(f"{path}:{number}: not a criterion run line (nodeid, record)")
        nodeid = row["nodeid"]
        if nodeid in lines_of:
            raise ValueError(
                f"{path}:{number}: a second line for {nodeid} (the first is line "
                f"{lines_of[nodeid]}): cannot recover"
            )
        if nodeid not in selected:
            raise ValueError(
                f"{path}:{number}: {nodeid} is not a criterion this journal's session "
                "selected (its header): cannot recover"
            )
        lines_of[nodeid] = number
        record = row["record"]
        if schema == JOURNAL_V2:  # its digests checked above, on the bytes as written
            try:
                from .._evidence import evidence_from_v2

                evidence = evidence_from_v2(record.get("assert"), record.get("evidence"))
            except ValueError as exc:
                raise ValueError(f"{path}:{number}: cannot recover: {exc}") from None
            record = {**record, "evidence": evidence}
        records[nodeid] = record
    return records


def _plans(path: Path, header: dict[str, Any]) -> tuple[list[Any], dict[str, list[RunDir]]]:
    files: list[tuple[str, BenchmarkPlan]] = []
    file_runs: dict[str, list[RunDir]] = {}
    run_dirs: dict[str, RunDir] = {}
    for entry in header["files"]:
        try:
            display, file = str(entry["display"]), Path(entry["path"])
            if sha256_of(file) != entry["sha256"]:
                raise ValueError(
                    f"{path}: benchmark file {file} changed since the run: "
                    "cannot rebuild its report"
                )
            scored = bool(entry.get("scored", header.get("scored")))
            files.append((display, load_benchmark(file, None, display, scored=scored)))
            file_runs[display] = [
                run_dirs.setdefault(r["path"], RunDir(Path(r["path"]), r["label"]))
                for r in entry["runs"]
            ]
            for r in entry["runs"]:
                now = run_dirs[r["path"]].config
                if (r.get("id"), r.get("agent")) != (now.id, now.agent):
                    raise ValueError(
                        f"{path}: run folder {r['path']} is now run.yaml id {now.id!r}, agent "
                        f"{now.agent!r}; the session scored id {r.get('id')!r}, agent "
                        f"{r.get('agent')!r}: cannot rebuild its report"
                    )
        except OSError as exc:
            raise ValueError(
                f"{path}: benchmark file {entry.get('path')}: {exc.strerror or exc}"
            ) from None
        except (BenchmarkFileError, RunConfigError) as exc:
            raise ValueError(f"{path}: {str(exc).splitlines()[0]}") from None
        except (KeyError, TypeError):
            raise ValueError(f"{path}:1: header entry of a benchmark file is damaged") from None
    return files, file_runs


def _seconds(start: str, end: str | None) -> float:
    try:
        a = datetime.fromisoformat(start.replace("Z", "+00:00"))
        b = datetime.fromisoformat((end or start).replace("Z", "+00:00"))
    except ValueError:
        return 0.0
    return max(0.0, (b - a).total_seconds())


def recover(
    path: Path, before: Callable[[dict[str, Any]], None] | None = None
) -> tuple[Report, dict[str, Any]]:
    """The report a crashed session would have written, rebuilt from its journal, and the
    journal's header (it names the report and JUnit paths that session was writing).
    ``before`` sees the header before anything else is read (``verial report --recover``
    checks its outputs against the benchmark files and run folders named there)."""
    from .._results import CriterionRun
    from ._build import ReportInput, build_report

    header, records = read_journal(path)
    if before is not None:
        before(header)
    files, file_runs = _plans(path, header)
    try:
        runs_by_id = {nodeid: CriterionRun.from_json(r) for nodeid, r in records.items()}
    except ValueError as exc:
        raise ValueError(
            f"{path}: a criterion run line is damaged: {str(exc).splitlines()[0]}"
        ) from None
    run_dirs: list[RunDir] = []
    for dirs in file_runs.values():
        run_dirs.extend(r for r in dirs if r not in run_dirs)
    ends = sorted(str(r.get("completed_at")) for r in records.values() if r.get("completed_at"))
    last = ends[-1] if ends else None
    report = build_report(
        ReportInput(
            files=files,
            file_runs=file_runs,
            runs=run_dirs,
            selected=set(header["selected"]),
            criterion_runs=runs_by_id,
            pass_threshold=header.get("pass_threshold"),
            trials=bool(header.get("trials")),
            scored=bool(header.get("scored")),
            started_at=header["started_at"],
            completed_at=last,
            duration=_seconds(header["started_at"], last),
            interrupted=True,
            collection_errors=header.get("collection_errors") or [],
        )
    )
    report.session.recovered = {
        "journal": str(path),
        "at": now_iso(),
        "criterion_runs": len(records),
    }
    report.session.warnings.append(
        f"recovered from the journal {path}: the session ended without writing its report; "
        "task runs it had not finished are cancelled"
    )
    return report, header
