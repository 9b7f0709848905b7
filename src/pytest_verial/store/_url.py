"""The store's URL from the ``--verial-store`` option (:mod:`pytest_verial._config.options`):
command line, ``$VERIAL_STORE``, ini, default ``sqlite:///<project>/.verial/results.db``; ``none``
turns the store off. Light on purpose: the plugin reads it without loading SQLAlchemy.

**One store per project** (:func:`project_folder`): ``<project>`` is the nearest folder, from
pytest's rootdir (for a ``verial`` command: the working directory) upward, that holds a store
(``.verial/results.db``) or a project file (:data:`PROJECT_FILES`); when there is none, the
rootdir (working directory) itself. The walk never climbs into the home folder, the system's
temporary folder or the filesystem root (they are not anyone's project). So ``pytest
benchmarks/`` at a project's root and ``cd benchmarks && pytest`` add to one history: with no
ini file pytest's rootdir is the folder it was started in, and the walk finds the project's
store or its ``pyproject.toml`` / ``.git`` above it.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._config.options import option, resolve

STORE = option("verial_store")
#: the environment variable of the store's URL
ENV = str(STORE.env)


#: files (or folders) that mark a project's root folder
PROJECT_FILES = (
    "pytest.ini",
    ".pytest.ini",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
    "setup.py",
    ".git",
)
#: the store's path under the project folder
STORE_PATH = Path(".verial") / "results.db"


def _ceilings() -> set[Path]:
    """Folders the walk never climbs into (see the module)."""
    found = {Path(tempfile.gettempdir()).resolve()}
    with contextlib.suppress(RuntimeError, KeyError):  # no home folder known
        found.add(Path.home().resolve())
    return found


def project_folder(start: Path) -> Path:
    """The folder whose ``.verial/results.db`` is the default store (see the module)."""
    here = start.resolve()
    ceilings = _ceilings()
    folder = here
    while True:
        if (folder / STORE_PATH).is_file() or any(
            (folder / name).exists() for name in PROJECT_FILES
        ):
            return folder
        parent = folder.parent
        if parent == folder or parent in ceilings:
            return here
        folder = parent


def default_store_url(rootdir: Path) -> str:
    """``sqlite:///<rootdir>/.verial/results.db``."""
    return str(resolve(STORE, rootdir=rootdir))


def store_url(value: Any, rootdir: Path) -> str | None:
    """The URL a resolved ``verial_store`` value names: blank is the default, ``none`` (any
    case) None (the store is off)."""
    text = str(value or "").strip()
    if not text:
        return default_store_url(rootdir)
    return None if text.lower() == "none" else text


def store_url_from(
    cli_value: str | None,
    rootdir: Path,
    ini_value: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> str | None:
    """The store to use: the option's value, else ``$VERIAL_STORE``, else the ini value, else
    the default; ``none`` (any case) turns the store off."""
    environ = os.environ if environ is None else environ
    value = resolve(STORE, cli=cli_value, environ=environ, ini=ini_value, rootdir=rootdir)
    return store_url(value, rootdir)
