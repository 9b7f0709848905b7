"""Search values: what a resource's elements mean to each search parameter type, and matching.

One function per parameter type turns the elements a SearchParameter expression selects into
comparable keys (``index_*``), and one turns a search value into a test (``parse_*``), with the
standard R4 semantics:

- token: ``system|code``, ``code``, ``|code`` (no system), ``system|`` over code, Coding,
  CodeableConcept, Identifier, ContactPoint, boolean; ``:not``, ``:text``.
- string: case- and accent-insensitive prefix; ``:exact``; ``:contains``; over strings,
  HumanName and Address parts.
- date: ``eq ne gt lt ge le sa eb ap`` over ranges (a partial date is the range it covers; a
  Period is its start..end), dates without a zone taken as UTC.
- number / quantity: prefixes; ``eq`` within the precision of the search value;
  quantity ``number|system|code`` and ``number||code``.
- uri: exact, ``:below``, ``:above``; reference: see :func:`._index.split_reference`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal, InvalidOperation
from typing import Any

from .._compare import NUMBER_TEXT
from .._errors import CheckError

PREFIXES = ("eq", "ne", "gt", "lt", "ge", "le", "sa", "eb", "ap")
CONTACT_SYSTEMS = {"phone", "fax", "email", "pager", "url", "sms", "other"}
MIN = datetime(1, 1, 1, tzinfo=UTC)
MAX = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)


def normalize(text: str) -> str:
    """Case- and accent-insensitive form of a string (NFKD without combining marks)."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def split_prefix(value: str) -> tuple[str, str]:
    """``"ge2020"`` -> ``("ge", "2020")``; no prefix means ``eq``."""
    if len(value) > 2 and value[:2] in PREFIXES and (value[2].isdigit() or value[2] == "-"):
        return value[:2], value[2:]
    return "eq", value


# --- token -------------------------------------------------------------------------------


def index_token(elements: list[Any]) -> list[tuple[str | None, str, str]]:
    """``(system, code, text)`` triples of every coded element."""
    out: list[tuple[str | None, str, str]] = []
    for el in elements:
        if isinstance(el, bool):
            out.append((None, "true" if el else "false", ""))
        elif isinstance(el, (str, int, float)):
            out.append((None, str(el), str(el)))
        elif isinstance(el, dict):
            if "coding" in el or "text" in el and "code" not in el and "value" not in el:
                out.extend(_concept(el))
            elif "code" in el or "system" in el and "value" not in el:
                out.append(_coding(el, ""))
            elif "value" in el:
                system = el.get("system")
                if system in CONTACT_SYSTEMS:
                    system = None
                kind = el.get("type")
                label = str(kind.get("text") or "") if isinstance(kind, dict) else ""
                out.append((system, str(el["value"]), label))
    return out


def _coding(coding: dict[str, Any], text: str) -> tuple[str | None, str, str]:
    return (coding.get("system"), str(coding.get("code", "")), coding.get("display") or text)


def _concept(concept: dict[str, Any]) -> list[tuple[str | None, str, str]]:
    """Triples of a CodeableConcept: each coding with its display, and with ``text`` too.

    ``:text`` matches ``CodeableConcept.text`` as well as any ``Coding.display`` (R4 search,
    token ``:text``), so a text that differs from the displays gets its own triple per coding
    (same system and code, so code searches and sorting see nothing new).
    """
    text = concept.get("text")
    text = text if isinstance(text, str) else ""
    codings = [c for c in concept.get("coding") or [] if isinstance(c, dict)]
    out = [_coding(c, text) for c in codings]
    if text and all(t != text for _, _, t in out):
        if codings:
            out.extend((s, c, text) for s, c, _ in out[: len(codings)])
        else:
            out.append((None, "", text))
    return out


TokenKeys = list[tuple[str | None, str, str]]


def parse_token(value: str, modifier: str | None) -> Callable[[TokenKeys], bool]:
    """A test over indexed token triples for one search value."""
    if modifier == "text":
        wanted = normalize(value)
        return lambda keys: any(normalize(t).startswith(wanted) for _, _, t in keys if t)
    if "|" in value:
        system, _, code = value.partition("|")
        if system == "":
            return lambda keys: any(s is None and c == code for s, c, _ in keys)
        if code == "":
            return lambda keys: any(s == system for s, _, _ in keys)
        return lambda keys: any(s == system and c == code for s, c, _ in keys)
    return lambda keys: any(c == value for _, c, _ in keys)


# --- string ------------------------------------------------------------------------------

