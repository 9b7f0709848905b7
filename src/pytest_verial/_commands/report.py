"""``verial report``: print the summary of a JSON report, or rebuild the report of a session
that died from its journal (``--recover``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._config.store_option import add_store_argument

if TYPE_CHECKING:
    from .._results import Report


def configure(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``verial report``."""
    parser.add_argument("report", nargs="?")
    parser.add_argument(
        "--recover",
        metavar="JOURNAL",
        help="rebuild the report of a session that died from its <report>.journal.jsonl",
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="PATH",
        help="with --recover: write the report here (default: the journal's name without "
        ".journal.jsonl)",
    )
    parser.add_argument("--junit", metavar="PATH", help="with --recover: also write JUnit XML here")
    parser.add_argument("--scored", action="store_true", help="omit details and evidence")
    add_store_argument(parser)  # --recover marks the session in the store


def recover_report(
    journal: str, output: str | None, junit: str | None = None, args_store: Any = None
) -> tuple[Report | None, int]:
    """Rebuild a report from a journal and write it (and ``--junit``, when given).

    The report goes to ``output``, else beside the journal under the name the journal's own
    name gives (``<report>.journal.jsonl`` -> ``<report>``), never where the journal's content
    says; the journal is removed once the report is written (README, "Interrupted and crashed
    runs"). An output that must not be written is refused (exit 4) before anything is rebuilt.
    """
    from .._display import escape
    from ..reporting._journal import JournalBusy, journal_inputs, recover, report_of_journal
    from ..reporting._json_report import write_json_report
    from ..reporting._junit import write_junit
    from ..reporting._outputs import EXIT_REFUSED, OutputRefused, check_outputs, refused

    path = Path(journal)
    default = report_of_journal(path)
    if output is None and default is None:
        print(
            f"verial report: {escape(journal)}: not named <report>.journal.jsonl: "
            "give -o PATH for the recovered report",
            file=sys.stderr,
        )
        return None, EXIT_REFUSED
    outputs = [("-o" if output else "the recovered report", Path(output) if output else default)]
    outputs.append(("--junit", Path(junit) if junit else None))
    read = [("the journal", path)]
    if refused("report", outputs, read):
        return None, EXIT_REFUSED
    try:
        report, header = recover(
            path, lambda head: check_outputs(outputs, [*read, *journal_inputs(head)])
        )
    except OutputRefused as exc:
        print(f"verial report: {escape(str(exc))}", file=sys.stderr)
        return None, EXIT_REFUSED
    except (ValueError, JournalBusy) as exc:
        print(f"verial report: {exc}", file=sys.stderr)
        return None, 2
    named = header.get("junit")
    if junit is None and isinstance(named, str):
        print(
            f"verial report: the session also wrote the JUnit file {escape(named)}: "
            "give --junit PATH to rebuild it",
            file=sys.stderr,
        )
    status = 0
    for label, target in outputs:
        if target is None:
            continue
        try:
            if label == "--junit":
                write_junit(target, report, report.session.scored)
            else:
                write_json_report(target, report)
        except (OSError, ValueError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            kind = "JUnit report" if label == "--junit" else "JSON report"
            print(f"verial report: cannot write the {kind} {target}: {reason}", file=sys.stderr)
            status = 1
            continue
        kind = "JUnit report" if label == "--junit" else "JSON report"
        print(f"{kind} recovered: {target}", file=sys.stderr)
    if status == 0:
        path.unlink(missing_ok=True)
    # the session in the results store gets the recovered report and is marked interrupted
    from .._config.store_option import cli_rootdir
    from .._store_session import recovered_into_store

    problem = recovered_into_store(
        getattr(args_store, "store", None),
        cli_rootdir(path.resolve().parent),
        header.get("store_session"),
        report,
    )
    if problem is not None:
        print(f"verial report: {problem}", file=sys.stderr)
        status = status or 1
    return report, status


def run(args: argparse.Namespace) -> int:
    """Print the summary table of a JSON report (rebuilt from a journal with ``--recover``)."""
    from ..reporting._json_report import load_report
    from ..reporting._terminal import summary_lines

    if args.recover is not None:
        if args.report is not None:
            print("verial report: give a REPORT or --recover JOURNAL, not both", file=sys.stderr)
            return 2
        recovered, status = recover_report(args.recover, args.output, args.junit, args)
        if recovered is None:
            return status
        for line in summary_lines(recovered, scored=args.scored):
            print(line)
        return status
    if args.report is None:
        print("verial report: give a REPORT, or --recover JOURNAL", file=sys.stderr)
        return 2
    try:
        report = load_report(args.report)
    except ValueError as exc:
        print(f"verial report: {exc}", file=sys.stderr)
        return 2
    for line in summary_lines(report, scored=args.scored):
        print(line)
    return 0
