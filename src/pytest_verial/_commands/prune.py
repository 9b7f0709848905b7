"""``verial prune``: delete old stored runs (``--keep N`` per benchmark, or ``--older-than``)."""

from __future__ import annotations

import argparse
import sys
from datetime import timedelta

from .._config.store_option import add_store_argument, open_cli_store
from .._display import escape


def configure(parser: argparse.ArgumentParser) -> None:
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--keep", metavar="N", help="keep the N newest runs of each benchmark")
    which.add_argument("--older-than", metavar="DAYS", help="delete runs older than DAYS days")
    add_store_argument(parser)


def run(args: argparse.Namespace) -> int:
    """Delete old runs; prints how many."""
    try:
        keep = older = None
        if args.keep is not None:
            keep = int(args.keep)
            if keep < 0:
                raise ValueError(f"--keep: {keep} is below 0")
        else:
            older = float(args.older_than)
            if not older >= 0 or older == float("inf"):
                raise ValueError(f"--older-than: {args.older_than!r} is not a number of days")
            timedelta(days=older)  # OverflowError for an absurd count
    except (ValueError, OverflowError) as exc:
        text = str(exc) if str(exc).startswith("--") else f"not a number: {exc}"
        print(f"verial prune: {escape(text)}", file=sys.stderr)
        return 2
    from ..store import StoreError

    try:
        with open_cli_store(args.store) as store:
            deleted = store.prune(keep=keep, older_than_days=older)
    except StoreError as exc:
        print(f"verial prune: {escape(str(exc))}", file=sys.stderr)
        return 2
    print(f"pruned {deleted} benchmark run{'' if deleted == 1 else 's'}")
    return 0