_NAME_PARTS = ("family", "given", "prefix", "suffix", "text")
_ADDRESS_PARTS = ("line", "city", "district", "state", "postalCode", "country", "text")


def index_string(elements: list[Any]) -> list[str]:
    """Every text value (HumanName and Address parts separately), unnormalised."""
    out: list[str] = []
    for el in elements:
        if isinstance(el, str):
            out.append(el)
        elif isinstance(el, dict):
            for part in _NAME_PARTS + _ADDRESS_PARTS:
                v = el.get(part)
                if isinstance(v, str):
                    out.append(v)
                elif isinstance(v, list):
                    out.extend(x for x in v if isinstance(x, str))
    return out


def parse_string(value: str, modifier: str | None) -> Callable[[list[str]], bool]:
    """A test over string values for one search value."""
    if modifier == "exact":
        return lambda texts: value in texts
    wanted = normalize(value)
    if modifier == "contains":
        return lambda texts: any(wanted in normalize(t) for t in texts)
    return lambda texts: any(normalize(t).startswith(wanted) for t in texts)


# --- date --------------------------------------------------------------------------------

_DATE = re.compile(
    r"(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?"
    r"(Z|[+-]\d{2}:\d{2})?)?)?)?",
    re.ASCII,  # FHIR dates are ASCII digits; \d alone also takes "٢٠٢٤"
)


def date_range(text: str) -> tuple[datetime, datetime] | None:
    """The half-open range ``[low, high)`` a FHIR date/dateTime/instant covers, or None."""
    m = _DATE.fullmatch(text.strip())
    if not m:
        return None
    year, month, day, hour, minute, second, fraction, zone = m.groups()
    tz = UTC
    if zone and zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        tz = timezone(sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6])))
    try:
        if month is None:
            low = datetime(int(year), 1, 1, tzinfo=tz)
            return low, low.replace(year=low.year + 1)
        if day is None:
            low = datetime(int(year), int(month), 1, tzinfo=tz)
            high = (
                low.replace(year=low.year + 1, month=1)
                if low.month == 12
                else low.replace(month=low.month + 1)
            )
            return low, high
        if hour is None:
            low = datetime(int(year), int(month), int(day), tzinfo=tz)
            return low, low + timedelta(days=1)
        low = datetime(
            int(year), int(month), int(day), int(hour), int(minute), int(second or 0), tzinfo=tz
        )
        if fraction:
            low += timedelta(microseconds=int(float(fraction) * 1_000_000))
            return low, low + timedelta(milliseconds=1)
        return low, low + (timedelta(seconds=1) if second else timedelta(minutes=1))
    except ValueError:
        return None


def index_date(elements: list[Any]) -> list[tuple[datetime, datetime]]:
    """Ranges of date-like elements: date strings, Periods, Timing events."""
    out: list[tuple[datetime, datetime]] = []
    for el in elements:
        if isinstance(el, str):
            r = date_range(el)
            if r:
                out.append(r)
        elif isinstance(el, dict):
            if "start" in el or "end" in el:
                start = date_range(el["start"]) if isinstance(el.get("start"), str) else None
                end = date_range(el["end"]) if isinstance(el.get("end"), str) else None
                out.append((start[0] if start else MIN, end[1] if end else MAX))
            for event in el.get("event") or []:
                r = date_range(event) if isinstance(event, str) else None
                if r:
                    out.append(r)
    return out


def compare_ranges(
    prefix: str, target: tuple[datetime, datetime], search: tuple[datetime, datetime]
) -> bool:
    """R4 prefix semantics between a target range and a search range (both ``[low, high)``).

    ``eq``: the search range contains the target; ``gt``/``lt``: the target reaches above /
    below the search range; ``ge``/``le``: it reaches into or above / into or below it;
    ``sa``/``eb``: it starts after / ends before it; ``ap``: they overlap (widened by 10 %).
    """
    tl, th = target
    sl, sh = search
    contained = sl <= tl and th <= sh
    if prefix == "eq":
        return contained
    if prefix == "ne":
        return not contained
    if prefix == "gt":
        return th > sh
    if prefix == "lt":
        return tl < sl
    if prefix == "ge":
        return th > sl
    if prefix == "le":
        return tl < sh
    if prefix == "sa":
        return tl >= sh
    if prefix == "eb":
        return th <= sl
    # ap: within 10 % of the distance to now, at least the search range itself
    return tl < sh and th > sl


