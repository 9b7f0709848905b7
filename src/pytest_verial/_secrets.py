"""Secrets seen in this process, and their removal from everything a run writes or prints.

Secrets come only from environment variables (API keys, tokens, passwords, client secrets) or
from token endpoints (access tokens). Whatever reads one registers it here (the judge's key and
every secret ``*_env`` setting of run.yaml are registered when the session starts, in every
process, before any cache lookup or request). Every artifact passes through :func:`redact` /
:func:`redact_json`: criterion details and evidence (engine), the JSON report and its
checkpoints, both JUnit files, pytest's terminal and ``--junitxml`` (failure text, captured
output and logs, collection errors, warnings) and the judge's disk cache.

A secret is masked (``***``) in every reversible common encoding, and in any mix of them
(each character on its own may be written another way):

- as read, and stripped of surrounding whitespace (an env value often ends in a newline);
- in any case (upper, lower, mixed), and with ``_`` turned into ``-`` (or back);
- percent-encoded, whole or partly (``%XX`` per UTF-8 byte, upper- or lower-case hex; ``+``
  for a space);
- escaped as JSON or Python (``\\uXXXX``, ``\\UXXXXXXXX``, ``\\xNN``, a backslash before
  punctuation such as ``\\_``, ``repr`` of str or bytes) or as XML/HTML (``&#NN;``, ``&#xNN;``,
  ``&amp;`` ...);
- hex of its UTF-8 bytes (either case);
- base64 and base64url, with or without padding, at any of the 3 offsets a value can start at
  inside a longer encoded text (``base64(client_id:secret)`` in a basic-auth header, a JWT):
  the characters that depend on the secret alone are masked;
- split: any run of at least :data:`FRAGMENT` consecutive characters of one of those forms is
  masked, and whitespace or an escaped line break (``\\n``) may interrupt it anywhere (a wrapped
  error line, a value truncated to a snippet, a key printed in two halves). Shorter fragments
  are left alone: below 8 characters ordinary words would match, and 7 characters of a
  40-character key do not make it guessable.

How: a text is read once, left to right, into its decoded form (breaks dropped, each encoded
character decoded, case folded, ``-`` read as ``_``; every regex involved is bounded: fixed-width
tokens, no nested repetition), and that form is searched for the secret's own decoded forms
(the secret, its UTF-8 bytes, UTF-16 units, hex and base64 forms), built once per registered
secret; a match masks the span of the original text it came from.

Which ``*_env`` settings are secrets is decided by :func:`is_secret_setting`: a name whose last
word is ``token``, ``key``, ``apikey``, ``secret``, ``password``/``passwd``/``pwd``,
``credential(s)``, ``auth`` or ``bearer`` (``token_env``, ``api_key_env``, ``client_secret_env``).
Others (``base_url_env``, ``token_url_env``, ``client_id_env``) are not masked whole, so errors
still name the server; a password inside a URL read from one (``scheme://user:PASSWORD@host``)
is.

Cost: a text's decoded form is first tested with an exact q-gram prefilter (linear,
independent of how many or how long the secrets are); the full pattern and the mapping back to
the original text run only on texts that may hold one, and results are memoised (a report is
redacted again at every checkpoint).
(docs: README "Run directories" and "Scored runs".)
"""

from __future__ import annotations

import base64
import html
import json
import re
import threading
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, quote_plus, urlsplit

MASK = "***"
#: shorter values are not treated as secrets (they would mask ordinary words)
MIN_LENGTH = 6
#: a run of this many consecutive characters of a secret (in any form) is masked on its own
FRAGMENT = 8
_SECRET_WORDS = frozenset(
    {
        "token",
        "key",
        "apikey",
        "secret",
        "password",
        "passwd",
        "pwd",
        "credential",
        "credentials",
        "auth",
        "bearer",
    }
)

_SECRETS: set[str] = set()
_LOCK = threading.Lock()
_PATTERN: re.Pattern[str] | None = None
#: (q, stride, every q-gram of every form without its breaks): see :func:`_may_hold_secret`
_PREFILTER: tuple[int, int, frozenset[str]] = (1, 1, frozenset())
_PREFILTER_OF = 0  # how many secrets _PREFILTER covers
#: texts already redacted under the current secrets (reports are redacted at every checkpoint)
_MEMO: dict[str, str] = {}
_MEMO_LIMIT = 50_000


