"""``output-match``: phrases, patterns and (for JSON/YAML output) fields of the final output.

- ``contains`` / ``not_contains``: substrings; case-insensitive unless ``case_sensitive``.
- ``regex`` / ``not_regex``: patterns searched in the text (``re`` syntax, run by the ``regex``
  package with ``compare.REGEX_TIMEOUT``: a search that runs longer is a criterion error; use
  ``(?m)`` etc. inline for flags).
- ``fields``: ``{path, expected, op}`` rows checked against the output parsed as JSON (or YAML),
  with the same paths and operators as every other check.

Each item is one ``fieldResults`` row; score = passed rows / rows.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, JsonValue, field_validator, model_validator

from .._compare import FieldSpec, check_regex, field_result
from .._contracts.check import AssertionSpec, CheckContext, CheckOutcome, CheckSpec
from .._paths import resolve
from ._output import no_output, output_text, parse_data


class OutputMatch(AssertionSpec):
    """The ``output-match`` assertion."""

    kind: Literal["output-match"] = Field(alias="assert")
    contains: list[str] = Field(default_factory=list)
    not_contains: list[str] = Field(default_factory=list)
    regex: list[str] = Field(default_factory=list)
    not_regex: list[str] = Field(default_factory=list)
    fields: list[FieldSpec] = Field(default_factory=list)
    case_sensitive: bool = False

    @field_validator("regex", "not_regex", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _something(self) -> OutputMatch:
        if not (self.contains or self.not_contains or self.regex or self.not_regex or self.fields):
            raise ValueError("give contains, not_contains, regex, not_regex or fields")
        for pattern in (*self.regex, *self.not_regex):
            try:
                check_regex(pattern)
            except Exception as exc:  # CheckError at run time; a collection error here
                raise ValueError(str(exc)) from None
        return self


def _phrase_row(phrase: str, text: str, spec: OutputMatch, present: bool) -> dict[str, JsonValue]:
    hay, needle = (text, phrase) if spec.case_sensitive else (text.casefold(), phrase.casefold())
    at = hay.find(needle)
    found = at >= 0
    line = text.count("\n", 0, at) + 1 if found else None
    return {
        "path": f"{'contains' if present else 'not_contains'}[{phrase}]",
        "expected": "present" if present else "absent",
        "actual": f"found at line {line}" if found else "not found",
        "passed": found is present,
    }


def _regex_row(pattern: str, text: str, present: bool) -> dict[str, JsonValue]:
    field = "regex" if present else "not_regex"  # the pattern itself is not quoted
    hit = check_regex(pattern).search(text, field, "the output")
    return {
        "path": f"{'regex' if present else 'not_regex'}[{pattern}]",
        "expected": "match" if present else "no match",
        "actual": hit.group(0)[:200] if hit else None,
        "passed": (hit is not None) is present,
    }


def check(spec: OutputMatch, ctx: CheckContext) -> CheckOutcome:
    """Check every phrase, pattern and field against the output."""
    text, name = output_text(ctx)
    if text is None:
        return no_output()
    rows: list[dict[str, JsonValue]] = []
    rows += [_phrase_row(p, text, spec, True) for p in spec.contains]
    rows += [_phrase_row(p, text, spec, False) for p in spec.not_contains]
    rows += [_regex_row(p, text, True) for p in spec.regex]
    rows += [_regex_row(p, text, False) for p in spec.not_regex]
    parse_error = None
    if spec.fields:
        parsed = parse_data(text, ctx.source("output").format)
        parse_error = parsed.error
        for fs in spec.fields:
            if parsed.error is None:
                rows.append(field_result(fs, resolve(parsed.value, fs.path)))
            else:
                rows.append(
                    {"path": fs.path, "expected": fs.expected, "actual": None, "passed": False}
                )
    ok = sum(1 for r in rows if r["passed"])
    details = f"{ok} of {len(rows)} output checks passed in {name}"
    failed = [str(r["path"]) for r in rows if not r["passed"]]
    if failed:
        details += "; failed: " + ", ".join(failed[:10])
    if parse_error:
        details += f"; fields not checked: {parse_error}"
    return CheckOutcome(ok / len(rows), details, {"fieldResults": rows, "output": name})  # type: ignore[dict-item]


CHECK = CheckSpec(name="output-match", model=OutputMatch, run=check, sources=("output",))
