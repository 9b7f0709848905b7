"""``output-json-schema``: the output, parsed as JSON (or YAML), validates against a JSON Schema.

The schema is given inline (``schema: {...}``) and checked when the benchmark loads (a schema
that is itself invalid is a collection error). The dialect follows ``$schema``, else Draft
2020-12. Score 1 when valid, else 0 (a document either meets its schema or does not);
``fieldResults`` lists each violation as ``{path, expected, actual, passed: false}``, with
``path`` a JSON path into the output and ``expected`` the failed schema rule.

References are never fetched over the network while grading: a ``$ref`` (or ``$dynamicRef``)
to anything outside the schema itself is refused when the benchmark loads, and the validator
runs with a registry that refuses to retrieve (a criterion error, as a backstop).
"""

from __future__ import annotations

from typing import Any, Literal
from urllib.parse import urldefrag, urljoin

from pydantic import Field, JsonValue, field_validator

from .._compare import _jsonable
from .._contracts.check import AssertionSpec, CheckContext, CheckOutcome, CheckSpec
from .._errors import CheckError
from ._output import no_output, output_text, parse_data

MAX_ERRORS = 20
_REF_KEYS = ("$ref", "$dynamicRef", "$recursiveRef")
REMOTE_REFUSED = "remote references are not fetched while grading"


def remote_refs(schema: Any) -> list[tuple[str, str]]:
    """``(where, ref)`` of every reference that points outside ``schema`` (none is fetched).

    A reference is local when, resolved against the ``$id``s around it, it names the schema
    itself or a subschema with an ``$id`` of its own. Iterative: any depth is safe.
    """
    ids: set[str] = {""}
    refs: list[tuple[str, str, str]] = []
    stack: list[tuple[Any, str, str]] = [(schema, "", "(root)")]
    while stack:
        node, base, where = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("$id"), str):
                base = urljoin(base, node["$id"])
                ids.add(urldefrag(base).url)
            for key in _REF_KEYS:
                if isinstance(node.get(key), str):
                    refs.append((where, base, node[key]))
            stack.extend((v, base, f"{where}/{k}") for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, base, f"{where}/{i}") for i, v in enumerate(node))
    return [
        (where.removeprefix("(root)") or "(root)", ref)
        for where, base, ref in refs
        if urldefrag(urljoin(base, ref)).url not in ids
    ]


def _refuse_retrieve(uri: str) -> Any:
    from referencing.exceptions import NoSuchResource

    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]  # an attrs alias mypy does not see


def _unresolvable() -> type[Exception]:
    try:
        from referencing.exceptions import Unresolvable
    except ImportError:  # pragma: no cover - jsonschema < 4.18
        return LookupError
    return Unresolvable


def _validator(schema: dict[str, Any]) -> Any:
    """The schema's validator, with a registry that never retrieves anything."""
    cls = _validator_class(schema)
    try:
        import referencing
    except ImportError:  # pragma: no cover - jsonschema < 4.18
        return cls(schema)
    return cls(schema, registry=referencing.Registry(retrieve=_refuse_retrieve))  # type: ignore[call-arg]  # attrs alias


def _validator_class(schema: dict[str, Any]) -> Any:
    try:
        import jsonschema
    except ImportError:  # pragma: no cover - jsonschema is in the judge and test extras
        raise CheckError(
            "output-json-schema needs the jsonschema package (a dependency): pip install jsonschema"
        ) from None
    return jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)


class OutputJsonSchema(AssertionSpec):
    """The ``output-json-schema`` assertion."""

    kind: Literal["output-json-schema"] = Field(alias="assert")
    schema_: dict[str, Any] = Field(alias="schema")

    @field_validator("schema_")
    @classmethod
    def _valid_schema(cls, value: dict[str, Any]) -> dict[str, Any]:
        try:
            import jsonschema
        except ImportError:  # pragma: no cover
            return value
        try:
            _validator_class(value).check_schema(value)
        except jsonschema.SchemaError as exc:
            where = "/".join(str(p) for p in exc.absolute_path) or "(root)"
            raise ValueError(f"not a valid JSON Schema at {where}: {exc.message}") from None
        remote = remote_refs(value)
        if remote:
            where, ref = remote[0]
            raise ValueError(f"$ref {ref!r} at {where} is not in the schema; {REMOTE_REFUSED}")
        return value


def _json_path(parts: Any) -> str:
    out = "$"
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def check(spec: OutputJsonSchema, ctx: CheckContext) -> CheckOutcome:
    """Validate the parsed output and list the violations."""
    text, name = output_text(ctx)
    if text is None:
        return no_output()
    parsed = parse_data(text, ctx.source("output").format)
    if parsed.error is not None:
        row: dict[str, JsonValue] = {
            "path": "$",
            "expected": "a JSON document",
            "actual": parsed.error,
            "passed": False,
        }
        return CheckOutcome(
            0.0, f"{name} is not JSON: {parsed.error}", {"fieldResults": [row], "output": name}
        )
    validator = _validator(spec.schema_)
    try:
        errors = sorted(validator.iter_errors(parsed.value), key=lambda e: list(e.absolute_path))
    except _unresolvable() as exc:
        raise CheckError(f"schema reference cannot be resolved ({exc}); {REMOTE_REFUSED}") from None
    if not errors:
        row = {
            "path": "$",
            "expected": "valid against the schema",
            "actual": "valid",
            "passed": True,
        }
        return CheckOutcome(
            1.0, f"{name} is valid against the schema", {"fieldResults": [row], "output": name}
        )
    rows: list[dict[str, JsonValue]] = [
        {
            "path": _json_path(e.absolute_path),
            "expected": f"{e.validator}: {_jsonable(e.validator_value, 200)}",
            "actual": _jsonable(e.instance, 200),
            "passed": False,
            "message": e.message[:300],
        }
        for e in errors[:MAX_ERRORS]
    ]
    first = f"{rows[0]['path']}: {rows[0]['message']}"
    details = f"{name} violates the schema in {len(errors)} place(s); first: {first}"
    return CheckOutcome(
        0.0,
        details,
        {
            "fieldResults": rows,  # type: ignore[dict-item]
            "output": name,
            "violations": len(errors),
        },
    )


CHECK = CheckSpec(name="output-json-schema", model=OutputJsonSchema, run=check, sources=("output",))
