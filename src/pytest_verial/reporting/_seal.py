"""The digest that seals a written report or journal line, and its check on read.

A report's text ends with ``,"integrity":{"digest":"sha256:<hex>"}}``: the SHA-256 of the bytes
before that member (with the closing brace), exactly as written. With a signing key in the
environment (:data:`KEY_ENV`) the digest is an HMAC-SHA256 under that key
(``hmac-sha256:<hex>``), so that an edit made without the key cannot be sealed again. Any
change to the bytes (a result edited to ``passed``, a task run added, even a re-indent) breaks
the seal; :func:`check` says so in one line. The bytes are hashed as they are, so every reader
checks a seal at the cost of one pass of SHA-256 over the file (no second parse).

Who requires a seal (README, "Trust"): ``verial merge``, ``--verial-resume``, ``verial
import`` and recovery from a journal refuse input that is unsealed or whose seal fails; the
commands that only show a report (show, html, compare, feedback) refuse a seal that fails and
read an unsealed report (written by hand or by an older version) as it is.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
from typing import Any

from .._secrets import register

#: the environment variable holding the signing key (never written anywhere)
KEY_ENV = "VERIAL_SIGNING_KEY"

_TAIL = re.compile(rb',"integrity":\{"digest":"(sha256|hmac-sha256):([0-9a-f]{64})"\}\}\s*\Z')


def _key() -> bytes | None:
    value = os.environ.get(KEY_ENV)
    if not value:
        return None
    register(value)  # masked wherever it might surface
    return value.encode("utf-8")


def digest(body: bytes) -> str:
    """``hmac-sha256:<hex>`` under the signing key, else ``sha256:<hex>``."""
    key = _key()
    if key is not None:
        return "hmac-sha256:" + hmac.new(key, body, hashlib.sha256).hexdigest()
    return "sha256:" + hashlib.sha256(body).hexdigest()


class Digest:
    """:func:`digest` of bytes given piece by piece (a report written as it is made)."""

    def __init__(self) -> None:
        key = _key()
        self.algorithm = "sha256" if key is None else "hmac-sha256"
        self._hash: Any = (
            hashlib.sha256() if key is None else hmac.new(key, digestmod=hashlib.sha256)
        )

    def update(self, body: bytes) -> None:
        self._hash.update(body)

    def stated(self) -> str:
        """What :func:`digest` of all the bytes given returns."""
        return f"{self.algorithm}:{self._hash.hexdigest()}"


def link(previous: str, body: bytes) -> str:
    """A journal line's digest: over the previous line's digest and this line's bytes, so
    that an edited, removed or reordered line breaks every digest after it."""
    return digest(previous.encode("ascii") + b"\n" + body)


def check_link(previous: str, body: bytes, stated: str) -> str | None:
    """Why a journal line's ``stated`` digest cannot be trusted, or None (see :func:`check`)."""
    algorithm = stated.partition(":")[0]
    key = _key()
    if algorithm == "hmac-sha256" and key is None:
        return f"it is signed (hmac-sha256) and {KEY_ENV} is not set: cannot verify it"
    if algorithm == "sha256" and key is not None:
        return f"it is not signed, and {KEY_ENV} is set: only signed input is trusted"
    if algorithm not in ("sha256", "hmac-sha256"):
        return "its integrity digest is damaged (edited since it was written)"
    if not hmac.compare_digest(link(previous, body), stated):
        return "its content does not match its integrity digest (edited since it was written)"
    return None


def seal(text: str) -> str:
    """``text`` (a JSON object) with its ``integrity`` member last."""
    if not text.endswith("}"):
        raise ValueError("only a JSON object is sealed")
    stated = digest(text.encode("utf-8", "surrogatepass"))
    return f"{text[:-1]}{seal_tail(stated)}"


def seal_tail(stated: str) -> str:
    """What replaces a sealed JSON object's closing brace: its ``integrity`` member, closed."""
    return f',"integrity":{{"digest":"{stated}"}}}}'


def sealed_digest(text: str) -> str:
    """The digest a sealed text carries (``sha256:<hex>`` or ``hmac-sha256:<hex>``)."""
    found = _TAIL.search(text.encode("utf-8", "surrogatepass"), max(0, len(text) - 200))
    if found is None:
        raise ValueError("not a sealed text")
    return f"{found.group(1).decode()}:{found.group(2).decode()}"


def check(data: bytes, required: bool) -> str | None:
    """Why ``data`` (a whole report file) cannot be trusted, or None.

    ``required``: an unsealed file is refused too (merge, resume, import)."""
    found = _TAIL.search(data, max(0, len(data) - 200))
    if found is None:
        if b'"integrity"' in data[-300:]:
            return "its integrity digest is damaged (edited since it was written)"
        return (
            "it carries no integrity digest (written by hand, re-serialized, or by a version "
            "before digests): score it again"
            if required
            else None
        )
    algorithm, stated = found.group(1).decode(), found.group(2).decode()
    key = _key()
    if algorithm == "hmac-sha256":
        if key is None:
            return (
                f"it is signed (hmac-sha256) and {KEY_ENV} is not set: cannot verify it"
                if required
                else None
            )
        hasher: Any = hmac.new(key, digestmod=hashlib.sha256)
    else:
        if key is not None and required:
            return f"it is not signed, and {KEY_ENV} is set: only signed input is trusted"
        hasher = hashlib.sha256()
    hasher.update(memoryview(data)[: found.start()])  # the bytes before the seal, uncopied
    hasher.update(b"}")
    actual = hasher.hexdigest()
    if not hmac.compare_digest(actual, stated):
        return "its content does not match its integrity digest (edited since it was written)"
    return None


__all__ = [
    "KEY_ENV",
    "Digest",
    "check",
    "check_link",
    "digest",
    "link",
    "seal",
    "seal_tail",
    "sealed_digest",
]
