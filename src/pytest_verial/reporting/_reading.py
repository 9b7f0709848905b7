"""A written JSON report's bytes and JSON, each failure a ValueError in one line.

Below both :mod:`.json_report` (which loads the typed report) and :mod:`.scores` (which reads
only the scores), so neither imports the other for them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def read_report(path: str | Path, data: bytes | None = None) -> dict[str, Any]:
    """A written JSON report (``data``: its bytes, when already read); ValueError with the
    reason when the file is not one."""
    from .._results import SCHEMA_ID

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
    if not (
        isinstance(report, dict)
        and report.get("schema") == SCHEMA_ID
        and isinstance(report.get("benchmark_runs"), list)
    ):
        raise ValueError(f"{path}: not a pytest-verial JSON report (schema {SCHEMA_ID})")
    return report


def read_bytes(path: str | Path) -> bytes:
    """The file's bytes; ValueError in one line when it cannot be read."""
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise ValueError(f"{path}: cannot read: {exc.strerror or exc}") from None
