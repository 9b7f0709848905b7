"""Write the JSON report atomically: a temporary file in the same directory, then rename."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` so readers never see a half-written file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json_report(path: Path, report: dict[str, Any]) -> None:
    """Serialise and write the report."""
    write_atomic(path, json.dumps(report, indent=2, ensure_ascii=False, default=str) + "\n")