def parse_date(value: str) -> Callable[[list[tuple[datetime, datetime]]], bool]:
    """A test over date ranges for one search value (``ge2024-01``)."""
    prefix, text = split_prefix(value)
    search = date_range(text)
    if search is None:
        raise CheckError(f"invalid date search value {value!r} (expected e.g. ge2024-01-31)")
    if prefix == "ap":
        width = abs(datetime.now(UTC) - search[0]) * 0.1
        search = (search[0] - width, search[1] + width)
    return lambda ranges: any(compare_ranges(prefix, r, search) for r in ranges)


# --- number and quantity -----------------------------------------------------------------


def _decimal(text: str, what: str) -> Decimal:
    if not NUMBER_TEXT.fullmatch(text):  # ASCII digits only; no NaN, Infinity, 1_000
        raise CheckError(f"invalid {what} search value {text!r}")
    try:
        return Decimal(text)
    except InvalidOperation:
        raise CheckError(f"invalid {what} search value {text!r}") from None


def _precision_range(number: Decimal) -> tuple[Decimal, Decimal]:
    half = Decimal(1).scaleb(number.as_tuple().exponent) / 2  # type: ignore[arg-type]
    return number - half, number + half


def _number_test(prefix: str, number: Decimal) -> Callable[[Decimal], bool]:
    low, high = _precision_range(number)
    tests: dict[str, Callable[[Decimal], bool]] = {
        "eq": lambda v: low <= v < high,
        "ne": lambda v: not low <= v < high,
        "gt": lambda v: v > number,
        "lt": lambda v: v < number,
        "ge": lambda v: v >= number,
        "le": lambda v: v <= number,
        "sa": lambda v: v > number,
        "eb": lambda v: v < number,
        "ap": lambda v: abs(v - number) <= abs(number) * Decimal("0.1"),
    }
    return tests[prefix]


def index_number(elements: list[Any]) -> list[Decimal]:
    """Numeric values (numbers, or ``value`` of a Quantity-like element)."""
    out: list[Decimal] = []
    for el in elements:
        v = el.get("value") if isinstance(el, dict) else el
        if isinstance(v, str) and not NUMBER_TEXT.fullmatch(v.strip()):
            continue  # "٤٢", "1_000", "NaN" are not FHIR decimals (Decimal() takes them)
        if isinstance(v, (int, float, str, Decimal)) and not isinstance(v, bool):
            try:
                number = Decimal(str(v))
            except InvalidOperation:
                continue
            if number.is_finite():
                out.append(number)
    return out


def parse_number(value: str) -> Callable[[list[Decimal]], bool]:
    """A test over numbers for one search value (``gt5.4``)."""
    prefix, text = split_prefix(value)
    test = _number_test(prefix, _decimal(text, "number"))
    return lambda numbers: any(test(n) for n in numbers)


def index_quantity(elements: list[Any]) -> list[tuple[Decimal, str | None, str | None, str | None]]:
    """``(value, system, code, unit)`` of Quantity elements."""
    out: list[tuple[Decimal, str | None, str | None, str | None]] = []
    for el in elements:
        value = el.get("value") if isinstance(el, dict) else None
        if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
            number = Decimal(str(value))
            out.append((number, el.get("system"), el.get("code"), el.get("unit")))
    return out


def parse_quantity(value: str) -> Callable[[list[Any]], bool]:
    """A test over quantities: ``[prefix]number[|system|code]``; ``number||code`` any system."""
    parts = value.split("|")
    prefix, text = split_prefix(parts[0])
    test = _number_test(prefix, _decimal(text, "quantity"))
    system = parts[1] if len(parts) > 1 and parts[1] else None
    code = parts[2] if len(parts) > 2 and parts[2] else None

    def match(quantities: list[Any]) -> bool:
        for number, q_system, q_code, q_unit in quantities:
            if system is not None and q_system != system:
                continue
            if code is not None and code not in (q_code, q_unit if system is None else q_code):
                continue
            if test(number):
                return True
        return False

    return match


# --- uri ---------------------------------------------------------------------------------


def index_uri(elements: list[Any]) -> list[str]:
    """URI strings."""
    return [el for el in elements if isinstance(el, str)]


def parse_uri(value: str, modifier: str | None) -> Callable[[list[str]], bool]:
    """Exact match; ``:below`` (value is a prefix of the target) and ``:above``."""
    if modifier == "below":
        return lambda uris: any(u.startswith(value) for u in uris)
    if modifier == "above":
        return lambda uris: any(value.startswith(u) for u in uris)
    return lambda uris: value in uris
