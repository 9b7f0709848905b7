"""Secrets seen in this process, and their removal from everything a criterion run records.

Secrets come only from environment variables (API keys, client secrets) or from token
endpoints (access tokens). Whatever reads one registers it here; the engine passes every
criterion run's ``details`` and ``evidence`` through :func:`redact_json`, so a server that
echoes a key in an error body cannot put it into a report, JUnit file, log or feedback text.
"""

from __future__ import annotations

import threading
from typing import Any

MASK = "***"
_SECRETS: set[str] = set()
_LOCK = threading.Lock()
#: shorter values are not treated as secrets (they would mask ordinary words)
MIN_LENGTH = 6


def register(value: str | None) -> str | None:
    """Remember ``value`` as a secret; returns it unchanged for use in an expression."""
    if value and len(value) >= MIN_LENGTH:
        with _LOCK:
            _SECRETS.add(value)
    return value


def redact(text: str) -> str:
    """``text`` with every registered secret replaced by ``***`` (longest first)."""
    if not _SECRETS or not text:
        return text
    for secret in sorted(_SECRETS, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def redact_json(value: Any) -> Any:
    """A copy of a JSON value with secrets removed from every string in it."""
    if not _SECRETS:
        return value
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [redact_json(v) for v in value]
    if isinstance(value, dict):
        return {k: redact_json(v) for k, v in value.items()}
    return value