def is_secret_setting(name: str) -> bool:
    """Whether a ``<name>_env`` setting names a variable that holds a secret.

    ``token_env``, ``client_secret_env``, ``api_key_env``, ``password_env`` are;
    ``base_url_env``, ``database_url_env``, ``client_id_env`` are not.
    """
    stem = name[: -len("_env")] if name.endswith("_env") else name
    words = [w for w in re.split(r"[^a-z0-9]+", stem.lower()) if w]
    return bool(words) and words[-1] in _SECRET_WORDS


def register_setting(name: str, value: str | None) -> str | None:
    """Register the value of setting ``name`` when it is a secret (see :func:`is_secret_setting`);
    for any other value only a password in a URL's user info is. Returns ``value``."""
    if value is None:
        return None
    if is_secret_setting(name):
        return register(value)
    try:
        password = urlsplit(value.strip()).password
    except ValueError:
        password = None
    register(password)
    return value


def register_settings(settings: Any, environ: Any) -> None:
    """Register every secret that the ``*_env`` keys of a settings mapping (one ``sources.<name>``
    of run.yaml, nested mappings included) name in ``environ``."""
    if isinstance(settings, dict):
        for key, value in settings.items():
            if isinstance(key, str) and key.endswith("_env") and isinstance(value, str):
                register_setting(key, environ.get(value))
            else:
                register_settings(value, environ)
    elif isinstance(settings, list):
        for value in settings:
            register_settings(value, environ)


def register(value: str | None) -> str | None:
    """Remember ``value`` as a secret; returns it unchanged for use in an expression."""
    global _PATTERN, _PREFILTER_OF
    if not value:
        return value
    secret = value.strip()  # what is around it is not secret, and its escapes would eat text
    if len(secret) >= MIN_LENGTH and secret not in _SECRETS:
        with _LOCK:
            _SECRETS.add(secret)
            _PATTERN, _PREFILTER_OF = None, -1
            _MEMO.clear()
    return value


#: the public name (:mod:`pytest_verial.checks`): a custom check that reads a credential
#: registers it, and every record of the run (report, journal, log, cache, store) masks it
register_secret = register


def registered() -> bool:
    """Whether any secret is registered in this process."""
    return bool(_SECRETS)


#: a break (whitespace, an escaped line break or tab), or one encoded character; each is
#: bounded: fixed-width hex, at most 7 digits in a numeric reference, one character after a
#: backslash. Read left to right, so ``\\\\t`` is an escaped backslash then ``t``.
_TOKEN = re.compile(
    r"(\s+|\\[nrt])"  # 1: a break, dropped
    r"|%([0-9A-Fa-f]{2})"  # 2: percent-encoding, per byte, either case
    r"|\\u([0-9A-Fa-f]{4})"  # 3: JSON / Python \uXXXX
    r"|\\U([0-9A-Fa-f]{8})"  # 4: Python \UXXXXXXXX
    r"|\\x([0-9A-Fa-f]{2})"  # 5: Python \xNN
    r"|&#([0-9]{1,7});"  # 6: HTML/XML decimal reference
    r"|&#[xX]([0-9A-Fa-f]{1,6});"  # 7: HTML/XML hex reference
    r"|&(amp|lt|gt|quot|apos);"  # 8: HTML/XML named entity
    r"|\\([^A-Za-z0-9\s])"  # 9: a backslash escape of punctuation (\_ \- \" \\)
)
_ENTITIES = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'"}
_WHITESPACE = re.compile(r"\s+")
#: case is folded and ``-`` read as ``_`` on both sides (a secret with ``_`` turned into ``-``)
_FOLD = str.maketrans({"-": "_"})


def _token_char(match: re.Match[str]) -> str:
    """What one :data:`_TOKEN` match stands for: nothing for a break, else the character it
    encodes (a number out of range: as written)."""
    index = match.lastindex or 1
    value = match.group(index)
    if index == 1:
        return ""
    if index == 8:
        return _ENTITIES[value]
    if index == 9:
        return value
    point = int(value, 10 if index == 6 else 16)
    return chr(point) if point <= 0x10FFFF else match.group()


