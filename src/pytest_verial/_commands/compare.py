"""``verial compare BASE.json HEAD.json``: the changes from BASE to HEAD, and a gate on them.

Either side is a report file, a stored session (``latest``, ``latest~N``, ``ses_...``: all its
benchmark runs) or a stored benchmark run (``br_...``) (:mod:`pytest_verial.store._repo_sessions`);
benchmark runs pair as two reports' do. The lines are
:mod:`pytest_verial.reporting._comparison`'s. Rules: :mod:`pytest_verial.reporting._diff` and
README, "Compare and gate". Exit status: 0 no regression, 1 a regression, 2 unusable input (one
line on stderr).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .._display import escape
from .._heap import no_gc
from ..reporting._comparison import comparison_lines
from ..reporting._diff import EXIT_NOTHING_COMPARED, compare_reports
from ..reporting._outputs import EXIT_REFUSED, OutputRefused, refused, write_text_atomic
from ..reporting._scores import ReportScores, check_scores, load_scores


def configure(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``verial compare``."""
    parser.add_argument(
        "base",
        help="the JSON report to compare against (--verial-report), a stored session (latest, "
        "latest~N, ses_...: every benchmark run of it) or a stored benchmark run (br_...)",
    )
    parser.add_argument(
        "head", help="the JSON report of the change, a stored session or a stored benchmark run"
    )
    parser.add_argument(
        "--tolerance",
        default="0.0",
        metavar="DROP",
        help="exit 1 when a benchmark run's score drops by more than DROP (default 0.0)",
    )
    parser.add_argument("--json", metavar="OUT", help="write the comparison as JSON to OUT")
    from .._config.store_option import add_store_argument

    add_store_argument(parser)


def _side(value: str, store: str | None) -> tuple[ReportScores, str]:
    """The scores of a report file, a stored session or a stored benchmark run, checked;
    ValueError in one line."""
    from .._config.store_option import open_cli_store
    from ..store import StoreError
    from ._stored import is_store_ref

    if not is_store_ref(value):
        return load_scores(value), value
    try:  # the score columns alone: evidence and snapshots stay in the store
        with open_cli_store(store) as opened:
            ref = opened.resolve_ref(value)
            scores = opened.scores_of(ref)
    except StoreError as exc:
        raise ValueError(str(exc)) from None
    name = value if value == ref.id else f"{value} ({ref.id})"
    check_scores(scores, name)
    return scores, name


def _tolerance(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"--tolerance: {text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"--tolerance: {value:g} is outside [0, 1]")
    return value


def run(args: argparse.Namespace) -> int:
    """Compare, print, write ``--json``; 0, 1 on a regression, 2 with one line on bad input,
    4 when ``--json`` names a file that must not be written
    (:mod:`pytest_verial.reporting._outputs`)."""
    from ._stored import file_inputs

    files = file_inputs(args.base, args.head)
    inputs = [
        (f"the {side} report", v)
        for side, v in zip(("base", "head"), (args.base, args.head), strict=True)
        if v in files
    ]
    if args.json and refused("compare", [("--json", args.json)], inputs):
        return EXIT_REFUSED
    try:
        tolerance = _tolerance(args.tolerance)
        with no_gc():  # two reports' views stay alive: collections would walk them again
            (base, base_name), (head, head_name) = (
                _side(args.base, args.store),
                _side(args.head, args.store),
            )
    except (ValueError, RecursionError) as exc:
        print(f"verial compare: {escape(str(exc).splitlines()[0])}", file=sys.stderr)
        return 2
    with no_gc():
        comparison = compare_reports(base, head, tolerance=tolerance, names=(base_name, head_name))
    if args.json:
        # compact, serialized by pydantic's own encoder (``jq`` prints it for people)
        text = comparison.model_dump_json(by_alias=True)
        try:
            write_text_atomic(Path(args.json), text + "\n")
        except OSError as exc:
            reason = exc.strerror or str(exc)
            print(f"verial compare: --json: cannot write {args.json}: {reason}", file=sys.stderr)
            return 2
        except OutputRefused as exc:  # made a device or a folder since the check
            print(f"verial compare: --json: {exc}", file=sys.stderr)
            return EXIT_REFUSED
    print(escape(f"verial compare: {comparison.base} -> {comparison.head}"))
    for text, _ in comparison_lines(comparison):
        print(escape(text))
    if comparison.exit_status == EXIT_NOTHING_COMPARED:
        print(
            "verial compare: nothing compared (no benchmark run of one report pairs with a "
            f"scored run of the other): the gate fails, exit status {EXIT_NOTHING_COMPARED}",
            file=sys.stderr,
        )
    return comparison.exit_status
