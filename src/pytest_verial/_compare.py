"""Field comparison shared by every check: one ``FieldSpec``, one set of operators.

Verial compares ``expected`` by equality. Our extension adds an optional ``op`` per field:

=============  ==================================================================
``equals``     default. Numbers compare by value (``1 == 1.0``, ``"271" == 271``);
               booleans only equal booleans; everything else by ``==``.
``not_equals`` the negation of ``equals``.
``contains``   substring of a string, or member of a list (by ``equals``).
``regex``      a regex search on the text of the value, bounded in time (``REGEX_TIMEOUT``).
``exists``     the path resolves to a value that is not null.
``absent``     the path does not resolve, or resolves to null.
``in``         the value equals one of the items of ``expected`` (a list).
``gt gte lt lte``  numbers, or ISO 8601 dates / date-times (partial dates allowed).
``approx``     numbers within ``tolerance`` (absolute; default relative 1e-6).
=============  ==================================================================

A field whose path does not resolve has ``actual: null`` and fails every operator except
``absent`` and ``not_equals`` (which compares it as null: ``not_equals: null`` fails).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from datetime import UTC, date, datetime
from functools import lru_cache
from typing import Any, Literal

from pydantic import Field, JsonValue, model_validator

from ._errors import CheckError
from ._models import Model

Op = Literal[
    "equals",
    "not_equals",
    "contains",
    "regex",
    "exists",
    "absent",
    "in",
    "gt",
    "gte",
    "lt",
    "lte",
    "approx",
]
_MISSING = object()


class FieldSpec(Model):
    """One field assertion: ``{path, expected}`` plus our optional ``op`` and ``tolerance``."""

    path: str = Field(min_length=1)
    expected: JsonValue = None
    op: Op = "equals"
    tolerance: float | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _expected_fits_op(self) -> FieldSpec:
        if self.op == "in" and not isinstance(self.expected, list):
            raise ValueError("op 'in' needs 'expected' to be a list")
        if self.op == "regex":
            if not isinstance(self.expected, str):
                raise ValueError("op 'regex' needs 'expected' to be a string")
            _compile(self.expected)
        if self.op in ("gt", "gte", "lt", "lte", "approx") and (
            self.expected is None or isinstance(self.expected, (bool, list, dict))
        ):
            raise ValueError(f"op {self.op!r} needs 'expected' to be a number or a date")
        return self


#: seconds one regex search of agent or sandbox text may take (a pattern that backtracks
#: without bound on crafted text would otherwise hang the session: docs/limits.md)
REGEX_TIMEOUT = 2.0


class RegexTimeout(CheckError):
    """A criterion's regex ran longer than ``REGEX_TIMEOUT`` on the text it searched."""


class BoundedPattern:
    """A compiled pattern whose searches stop after ``REGEX_TIMEOUT`` seconds.

    Built on the ``regex`` package (``re``-compatible syntax, with a ``timeout``); Python's
    ``re`` cannot be interrupted.
    """

    def __init__(self, pattern: str) -> None:
        import regex  # ~20-30 ms: imported by the first pattern, not by every session

        try:
            self._compiled = regex.compile(pattern)
        except (regex.error, re.error) as exc:
            raise ValueError(f"invalid regex {pattern!r}: {exc}") from None
        self.pattern = pattern

    def search(self, text: str, field: str = "regex", source: str = "the text") -> Any:
        """``regex.search`` with the timeout; a RegexTimeout names the criterion's ``field``
        and the ``source`` searched, never the pattern (it may hold an expected value)."""
        try:
            return self._compiled.search(text, timeout=REGEX_TIMEOUT)
        except TimeoutError:
            raise RegexTimeout(
                f"regex {field!r} timed out after {REGEX_TIMEOUT:g} s on {source} "
                f"({len(text):,} characters); refused"
            ) from None


@lru_cache(maxsize=1024)
def _compile(pattern: str) -> BoundedPattern:
    return BoundedPattern(pattern)


