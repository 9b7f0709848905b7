"""X12 EDI support: a tokenizer, envelopes and transaction sets, and Verial paths.

Public API (README, "Public API"; docs/x12.md, "Python API"): the names in ``__all__``, for
other checks that read X12 (e.g. ``sftp-file-present`` with ``parse: x12``)::

    from pytest_verial.x12 import parse_interchanges, get
    transactions = parse_interchanges(text, "outbound/claims/835.x12")  # X12ParseError
    get(transactions[0], "CLP[CLP01=PCN1]/SVC[*].SVC03")                 # value, list, MISSING

Each name loads its private module on first use. ``_PUBLIC`` is the one table; the
``TYPE_CHECKING`` imports and ``__all__`` repeat it, and tests/core/test_public_api.py fails
when they disagree.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:
    from ._envelope import Transaction, parse_interchanges
    from ._paths import X12PathError, get, get_all, parse_path
    from ._tokenizer import X12ParseError

#: public name -> the private module that defines it
_PUBLIC = {
    **dict.fromkeys(["Transaction", "parse_interchanges"], "_envelope"),
    **dict.fromkeys(["X12PathError", "get", "get_all", "parse_path"], "_paths"),
    "X12ParseError": "_tokenizer",
}
__getattr__, __dir__ = exports(__name__, _PUBLIC)

__all__ = [
    "Transaction",
    "X12ParseError",
    "X12PathError",
    "get",
    "get_all",
    "parse_interchanges",
    "parse_path",
]
