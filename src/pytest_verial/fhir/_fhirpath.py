"""FHIRPath through fhirpathpy, compiled once per expression and cached, with the R4 model.

The R4 model lets choice types resolve (``Observation.value`` finds ``valueQuantity``).
fhirpathpy re-parses on every ``evaluate()`` call; ``compile()`` once and calling the result is
an order of magnitude faster, so every expression goes through :func:`compiled`. Resources are
passed as plain dicts (fhirpathpy silently returns nothing for pydantic objects).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal
from functools import lru_cache
from typing import Any

from .._errors import CheckError

Compiled = Callable[[Any], list[Any]]


@lru_cache(maxsize=1)
def _model() -> Any:
    try:
        from fhirpathpy.models import models
    except ImportError:
        raise CheckError(
            "fhir-resource-state needs fhirpathpy (a dependency): pip install fhirpathpy"
        ) from None
    return models["r4"]


_BRANCH = re.compile(
    r"\(?\s*([A-Z][A-Za-z]+)((?:\.[a-z][A-Za-z0-9]*)+)"
    r"(?:\.ofType\((\w+)\)|\s+as\s+(\w+))?\s*\)?"
)


def _plan(rtype: str, segments: list[str], of_type: str | None) -> list[tuple[str, ...]] | None:
    """JSON keys to follow for ``rtype.seg.seg`` (choice types expanded), None if unsure."""
    model = _model()
    choices, types, elsewhere = (
        model["choiceTypePaths"],
        model["path2Type"],
        model["pathsDefinedElsewhere"],
    )
    context, steps = rtype, []
    for n, segment in enumerate(segments):
        path = f"{context}.{segment}"
        last = n == len(segments) - 1
        if path in choices:
            kinds = choices[path]
            if of_type is not None and last:
                kinds = [k for k in kinds if k.lower() == of_type.lower()]
                if not kinds:
                    return None
            elif not last:
                return None
            steps.append(tuple(segment + k[0].upper() + k[1:] for k in kinds))
            continue
        if of_type is not None and last:
            return None
        steps.append((segment,))
        kind = types.get(path)
        if kind is None or kind in ("BackboneElement", "Element"):
            context = elsewhere.get(path, path)
        elif kind.startswith("System.") or kind in ("Resource", "Extension"):
            if not last:
                return None
        else:
            context = kind
    return steps


def _fast(expression: str) -> Compiled | None:
    """Plain member paths (``Type.a.b``, ``(Type.x as T)``, unions of them) walked directly.

    Most SearchParameter expressions are of this form; walking the JSON gives what fhirpathpy
    gives (the differential and the fast-path tests check it) at a fraction of the cost.
    """
    plans = []
    for part in expression.split("|"):
        m = _BRANCH.fullmatch(part.strip())
        if not m:
            return None
        rtype, dotted, of_type, as_type = m.groups()
        steps = _plan(rtype, dotted.split(".")[1:], of_type or as_type)
        if steps is None:
            return None
        plans.append((rtype, steps))

    def run(resource: Any) -> list[Any]:
        out: list[Any] = []
        for rtype, steps in plans:
            if not isinstance(resource, dict) or resource.get("resourceType") != rtype:
                continue
            nodes: list[Any] = [resource]
            for keys in steps:
                found: list[Any] = []
                for node in nodes:
                    if not isinstance(node, dict):
                        continue
                    for key in keys:
                        value = node.get(key)
                        if isinstance(value, list):
                            found.extend(value)
                        elif value is not None:
                            found.append(value)
                nodes = found
            out.extend(nodes)
        return out

    return run


@lru_cache(maxsize=8192)
def compiled(expression: str) -> Compiled:
    """The compiled expression; an invalid one raises :class:`CheckError` naming it."""
    fast = _fast(expression)
    if fast is not None:
        return fast
    return compiled_fhirpathpy(expression)


@lru_cache(maxsize=8192)
def compiled_fhirpathpy(expression: str) -> Compiled:
    """The expression compiled by fhirpathpy (no fast path)."""
    from fhirpathpy import compile as fp_compile

    _check_syntax(expression)
    try:
        function = fp_compile(expression, _model())
    except Exception as exc:  # fhirpathpy raises bare Exceptions from its ANTLR parser
        raise CheckError(f"invalid FHIRPath {expression!r}: {_reason(exc)}") from None

    def run(resource: Any) -> list[Any]:
        try:
            result = function(resource)  # type: ignore[call-arg]
        except Exception as exc:
            raise CheckError(f"FHIRPath {expression!r} failed: {_reason(exc)}") from None
        return [plain(item) for item in (result if isinstance(result, list) else [result])]

    return run


def _check_syntax(expression: str) -> None:
    """fhirpathpy's parser recovers from syntax errors silently; parse once strictly first."""
    from antlr4 import CommonTokenStream, InputStream, Token  # type: ignore[import-untyped]
    from antlr4.error.ErrorListener import ErrorListener  # type: ignore[import-untyped]
    from fhirpathpy.parser.generated.FHIRPathLexer import FHIRPathLexer
    from fhirpathpy.parser.generated.FHIRPathParser import FHIRPathParser

    class Strict(ErrorListener):  # type: ignore[misc]
        def syntaxError(self, recognizer, symbol, line, column, msg, e):  # type: ignore[no-untyped-def]  # noqa: N802
            raise CheckError(f"invalid FHIRPath {expression!r}: column {column + 1}: {msg}")

    lexer = FHIRPathLexer(InputStream(expression))
    lexer.removeErrorListeners()
    lexer.addErrorListener(Strict())
    tokens = CommonTokenStream(lexer)
    parser = FHIRPathParser(tokens)
    parser.removeErrorListeners()
    parser.addErrorListener(Strict())
    parser.expression()
    if tokens.LA(1) != Token.EOF:
        rest = tokens.LT(1).text
        raise CheckError(f"invalid FHIRPath {expression!r}: unexpected {rest!r}")


def plain(value: Any) -> Any:
    """JSON-like Python values: fhirpathpy's Decimals become int/float, its FP_* types text."""
    if isinstance(value, Decimal):
        whole = value == value.to_integral_value() and "." not in str(value)
        return int(value) if whole else float(value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def evaluate(expression: str, resource: Any) -> list[Any]:
    """Evaluate ``expression`` on ``resource`` (a dict) with the compiled, cached function."""
    return compiled(expression)(resource)


def _reason(exc: Exception) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]
