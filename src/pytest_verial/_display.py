"""Text from benchmark files and sandbox data made safe to show: terminal, JUnit XML, ids.

Values a check reads (a portal cell, a FHIR string, a file name, an agent's output) and ids a
benchmark file gives can hold characters that act on a terminal or a reader instead of being
shown: ANSI escape sequences (``ESC [31m``), bidi overrides (U+202E) that reorder a line,
zero-width characters, line separators, NUL and other controls, lone surrogates from file names
that are not UTF-8. XML 1.0 cannot hold most control characters at all, even as ``&#x1b;``.

- :func:`escape` is the one function every text surface uses (terminal writers, ``verial
  feedback``/``show``/``report``/``compare``, both JUnit files, Markdown cells and the step
  summary, the HTML page's data): each character Python does not call printable (Unicode
  categories Cc, Cf, Cs, Co, Cn, Zl, Zp and every space but U+0020: ESC and so every CSI
  sequence, C0 and C1 controls, CR, bidi overrides U+202A-202E and U+2066-2069, zero-width
  characters) is written as its Python escape, ``\\x1b``, ``\\u202e``, ``\\U000e0001``.
  What is left is printable text and valid XML 1.0.
- :func:`sanitize` is :func:`escape` plus, for a page that renders Markdown (``markdown=True``:
  the Markdown summary, the CI step summary), :func:`unlink`: a bare URL or ``www.`` name in
  sandbox text does not become a link.
- :func:`unsafe_id_char` finds the first character an id may not hold (README "Ids").

The JSON report keeps values as they are: JSON escapes control characters itself
(:func:`pytest_verial.reporting._json_report.write_json_report`).
"""

from __future__ import annotations

import re
import unicodedata

#: characters (or pairs) that would break a node id ``path::task[entity]@run::criterion`` or a
#: benchmark ref ``slug@version``, or that name a directory (a task id is a sandbox folder)
ID_SEPARATORS = ("::", "[", "]", "@", "/", "\\")


_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _code(char: str) -> str:
    if char in _SHORT:
        return _SHORT[char]
    point = ord(char)
    if point <= 0xFF:
        return f"\\x{point:02x}"
    if point <= 0xFFFF:
        return f"\\u{point:04x}"
    return f"\\U{point:08x}"


def escape(text: str, keep: str = "") -> str:
    """``text`` with every non-printable character written as its escape (``\\x1b``).

    ``keep`` lists characters left as they are: ``"\\n"`` for a multi-line block whose line
    breaks are its own (each value put into it must be escaped without ``keep`` first).
    """
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in keep else _code(c) for c in text)


#: what GitHub-flavoured Markdown turns into a link by itself: ``scheme://``, ``www.``, an
#: e-mail address (``name@host.tld``) and ``mailto:`` / ``xmpp:``
_AUTOLINK = re.compile(
    r"(:)(//)|\b(www)(\.)|(?<=[\w.+-])(@)(?=[\w-]+\.)|\b(mailto:|xmpp:)()", re.IGNORECASE
)
#: an HTML zero-width space between the two halves: the page shows the text unchanged, but the
#: autolinker (which reads the source) no longer sees ``://`` or ``www.``
_BREAK = "&#8203;"


def unlink(text: str) -> str:
    """``text`` with every ``://``, ``www.``, e-mail ``@`` and ``mailto:`` broken by
    ``&#8203;``, so that a Markdown page shows them as text, never as links (GitHub's autolinks
    read ``https://x``, ``www.x``, ``a@b.org`` and ``mailto:a``)."""
    return _AUTOLINK.sub(_broken, text)


def _broken(match: re.Match[str]) -> str:
    if match[5]:
        return match[5] + _BREAK
    if match[6]:
        return match[6][:-1] + _BREAK + ":"
    return (match[1] or match[3]) + _BREAK + (match[2] or match[4])


def sanitize(text: str, keep: str = "", markdown: bool = False) -> str:
    """The one sanitizer of text put on any surface: :func:`escape`, then for a Markdown page
    :func:`unlink`."""
    text = escape(text, keep)
    return unlink(text) if markdown else text


def show(value: object) -> str:
    """Any value as one escaped line (``str`` then :func:`escape`)."""
    return escape(value if isinstance(value, str) else str(value))


_CONTROL_NAMES = {
    0x00: "NULL",
    0x09: "TAB",
    0x0A: "LINE FEED",
    0x0D: "CARRIAGE RETURN",
    0x1B: "ESCAPE",
    0x7F: "DELETE",
}
_KINDS = {
    "Cc": "a control character",
    "Cf": "an invisible format character",
    "Cs": "a lone surrogate (not UTF-8)",
    "Co": "a private-use character",
    "Cn": "an unassigned code point",
    "Zs": "a space other than U+0020",
    "Zl": "a line separator",
    "Zp": "a paragraph separator",
}


def describe_char(char: str) -> str:
    """``U+202E RIGHT-TO-LEFT OVERRIDE (an invisible format character)``, never the character."""
    point = ord(char)
    name = _CONTROL_NAMES.get(point) or unicodedata.name(char, "")
    kind = _KINDS.get(unicodedata.category(char))
    return f"U+{point:04X}" + (f" {name}" if name else "") + (f" ({kind})" if kind else "")


def unsafe_char(text: str) -> str | None:
    """The first character of ``text`` that :func:`escape` would escape, else None."""
    if text.isprintable():
        return None
    return next(c for c in text if not c.isprintable())


def unsafe_id_char(text: str) -> str | None:
    """Why ``text`` cannot be an id, as a phrase, or None when it can.

    Refused: any character :func:`escape` would escape (controls, ANSI escapes, bidi
    overrides, zero-width characters, line and paragraph separators, tabs, spaces other than
    U+0020, lone surrogates), and the separators of node ids and refs (``::``, ``[``, ``]``,
    ``@``, ``/``, ``\\``).
    """
    char = unsafe_char(text)
    if char is not None:
        return f"contains {describe_char(char)}"
    for sep in ID_SEPARATORS:
        if sep in text:
            return f"contains {sep!r}, which separates the parts of node ids and refs"
    return None
