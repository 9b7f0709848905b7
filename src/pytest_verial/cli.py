"""The ``verial`` command: everything around pytest's scoring of benchmark files.

Start a project (``init``), check and convert benchmark files (``validate``, ``schema``,
``convert``), read reports (``report``, ``show``, ``feedback``, ``html``, ``compare``,
``merge``), keep and query the history of runs in the results store (``runs``, ``trend``,
``import``, ``export``, ``prune``), serve verification over HTTP (``serve``, ``keys``), and
tools (``hl7-capture``, ``judge calibrate``). The commands are registered below with
:func:`add_command`; each lives in its own module.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from ._results import Report

#: subcommands added by other modules: name -> (configure parser, run) ; see ``add_command``
_EXTRA: dict[str, tuple[Callable[[argparse.ArgumentParser], None], Callable[[Any], int]]] = {}
_HELP: dict[str, str | None] = {}


def add_command(
    name: str,
    configure: Callable[[argparse.ArgumentParser], None],
    run: Callable[[Any], int],
    help: str | None = None,  # noqa: A002 - argparse's own name for it
) -> None:
    """Register a subcommand (used by optional modules such as the HL7 capture)."""
    _EXTRA[name] = (configure, run)
    _HELP[name] = help


def report_schema() -> dict[str, Any]:
    """The JSON report's schema, generated from the result types."""
    from ._results import report_schema as generated

    return generated()


