"""``verial export``: write a stored session's (or one run's) JSON report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .._config.store_option import add_store_argument, open_cli_store


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "ref",
        metavar="ID",
        help="a session (ses_..., latest, latest~N) or a benchmark run (br_...; an id or a "
        "unique prefix); a benchmark run exports its whole session's report unless --run-only",
    )
    parser.add_argument("-o", "--output", metavar="FILE", required=True, help="report to write")
    parser.add_argument(
        "--run-only", action="store_true", help="only that benchmark run (with its session block)"
    )
    add_store_argument(parser)


def run(args: argparse.Namespace) -> int:
    """Write the JSON report of a stored session (or one benchmark run) to FILE."""
    from ..reporting._json_report import write_json_report
    from ..store import StoreError

    try:
        with open_cli_store(args.store) as store:
            ref = store.resolve_ref(args.ref)
            if ref.kind == "session":
                if args.run_only:
                    raise StoreError(
                        f"{args.ref.strip()}: names a session ({ref.id}): --run-only needs a "
                        "benchmark run (br_...)"
                    )
                report = store.report_of_session(ref.id)
            else:
                report = (
                    store.report_of_run(ref.id)
                    if args.run_only
                    else store.report_of_session(store.session_of_run(ref.id))
                )
    except StoreError as exc:
        print(f"verial export: {exc}", file=sys.stderr)
        return 2
    try:
        write_json_report(Path(args.output), report)
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        print(f"verial export: cannot write {args.output}: {reason}", file=sys.stderr)
        return 1
    print(f"JSON report: {args.output}", file=sys.stderr)
    return 0