def _decode(text: str) -> str:
    """``text`` as :func:`redact` matches it: breaks removed, every encoded character decoded,
    case folded, ``-`` read as ``_``."""
    if "%" in text or "\\" in text or "&" in text:
        text = _TOKEN.sub(_token_char, text)
    else:  # no escape: only whitespace to remove (the common case, at C speed)
        text = _WHITESPACE.sub("", text)
    return text.lower().replace("-", "_")


def _decode_mapped(text: str) -> tuple[str, list[int], list[int]]:
    """:func:`_decode`, with where in ``text`` each decoded character starts and ends."""
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []

    def add(folded: str, start: int, end: int) -> None:
        chars.append(folded)
        starts.extend([start] * len(folded))
        ends.extend([end] * len(folded))

    def plain(a: int, b: int) -> None:
        folded = text[a:b].lower().replace("-", "_")
        if len(folded) == b - a:  # one character each (almost always): at C speed
            chars.append(folded)
            starts.extend(range(a, b))
            ends.extend(range(a + 1, b + 1))
        else:  # a character whose lower case is longer (U+0130)
            for i in range(a, b):
                add(text[i].lower().translate(_FOLD), i, i + 1)

    last = 0
    for token in _TOKEN.finditer(text):
        plain(last, token.start())
        add(_token_char(token).lower().translate(_FOLD), token.start(), token.end())
        last = token.end()
    plain(last, len(text))
    return "".join(chars), starts, ends


def forms(secret: str) -> set[str]:
    """Text forms of ``secret`` that :func:`redact` masks (beyond these, every mix of them:
    any character in any case, percent-encoded or escaped on its own; see the module
    docstring). Used by tests, and as the sources of :func:`_decoded_forms`."""
    raw = secret.encode("utf-8")
    out = {secret, secret.upper(), secret.lower(), secret.swapcase(), secret.replace("_", "-")}
    out.add(repr(secret)[1:-1])
    out.add(secret.encode("unicode_escape").decode("ascii"))
    out.add(json.dumps(secret)[1:-1])
    out.add(json.dumps(secret, ensure_ascii=False)[1:-1])
    out.add("".join(f"\\u{ord(c):04x}" for c in secret if ord(c) <= 0xFFFF))
    out.add("".join(f"\\x{b:02x}" for b in raw))
    out.add(re.sub(r"([^A-Za-z0-9])", r"\\\1", secret))  # \_-style escapes
    out.add(html.escape(secret, quote=True))
    out.add(html.escape(secret, quote=False))
    for encoded in (
        quote(secret, safe=""),
        quote(secret),
        quote_plus(secret),
        "".join(f"%{b:02X}" for b in raw),
    ):
        out.add(encoded)
        out.add(re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), encoded))
    out.add(raw.hex())
    out.add(raw.hex().upper())
    out.update(_base64_forms(raw))
    return {form for form in out if len(form) >= MIN_LENGTH}


