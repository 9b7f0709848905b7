"""``verial html``: the self-contained HTML report of a JSON report or a stored session or run
(with BASE: the compare view), or ``--index``: a page of the stored runs with trend plots."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "report",
        nargs="?",
        help="a JSON report (--verial-report), a stored session (latest, latest~N, ses_...) or "
        "a stored benchmark run (br_...)",
    )
    parser.add_argument(
        "base", nargs="?", help="a base report, session or run: adds the compare view"
    )
    parser.add_argument(
        "--index", action="store_true", help="an index page of the stored runs, with trend plots"
    )
    from .._config.store_option import add_store_argument

    add_store_argument(parser)
    parser.add_argument(
        "-o",
        "--output",
        metavar="PATH",
        help="the HTML file (default: REPORT's name with .html, beside it; a stored run: "
        "<id>.html; --index: verial-runs.html)",
    )
    parser.add_argument(
        "--open",
        action="store_true",
        help="then open it in the web browser ($BROWSER when set, else the system's)",
    )


def run(args: argparse.Namespace) -> int:
    from .._ui._compare_html import write_compare
    from .._ui._index_html import html_from_store, is_store_ref
    from ..reporting._html import default_html_path, open_in_browser, write_html
    from ..reporting._json_report import load_report
    from ..reporting._outputs import EXIT_REFUSED, OutputRefused, refused

    if args.index or is_store_ref(args.report):
        return html_from_store(args, write_compare)
    if args.report is None:
        print(
            "verial html: give a REPORT, a stored session or run (latest, ses_..., br_...) or "
            "--index",
            file=sys.stderr,
        )
        return 2
    output = Path(args.output) if args.output else default_html_path(Path(args.report))
    label = "-o" if args.output else "the HTML file"
    inputs = [("the report", args.report), ("the base report", args.base)]
    if refused("html", [(label, output)], inputs):
        return EXIT_REFUSED
    try:
        report = load_report(args.report)
        base = load_report(args.base) if args.base else None
    except ValueError as exc:
        print(f"verial html: {exc}", file=sys.stderr)
        return 2
    try:
        if base is None:
            write_html(output, report)
        else:  # the two runs side by side, as /ui/compare shows them
            write_compare(output, base, report, (str(args.base), str(args.report)))
    except OSError as exc:
        print(f"verial html: cannot write {output}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except OutputRefused as exc:  # made a device or a folder since the check
        print(f"verial html: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    print(f"HTML report: {output}", file=sys.stderr)
    if args.open and not open_in_browser(output):
        print(f"verial html: no web browser could be started: open {output}", file=sys.stderr)
    return 0