def cmd_schema(args: argparse.Namespace) -> int:
    """Print a JSON Schema."""
    from ._schema import ConftestError, benchmark_schema, conftest_registry, criteria_schema

    if args.rootdir and not Path(args.rootdir).is_dir():
        print(f"verial schema: --rootdir {args.rootdir}: no such folder", file=sys.stderr)
        return 2
    try:
        registry = conftest_registry(Path(args.rootdir)) if args.rootdir else None
    except ConftestError as exc:
        print(f"verial schema: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    if args.which == "benchmark":
        schema = benchmark_schema(registry)
    elif args.which == "criteria":
        schema = criteria_schema(registry)
    else:
        schema = report_schema()
    print(json.dumps(schema, indent=2))
    return 0


def cmd_recover(
    journal: str, output: str | None, junit: str | None = None, args_store: Any = None
) -> tuple[Report | None, int]:
    """Rebuild a report from a journal and write it (and ``--junit``, when given).

    The report goes to ``output``, else beside the journal under the name the journal's own
    name gives (``<report>.journal.jsonl`` -> ``<report>``), never where the journal's content
    says; the journal is removed once the report is written (README, "Interrupted and crashed
    runs"). An output that must not be written is refused (exit 4) before anything is rebuilt.
    """
    from ._display import escape
    from .reporting._journal import JournalBusy, journal_inputs, recover, report_of_journal
    from .reporting._json_report import write_json_report
    from .reporting._junit import write_junit
    from .reporting._outputs import EXIT_REFUSED, OutputRefused, check_outputs, refused

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
    from .store._cli import cli_rootdir
    from .store._session import recovered_into_store

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


def cmd_report(args: argparse.Namespace) -> int:
    """Print the summary table of a JSON report (rebuilt from a journal with ``--recover``)."""
    from .reporting._json_report import load_report
    from .reporting._terminal import summary_lines

    if args.recover is not None:
        if args.report is not None:
            print("verial report: give a REPORT or --recover JOURNAL, not both", file=sys.stderr)
            return 2
        recovered, status = cmd_recover(args.recover, args.output, args.junit, args)
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


class _PlainHelp(argparse.HelpFormatter):
    """Help text as a terminal shows it: the docstrings' and help strings' backquotes (RST and
    Markdown literals) are dropped."""

    def _format_text(self, text: str) -> str:
        return super()._format_text(text.replace("`", ""))

    def _expand_help(self, action: argparse.Action) -> str:
        return super()._expand_help(action).replace("`", "")


class _TopHelp(_PlainHelp, argparse.RawDescriptionHelpFormatter):
    """``verial --help``: the epilog's table of commands kept as written."""


#: ``verial --help``'s description and epilog: the whole tool, by what a user wants to do
DESCRIPTION = """verial: the command line of pytest-verial. pytest scores benchmark files
(*.verial.yaml) against an agent's run folder; verial starts a project, checks benchmark
files, reads and compares reports, keeps the history of every session (the results store,
.verial/results.db) and serves the same verification over HTTP."""
EPILOG = """commands by use:
  start a project      init
  benchmark files      validate, schema, convert
  reports              report, show, feedback, html, compare, merge
  history of runs      runs, trend, import, export, prune  (refs: latest, latest~N,
                       ses_..., br_...; a report file works too)
  over HTTP            serve, keys
  tools                hl7-capture, judge calibrate

`verial COMMAND --help` lists a command's options; README.md is the whole guide."""


class _Parser(argparse.ArgumentParser):
    """``verial`` and every sub-command (sub-parsers are made of the parent's class)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _PlainHelp)
        super().__init__(*args, **kwargs)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``verial``."""
    parser = _Parser(
        prog="verial", description=DESCRIPTION, epilog=EPILOG, formatter_class=_TopHelp
    )
    parser.add_argument("-V", "--version", action="version", version=f"pytest-verial {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    from . import _validate as validate

    p = sub.add_parser("validate", help="check benchmark files and list every problem")
    validate.configure(p)
    p.set_defaults(func=validate.run)
    p = sub.add_parser("schema", help="print a JSON Schema")
    p.add_argument("which", choices=["benchmark", "criteria", "report"])
    p.add_argument(
        "--rootdir", metavar="DIR", help="add the checks registered by conftest.py files under DIR"
    )
    p.set_defaults(func=cmd_schema)
    p = sub.add_parser("report", help="print the summary of a JSON report")
    p.add_argument("report", nargs="?")
    p.add_argument(
        "--recover",
        metavar="JOURNAL",
        help="rebuild the report of a session that died from its <report>.journal.jsonl",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="PATH",
        help="with --recover: write the report here (default: the journal's name without "
        ".journal.jsonl)",
    )
    p.add_argument("--junit", metavar="PATH", help="with --recover: also write JUnit XML here")
    p.add_argument("--scored", action="store_true", help="omit details and evidence")
    from .store._cli import add_store_argument  # --recover marks the session in the store

    add_store_argument(p)
    p.set_defaults(func=cmd_report)
    # -- LLM judge (PRD-103): retry-with-feedback text of a task from a JSON report --------
    from .judge import _feedback_cli as feedback_cli

    p = sub.add_parser("feedback", help="print a failed or partial task's retry feedback")
    feedback_cli.configure(p)
    p.set_defaults(func=feedback_cli.run)
    for name, (configure, run) in _EXTRA.items():
        p = sub.add_parser(name, help=_HELP.get(name))
        configure(p)
        p.set_defaults(func=run)
    return parser


# --- init (issue 34): a project the next pytest scores ---
def _init_configure(parser: argparse.ArgumentParser) -> None:
    from ._init import configure

    configure(parser)


def _init_run(args: argparse.Namespace) -> int:
    from ._init import run

    return run(args)


add_command(
    "init",
    _init_configure,
    _init_run,
    help="write a working benchmark, a sample run folder and the pytest configuration, so "
    "that the next pytest scores them (never overwrites a file)",
)
# --- end init ---


# --- hl7-capture (issue 4): the MLLP capture server lives in pytest_verial.hl7._capture ---
def _hl7_capture_configure(parser: argparse.ArgumentParser) -> None:
    from .hl7._capture import configure_parser

    configure_parser(parser)


def _hl7_capture_run(args: argparse.Namespace) -> int:
    from .hl7._capture import run_from_args

    return run_from_args(args)


add_command(
    "hl7-capture",
    _hl7_capture_configure,
    _hl7_capture_run,
    help="listen for HL7 v2 over MLLP, ACK and record each message (events.jsonl)",
)
# --- end hl7-capture ---


# --- show (issue 11): Verial's three levels from a saved report ---
def _show_configure(parser: argparse.ArgumentParser) -> None:
    from ._commands.show import configure

    configure(parser)


def _show_run(args: argparse.Namespace) -> int:
    from ._commands.show import run

    return run(args)


add_command(
    "show",
    _show_configure,
    _show_run,
    help="print the benchmark runs, one task run, or one criterion run of a JSON report or a "
    "stored session or run",
)
# --- end show ---


# --- html (issue 11): the self-contained HTML report of a saved report ---
def _html_configure(parser: argparse.ArgumentParser) -> None:
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
    from .store._cli import add_store_argument

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


def _html_run(args: argparse.Namespace) -> int:
    from .reporting._html import default_html_path, open_in_browser, write_html
    from .reporting._json_report import load_report
    from .reporting._outputs import EXIT_REFUSED, OutputRefused, refused
    from .store._index_html import html_from_store, is_store_ref

    if args.index or is_store_ref(args.report):
        return html_from_store(args)
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
        write_html(output, report, base)
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


add_command(
    "html",
    _html_configure,
    _html_run,
    help="write the self-contained HTML report of a JSON report or a stored session or run "
    "(with BASE: the compare view), or --index: a page of the stored runs with trend plots",
)
# --- end html ---


# --- compare (issue 10): the changes between two JSON reports, and a gate on them ---
def _compare_configure(parser: argparse.ArgumentParser) -> None:
    from ._commands.compare import configure

    configure(parser)


def _compare_run(args: argparse.Namespace) -> int:
    from ._commands.compare import run

    return run(args)


add_command(
    "compare",
    _compare_configure,
    _compare_run,
    help="compare two reports, stored sessions (latest~1 latest) or stored runs: score and "
    "verdict changes; exit 1 on a regression",
)
# --- end compare ---


# --- merge (issue 10): one report from the shards of a --verial-shard run ---
def _merge_configure(parser: argparse.ArgumentParser) -> None:
    from .reporting._merge import configure

    configure(parser)


def _merge_run(args: argparse.Namespace) -> int:
    from .reporting._merge import run

    return run(args)


add_command(
    "merge",
    _merge_configure,
    _merge_run,
    help="merge the JSON reports of --verial-shard K/N runs into one (refuses gaps and overlaps)",
)
# --- end merge ---


# --- results store (issue 19): import and export; see pytest_verial.store._cli ---------------
def _lazy_command(module: str, name: str) -> tuple[Callable[[Any], None], Callable[[Any], int]]:
    """A command whose ``<name>_configure`` and ``<name>_run`` live in ``module`` (relative
    to this package), imported when the parser is built or the command runs, not before."""

    def configure(parser: argparse.ArgumentParser) -> None:
        commands = importlib.import_module(f"{__package__}.{module}")
        getattr(commands, f"{name}_configure")(parser)

    def run(args: argparse.Namespace) -> int:
        commands = importlib.import_module(f"{__package__}.{module}")
        return int(getattr(commands, f"{name}_run")(args))

    return configure, run


add_command(
    "import",
    *_lazy_command("store._cli", "import"),
    help="store JSON reports in the results store (CI artifacts, shards, merged, recovered)",
)
add_command(
    "export",
    *_lazy_command("store._cli", "export"),
    help="write a stored session's (or one run's) JSON report",
)
add_command(
    "runs",
    *_lazy_command("store._commands", "runs"),
    help="list the stored benchmark runs (--sessions: the sessions), newest first, with their "
    "status (`runs delete REF...` deletes)",
)
add_command(
    "prune",
    *_lazy_command("store._commands", "prune"),
    help="delete old stored runs: --keep N per benchmark, or --older-than DAYS",
)


add_command(
    "trend",
    *_lazy_command("store._commands", "trend"),
    help="a benchmark's score per stored run over time, per axis and per task (a sparkline)",
)
# --- end results store ---


# --- judge (issue 22): calibrate the judge on human labels ---
def _judge_configure(parser: argparse.ArgumentParser) -> None:
    from .judge._calibrate import configure

    configure(parser)


def _judge_run(args: argparse.Namespace) -> int:
    from .judge._calibrate import run

    return run(args)


add_command(
    "judge",
    _judge_configure,
    _judge_run,
    help="judge calibrate LABELS: the judge's agreement, kappa and macro F1 on human labels",
)
# --- end judge ---


# --- convert (issue 22): HealthBench-style examples into a benchmark scored by points ---
def _convert_configure(parser: argparse.ArgumentParser) -> None:
    from ._convert import configure

    configure(parser)


def _convert_run(args: argparse.Namespace) -> int:
    from ._convert import run

    return run(args)


add_command(
    "convert",
    _convert_configure,
    _convert_run,
    help="convert HealthBench-style examples (JSONL) into a benchmark file scored by points",
)
# --- end convert ---


# --- service (issue 20): verial serve, verial keys; see pytest_verial.service._cli ---
add_command(
    "serve",
    *_lazy_command("service._cli", "serve"),
    help="serve verification over HTTP (POST /v1/verify-task; needs the [serve] extra)",
)
add_command(
    "keys",
    *_lazy_command("service._cli", "keys"),
    help="create, list or revoke the service's API keys",
)
# --- end service ---


#: the exit status of a command whose reader went away (``verial show ... | head``), as a
#: process killed by SIGPIPE reports it (128 + 13): git and coreutils do the same
EXIT_BROKEN_PIPE = 141


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``verial`` console script."""
    args = build_parser().parse_args(argv)
    try:
        status = int(args.func(args))
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
    except BrokenPipeError:
        # The reader has what it wanted: stop quietly. Whatever is still buffered goes to
        # /dev/null, so the interpreter's own flush at exit cannot raise again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_BROKEN_PIPE
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
