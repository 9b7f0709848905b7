"""Safe YAML/JSON parsing that remembers line numbers, for errors that point at the line.

``parse(text, filename)`` returns the data and a :class:`LineMap`; mappings and sequences are
plain ``dict``/``list`` (validation code never sees a custom type). Duplicate keys in one YAML
mapping are reported, since PyYAML would silently keep the last one. Equal strings of one file
are one object: a loaded plan keeps every criterion's assertion for the whole session.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol

from ._safeparse import (
    ALIAS_BUDGET,
    DataError,
    check_tree,
    check_yaml_text,
    load_json,
    safe_loader,
    yaml_value_problem,
)

if TYPE_CHECKING:  # PyYAML is imported when a YAML text is read (:func:`_line_loader`)
    import yaml

__all__ = ["ALIAS_BUDGET", "LineMap", "ParseError", "parse"]


@dataclass
class LineMap:
    """Line numbers (1-based) of containers and of the keys inside mappings, by object id."""

    containers: dict[int, int] = field(default_factory=dict)
    keys: dict[int, dict[Any, int]] = field(default_factory=dict)
    #: (line, key, id of the mapping holding the key twice)
    duplicates: list[tuple[int, str, int]] = field(default_factory=list)
    _keep: list[Any] = field(default_factory=list)
    #: JSON text whose lines are found only when a problem needs one (see ``parse``)
    lazy_text: str | None = None
    _lazy_root: Any = None

    def line_of(self, root: Any, loc: Sequence[str | int], need: bool = True) -> int | None:
        """The line of the deepest element of ``loc`` under ``root`` that we know of.

        For JSON the lines are computed on the first call with ``need`` (a problem to report);
        calls without it (lines for reports of good files) get None instead of paying for it.
        """
        if self.lazy_text is not None or self._lazy_root is not None:
            if not need:
                return None
            if self.lazy_text is not None:
                text, self.lazy_text = self.lazy_text, None
                try:
                    parsed, lines = _load_yaml(text)
                except Exception:  # noqa: BLE001 - line numbers are best effort for JSON
                    parsed, lines = None, LineMap()
                self.containers, self.keys, self._keep = lines.containers, lines.keys, lines._keep
                self._lazy_root = parsed if parsed == root else None
            if self._lazy_root is None:
                return None
            root = self._lazy_root
        line = self.containers.get(id(root))
        current = root
        for step in loc:
            if isinstance(current, dict) and step in current:
                line = self.keys.get(id(current), {}).get(step, line)
                current = current[step]
            elif isinstance(current, list) and isinstance(step, int) and 0 <= step < len(current):
                current = current[step]
                line = self.containers.get(id(current), line)
            else:
                break
        return line


class _LineLoading(Protocol):
    """What the constructors below read of the loader (:func:`_line_loader`'s class)."""

    line_map: LineMap
    strings: dict[str, str]

    def flatten_mapping(self, node: yaml.MappingNode) -> None: ...
    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any: ...


@cache
def _line_loader() -> type[yaml.SafeLoader]:
    """The safe loader that remembers lines and shares equal strings, made the first time a
    YAML text is read (a session of JSON benchmark files never imports PyYAML)."""

    class LineLoader(safe_loader()):  # type: ignore[misc]
        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self.line_map = LineMap()
            #: one copy of each string of the file (a plan keeps every criterion's assertion)
            self.strings: dict[str, str] = {}

    LineLoader.add_constructor("tag:yaml.org,2002:map", _construct_map)
    LineLoader.add_constructor("tag:yaml.org,2002:seq", _construct_seq)
    return LineLoader


def _construct_map(loader: _LineLoading, node: yaml.MappingNode) -> Any:
    import yaml

    data: dict[Any, Any] = {}
    lines = loader.line_map
    lines.containers[id(data)] = node.start_mark.line + 1
    lines._keep.append(data)
    yield data
    loader.flatten_mapping(node)
    key_lines: dict[Any, int] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            hash(key)
        except TypeError:
            raise yaml.constructor.ConstructorError(
                None, None, "found an unhashable mapping key", key_node.start_mark
            ) from None
        if key in data:
            lines.duplicates.append((key_node.start_mark.line + 1, str(key), id(data)))
        value = loader.construct_object(value_node, deep=True)
        if type(key) is str:
            key = loader.strings.setdefault(key, key)
        data[key] = loader.strings.setdefault(value, value) if type(value) is str else value
        key_lines[key] = key_node.start_mark.line + 1
    lines.keys[id(data)] = key_lines


def _construct_seq(loader: _LineLoading, node: yaml.SequenceNode) -> Any:
    data: list[Any] = []
    loader.line_map.containers[id(data)] = node.start_mark.line + 1
    loader.line_map._keep.append(data)
    yield data
    strings = loader.strings
    for child in node.value:
        value = loader.construct_object(child, deep=True)
        data.append(strings.setdefault(value, value) if type(value) is str else value)


class ParseError(Exception):
    """The text is not valid YAML/JSON; ``line`` is 1-based when known."""

    def __init__(
        self,
        message: str,
        line: int | None,
        loc: tuple[Any, ...] | None = None,
        root: Any = None,
        lines: LineMap | None = None,
    ) -> None:
        super().__init__(message)
        self.line = line
        #: where a refused value sits (keys and indexes) in ``root``, whose lines are ``lines``
        self.loc, self.root, self.lines = loc, root, lines


def parse(text: str, as_json: bool) -> tuple[Any, LineMap]:
    """Parse YAML (or JSON, strictly) and return the data with its line map."""
    if as_json:
        duplicated: list[str] = []
        strings: dict[str, str] = {}

        def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
            # one copy of each string value (the decoder already shares keys): a benchmark
            # repeats its check names, axes, resources and paths in every criterion, and the
            # plan keeps each criterion's assertion for the whole session
            result = {k: strings.setdefault(v, v) if type(v) is str else v for k, v in items}
            if len(result) != len(items):
                duplicated.append("")
            return result

        try:
            data = load_json(text, "", object_pairs_hook=pairs)
        except DataError as exc:
            if exc.line is None:  # a refused number: find where it is, to name the field
                _locate_refused_json(text, exc.problem)
            raise ParseError(exc.problem, exc.line) from None
        if duplicated:  # rare: find them (and every line) now, through the YAML parser
            try:
                return _with_lines(text, data)
            except Exception:  # noqa: BLE001 - line numbers are best effort for JSON
                return data, LineMap()
        # JSON is valid YAML flow style in nearly every case: lines come from the YAML parser,
        # later, and only if a problem needs one (a large JSON file parses ~20x faster).
        return data, LineMap(lazy_text=text)
    return _load_yaml(text)


def _with_lines(text: str, data: Any) -> tuple[Any, LineMap]:
    parsed, lines = _load_yaml(text)
    return (parsed, lines) if parsed == data else (data, LineMap())


def _load_yaml(text: str) -> tuple[Any, LineMap]:
    import yaml

    try:  # libyaml recurses in C on nesting: measure the depth before loading (safeparse)
        check_yaml_text(text, "")
    except DataError as exc:
        raise ParseError(exc.problem, exc.line) from None
    loader: Any = _line_loader()(text)
    try:
        data = loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        problem = exc.problem or str(exc)
        context = f" ({exc.context})" if exc.context else ""
        raise ParseError(f"invalid YAML: {problem}{context}", line) from None
    except yaml.YAMLError as exc:
        raise ParseError(f"invalid YAML: {exc}", None) from None
    except ValueError as exc:  # an int past Python's 4,300-digit limit, a bad date
        raise ParseError(yaml_value_problem(exc), None) from None
    except RecursionError:
        raise ParseError("invalid YAML: nested too deeply", None) from None
    finally:
        loader.dispose()
    try:
        check_tree(data, "")
    except DataError as exc:
        lines = loader.line_map
        line = lines.line_of(data, exc.loc) if exc.loc is not None else None
        raise ParseError(exc.problem, line, exc.loc, data, lines) from None
    return data, loader.line_map


def _locate_refused_json(text: str, problem: str) -> None:
    """Raise a ParseError with ``problem`` at the number ``load_json`` refused (NaN, 1e999,
    400 digits); return when it cannot be found (the caller reports it without a place)."""
    try:  # the depth is known to be safe here: load_json checked it before refusing
        data = json.loads(text)
        check_tree(data, "")
    except DataError as exc:
        if exc.loc is not None:
            raise ParseError(problem, None, exc.loc, data, LineMap()) from None
    except (ValueError, RecursionError):  # e.g. an int past Python's 4,300-digit limit
        return
