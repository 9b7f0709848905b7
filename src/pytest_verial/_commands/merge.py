"""``verial merge``: one report from the shards of a ``--verial-shard K/N`` run (refuses gaps
and overlaps; the merging itself is :func:`pytest_verial.reporting._merge.merge`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..reporting._json_report import load_report, write_json_report
from ..reporting._merge import merge
from ..reporting._outputs import EXIT_REFUSED, OutputRefused, refused
from ..reporting._terminal import plural


def configure(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``verial merge``."""
    parser.add_argument("shards", nargs="+", metavar="SHARD", help="the shards' JSON reports")
    parser.add_argument("-o", "--output", required=True, metavar="OUT", help="merged report")


def run(args: argparse.Namespace) -> int:
    """Merge; 0 written, 2 refused input, 4 refused output (one line on stderr)."""
    if refused("merge", [("-o", args.output)], [("the shard", s) for s in args.shards]):
        return EXIT_REFUSED
    try:
        shards = [(str(path), load_report(path, sealed=True)) for path in args.shards]
        report = merge(shards)
    except ValueError as exc:
        print(f"verial merge: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    try:
        write_json_report(Path(args.output), report)
    except OSError as exc:
        print(f"verial merge: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except OutputRefused as exc:  # made a device or a folder since the check
        print(f"verial merge: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    c = report.session.counts
    print(
        f"merged {len(shards)} shards: {plural(len(report.benchmark_runs), 'benchmark run')}, "
        f"{plural(c.task_runs, 'task run')} -> {args.output}",
        file=sys.stderr,
    )
    return 0
