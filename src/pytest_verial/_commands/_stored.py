"""The one rule by which ``show``, ``compare``, ``html`` and ``export`` take a stored session or
run where they take a report file.

A command argument names the store when it reads as a ref (``latest``, ``latest~N``,
``ses_...``, ``br_...`` or a unique prefix of one; :mod:`pytest_verial.store._repo_sessions`)
and no file of that name exists; anything else is a report file, read as before.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .._config.store_option import open_cli_store
from .._results import Report


def is_store_ref(value: str | None) -> bool:
    """Whether a command argument names a stored run rather than a report file."""
    from .._ui._index_html import is_store_ref as ref

    return ref(value)


def report_or_stored(
    value: str, store: str | None, load: Callable[[str], Report]
) -> tuple[Report, str]:
    """The report a command argument names, and the name to show for it: a stored session's
    whole report, or one stored benchmark run's (with its session block), for a ref; else
    ``load(value)`` of a file. ValueError in one line when neither works."""
    if not is_store_ref(value):
        return load(value), value
    from ..store import StoreError

    try:
        with open_cli_store(store) as opened:
            ref = opened.resolve_ref(value)
            report = opened.report_of(ref)
    except StoreError as exc:
        raise ValueError(str(exc)) from None
    return report, value if value == ref.id else f"{value} ({ref.id})"


def file_inputs(*values: str | None) -> list[str]:
    """The arguments that are report files (not store refs): the inputs a writer must spare."""
    return [v for v in values if v is not None and not is_store_ref(v) and Path(v).name]
