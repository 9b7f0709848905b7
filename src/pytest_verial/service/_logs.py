"""Nothing secret in the service's log (issue 31).

Keys travel only in ``Authorization: Bearer`` (and the browser's ``HttpOnly`` cookie): a key
sent in a URL's query string is refused with a 400 that does not repeat it
(:func:`query_credential`, checked by :class:`~._http.BodyGuard` before any route), because a
URL is what access logs, proxies and browser histories keep. And every line the server logs,
the access log's request lines included, goes through :class:`MaskCredentials`, which masks
each credential form the server accepts wherever it appears: a key (``vk_…``, ``vrl_slv_…``,
``vrl_run_…``, percent-encoded too), a query parameter named as a credential (``key=``,
``token=``, ``access_token=``, ...), ``Bearer …`` and the sign-in cookie. :func:`log_config`
is uvicorn's logging configuration with that filter on every handler, applied in each worker.
"""

from __future__ import annotations

import copy
import logging
import re
from typing import Any
from urllib.parse import parse_qsl, unquote

#: query parameter names that carry a credential, in any case
CREDENTIAL_NAMES = frozenset(
    {
        "key",
        "api_key",
        "apikey",
        "api-key",
        "access_token",
        "token",
        "auth",
        "authorization",
        "bearer",
        "password",
        "passwd",
        "secret",
        "verial_key",
        "session",
    }
)
_SEP = r"(?:_|%5[Ff])"
#: a key of this service (org, solver or run token), plain or percent-encoded
_KEY = re.compile(rf"(vk|vrl{_SEP}(?:slv|run)){_SEP}[A-Za-z0-9%_\-]{{6,}}")
_BEARER = re.compile(r"(?i)\b(bearer)(\s+|%20|\+)[^\s\"'&;,]+")
_COOKIE = re.compile(r"(?i)\b(verial_key)=[^\s\"'&;,]+")
_PARAM = re.compile(r"([?&;])([^=&;#\s\"]+)=([^&;#\s\"]*)")
MASK = "***"


def query_credential(query: bytes | str) -> str | None:
    """How to name the first query parameter that carries a credential (by its name, or a
    value that is a key; never the key itself), None when none does."""
    text = query.decode("latin-1") if isinstance(query, bytes) else query
    for name, value in parse_qsl(text, keep_blank_values=True):
        if _KEY.search(name):
            return "(a parameter named as a key)"
        if name.lower() in CREDENTIAL_NAMES or _KEY.search(value):
            return repr(name)
    if _KEY.search(unquote(text)):  # a key outside name=value pairs
        return "(the query itself)"
    return None


def masked(text: str) -> str:
    """``text`` with every credential form masked (see the module)."""

    def param(match: re.Match[str]) -> str:
        sep, name, value = match.groups()
        if unquote(name).lower() in CREDENTIAL_NAMES and value:
            return f"{sep}{name}={MASK}"
        return match.group(0)

    text = _PARAM.sub(param, text)
    text = _KEY.sub(lambda m: f"{m.group(1)}_{MASK}", text)
    text = _BEARER.sub(lambda m: f"{m.group(1)} {MASK}", text)
    return _COOKIE.sub(lambda m: f"{m.group(1)}={MASK}", text)


class MaskCredentials(logging.Filter):
    """Masks credentials in a record before any handler writes it."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if record.name == "uvicorn.access" and isinstance(args, tuple) and len(args) == 5:
            client, method, path, version, status = args  # uvicorn's access line
            record.args = (client, method, masked(str(path)), version, status)
            return True
        try:
            text = record.getMessage()
        except (TypeError, ValueError):
            return True
        hidden = masked(text)
        if hidden != text:
            record.msg, record.args = hidden, ()
        return True


def log_config() -> dict[str, Any]:
    """uvicorn's logging configuration, every handler masking credentials, the service's own
    logger written like uvicorn's."""
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config.setdefault("filters", {})["credentials"] = {"()": f"{__name__}.MaskCredentials"}
    for handler in config["handlers"].values():
        handler.setdefault("filters", []).append("credentials")
    config["loggers"]["pytest_verial.service"] = {
        "handlers": ["default"],
        "level": "INFO",
        "propagate": False,
    }
    return config


__all__ = ["CREDENTIAL_NAMES", "MaskCredentials", "log_config", "masked", "query_credential"]
