"""HL7 v2 support: reading messages, Verial paths, and the MLLP capture server (docs/hl7.md).

Public API (README, "Public API"; docs/hl7.md, "Python API"): the names in ``__all__``, for
other checks that read HL7 (e.g. ``sftp-file-present`` with ``parse: hl7``) and for tests that
capture what an agent sends; each loads its private module on first use (the plugin imports
this package for its capture fixture), and python-hl7 is imported only when a message is
parsed. ``_PUBLIC`` is the one table; the ``TYPE_CHECKING`` imports and ``__all__`` repeat
it, and tests/core/test_public_api.py fails when they disagree::

    from pytest_verial.hl7 import parse_stream, get
    messages = parse_stream(text, "outbound/adt.hl7")   # Hl7ParseError names the problem
    get(messages[0], "PID.3[2].1")                       # value, None, list, or MISSING

The capture server: :func:`run_capture` (blocking), :class:`CaptureProcess` (``verial
hl7-capture`` as a child process), :class:`CaptureThread` (in-process); the plugin provides
the ``verial_hl7_capture`` fixture.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:
    from ._capture import CaptureProcess, CaptureThread, run_capture
    from ._parse import Hl7Message, Hl7ParseError, parse_message, parse_stream
    from ._paths import Hl7PathError, get, get_all, parse_path

#: public name -> the private module that defines it
_PUBLIC = {
    **dict.fromkeys(["CaptureProcess", "CaptureThread", "run_capture"], "_capture"),
    **dict.fromkeys(["Hl7Message", "Hl7ParseError", "parse_message", "parse_stream"], "_parse"),
    **dict.fromkeys(["Hl7PathError", "get", "get_all", "parse_path"], "_paths"),
}
__getattr__, __dir__ = exports(__name__, _PUBLIC)

__all__ = [
    "CaptureProcess",
    "CaptureThread",
    "Hl7Message",
    "Hl7ParseError",
    "Hl7PathError",
    "get",
    "get_all",
    "parse_message",
    "parse_path",
    "parse_stream",
    "run_capture",
]