#: a number written as text: ASCII digits, optional sign, fraction and exponent. Not accepted,
#: though Python's float() takes them: other scripts' digits ("٤٢", "４２"), "1_000", "0x2A",
#: "nan", "inf", "Infinity" (README "Comparison": numbers in interchange data are ASCII).
NUMBER_TEXT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_INTEGER_TEXT = re.compile(r"[+-]?[0-9]+")
#: the only padding a number's text may have (fixed-width X12 elements, spaced CSV cells)
_PAD = " \t\r\n"


def number_from_text(text: str) -> int | float | None:
    """The number ``text`` writes, or None when it is not a plain ASCII number.

    Integers stay exact ``int`` (compared exactly with any float); a value too large for a
    float (``1e999``) or longer than Python converts (over 4,300 digits) is not a number.
    """
    text = text.strip(_PAD)
    if _INTEGER_TEXT.fullmatch(text):
        try:
            return int(text)
        except ValueError:  # more digits than int() converts
            return None
    if NUMBER_TEXT.fullmatch(text):
        number = float(text)
        return number if math.isfinite(number) else None
    return None


def as_number(value: Any) -> int | float | None:
    """``value`` as a number when it is one, or a string that writes one (see NUMBER_TEXT)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return number_from_text(value)
    return None


def values_equal(expected: Any, actual: Any) -> bool:
    """Verial equality with number tolerance across str/number (HL7 and X12 values are text)."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        if isinstance(expected, bool) and isinstance(actual, bool):
            return expected == actual
        if isinstance(expected, bool) and isinstance(actual, str):
            return actual.strip().lower() == str(expected).lower()
        return False
    if isinstance(expected, (int, float)) or isinstance(actual, (int, float)):
        a, e = as_number(actual), as_number(expected)
        return a is not None and e is not None and a == e
    return bool(expected == actual)


def _instant(value: Any) -> datetime | None:
    """An ISO 8601 date or date-time as an aware datetime (naive = UTC; partial dates ok)."""
    if not isinstance(value, str) or not value.isascii():  # "٢٠٢٤-٠١" is not a date
        return None
    text = value.strip()
    try:
        if re.fullmatch(r"\d{4}", text):
            return datetime(int(text), 1, 1, tzinfo=UTC)
        if re.fullmatch(r"\d{4}-\d{2}", text):
            return datetime(int(text[:4]), int(text[5:7]), 1, tzinfo=UTC)
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            d = date.fromisoformat(text)
            return datetime(d.year, d.month, d.day, tzinfo=UTC)
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _order(expected: Any, actual: Any) -> tuple[Any, Any] | None:
    a, e = as_number(actual), as_number(expected)
    if a is not None and e is not None:
        return a, e
    ai, ei = _instant(actual), _instant(expected)
    if ai is not None and ei is not None:
        return ai, ei
    return None


def compare(spec: FieldSpec, actual: Any) -> bool:
    """Apply ``spec.op`` to ``actual`` (``_MISSING`` when the path did not resolve)."""
    op, expected = spec.op, spec.expected
    missing = actual is _MISSING or actual is None
    if op == "exists":
        return not missing if expected is not False else missing
    if op == "absent":
        return missing
    if op == "not_equals":  # a missing value is null: it differs from anything but null
        return not values_equal(expected, None if missing else actual)
    if actual is _MISSING:
        return False
    if op == "equals":
        return values_equal(expected, actual)
    if op == "contains":
        if isinstance(actual, list):
            return any(values_equal(expected, item) for item in actual)
        return isinstance(actual, str) and str(expected) in actual
    if op == "regex":
        found = _compile(str(expected)).search(_text(actual), spec.path, "its value")
        return found is not None
    if op == "in":
        return any(values_equal(item, actual) for item in expected or [])  # type: ignore[union-attr]
    if op == "approx":
        a, e = as_number(actual), as_number(expected)
        if a is None or e is None:
            return False
        try:
            if spec.tolerance is not None:
                return abs(a - e) <= spec.tolerance
            return math.isclose(a, e, rel_tol=1e-6, abs_tol=1e-12)
        except OverflowError:  # an integer beyond float range: only exactly equal is close
            return a == e
    pair = _order(expected, actual)
    if pair is None:
        return False
    a, e = pair
    result: bool = {"gt": a > e, "gte": a >= e, "lt": a < e, "lte": a <= e}[op]
    return result


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    import json

    return json.dumps(value, sort_keys=True)


