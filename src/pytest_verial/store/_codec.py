"""The JSON codec of the store's JSON columns (both dialects): pydantic-core's, with
``json``'s as the fallback for what it refuses."""

from __future__ import annotations

import json
from typing import Any

from pydantic_core import PydanticSerializationError, from_json, to_json


def json_text(value: Any) -> str:
    """A JSON column's text. pydantic-core's encoder takes a third of ``json.dumps``'s time on
    report rows; ``json.dumps`` writes what it refuses (a lone surrogate, escaped), so that
    :func:`json_value` reads back the same string.

    The fallback is right because it is for JSON values only: ``json.dumps`` has no
    ``default``, so a value neither encoder knows is a TypeError, never its ``str()``. Every
    writer passes a JSON form already (a report's ``to_json()``, ``model_dump(mode="json")``, a
    request body parsed from JSON, a response body made of those). pydantic-core would write
    a datetime, bytes, a Decimal or a UUID as a string and a set as a list; refusing those too
    would mean checking every value first, four times the cost of the encoding (measured on
    report rows), on the store's hot path, for values no writer produces."""
    try:
        return to_json(value).decode()
    except (PydanticSerializationError, ValueError):
        return json.dumps(value)


def json_value(text: str | bytes) -> Any:
    """A JSON column's value (pydantic-core's parser; ``json.loads`` for what it refuses)."""
    try:
        return from_json(text)
    except ValueError:
        return json.loads(text)
