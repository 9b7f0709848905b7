"""HTML from the results store (issue 19): ``verial html ID|latest`` (the HTML report of a
stored run, with its benchmark's trend plot) and ``verial html --index`` (a page of the stored
runs, newest first, with a trend plot per benchmark).

Both are one self-contained file: no network request, no script at all on the index page, the
plots are inline SVG drawn here. Every text from the store (benchmark names, agents, run
labels, commits, ids) is HTML-escaped; a scored run shows its score and verdict, never task
details, evidence, labels or feedback (as :mod:`pytest_verial.reporting._html` elides them).
"""

from __future__ import annotations

import argparse
import html
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from .._display import escape
from .._scoring import VERDICTS
from ..store._core import Store
from ..store._repo_trend import RunRow, TrendPoint

if TYPE_CHECKING:
    from .._results import Report

#: how many runs of a benchmark its plot shows (the newest)
PLOT_RUNS = 50
_W, _H, _PAD = 560, 160, 28
#: room left of the plot for the score axis's label and ticks, below it for the run axis's
_LEFT, _BOTTOM = 46, 40
_CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'none'; img-src data:"
_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:12px 24px}header h1{font-size:18px;margin:0}
main{padding:16px 24px;max-width:1200px}
section{background:#fff;border:1px solid #dde1e7;border-radius:8px;margin:0 0 20px;
padding:14px 18px}
h2{font-size:16px;margin:0 0 8px}.meta{color:#5a6374;font-size:13px}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:4px 8px;
border-bottom:1px solid #eceef2}th{background:#f1f3f6}td.num{text-align:right}
.pill{border-radius:10px;padding:0 8px;font-weight:600;font-size:12px}
.pass{background:#d8f3dc;color:#1b5e20}.partial{background:#fff3cd;color:#7a5b00}
.fail{background:#f8d7da;color:#8a1c24}.none{background:#e9ecef;color:#495057}
code{font-size:12px}
header{display:flex;align-items:baseline;gap:16px;flex-wrap:wrap}header .meta{color:#c9d1de}
nav.site{margin-left:auto;display:flex;gap:12px;align-items:baseline}nav.site a{color:#fff}
nav.site form{display:inline;margin:0}nav.site button{font:inherit;font-size:13px;cursor:pointer}
.trends{display:flex;flex-wrap:wrap;gap:0 20px}
th.base,td.base{border-left:2px solid #dde1e7}tr.task-row td{font-weight:600;background:#fafbfc}
tr.criterion-row td:first-child{padding-left:24px}.change{font-size:12px;font-weight:600}
.change.regression{color:#8a1c24}.change.improvement{color:#1b5e20}.change.unchanged{color:#5a6374}
.ea{display:block;color:#5a6374;font-size:12px;font-family:ui-monospace,monospace}
"""


def _e(value: object) -> str:
    """Any value as escaped HTML text (quotes too: safe in attributes), its control characters
    and bidi overrides written as escapes (:func:`pytest_verial._display.escape`, as on every
    surface)."""
    return html.escape(escape("" if value is None else str(value)), quote=True)


def _when(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M")


def trend_svg(points: Sequence[TrendPoint], *, current: str | None = None) -> str:
    """A plot of the run score over ``points`` (oldest first) on a 0..1 axis, as inline SVG,
    with a thinner dashed line per axis.

    A run without a score breaks the line (a gap); each run is a dot whose tooltip names it;
    ``current`` (a run id) is drawn larger."""
    n = len(points)
    if n == 0:
        return ""
    span = _W - _LEFT - _PAD
    bottom = _H - _BOTTOM

    def x(i: int) -> float:
        return _LEFT + (span * i / (n - 1) if n > 1 else span / 2)

    def y(v: float) -> float:
        return bottom - (bottom - _PAD / 2) * min(1.0, max(0.0, v))

    parts = [
        f'<svg class="trend" xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" '
        f'viewBox="0 0 {_W} {_H}" role="img" aria-label="score per run, oldest first">',
        f'<rect x="0" y="0" width="{_W}" height="{_H}" fill="#fff"/>',
        # the axes' labels: score 0-1 upward, the runs oldest to newest across
        f'<text class="y-label" x="12" y="{(bottom + _PAD / 2) / 2:.1f}" font-size="11" '
        f'fill="#5a6374" text-anchor="middle" transform="rotate(-90 12 '
        f'{(bottom + _PAD / 2) / 2:.1f})">score (0-1)</text>',
        f'<text class="x-label" x="{_LEFT + span / 2:.1f}" y="{_H - 4}" font-size="11" '
        f'fill="#5a6374" text-anchor="middle">run, oldest to newest (UTC)</text>',
        f'<text x="{_LEFT}" y="{bottom + 14:.1f}" font-size="10" fill="#5a6374">'
        f"{_e(_when(points[0].created_at))}</text>",
    ]
    if n > 1:
        parts.append(
            f'<text x="{_W - _PAD}" y="{bottom + 14:.1f}" font-size="10" fill="#5a6374" '
            f'text-anchor="end">{_e(_when(points[-1].created_at))}</text>'
        )
    for level in (0.0, 0.5, 1.0):
        parts.append(
            f'<line x1="{_LEFT}" x2="{_W - _PAD}" y1="{y(level):.1f}" y2="{y(level):.1f}" '
            f'stroke="#e3e6eb"/><text x="{_LEFT - 4}" y="{y(level) + 4:.1f}" font-size="10" '
            f'fill="#5a6374" text-anchor="end">{level:.1f}</text>'
        )

    for (name, color), values in zip(axis_colors(points), axis_values(points), strict=True):
        for seg in _polylines(values, x, y):
            parts.append(
                f'<polyline class="axis-line" fill="none" stroke="{color}" stroke-width="1" '
                f'stroke-dasharray="4,2" points="{seg}"><title>axis {_e(name)}</title></polyline>'
            )
    for seg in _polylines([p.score for p in points], x, y):
        parts.append(f'<polyline fill="none" stroke="#1a4fa0" stroke-width="1.5" points="{seg}"/>')
    parts += [_run_mark(p, x(i), y, current) for i, p in enumerate(points)]
    parts.append("</svg>")
    return "".join(parts)


def _polylines(
    values: Sequence[float | None], x: Callable[[int], float], y: Callable[[float], float]
) -> list[str]:
    """The ``points`` attribute of each unbroken stretch (a missing value is a gap)."""
    out: list[str] = []
    segment: list[str] = []
    for i, v in enumerate(values):
        if v is None:
            if segment:
                out.append(" ".join(segment))
            segment = []
            continue
        segment.append(f"{x(i):.1f},{y(v):.1f}")
    if segment:
        out.append(" ".join(segment))
    return out


def _run_mark(p: TrendPoint, x: float, y: Callable[[float], float], current: str | None) -> str:
    """One run on the plot, its tooltip naming it: a dot (larger for ``current``), or a dashed
    gap line for a run without a score."""
    score = "no score" if p.score is None else f"{p.score:.3f}"
    tip = f"{p.id} {_when(p.created_at)} {score} {p.verdict or p.status}"
    if p.score is None:
        mark = (
            f'<line class="gap" x1="{x:.1f}" x2="{x:.1f}" y1="{y(1.0):.1f}" '
            f'y2="{y(0.0):.1f}" stroke="#c9ced6" stroke-dasharray="2,3"/>'
        )
    else:
        r = 4.5 if p.id == current else 2.5
        fill = "#8a1c24" if p.id == current else "#1a4fa0"
        mark = f'<circle cx="{x:.1f}" cy="{y(p.score):.1f}" r="{r}" fill="{fill}"/>'
    return f"<g><title>{_e(tip)}</title>{mark}</g>"


#: colours of the axis lines (the run score is the blue line)
AXIS_COLORS = ("#2e7d32", "#c77700", "#7b1fa2", "#00838f", "#ad1457", "#5d4037", "#546e7a")


def axis_colors(points: Sequence[TrendPoint]) -> list[tuple[str, str]]:
    """(axis, colour) for the axes of ``points`` in the order they first appear (at most as
    many as :data:`AXIS_COLORS`)."""
    names: dict[str, None] = {}
    for p in points:
        names.update(dict.fromkeys(p.axes))
    return list(zip(names, AXIS_COLORS, strict=False))


def axis_values(points: Sequence[TrendPoint]) -> list[list[float | None]]:
    return [[p.axes.get(name) for p in points] for name, _ in axis_colors(points)]


def _legend(points: Sequence[TrendPoint]) -> str:
    axes = axis_colors(points)
    if not axes:
        return ""
    keys = ['<span style="color:#1a4fa0">&#9644; score</span>'] + [
        f'<span style="color:{color}">&#9476; axis {_e(name)}</span>' for name, color in axes
    ]
    return f'<div class="meta legend">{" &nbsp; ".join(keys)}</div>'


def trend_section(
    benchmark: str, points: Sequence[TrendPoint], current: str | None, link: str | None = None
) -> str:
    """A titled section holding a benchmark's trend plot (its title a link to ``link``, the
    benchmark's own page, when given)."""
    if not points:
        return ""
    scores = [p.score for p in points if p.score is not None]
    last = f"{scores[-1]:.3f}" if scores else "-"
    title = _e(benchmark) if link is None else f'<a href="{_e(link)}">{_e(benchmark)}</a>'
    return (
        '<section class="trend-plot" style="background:#fff;border:1px solid #dde1e7;'
        'border-radius:8px;margin:0 0 16px;padding:14px 18px">'
        f"<h2>Trend: {title}</h2>"
        f'<div class="meta">score of the newest {len(points)} stored run(s), oldest first '
        f"(a dotted grey upright line is a run without a score); latest score {last}</div>"
        f"{trend_svg(points, current=current)}{_legend(points)}</section>"
    )


def _pill(verdict: str | None) -> str:
    cls = verdict if verdict in VERDICTS else "none"
    return f'<span class="pill {cls}">{_e(verdict or "-")}</span>'


def benchmark_page(ref: str) -> str:
    """The service's page of a benchmark's trend."""
    return "/ui/benchmarks/" + quote(ref, safe="@")


def nav_bar(*, back: bool = True, sign_out: str | None = None) -> str:
    """The pages' way back to the index and, signed in (``sign_out``: the sign-out form's
    token), the sign-out form: the server's own CSRF-protected POST to /ui/logout."""
    parts = ['<a class="back" href="/">&larr; all runs</a>'] if back else []
    if sign_out is not None:
        parts.append(
            '<form class="sign-out" method="post" action="/ui/logout">'
            f'<input type="hidden" name="form_token" value="{_e(sign_out)}">'
            '<button type="submit">Sign out</button></form>'
        )
    return f'<nav class="site">{"".join(parts)}</nav>' if parts else ""


def page(title: str, body: str, *, nav: str = "", meta: str = "") -> str:
    """A whole page in the index's style: ``title`` is text, ``body``, ``nav`` (:func:`nav_bar`)
    and ``meta`` are markup."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>"
        f"<header><h1>{_e(title)}</h1><div class=meta>{meta}</div>{nav}</header>"
        f"<main>{body}</main></body></html>\n"
    )


def _row(
    run: RunRow,
    pages: Path | None,
    link: Callable[[str], str] | None,
    bench_link: Callable[[str], str] | None = None,
) -> str:
    page = pages / f"{run.id}.html" if pages is not None else None
    ident = f"<code>{_e(run.id)}</code>"
    if link is not None:
        ident = f'<a href="{_e(link(run.id))}">{ident}</a>'
    elif page is not None and page.is_file():
        ident = f'<a href="{_e(page.name)}">{ident}</a>'
    score = "-" if run.score is None else f"{run.score:.3f}"
    strict = "-" if run.strict_success is None else f"{run.strict_success:.0%}"
    bench = _e(run.benchmark_ref)
    if bench_link is not None:
        bench = f'<a href="{_e(bench_link(run.benchmark_ref))}">{bench}</a>'
    return (
        f"<tr><td>{ident}</td><td>{_e(_when(run.created_at))}</td>"
        f"<td>{bench}</td><td>{_e(run.name)}</td>"
        f"<td>{'scored' if run.scored else ''}</td><td class=num>{score}</td>"
        f"<td>{_pill(run.verdict)}</td><td class=num>{strict}</td>"
        f"<td class=num>{run.criteria_passed}/{run.criteria_failed}/{run.criteria_error}</td>"
        f"<td>{_e(run.state)}</td><td><code>{_e((run.git_commit or '-')[:10])}</code></td></tr>"
    )


def render_index(
    store: Store,
    *,
    pages: Path | None = None,
    limit: int | None = None,
    link: Callable[[str], str] | None = None,
    extra: str = "",
    hint: str = "the HTML report of a run: <code>verial html ID</code>",
    source: str | None = None,
    nav: str = "",
    bench_link: Callable[[str], str] | None = None,
) -> str:
    """The index page: every stored run (newest first; the newest ``limit`` when given), then
    ``extra`` (HTML: the service's compare form), then a trend plot per benchmark. A run id
    links to ``<pages>/<id>.html`` when that file exists (``verial html ID -o
    <pages>/<id>.html`` writes it), or to ``link(id)`` when given (the service's pages); a
    benchmark to ``bench_link(ref)`` when given. The header names the store by ``source``
    (default: its URL, the password masked; the service names none of its paths) and holds
    ``nav`` (:func:`nav_bar`)."""
    runs = store.list_runs(limit=limit)
    benchmarks = list(dict.fromkeys(r.benchmark_ref for r in runs))
    plots = "".join(
        trend_section(
            b,
            store.trend(b, last=PLOT_RUNS, per_task=False),
            None,
            bench_link(b) if bench_link is not None else None,
        )
        for b in sorted(benchmarks)
    )
    body = "".join(_row(r, pages, link, bench_link) for r in runs)
    head = (
        "<tr><th>run</th><th>when (UTC)</th><th>benchmark</th><th>agent</th>"
        "<th></th><th>score</th><th>verdict</th><th>strict</th>"
        "<th>criteria passed/failed/error</th><th>status</th><th>commit</th></tr>"
    )
    generated = _when(datetime.now(UTC))
    table = (
        f'<section class="runs"><h2>Runs ({len(runs)}, newest first)</h2>'
        f'<div class="meta">{hint}</div>'
        f"<table>{head}{body}</table></section>"
        if runs
        else '<section class="runs"><p>the store holds no runs</p></section>'
    )
    return page(
        "pytest-verial runs",
        f"{table}{extra}{plots}",
        nav=nav,
        meta=f"{_e(source or store.url_masked)} - {generated} UTC",
    )


def is_store_ref(value: str | None) -> bool:
    """A command argument names a stored session or run (``latest``, ``latest~N``,
    ``ses_...``, ``br_...``) rather than a report file: an existing file of that name stays a
    file."""
    from ..store._repo_sessions import REF_FORM

    return (
        bool(value)
        and REF_FORM.fullmatch(str(value).strip()) is not None
        and not Path(str(value)).exists()
    )


def html_from_store(
    args: argparse.Namespace,
    compare: Callable[[Path, Report, Report, tuple[str, str]], None],
) -> int:
    """``verial html ID|latest [BASE] [-o FILE] [--open]`` and ``verial html --index``;
    ``compare`` writes the page of two runs side by side
    (:func:`pytest_verial._ui._compare_html.write_compare`, which draws with this module)."""
    from .._config.store_option import cli_rootdir, open_cli_store
    from .._display import escape
    from ..reporting._html import open_in_browser, write_html
    from ..reporting._json_report import load_report
    from ..reporting._outputs import EXIT_REFUSED, OutputRefused, refused, write_text_atomic
    from ..store import StoreError
    from ..store._core import store_url_from
    from ..store._engine import sqlite_path

    if args.index and (args.report or args.base):
        print("verial html: give ID|REPORT or --index, not both", file=sys.stderr)
        return 2
    url = store_url_from(args.store, cli_rootdir())
    store_file = sqlite_path(url) if url else None
    try:
        with open_cli_store(args.store) as store:
            if args.index:
                output = Path(args.output or "verial-runs.html")
                label = "-o" if args.output else "the index page"
                if refused("html", [(label, output)], [("the results store", store_file)]):
                    return EXIT_REFUSED
                page = render_index(store, pages=output.parent)
                try:
                    write_text_atomic(output, page)
                except OSError as exc:
                    return _cannot_write(output, exc)
                print(f"HTML index: {output}", file=sys.stderr)
            else:
                head_ref = store.resolve_ref(args.report)
                run_id = head_ref.id
                output = Path(args.output or f"{run_id}.html")
                label = "-o" if args.output else "the HTML file"
                inputs = [("the results store", store_file)]
                if args.base and not is_store_ref(args.base):
                    inputs.append(("the base report", args.base))
                if refused("html", [(label, output)], inputs):
                    return EXIT_REFUSED
                report = store.report_of(head_ref)
                if args.base is None:
                    base = None
                elif is_store_ref(args.base):
                    base = store.report_of(store.resolve_ref(args.base))
                else:
                    base = load_report(args.base)
                # a trend plot for one benchmark run (a session may hold several benchmarks)
                ids = store.run_ids(head_ref)
                ref = report.benchmark_runs[0].benchmark.ref if len(ids) == 1 else None
                trend = (
                    trend_section(ref, store.trend(ref, last=PLOT_RUNS, per_task=False), ids[0])
                    if ref
                    else ""
                )
                try:
                    if base is None:
                        write_html(output, report, trend=trend)
                    else:  # the two side by side, as /ui/compare shows them
                        compare(output, base, report, (str(args.base), str(args.report)))
                except OSError as exc:
                    return _cannot_write(output, exc)
                print(f"HTML report: {output}", file=sys.stderr)
    except StoreError as exc:
        print(f"verial html: {escape(str(exc))}", file=sys.stderr)
        return 2
    except ValueError as exc:  # the base report file (OutputRefused is one too)
        code = EXIT_REFUSED if isinstance(exc, OutputRefused) else 2
        print(f"verial html: {escape(str(exc).splitlines()[0])}", file=sys.stderr)
        return code
    if args.open and not open_in_browser(output):
        print(f"verial html: no web browser could be started: open {output}", file=sys.stderr)
    return 0


def _cannot_write(output: Path, exc: OSError) -> int:
    print(f"verial html: cannot write {output}: {exc.strerror or exc}", file=sys.stderr)
    return 2
