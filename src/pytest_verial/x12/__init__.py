"""X12 EDI support: a tokenizer, envelopes and transaction sets, and Verial paths.

Public API: the names in ``__all__``. Reusable from other checks (e.g. ``sftp-file-present``
with ``parse: x12``; docs/x12.md)::

    from pytest_verial.x12 import parse_interchanges, get
    transactions = parse_interchanges(text, "outbound/claims/835.x12")  # X12ParseError
    get(transactions[0], "CLP[CLP01=PCN1]/SVC[*].SVC03")                 # value, list, MISSING

Each name loads its private module on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:
    from ._envelope import Transaction, parse_interchanges
    from ._paths import X12PathError, get, get_all, parse_path
    from ._tokenizer import Delimiters, Segment, X12ParseError, read_delimiters, tokenize

__getattr__, __dir__ = exports(
    __name__,
    {
        **dict.fromkeys(["Transaction", "parse_interchanges"], "_envelope"),
        **dict.fromkeys(["X12PathError", "get", "get_all", "parse_path"], "_paths"),
        **dict.fromkeys(
            ["Delimiters", "Segment", "X12ParseError", "read_delimiters", "tokenize"], "_tokenizer"
        ),
    },
)

__all__ = [
    "Delimiters",
    "Segment",
    "Transaction",
    "X12ParseError",
    "X12PathError",
    "get",
    "get_all",
    "parse_interchanges",
    "parse_path",
    "read_delimiters",
    "tokenize",
]
