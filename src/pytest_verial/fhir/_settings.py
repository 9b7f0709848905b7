"""``sources.fhir`` of run.yaml checked before use (one line naming the file and the key), and
read: values from environment variables (:func:`env_value`), numbers (:func:`number_setting`).

docs/fhir.md, Live server: a bad value (``timeout: -5``, ``max_pages: lots``, ``deadline: 0``)
or an unknown key (a typo such as ``max_page``) is a :class:`RunConfigError` of every criterion
that needs the source, never a traceback and never a silently ignored setting.
"""

from __future__ import annotations

import difflib
import math
import os
from datetime import date, datetime
from typing import Any

from .._errors import RunConfigError, SourceError
from .._secrets import register_setting

AUTH_KINDS = ("none", "bearer", "client_credentials", "google")
#: keys holding text (URLs, names of environment variables, ...)
TEXT_KEYS = {
    "base_url", "base_url_env", "fhir_base_url", "token_url", "client_id", "client_id_env",
    "client_secret_env", "token_env", "scope",
}  # fmt: skip
#: keys refused later with their own message (a secret given as a value)
SECRET_VALUES = {"client_secret", "token"}
POSITIVE_SECONDS = {"timeout", "deadline"}
KNOWN = TEXT_KEYS | SECRET_VALUES | POSITIVE_SECONDS | {
    "auth", "retries", "backoff", "max_pages", "validate_params", "baseline_since", "validation",
    "concurrency",
}  # fmt: skip
#: searches of one task run sent at once (``sources.fhir.concurrency``); 1 sends one at a time
DEFAULT_CONCURRENCY = 8
MAX_CONCURRENCY = 64


def check_settings(settings: dict[str, Any], where: str = "run.yaml") -> dict[str, Any]:
    """``settings`` with ``baseline_since`` as text; RunConfigError for the first bad key."""
    for key in settings:
        if key not in KNOWN:
            close = difflib.get_close_matches(str(key), sorted(KNOWN), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise RunConfigError(
                f"{where}: sources.fhir.{key}: unknown key{hint}; known: {', '.join(sorted(KNOWN))}"
            )
    for key, value in settings.items():
        problem = _problem(key, value)
        if problem is not None:
            raise RunConfigError(f"{where}: sources.fhir.{key}: {problem}, got {value!r}")
    since = settings.get("baseline_since")
    if isinstance(since, (datetime, date)):
        settings = {**settings, "baseline_since": since.isoformat()}
    return settings


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


def _problem(key: str, value: Any) -> str | None:
    """What is wrong with one value, or None."""
    if value is None:
        return None
    if key in POSITIVE_SECONDS:
        ok = _number(value) and 0 < value < float("inf")
        return None if ok else "expected a positive number of seconds"
    if key == "backoff":
        return None if _number(value) and 0 <= value <= 3600 else "expected seconds >= 0"
    if key == "retries":
        ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 100
        return None if ok else "expected a whole number from 0 to 100"
    if key == "concurrency":
        ok = isinstance(value, int) and not isinstance(value, bool)
        ok = ok and 1 <= value <= MAX_CONCURRENCY
        return None if ok else f"expected a whole number from 1 to {MAX_CONCURRENCY}"
    if key == "max_pages":
        ok = isinstance(value, int) and not isinstance(value, bool) and value >= 1
        return None if ok else "expected a whole number >= 1"
    if key == "validate_params":
        return None if isinstance(value, bool) else "expected true or false"
    if key == "auth":
        return None if value in AUTH_KINDS else f"expected one of {', '.join(AUTH_KINDS)}"
    if key == "validation":
        return None if value in ("R4B", "R5") else "expected R4B or R5"
    if key == "baseline_since":
        ok = isinstance(value, (str, datetime, date))
        return None if ok else "expected a date-time such as 2026-11-21T15:00:00Z"
    if key in TEXT_KEYS:
        return None if isinstance(value, str) and value.strip() else "expected text"
    return None


def env_value(settings: dict[str, Any], key: str, required: bool = True) -> str | None:
    """``key`` itself (non-secret) or the variable named by ``key_env`` (masked in every
    artifact when it holds a secret: :func:`~pytest_verial._secrets.is_secret_setting`)."""
    name = settings.get(f"{key}_env")
    if name:
        value = register_setting(f"{key}_env", os.environ.get(str(name)))
        if not value and required:
            raise SourceError(f"sources.fhir.{key}_env: environment variable ${name} is not set")
        return value
    value = settings.get(key)
    if value is None and required:
        raise SourceError(f"sources.fhir: {key} or {key}_env is required")
    return None if value is None else str(value)


def number_setting(
    settings: dict[str, Any], key: str, default: Any, kind: type, positive: bool = False
) -> Any:
    """A number from ``sources.fhir``: finite, not negative (or > 0 when ``positive``)."""
    value = settings.get(key, default)
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if ok and kind is int:
        ok = float(value).is_integer()
    if not ok or value < 0 or (positive and value == 0):
        wanted = "a positive" if positive else "a non-negative"
        noun = "integer" if kind is int else "number"
        raise SourceError(f"run.yaml sources.fhir.{key}: expected {wanted} {noun}, got {value!r}")
    return kind(value)
