"""HL7 v2 support: reading messages (:mod:`.parse`), Verial paths (:mod:`.paths`), and the
MLLP capture server (:mod:`.capture`). python-hl7 is imported only when a message is parsed.

Reusable from other checks (e.g. ``sftp-file-present`` with ``parse: hl7``)::

    from pytest_verial.hl7 import parse_stream, get
    messages = parse_stream(text, "outbound/adt.hl7")   # Hl7ParseError names the problem
    get(messages[0], "PID.3[2].1")                       # value, None, list, or MISSING
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _lazy as lazy

if TYPE_CHECKING:
    from ._parse import Hl7Message, Hl7ParseError, parse_message, parse_stream
    from ._paths import Hl7PathError, get, get_all, parse_path

__getattr__, __dir__ = lazy.exports(
    __name__,
    {
        **dict.fromkeys(["Hl7Message", "Hl7ParseError", "parse_message", "parse_stream"], "_parse"),
        **dict.fromkeys(["Hl7PathError", "get", "get_all", "parse_path"], "_paths"),
    },
)

__all__ = [
    "Hl7Message",
    "Hl7ParseError",
    "Hl7PathError",
    "get",
    "get_all",
    "parse_message",
    "parse_path",
    "parse_stream",
]
