"""Write the JSON report atomically (:mod:`.outputs`) and read it back."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..safeparse import strict_json_value
from ..secrets import redact_json
from .outputs import write_text_atomic

_SURROGATE = re.compile("[\ud800-\udfff]")

if TYPE_CHECKING:
    from ..results import Report


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` so readers never see a half-written file
    (:func:`.outputs.write_text_atomic`: a regular file only)."""
    write_text_atomic(path, text)


def write_json_report(path: Path, typed: Report) -> None:
    """Serialise and write the report, with every secret masked (:mod:`..secrets`)."""
    report = redact_json(typed.to_json())
    # compact: json's C encoder serves only ``indent=None``, 5-10x faster on a 10 MB report
    # (``verial show`` and ``python -m json.tool`` print it for people)
    try:
        text = json.dumps(report, ensure_ascii=False, default=str, allow_nan=False)
    except ValueError:  # a NaN or an infinity somewhere: strict JSON whatever the data held
        text = json.dumps(
            strict_json_value(report), ensure_ascii=False, default=str, allow_nan=False
        )
    # A lone surrogate (a file name that is not UTF-8) cannot be written as UTF-8; JSON holds
    # it escaped. Surrogates occur only inside strings, so this keeps the JSON valid.
    text = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    write_atomic(path, text + "\n")


def read_report(path: str | Path) -> dict[str, Any]:
    """A written JSON report; ValueError with the reason when the file is not one."""
    from ..results import SCHEMA_ID

    try:
        report = json.loads(Path(path).read_text("utf-8"))
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


def load_report(path: str | Path) -> Report:
    """A written JSON report as its type; ValueError with the reason in one line."""
    from ..results import Report

    data = read_report(path)
    try:
        return Report.from_json(data)
    except ValueError as exc:
        first = str(exc).splitlines()
        raise ValueError(
            f"{path}: not a valid pytest-verial report: {' '.join(first[:3])}"
        ) from None
