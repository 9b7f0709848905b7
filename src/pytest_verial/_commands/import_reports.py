"""``verial import``: store JSON reports in the results store (CI artifacts, shards, merged,
recovered)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .._config.store_option import add_store_argument, open_cli_store


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("reports", nargs="+", metavar="REPORT", help="JSON reports to store")
    add_store_argument(parser)


def run(args: argparse.Namespace) -> int:
    """Store each report (idempotent); a report that is not valid is one line, exit 2."""
    from ..reporting._json_report import load_report
    from ..store import StoreError

    try:
        store = open_cli_store(args.store, create=True)
    except StoreError as exc:
        print(f"verial import: {exc}", file=sys.stderr)
        return 2
    status = 0
    with store:
        for path in args.reports:
            try:
                report = load_report(path, sealed=True)
                result = store.import_report(report, origin=str(Path(path).resolve()))
            except ValueError as exc:
                print(f"verial import: {str(exc).splitlines()[0]}", file=sys.stderr)
                status = 2
                continue
            except StoreError as exc:
                print(f"verial import: {path}: {exc}", file=sys.stderr)
                return 2
            runs = len(result.run_ids)
            what = "stored" if result.created else "already stored"
            print(
                f"{path}: {what} as {result.session_id} "
                f"({runs} benchmark run{'' if runs == 1 else 's'}: {', '.join(result.run_ids)})"
            )
    return status
