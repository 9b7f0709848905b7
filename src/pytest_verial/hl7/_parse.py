"""Reading HL7 v2 messages: MLLP framing, segment separators, structural validation.

Parsing is done by the ``hl7`` package (python-hl7); this module prepares the text for it and
refuses what it would silently mis-read:

- MLLP framing (``<VT> message <FS><CR>``) is removed; a frame that is opened and never closed
  is reported as truncated; text outside the frames is ignored *with a warning* (a capture that
  lost a frame start must not pass silently), and so is a file with nothing in it;
- ``\\r``, ``\\n`` and ``\\r\\n`` segment separators are all accepted (python-hl7 only splits on
  ``\\r``);
- a stream holding several messages is split at each ``MSH`` segment; batch envelopes
  (FHS/BHS/BTS/FTS) are skipped;
- a message must start with ``MSH``, declare its encoding characters, carry a message type
  (MSH-9), a control id (MSH-10) and a version (MSH-12), and every segment must start with a
  three-character segment id; binary data is refused.

Errors are :class:`Hl7ParseError` (a ``ValueError``) with a message naming the segment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

START_BLOCK = "\x0b"
END_BLOCK = "\x1c"

_SEGMENT_ID = re.compile(r"[A-Z][A-Z0-9]{2}\Z")
_BINARY = re.compile(r"[\x00-\x08\x0c\x0e-\x1f\x7f]")
_NEWLINES = re.compile(r"\r\n|\n|\r")
_VERSION = re.compile(r"2\.\d{1,2}(\.\d{1,2})?\Z")
#: batch envelope segments, skipped between messages
_BATCH = ("FHS", "BHS", "BTS", "FTS")


class Hl7ParseError(ValueError):
    """A message that cannot be read as HL7 v2; the text says where and why."""


@dataclass
class Hl7Message:
    """One validated HL7 v2 message and where it came from.

    ``msh`` holds the MSH fields (``msh[n - 1]`` is MSH-n); paths on MSH read them directly.
    python-hl7's tree (``parsed``) is built on the first path into another segment, so
    scanning many messages for one trigger event does not parse them all. ``origin`` names
    the file (and message number) or events row.
    """

    text: str
    msh: list[str]
    origin: str
    created_at: str | None = None
    _parsed: Any = field(default=None, repr=False)

    @property
    def parsed(self) -> Any:
        """The whole message as an ``hl7.Message`` (parsed once)."""
        if self._parsed is None:
            self._parsed = _hl7_parse(self.text, self.origin)
        return self._parsed

    @property
    def control_id(self) -> str:
        """MSH-10, the message control id."""
        return self.msh[9] if len(self.msh) > 9 else ""

    @property
    def message_type(self) -> str:
        """MSH-9 as written, e.g. ``ORU^R01^ORU_R01``."""
        return self.msh[8] if len(self.msh) > 8 else ""

    @property
    def trigger_event(self) -> str:
        """MSH-9.2, e.g. ``A04``."""
        parts = self.message_type.split(self.component_separator)
        return parts[1] if len(parts) > 1 else ""

    @property
    def component_separator(self) -> str:
        """The component separator declared in MSH-2 (usually ``^``)."""
        return self.msh[1][:1] or "^"

    def summary(self) -> dict[str, Any]:
        """``{control_id, type, trigger_event, origin}`` for evidence."""
        return {
            "control_id": self.control_id,
            "type": self.message_type,
            "trigger_event": self.trigger_event,
            "origin": self.origin,
        }


def _hl7_parse(text: str, origin: str) -> Any:
    from .._errors import SourceError

    try:
        import hl7  # type: ignore[import-untyped]
    except ImportError:
        raise SourceError(
            "reading HL7 needs the 'hl7' package (a dependency of pytest-verial): pip install hl7"
        ) from None
    try:
        return hl7.parse(text)
    except Exception as exc:  # python-hl7 raises bare exceptions on odd input
        raise SourceError(f"invalid HL7: {origin}: python-hl7 cannot parse it: {exc}") from None


def decode(data: bytes | str) -> str:
    """Bytes as text: UTF-8 (BOM allowed), else Latin-1, which HL7 v2 feeds often use."""
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def unframe(text: str, warnings: list[str] | None = None) -> list[str]:
    """The payloads of an MLLP stream, or ``[text]`` when it is not framed.

    Raises Hl7ParseError when a frame is opened and never closed (a truncated capture). Text
    outside the frames is dropped, and said in ``warnings`` when given.
    """
    if START_BLOCK not in text:
        return [text.replace(END_BLOCK, "")] if text.strip(END_BLOCK + "\r\n\t ") else []
    frames = []
    before, *chunks = text.split(START_BLOCK)
    stray = [("before frame 1", before)]
    for number, chunk in enumerate(chunks, start=1):
        end = chunk.find(END_BLOCK)
        if end < 0:
            raise Hl7ParseError(f"MLLP frame {number} is not closed (no <FS>): truncated")
        frames.append(chunk[:end])
        stray.append((f"after frame {number}", chunk[end + 1 :]))
    for place, outside in stray:
        if outside.strip() and warnings is not None:
            warnings.append(
                f"{len(outside.strip()):,} characters outside MLLP frames ({place}) ignored: "
                f"{outside.strip()[:40]!r}"
            )
    return frames


def split_messages(text: str, warnings: list[str] | None = None) -> list[str]:
    """Cut a text holding one or more messages into messages with ``\\r`` separators.

    A message starts at each ``MSH`` segment. Text before the first ``MSH`` that is not blank
    is an error (a message without a header).
    """
    messages: list[list[str]] = []
    for frame in unframe(text, warnings):
        lines = [line for line in _NEWLINES.split(frame) if line.strip()]
        for number, line in enumerate(lines, start=1):
            if line[:3] in _BATCH:
                continue
            if line.startswith("MSH"):
                messages.append([line])
            elif not messages:
                raise Hl7ParseError(
                    f"segment {number} ({line[:12]!r}) comes before any MSH segment: "
                    "a message must start with MSH"
                )
            else:
                messages[-1].append(line)
    return ["\r".join(segments) for segments in messages]


def check_structure(text: str) -> None:
    """Validate what python-hl7 assumes; raise Hl7ParseError naming the problem."""
    binary = _BINARY.search(text)
    if binary:
        offset = binary.start()
        raise Hl7ParseError(
            f"binary data (byte 0x{ord(binary.group()):02x} at character {offset}): not HL7 text"
        )
    if not text.startswith("MSH"):
        raise Hl7ParseError(f"message starts with {text[:3]!r}, not MSH")
    if len(text) < 8:
        raise Hl7ParseError("MSH segment is truncated before its encoding characters")
    field_sep = text[3]
    if field_sep.isalnum() or field_sep.isspace():
        raise Hl7ParseError(f"MSH-1 field separator {field_sep!r} is not a delimiter character")
    encoding = text[4 : text.find(field_sep, 4)] if text.find(field_sep, 4) > 0 else ""
    if not 2 <= len(encoding) <= 5:
        raise Hl7ParseError(
            f"MSH-2 encoding characters {encoding!r} must be 2 to 5 characters (usually ^~\\&)"
        )
    if len(set(encoding + field_sep)) != len(encoding) + 1 or any(
        c.isalnum() or c.isspace() for c in encoding
    ):
        raise Hl7ParseError(
            f"MSH-2 encoding characters {encoding!r} repeat the field separator or each other, "
            "or are letters/digits"
        )
    segments = text.split("\r")
    for number, segment in enumerate(segments, start=1):
        seg_id = segment.split(field_sep, 1)[0]
        if not _SEGMENT_ID.match(seg_id):
            raise Hl7ParseError(
                f"segment {number} starts with {seg_id[:20]!r}, not a segment id "
                f"(three letters/digits followed by {field_sep!r})"
            )
        if len(segment) > 3 and segment[3] != field_sep:
            raise Hl7ParseError(
                f"segment {number} ({seg_id}) is not followed by the field separator {field_sep!r}"
            )
    msh = segments[0].split(field_sep)
    # msh[0] = "MSH", msh[1] = MSH-2, so MSH-n is msh[n - 1].
    if len(msh) < 10 or not msh[8].strip():
        raise Hl7ParseError("MSH-9 (message type) is missing or empty")
    if not msh[9].strip():
        raise Hl7ParseError("MSH-10 (message control id) is empty")
    if len(msh) < 12 or not msh[11].strip():
        raise Hl7ParseError("MSH-12 (version id) is missing or empty")
    version = msh[11].split(encoding[0])[0]
    if not _VERSION.match(version):
        raise Hl7ParseError(
            f"MSH-12 version {version[:20]!r} is not a version like 2.5.1 "
            "(wrong segment separator?)"
        )


def validate_message(text: str) -> tuple[str, list[str]]:
    """Check one message without building it: its ``\\r``-separated text and its MSH fields.

    The MSH list is ``[MSH-1, MSH-2, MSH-3, ...]`` (so MSH-n is ``fields[n - 1]``). The capture
    server uses this to ACK quickly; :func:`parse_message` adds python-hl7's parse.
    """
    normalised = "\r".join(line for line in _NEWLINES.split(text.strip()) if line.strip())
    check_structure(normalised)
    first = normalised.split("\r", 1)[0]
    return normalised, [first[3], *first[4:].split(first[3])]


def parse_message(text: str, origin: str, created_at: str | None = None) -> Hl7Message:
    """One message (segments separated by ``\\r``, ``\\n`` or ``\\r\\n``), validated.

    python-hl7 parses it when a path first reads it (:attr:`Hl7Message.parsed`).
    """
    normalised, msh = validate_message(text)
    return Hl7Message(normalised, msh, origin, created_at)


def parse_stream(text: str, origin: str, warnings: list[str] | None = None) -> list[Hl7Message]:
    """Every message in a file's text (MLLP-framed or not), each with origin ``file#n``.

    ``warnings`` (when given) receives one line per thing ignored: text outside MLLP frames,
    a text holding no message at all.
    """
    binary = _BINARY.search(text.replace(START_BLOCK, "").replace(END_BLOCK, ""))
    if binary:
        raise Hl7ParseError(
            f"{origin}: binary data (byte 0x{ord(binary.group()):02x}): not HL7 text"
        )
    found: list[str] = []
    try:
        chunks = split_messages(text, found)
    except Hl7ParseError as exc:
        raise Hl7ParseError(f"{origin}: {exc}") from None
    if not chunks:
        found.append("empty (0 bytes): no message in it" if not text else "no message in it")
    if warnings is not None:
        warnings.extend(f"{origin}: {line}" for line in found)
    messages = []
    for number, chunk in enumerate(chunks, start=1):
        where = f"{origin} message {number}" if len(chunks) > 1 else origin
        try:
            messages.append(parse_message(chunk, where))
        except Hl7ParseError as exc:
            raise Hl7ParseError(f"{where}: {exc}") from None
    return messages