def _base64_forms(raw: bytes) -> set[str]:
    """The characters of base64 / base64url that depend on ``raw`` alone, at the 3 offsets a
    value can start at inside a longer encoded text (padding never depends on it)."""
    out = set()
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        for offset in range(3):
            text = encode(b"\0" * offset + raw).decode("ascii").rstrip("=")
            start, end = -(-8 * offset // 6), 8 * (offset + len(raw)) // 6
            out.add(text[start:end])
    return out


def _decoded_forms(secret: str) -> set[str]:
    """What :func:`redact` looks for in a decoded text (:func:`_decode`): the secret (also with
    ``+`` for its spaces), its UTF-8 bytes one character each (``%C3%A9``, ``\\xc3\\xa9``), its
    UTF-16 code units (``\\ud83d\\ude00``), its hex and base64 forms; each decoded the same way."""
    raw = secret.encode("utf-8")
    units = raw.decode("utf-8").encode("utf-16-be", "surrogatepass")
    sources = {
        secret,
        secret.replace(" ", "+"),
        raw.decode("latin-1"),
        "".join(chr(int.from_bytes(units[i : i + 2], "big")) for i in range(0, len(units), 2)),
        raw.hex(),
        *_base64_forms(raw),
    }
    out = {_decode(form) for form in sources}
    out.add(secret.lower().translate(_FOLD))  # as written, never decoded
    return {form for form in out if len(form) >= MIN_LENGTH}


def _trie_regex(words: Iterable[str]) -> str:
    """One regex matching any of ``words``; built as a trie so that its cost does not grow
    with the number of words."""
    trie: dict[str, Any] = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def build(node: dict[str, Any]) -> str:
        branches = [re.escape(char) + build(child) for char, child in sorted(node.items()) if char]
        if "" in node:
            return "" if not branches else "(?:" + "|".join(branches) + ")?"
        return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"

    return build(trie)


def _all_forms() -> list[str]:
    return [form for secret in _SECRETS for form in _decoded_forms(secret)]


def _pattern() -> re.Pattern[str] | None:
    """The full pattern (every gram of every decoded form), built on first need."""
    global _PATTERN
    if _PATTERN is None and _SECRETS:
        with _LOCK:
            grams: set[str] = set()
            for form in _all_forms():
                size = min(FRAGMENT, len(form))
                grams.update(form[i : i + size] for i in range(len(form) - size + 1))
            _PATTERN = re.compile(f"(?=({_trie_regex(grams)}))")
    return _PATTERN


def _prefilter() -> tuple[int, int, frozenset[str]]:
    """(q, stride, q-grams) for :func:`_may_hold_secret`, rebuilt when a secret is added."""
    global _PREFILTER, _PREFILTER_OF
    with _LOCK:
        if len(_SECRETS) != _PREFILTER_OF:
            decoded = _all_forms()
            shortest = max(1, min(FRAGMENT, *(len(form) for form in decoded)))
            q = max(1, min(5, shortest - 3))
            small = {form[i : i + q] for form in decoded for i in range(len(form) - q + 1)}
            _PREFILTER, _PREFILTER_OF = (q, shortest - q + 1, frozenset(small)), len(_SECRETS)
        return _PREFILTER


def _may_hold_secret(decoded: str) -> bool:
    """False when a decoded text (:func:`_decode`) certainly holds no run of a secret's form
    (a fast, exact test).

    A run of ``L`` = q + stride - 1 characters of a form covers a position that is a multiple
    of ``stride`` with a whole q-gram of that form after it; so looking up the q-grams at every
    ``stride``-th position of the text finds every run (and a few coincidences, which the full
    pattern then rules out).
    """
    q, stride, small = _prefilter()
    return not small.isdisjoint(decoded[i : i + q] for i in range(0, len(decoded) - q + 1, stride))


def redact(text: str) -> str:
    """``text`` with every registered secret, in any form or fragment, replaced by ``***``."""
    if not _SECRETS or not text or not isinstance(text, str):
        return text
    known = _MEMO.get(text)
    if known is not None:
        return known
    pattern = _pattern() if _may_hold_secret(_decode(text)) else None
    masked = text if pattern is None else _redact(text, pattern)
    if len(_MEMO) >= _MEMO_LIMIT:
        _MEMO.clear()
    _MEMO[text] = masked
    return masked


def _redact(text: str, pattern: re.Pattern[str]) -> str:
    decoded, starts, ends = _decode_mapped(text)
    spans: list[list[int]] = []
    for match in pattern.finditer(decoded):
        first, last = match.start(), match.start() + len(match.group(1)) - 1
        start, end = starts[first], ends[last]
        if spans and start <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([start, end])
    if not spans:
        return text
    parts, last = [], 0
    for start, end in spans:
        parts.append(text[last:start])
        parts.append(MASK)
        last = end
    parts.append(text[last:])
    return "".join(parts)


def redact_json(value: Any) -> Any:
    """A copy of a JSON value with secrets removed from every string in it (keys included)."""
    if not _SECRETS:
        return value
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list | tuple):
        return [redact_json(v) for v in value]
    if isinstance(value, dict):
        return {(redact(k) if isinstance(k, str) else k): redact_json(v) for k, v in value.items()}
    return value


def reset() -> None:
    """Forget every secret (tests only)."""
    global _PATTERN, _PREFILTER_OF
    with _LOCK:
        _SECRETS.clear()
        _PATTERN, _PREFILTER_OF = None, -1
        _MEMO.clear()
