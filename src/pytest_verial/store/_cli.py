"""The store's ``verial`` commands (``import``, ``export``) and the ``--store URL`` option that
every command reading runs shares (:func:`add_store_argument`, :func:`open_cli_store`).

``--store`` defaults to ``$VERIAL_STORE``, else ``sqlite:///<project>/.verial/results.db``,
where the project folder is found from the working directory by the rule pytest sessions use
(:func:`pytest_verial.store._url.project_folder`): the store ``pytest`` run here or in any
folder of the project wrote.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the parser is built for every command: SQLAlchemy loads when a store opens
    from ._core import Store


def add_store_argument(parser: argparse.ArgumentParser) -> None:
    """``--store URL`` on a command that reads or writes the results store."""
    parser.add_argument(
        "--store",
        metavar="URL",
        help="results store: sqlite:///PATH or postgresql://... (default: $VERIAL_STORE, "
        "else the project's .verial/results.db: the nearest folder above holding one, or a "
        "pyproject.toml, pytest.ini, tox.ini, setup.cfg, setup.py or .git)",
    )


def cli_rootdir(start: Path | None = None) -> Path:
    """The project folder whose ``.verial/results.db`` is the default store, from the working
    directory (:func:`pytest_verial.store._url.project_folder`)."""
    from ._url import project_folder

    return project_folder(start or Path.cwd())


def open_cli_store(value: str | None, *, create: bool = False) -> Store:
    """The store a command names (``args.store``); StoreError (one line) when it is turned
    off, missing (reading commands never create one) or cannot be opened."""
    from ._core import StoreError, default_store_url, open_store, sqlite_path, store_url_from

    url = store_url_from(value, cli_rootdir())
    if url is None:
        raise StoreError("the results store is turned off (--store none / VERIAL_STORE=none)")
    path = sqlite_path(url)
    if path is not None and not create and not path.exists():
        hint = "" if url != default_store_url(cli_rootdir()) else "; run pytest here first"
        raise StoreError(f"no results store at {path} (give --store URL{hint})")
    return open_store(url, create=create)


# -- verial import ----------------------------------------------------------------------------
def import_configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("reports", nargs="+", metavar="REPORT", help="JSON reports to store")
    add_store_argument(parser)


def import_run(args: argparse.Namespace) -> int:
    """Store each report (idempotent); a report that is not valid is one line, exit 2."""
    from ..reporting._json_report import load_report
    from ._core import StoreError

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


# -- verial export ----------------------------------------------------------------------------
def export_configure(parser: argparse.ArgumentParser) -> None:
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


def export_run(args: argparse.Namespace) -> int:
    """Write the JSON report of a stored session (or one benchmark run) to FILE."""
    from ..reporting._json_report import write_json_report
    from ._core import StoreError

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
