"""A self-contained HTML report: ``--verial-html PATH`` and ``verial html REPORT [BASE] [-o PATH]``.

One file, no network request and no external asset (a Content-Security-Policy allows inline
script and style only), so it opens from disk and from a CI artifact. Per benchmark run: an
overview (score, verdict, strict success, judge calls and cost), a chart of per-axis scores and
of the verdict distribution, a sortable and filterable table of task runs, and the drill-down
to each criterion run (expected / actual rows, evidence, judge reasoning, feedback). Given a
base report: the score and verdict changes per benchmark run and task, regressions first.

The report's data is embedded as JSON and every value is put on the page with
``textContent``: sandbox text cannot inject markup or script. A scored benchmark run is
embedded without details, evidence, labels or feedback, as the terminal shows it.
"""

from __future__ import annotations

import json
import webbrowser
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from ..results import Report
from ..secrets import redact_json
from .outputs import write_text_atomic

_WITHHELD = ("details", "evidence", "label")


def _page_data(report: Report, base: Report | None) -> dict[str, Any]:
    data = report.to_json()
    for run in data["benchmark_runs"]:
        if not run.get("scored"):
            continue
        for task in run["task_runs"]:
            task["feedback"] = None
            task["snapshot"] = None
            for c in task["criterion_runs"]:
                for key in _WITHHELD:
                    c[key] = None
    out = {"report": data, "base": base.to_json() if base is not None else None}
    return dict(redact_json(out))


def _embed(value: Any) -> str:
    """JSON that is safe inside a ``<script type="application/json">`` element."""
    text = json.dumps(value, ensure_ascii=True, allow_nan=False, default=str)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_html(report: Report, base: Report | None = None, *, trend: str = "") -> str:
    """The whole page: the template (``data/report.html``) with the report's data; ``trend``
    is already-escaped markup put above the runs (the store's trend plot: :mod:`.index_html`)."""
    page = resources.files("pytest_verial").joinpath("data/report.html").read_text("utf-8")
    if trend:
        page = page.replace(
            '<main id="main"></main>',
            f'<div id="trends" style="padding:16px 24px 0;max-width:1200px">{trend}</div>\n'
            '<main id="main"></main>',
            1,
        )
    return page.replace("__DATA__", _embed(_page_data(report, base)), 1)


def write_html(path: Path, report: Report, base: Report | None = None, *, trend: str = "") -> None:
    """Write the page atomically (a regular file only: :mod:`.outputs`)."""
    write_text_atomic(path, render_html(report, base, trend=trend))


def default_html_path(report: Path) -> Path:
    """Where ``verial html REPORT`` writes without ``-o``: REPORT's name with ``.html``,
    beside it (``runs/head.json`` -> ``runs/head.html``)."""
    return (
        report.with_name(report.stem + ".html")
        if report.suffix
        else report.with_name(report.name + ".html")
    )


#: how ``verial html --open`` opens a file URL (Python's :mod:`webbrowser`: ``$BROWSER`` when
#: set, else the desktop's browser); tests replace it, or set ``$BROWSER`` in a child process
OPENER: Callable[[str], bool] = webbrowser.open


def open_in_browser(path: Path) -> bool:
    """Open the written page in the user's browser; False when no browser could be started."""
    try:
        return bool(OPENER(path.resolve().as_uri()))
    except (OSError, webbrowser.Error):
        return False
