"""A self-contained HTML report: ``--verial-html PATH`` and ``verial html REPORT [BASE] [-o PATH]``.

One file, no network request and no external asset (a Content-Security-Policy allows inline
script and style only), so it opens from disk and from a CI artifact. Per benchmark run: an
overview (score, verdict, strict success, judge calls and cost), a chart of per-axis scores and
of the verdict distribution, a sortable and filterable table of task runs, and the drill-down
to each criterion run (expected / actual rows, evidence, judge reasoning, feedback). Given a
base report: the score and verdict changes per benchmark run and task, regressions first.

The report's data is embedded as JSON and every value is put on the page with
``textContent``: sandbox text cannot inject markup or script, and every string is escaped
(:func:`.._display.escape`: no ESC, CR, control character or bidi override reaches the page).
A scored benchmark run, of the report or of its base, is embedded without details, evidence,
labels, feedback or snapshot (:mod:`.elide`), as the terminal shows it.
"""

from __future__ import annotations

import json
import webbrowser
from importlib import resources
from pathlib import Path
from typing import Any

from .._display import escape
from .._results import Report
from .._secrets import redact_json
from ._elide import elide
from ._outputs import write_text_atomic


def _page_data(report: Report, base: Report | None) -> dict[str, Any]:
    """The page's data: both reports with their scored runs elided (:mod:`.elide`: the base
    too), secrets masked."""
    out = {
        "report": elide(report).to_json(),
        "base": elide(base).to_json() if base is not None else None,
    }
    return dict(_sanitized(redact_json(out)))


def _sanitized(value: Any) -> Any:
    """Every string of the page's data through :func:`.._display.escape` (line breaks and tabs
    kept): ESC, CR, C0/C1 controls and bidi overrides never reach the page's text."""
    if isinstance(value, str):
        return escape(value, keep="\n\t")
    if isinstance(value, list):
        return [_sanitized(v) for v in value]
    if isinstance(value, dict):
        return {_sanitized(k): _sanitized(v) for k, v in value.items()}
    return value


def _embed(value: Any) -> str:
    """JSON that is safe inside a ``<script type="application/json">`` element."""
    text = json.dumps(value, ensure_ascii=True, allow_nan=False, default=str)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_html(
    report: Report, base: Report | None = None, *, trend: str = "", nav: str = ""
) -> str:
    """The whole page: the template (``data/report.html``) with the report's data; ``trend``
    is already-escaped markup put below the runs (the store's trend plot:
    :mod:`pytest_verial._ui._index_html`), ``nav`` markup put in the header (the served pages'
    way back and sign-out)."""
    page = resources.files("pytest_verial").joinpath("data/report.html").read_text("utf-8")
    if nav:
        page = page.replace("<!--nav-->", nav, 1)
    if trend:
        page = page.replace(
            '<main id="main"></main>',
            '<main id="main"></main>\n'
            f'<div id="trends" style="padding:0 24px 16px;max-width:1200px">{trend}</div>',
            1,
        )
    return page.replace("__DATA__", _embed(_page_data(report, base)), 1)


def write_html(path: Path, report: Report, base: Report | None = None, *, trend: str = "") -> None:
    """Write the page atomically (a regular file only: :mod:`._outputs`)."""
    write_text_atomic(path, render_html(report, base, trend=trend))


def default_html_path(report: Path) -> Path:
    """Where ``verial html REPORT`` writes without ``-o``: REPORT's name with ``.html``,
    beside it (``runs/head.json`` -> ``runs/head.html``)."""
    return (
        report.with_name(report.stem + ".html")
        if report.suffix
        else report.with_name(report.name + ".html")
    )


def open_in_browser(path: Path) -> bool:
    """Open the written page in the user's browser (Python's :func:`webbrowser.open`:
    ``$BROWSER`` when set, else the desktop's browser); False when none could be started."""
    try:
        return bool(webbrowser.open(path.resolve().as_uri()))
    except (OSError, webbrowser.Error):
        return False