def _jsonable(value: Any, limit: int = 2000) -> JsonValue:
    """A value safe for the JSON report (long strings cut, unknown objects as text)."""
    if value is _MISSING:
        return None
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return value if len(value) <= limit else value[:limit] + f"... ({len(value)} chars)"
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, limit) for v in value[:100]]
    if isinstance(value, dict):
        return {str(k): _jsonable(v, limit) for k, v in list(value.items())[:100]}
    return str(value)


def field_result(spec: FieldSpec, actual: Any) -> dict[str, JsonValue]:
    """The evidence row for one field: ``{path, expected, actual, passed}`` (+ ``op``)."""
    row: dict[str, JsonValue] = {
        "path": spec.path,
        "expected": spec.expected,
        "actual": _jsonable(actual),
        "passed": compare(spec, actual),
    }
    if spec.op != "equals":
        row["op"] = spec.op
    return row


_OP_WORDS = {
    "equals": "",
    "not_equals": "not ",
    "contains": "containing ",
    "regex": "matching ",
    "in": "one of ",
    "gt": "> ",
    "gte": ">= ",
    "lt": "< ",
    "lte": "<= ",
    "approx": "about ",
}


def describe_field(row: Mapping[str, Any], width: int = 60) -> str:
    """A field row as one line that says what was asked, with its ``op`` and quantifier:
    ``PID.3: expected containing 'MRN', got 'X'``, ``OBX[*].5: expected (all values) 'POS',
    got ['POS', 'NEG']``, ``status: expected a value, got nothing`` (``exists``)."""

    def show(value: Any) -> str:
        text = repr(value) if not isinstance(value, (list, dict)) else json.dumps(value)
        return text if len(text) <= width else text[: width - 3] + "..."

    op = str(row.get("op") or "equals")
    actual = row.get("actual")
    got = "nothing" if actual is None else show(actual)
    quantifier = row.get("quantifier")
    which = f"({quantifier} values) " if quantifier == "all" else ""
    if op == "exists":
        wanted = "a value"
    elif op == "absent":
        wanted = "no value"
    else:
        wanted = _OP_WORDS.get(op, f"{op} ") + show(row.get("expected"))
    return f"{row.get('path')}: expected {which}{wanted}, got {got}"


def correlation_matches(expected: Any, values: list[Any]) -> bool:
    """``correlate_by`` semantics shared by the checks that select messages or transactions.

    ``values`` are all the values a path selects (a repeated segment or field gives several):
    the key matches when any of them equals the expected value, or one of the expected values
    when a list is given. Surrounding spaces are ignored (fixed-width X12 elements). ``null``
    as the expected value means the path selects nothing, or only empty values.
    """

    def strip(value: Any) -> Any:
        return value.strip() if isinstance(value, str) else value

    present = [strip(v) for v in values if v is not None and strip(v) != ""]
    if expected is None:
        return not present
    wanted = expected if isinstance(expected, list) else [expected]
    return any(values_equal(strip(w), v) for w in wanted for v in present)


def quantified(spec: FieldSpec, values: list[Any], quantifier: str) -> bool:
    """A field over several values (``OBX[*].5``): ``any`` or ``all`` of them pass.

    With no value at all the field is judged as a missing value, so ``op: absent`` passes and
    every other operator fails, whatever the quantifier.
    """
    if not values:
        return compare(spec, MISSING)
    hits = (compare(spec, value) for value in values)
    return all(hits) if quantifier == "all" else any(hits)


def fields_score(results: list[dict[str, JsonValue]]) -> float:
    """Passed fields / all fields; 1.0 when a target exists but no fields were asked."""
    if not results:
        return 1.0
    return sum(1 for r in results if r["passed"]) / len(results)


MISSING = _MISSING


def check_regex(pattern: str) -> BoundedPattern:
    """Compile a regex from a criterion, as a CheckError when it is invalid."""
    try:
        return _compile(pattern)
    except ValueError as exc:
        raise CheckError(str(exc)) from None
