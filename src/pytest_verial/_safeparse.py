"""Parsing JSON and YAML that may be hostile: bounded depth, size, numbers and aliases.

Every JSON or YAML text the plugin reads (benchmark files, ``run.yaml``, FHIR snapshots, portal
rows, voice turns, X12 and HL7 records, the agent's output, files it wrote, judge replies) goes
through :func:`load_json` or :func:`load_yaml`. What is refused, and why (docs/limits.md):

- **nesting deeper than** :data:`MAX_DEPTH` levels: libyaml's C loader recurses in C and kills
  the process (a segfault, under xdist every worker) on ~100,000 nested ``[``; Python's ``json``
  raises ``RecursionError``. The depth is measured *before* parsing: for JSON by a scan of the
  brackets outside strings, for YAML from libyaml's event stream (a state machine, no recursion);
- **integers longer than** :data:`MAX_INT_DIGITS` digits: Python refuses to convert longer
  ints from or to text (``ValueError`` out of ``json``, ``yaml`` and ``str()``), and arithmetic
  on them is slow; the comparison code handles any shorter int exactly;
- **NaN and Infinity** (JSON's ``NaN``, ``1e999``; YAML's ``.nan``, ``.inf``): they compare
  unequal to themselves and make a JSON report invalid JSON;
- **YAML aliases** that expand past :data:`ALIAS_BUDGET` values (a "billion laughs" bomb) or that
  refer to themselves (a cycle): everything after loading walks the expanded tree.

Errors are :class:`DataError`: ``problem`` is one line, ``line`` is 1-based when known, and
``str()`` is ``"<where>:<line>: <problem>"``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from itertools import accumulate
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import yaml

#: deepest nesting of lists/mappings accepted in any JSON or YAML text
MAX_DEPTH = 200
#: longest integer accepted, in digits: Python's own int/str conversion limit
MAX_INT_DIGITS = 4300
_INT_LIMIT = 10**MAX_INT_DIGITS
#: YAML aliases may repeat one object many times; expansion past this many values is refused
ALIAS_BUDGET = 100_000

_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.DOTALL)
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
_BRACKETS = re.compile(r"[\[\]{}]")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
#: texts that may hold a number the hooks must see: 301+ digits, or a 3-digit exponent
_NUMBER_RISK = re.compile(rf"\d{{{MAX_INT_DIGITS + 1}}}|[eE][+-]?\d{{3}}")


def safe_loader() -> type[yaml.SafeLoader]:
    """libyaml's safe loader when PyYAML has it, else the pure-Python one.

    PyYAML is imported where a YAML text is read, never at start-up: a session of JSON
    benchmark files and no run.yaml reads none, and importing it was ~20-40 ms of every
    process's start-up (``pytest --co``: issue 33, BENCHMARKS.md "wave 7")."""
    import yaml

    loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return loader


class DataError(ValueError):
    """A JSON/YAML text refused or invalid; ``str()`` names where (and the line when known)."""

    def __init__(
        self,
        where: str,
        problem: str,
        line: int | None = None,
        column: int | None = None,
        loc: tuple[Any, ...] | None = None,
    ) -> None:
        self.where = where
        self.problem = problem
        self.line = line
        #: 1-based column of a syntax error (also quoted in ``problem``), when known
        self.column = column
        #: keys and indexes from the root to a refused value, when known
        self.loc = loc
        super().__init__(f"{where}{f':{line}' if line else ''}: {problem}")

    def detail(self) -> str:
        """The problem with the refused value's field named (``field 'a.b[0]': ...``) when
        known, for a reader that has no line map of its own to point at it."""
        return f"field {dotted(self.loc)!r}: {self.problem}" if self.loc else self.problem

    def located(self) -> str:
        """:meth:`detail` after the file (and line)."""
        at = f"{self.where}:{self.line}" if self.line else self.where
        return f"{at}: {self.detail()}"


def dotted(loc: tuple[Any, ...]) -> str:
    """``('tasks', 'a', 0, 'cost')`` as ``tasks.a[0].cost``."""
    out = ""
    for step in loc:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out


def too_deep() -> str:
    """The one-line problem for nesting past :data:`MAX_DEPTH`."""
    return f"nested deeper than {MAX_DEPTH} levels of lists/mappings; refused"


def too_long_int(digits: int | None = None) -> str:
    """The one-line problem for an integer past :data:`MAX_INT_DIGITS` digits."""
    size = f"of {digits:,} digits " if digits else ""
    return f"an integer {size}is longer than {MAX_INT_DIGITS:,} digits; refused"


def yaml_value_problem(exc: ValueError) -> str:
    """The problem for a ValueError out of a YAML constructor (a huge int, a bad date)."""
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if "integer string conversion" in text:
        return too_long_int()
    return f"invalid YAML: {text}"


# -- depth, measured before parsing ----------------------------------------------------------


