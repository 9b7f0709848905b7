"""X12 EDI support: an ISA-delimited tokenizer (:mod:`.tokenizer`), envelopes and transaction
sets (:mod:`.envelope`), paths (:mod:`.paths`), and a writer for fixtures (:mod:`.build`).

Reusable from other checks (e.g. ``sftp-file-present`` with ``parse: x12``)::

    from pytest_verial.x12 import parse_interchanges, get
    transactions = parse_interchanges(text, "outbound/claims/835.x12")  # X12ParseError
    get(transactions[0], "CLP[CLP01=PCN1]/SVC[*].SVC03")                 # value, list, MISSING
"""

from ._envelope import Transaction, parse_interchanges
from ._paths import X12PathError, get, get_all, parse_path
from ._tokenizer import X12ParseError

__all__ = [
    "Transaction",
    "X12ParseError",
    "X12PathError",
    "get",
    "get_all",
    "parse_interchanges",
    "parse_path",
]
