"""Readers and writers of the report formats (README, "Reports").

Public API: the names in ``__all__`` (each loads its private module on first use, so the
pytest plugin pays for no writer it does not use)::

    from pytest_verial.reporting import load_report, compare_reports
    report = load_report("verial-report.json")      # a typed Report; refuses a damaged file

The scoring rules every report applies (README, "Scoring") are public here too, for a
coordinator that combines scores itself: :class:`Scored`, :func:`task_score`, :func:`axes`,
:func:`run_score`, :func:`verdict`, :func:`passed` and the threshold hierarchy
(:func:`resolve_threshold`, :func:`verdict_threshold`).

The recorder, the terminal summary and the other writers' internals are private.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import exports

# pure functions over floats, imported with the package (they cost nothing)
from .._scoring import (
    DEFAULT_AXIS,
    DEFAULT_VERDICT_THRESHOLD,
    TOLERANCE,
    Scored,
    axes,
    passed,
    resolve_threshold,
    run_score,
    task_score,
    verdict,
    verdict_threshold,
)

if TYPE_CHECKING:
    from ._diff import Comparison, compare_reports, paired_bootstrap
    from ._html import render_html, write_html
    from ._json_report import load_report, report_text, write_json_report
    from ._junit import build_junit, write_junit
    from ._markdown import markdown, write_markdown
    from ._reading import read_report

__getattr__, __dir__ = exports(
    __name__,
    {
        **dict.fromkeys(["Comparison", "compare_reports", "paired_bootstrap"], "_diff"),
        **dict.fromkeys(["render_html", "write_html"], "_html"),
        **dict.fromkeys(["load_report", "report_text", "write_json_report"], "_json_report"),
        **dict.fromkeys(["build_junit", "write_junit"], "_junit"),
        **dict.fromkeys(["markdown", "write_markdown"], "_markdown"),
        "read_report": "_reading",
    },
)

__all__ = [
    "DEFAULT_AXIS",
    "DEFAULT_VERDICT_THRESHOLD",
    "TOLERANCE",
    "Comparison",
    "Scored",
    "axes",
    "build_junit",
    "compare_reports",
    "load_report",
    "markdown",
    "paired_bootstrap",
    "passed",
    "read_report",
    "render_html",
    "report_text",
    "resolve_threshold",
    "run_score",
    "task_score",
    "verdict",
    "verdict_threshold",
    "write_html",
    "write_json_report",
    "write_junit",
    "write_markdown",
]
