"""The ``verial`` command: everything around pytest's scoring of benchmark files.

Start a project (``init``), check and convert benchmark files (``validate``, ``schema``,
``convert``), read reports (``report``, ``show``, ``feedback``, ``html``, ``compare``,
``merge``), keep and query the history of runs in the results store (``runs``, ``trend``,
``import``, ``export``, ``prune``), serve verification over HTTP (``serve``, ``keys``), and
tools (``hl7-capture``, ``judge calibrate``). This module only assembles the parser: each
command lives in its own module of :mod:`pytest_verial._commands`, registered in its table
(:data:`pytest_verial._commands.COMMANDS`).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Any

from ._commands import COMMANDS
from ._version import __version__


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
  in a browser         view (read-only, 127.0.0.1), html
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
    for name, (module, help_text) in COMMANDS.items():
        command = importlib.import_module(f"{__package__}._commands.{module}")
        p = sub.add_parser(name, help=help_text)
        command.configure(p)
        p.set_defaults(func=command.run)
    return parser


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
