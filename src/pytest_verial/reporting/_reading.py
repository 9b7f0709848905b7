"""A written JSON report's bytes and JSON, each failure a ValueError in one line.

Below both :mod:`._json_report` (which loads the typed report) and :mod:`._scores` (which reads
only the scores), so neither imports the other for them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: the prefix of every report schema id, whatever its version
_FAMILY = "pytest-verial/report/"


def read_report(path: str | Path, data: bytes | None = None) -> dict[str, Any]:
    """A written JSON report (``data``: its bytes, when already read) in the current shape;
    ValueError with the reason when the file is not one. A report of the previous shape
    (``pytest-verial/report/v2``) is converted (:func:`pytest_verial._evidence.report_from_v2`);
    the caller checks its seal on the bytes first, so a sealed old report still verifies."""
    from .._evidence import REPORT_V2, report_from_v2
    from .._results import SCHEMA_ID, SCHEMA_IDS, unknown_schema

    try:
        text = (Path(path).read_bytes() if data is None else data).decode("utf-8")
        report = json.loads(text)
    except OSError as exc:
        raise ValueError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}:{exc.lineno}: not JSON: {exc.msg}") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except RecursionError:
        raise ValueError(f"{path}: not a pytest-verial JSON report (nested too deeply)") from None
    schema = report.get("schema") if isinstance(report, dict) else None
    if isinstance(schema, str) and schema.startswith(_FAMILY) and schema not in SCHEMA_IDS:
        raise ValueError(f"{path}: {unknown_schema(schema)}")
    if not (
        isinstance(report, dict)
        and schema in SCHEMA_IDS
        and isinstance(report.get("benchmark_runs"), list)
    ):
        raise ValueError(f"{path}: not a pytest-verial JSON report (schema {SCHEMA_ID})")
    if schema == REPORT_V2:  # the previous shape, converted whole (after its seal was checked)
        try:
            return report_from_v2(report)
        except ValueError as exc:
            raise ValueError(f"{path}: not a valid {REPORT_V2} report: {exc}") from None
    return report


def read_bytes(path: str | Path) -> bytes:
    """The file's bytes; ValueError in one line when it cannot be read."""
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise ValueError(f"{path}: cannot read: {exc.strerror or exc}") from None