def json_depth_error(text: str) -> int | None:
    """None when ``text``'s brackets nest at most :data:`MAX_DEPTH` deep, else the 1-based line
    where they first go deeper. Brackets inside strings do not count.

    Fast path: strings are blanked and the brackets counted at C speed; only a text that is too
    deep is scanned again, token by token, for the line.
    """
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return None
    steps = map(_STEP.__getitem__, _BRACKETS.findall(_JSON_STRING.sub("", text)))
    if max(accumulate(steps), default=0) <= MAX_DEPTH:
        return None  # (closers in excess can only hide depth from invalid JSON: json refuses it)
    depth = 0
    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return text.count("\n", 0, match.start()) + 1
        elif token in "]}":
            depth = max(0, depth - 1)
    return 1


def yaml_depth_error(text: str) -> int | None:
    """None when ``text`` (YAML) nests at most :data:`MAX_DEPTH` deep, else the line where it
    goes deeper. Uses libyaml's event parser, which does not recurse; syntax errors are left
    for the loader to report with its own message."""
    import yaml

    opening = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
    closing = (yaml.SequenceEndEvent, yaml.MappingEndEvent)
    depth = 0
    try:
        for event in yaml.parse(text, Loader=safe_loader()):
            if isinstance(event, opening):
                depth += 1
                if depth > MAX_DEPTH:
                    return event.start_mark.line + 1 if event.start_mark else None
            elif isinstance(event, closing):
                depth -= 1
    except yaml.MarkedYAMLError as exc:
        # libyaml 0.2.6+ stops at its own nesting limit (1,000 flow levels) while scanning
        # ahead, before the events reach ours: the same refusal, where libyaml stopped.
        if "nesting depth" in (exc.problem or ""):
            return exc.problem_mark.line + 1 if exc.problem_mark else 1
        return None
    except yaml.YAMLError:
        return None
    return None


# -- numbers ---------------------------------------------------------------------------------


def _refuse_constant(name: str) -> Any:
    raise _Refused(f"the non-finite number {name} is not accepted (NaN and Infinity are refused)")


def _parse_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise _Refused(too_long_int(digits))
    return int(text)


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"the number {text[:40]} is out of range (not a finite float); refused")
    return value


class _Refused(ValueError):
    """Raised inside the JSON decoder's number hooks; turned into a DataError."""


class _NonFinite:
    """What a second parse puts where ``NaN``/``Infinity`` stood, to find its field."""


def _non_finite_at(text: str) -> tuple[Any, ...] | None:
    """The keys and indexes of the first NaN/Infinity constant in ``text`` (a JSON text that
    was just refused for one; its nesting is already known to be bounded), else None."""
    marker = _NonFinite()
    try:
        data = json.loads(text, parse_constant=lambda _: marker)
    except (ValueError, RecursionError):
        return None
    stack: list[tuple[Any, tuple[Any, ...]]] = [(data, ())]
    while stack:
        node, loc = stack.pop()
        if node is marker:
            return loc
        if isinstance(node, dict):
            stack.extend((v, (*loc, k)) for k, v in reversed(list(node.items())))
        elif isinstance(node, list):
            stack.extend((v, (*loc, i)) for i, v in reversed(list(enumerate(node))))
    return None


# -- loading ---------------------------------------------------------------------------------


def load_json(
    text: str,
    where: str,
    object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
) -> Any:
    """``json.loads`` that refuses deep nesting, NaN/Infinity and huge integers (DataError).

    Syntax errors are DataErrors too: ``"<where>:<line>: invalid JSON: <msg> (column N)"``.
    """
    line = json_depth_error(text)
    if line is not None:
        raise DataError(where, too_deep(), line)
    numbers: dict[str, Any] = {}
    if _NUMBER_RISK.search(text):  # rare: check every number (a Python call each)
        numbers = {"parse_int": _parse_int, "parse_float": _parse_float}
    try:
        return json.loads(
            text, object_pairs_hook=object_pairs_hook, parse_constant=_refuse_constant, **numbers
        )
    except json.JSONDecodeError as exc:
        problem = f"invalid JSON: {exc.msg} (column {exc.colno})"
        raise DataError(where, problem, exc.lineno, exc.colno) from None
    except _Refused as exc:
        raise DataError(where, str(exc), loc=_non_finite_at(text)) from None
    except RecursionError:  # backstop: the scan above should have refused it
        raise DataError(where, too_deep()) from None


def check_yaml_text(text: str, where: str) -> None:
    """Refuse YAML nesting past :data:`MAX_DEPTH` before any recursive loader sees ``text``."""
    line = yaml_depth_error(text)
    if line is not None:
        raise DataError(where, too_deep(), line)


