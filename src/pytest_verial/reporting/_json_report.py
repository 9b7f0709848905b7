"""Write the JSON report atomically (:mod:`._outputs`) and read it back."""

from __future__ import annotations

import json
import re
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._heap import no_gc
from .._safeparse import strict_json_value
from .._secrets import redact_json
from ._outputs import write_text_atomic
from ._reading import read_bytes, read_report
from ._seal import check, seal, sealed_digest

_SURROGATE = re.compile("[\ud800-\udfff]")

if TYPE_CHECKING:
    from .._results import Report


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` so readers never see a half-written file
    (:func:`._outputs.write_text_atomic`: a regular file only)."""
    write_text_atomic(path, text)


def _dumps(value: Any) -> str:
    # compact: json's C encoder serves only ``indent=None``, 5-10x faster on a 10 MB report
    # (``verial show`` and ``python -m json.tool`` print it for people)
    try:
        return json.dumps(value, ensure_ascii=False, default=str, allow_nan=False)
    except ValueError:  # a NaN or an infinity somewhere: strict JSON whatever the data held
        return json.dumps(
            strict_json_value(value), ensure_ascii=False, default=str, allow_nan=False
        )


def report_text(report: dict[str, Any]) -> str:
    """The report's JSON text: compact, with every task run on a line of its own.

    The lines are JSON whitespace, so any JSON reader reads the same report; they let
    :mod:`._scores` read a report of 60,000 task runs one task run at a time. The task runs of
    each benchmark run are put in place of a token no sandbox text can hold (random per write).
    """
    report = {k: v for k, v in report.items() if k != "integrity"}  # sealed anew below
    token = f"\x00{secrets.token_hex(16)}:"
    blocks: list[list[Any]] = []
    runs = []
    for run in report.get("benchmark_runs", []):
        runs.append({**run, "task_runs": f"{token}{len(blocks)}"})
        blocks.append(run.get("task_runs", []))
    text = _dumps({**report, "benchmark_runs": runs})
    for index, tasks in enumerate(blocks):
        lines = ",\n".join(_dumps(task) for task in tasks)
        text = text.replace(_dumps(f"{token}{index}"), f"[\n{lines}\n]" if tasks else "[]", 1)
    # A lone surrogate (a file name that is not UTF-8) cannot be written as UTF-8; JSON holds
    # it escaped. Surrogates occur only inside strings, so this keeps the JSON valid.
    return seal(_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text))


def write_json_report(path: Path, typed: Report) -> None:
    """Serialise and write the report, with every secret masked (:mod:`.._secrets`).

    ``typed.integrity`` becomes the seal written, so the report kept elsewhere (the results
    store) is the file's, seal included."""
    from .._results import Integrity

    text = report_text(redact_json(typed.to_json()))
    write_atomic(path, text + "\n")
    typed.integrity = Integrity(digest=sealed_digest(text))


def load_report(path: str | Path, sealed: bool = False) -> Report:
    """A written JSON report as its type; ValueError with the reason in one line.

    A report whose seal fails is refused; ``sealed``: an unsealed one too (:mod:`.seal`).
    Scores out of range, ``passed`` against the status, duplicate ids: refused
    (:func:`._scores.check_scores`), so every command agrees on what a valid report is."""
    from .._results import Report
    from ._agreement import check_agreement
    from ._scores import ReportScores, check_scores  # pydantic views, only when reading

    data = read_bytes(path)
    problem = check(data, sealed)
    if problem is not None:
        raise ValueError(f"{path}: {problem}")
    try:
        with no_gc():  # hundreds of thousands of objects that all stay alive
            report = Report.from_json(read_report(path, data))
    except ValueError as exc:
        first = str(exc).splitlines()
        raise ValueError(
            f"{path}: not a valid pytest-verial report: {' '.join(first[:3])}"
        ) from None
    with no_gc():
        scores = ReportScores.of(report)
        check_scores(scores, path)  # the one validation every reader shares
        check_agreement(scores, path)  # its figures are its criterion runs' (issue 31)
    return report
