"""The ``--store URL`` option that every command reading runs shares (:func:`add_store_argument`,
:func:`open_cli_store`); the commands themselves live in :mod:`pytest_verial._commands`.

``--store`` defaults to ``$VERIAL_STORE``, else ``sqlite:///<project>/.verial/results.db``,
where the project folder is found from the working directory by the rule pytest sessions use
(:func:`pytest_verial.store._url.project_folder`): the store ``pytest`` run here or in any
folder of the project wrote.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the parser is built for every command: SQLAlchemy loads when a store opens
    from ..store._core import Store


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
    from ..store._url import project_folder

    return project_folder(start or Path.cwd())


def open_cli_store(value: str | None, *, create: bool = False) -> Store:
    """The store a command names (``args.store``); StoreError (one line) when it is turned
    off, missing (reading commands never create one) or cannot be opened."""
    from ..store._core import default_store_url, open_store, store_url_from
    from ..store._engine import StoreError, sqlite_path

    url = store_url_from(value, cli_rootdir())
    if url is None:
        raise StoreError("the results store is turned off (--store none / VERIAL_STORE=none)")
    path = sqlite_path(url)
    if path is not None and not create and not path.exists():
        hint = "" if url != default_store_url(cli_rootdir()) else "; run pytest here first"
        raise StoreError(f"no results store at {path} (give --store URL{hint})")
    return open_store(url, create=create)