def load_yaml(text: str, where: str) -> Any:
    """``yaml.safe_load`` (libyaml when available) with the limits above (DataError)."""
    import yaml

    check_yaml_text(text, where)
    try:
        data = yaml.load(text, Loader=safe_loader())  # noqa: S506 - a safe loader
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or str(exc).splitlines()[0]
        context = f" ({exc.context})" if exc.context else ""
        line, column = (mark.line + 1, mark.column + 1) if mark else (None, None)
        raise DataError(where, f"invalid YAML: {problem}{context}", line, column) from None
    except yaml.YAMLError as exc:
        raise DataError(where, f"invalid YAML: {str(exc).splitlines()[0]}") from None
    except ValueError as exc:  # an int past Python's 4,300-digit limit, a bad date
        raise DataError(where, yaml_value_problem(exc)) from None
    except RecursionError:
        raise DataError(where, too_deep()) from None
    check_tree(data, where)
    return data


def check_tree(data: Any, where: str) -> None:
    """Refuse alias bombs, cycles, non-finite floats and huge ints in loaded data.

    Shared objects (YAML aliases) are visited once; ``expanded`` counts what a walk of the
    expanded tree would visit. Iterative, so any depth is safe. A refused number's DataError
    carries its ``loc`` (keys and indexes from the root), for callers that can name the field.
    """
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    written = 0
    stack: list[tuple[Any, bool, tuple[Any, ...]]] = [(data, False, ())]
    while stack:
        node, done, loc = stack.pop()
        if not isinstance(node, (dict, list)):
            _check_scalar(node, where, loc)
            continue
        key = id(node)
        pairs = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
        if done:
            on_path.discard(key)
            sizes[key] = 1 + sum(sizes.get(id(child), 1) for _, child in pairs)
            if sizes[key] > max(ALIAS_BUDGET, 10 * written):
                raise DataError(
                    where,
                    f"YAML aliases expand {written:,} written values to over {sizes[key]:,}; "
                    "refused (an alias bomb?)",
                )
            continue
        if key in on_path:
            raise DataError(where, "a YAML alias refers to a value containing itself; refused")
        if key in sizes:
            continue
        on_path.add(key)
        written += 1 + len(pairs)
        stack.append((node, True, loc))
        if isinstance(node, dict):
            for name in node:
                _check_scalar(name, where, loc)
        stack.extend((child, False, (*loc, step)) for step, child in reversed(pairs))


def _too_long(value: int) -> bool:
    """True when ``value`` has more than :data:`MAX_INT_DIGITS` digits (cheap for short ints)."""
    return value.bit_length() > 14_000 and abs(value) >= _INT_LIMIT


def _check_scalar(value: Any, where: str, loc: tuple[Any, ...] = ()) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise DataError(
            where,
            f"the non-finite number {value} is not accepted (NaN and Infinity are refused)",
            loc=loc,
        )
    if isinstance(value, int) and not isinstance(value, bool) and _too_long(value):
        raise DataError(where, too_long_int(), loc=loc)


# -- writing ---------------------------------------------------------------------------------


def strict_json_value(value: Any) -> Any:
    """A copy of ``value`` that ``json.dumps(..., allow_nan=False)`` always accepts.

    The JSON report must be strict JSON whatever the data held: a non-finite float becomes the
    string ``"NaN"``/``"Infinity"``/``"-Infinity"``, an int too long to print its digits
    becomes a short description, a container holding itself becomes ``"<cycle>"``, and keys
    that are not strings become their ``str()``, and a value nested past Python's recursion
    limit becomes ``"<nested too deeply>"``.
    """
    try:
        return _strict(value, set())
    except RecursionError:
        return "<nested too deeply>"


#: types :func:`_strict` returns as they are (the exact types: a subclass takes the long way)
_KEPT = frozenset({str, bool, type(None)})


def _strict(value: Any, _path: set[int]) -> Any:
    """``_path``: the ids of the containers being copied above ``value`` (a cycle's mark)."""
    kind = type(value)
    if kind in _KEPT:  # most of a check's evidence: said first, at the cost of one lookup
        return value
    if kind is dict or kind is list:
        key = id(value)
        if key in _path:
            return "<cycle>"
        _path.add(key)
        if kind is dict:
            copy: Any = {
                (k if type(k) is str else _key(k, _path)): _strict(v, _path)
                for k, v in value.items()
            }
        else:
            copy = [_strict(item, _path) for item in value]
        _path.discard(key)
        return copy
    if kind is int:
        return value if value.bit_length() <= 14_000 else _strict_other(value, _path)
    if kind is float and math.isfinite(value):
        return value
    return _strict_other(value, _path)


def _key(key: Any, _path: set[int]) -> str:
    return key if isinstance(key, str) else str(_strict(key, _path))


def _strict_other(value: Any, _path: set[int]) -> Any:
    """:func:`_strict` of anything but a plain string, bool, None, dict or list."""
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, int) and not isinstance(value, bool) and _too_long(value):
        return f"<integer of {value.bit_length():,} bits>"
    if isinstance(value, (dict, list, tuple)):
        key = id(value)
        if key in _path:
            return "<cycle>"
        _path.add(key)
        if isinstance(value, dict):
            copy: Any = {_key(k, _path): _strict(v, _path) for k, v in value.items()}
        else:
            copy = [_strict(item, _path) for item in value]
        _path.discard(key)
        return copy
    return value
