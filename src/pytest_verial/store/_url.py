"""The store's URL from the ``--verial-store`` option (:mod:`pytest_verial._options`): command
line, ``$VERIAL_STORE``, ini, default ``sqlite:///<rootdir>/.verial/results.db``; ``none``
turns the store off. Light on purpose: the plugin reads it without loading SQLAlchemy."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._options import option, resolve

STORE = option("verial_store")
#: the environment variable of the store's URL
ENV = str(STORE.env)


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
