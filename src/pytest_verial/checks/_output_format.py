"""``output-format``: the agent's final output is valid JSON, YAML (a mapping or a list) or
Markdown with structure (at least ``min_headings`` headings, code fences closed).

One ``fieldResults`` row per property checked; score = passed rows / rows, so a Markdown
output with headings but an unclosed code fence scores 0.5.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, JsonValue

from .._contracts.check import AssertionSpec, CheckContext, CheckOutcome, CheckSpec
from ._output import headings, no_output, output_text, parse_json, parse_yaml


class OutputFormat(AssertionSpec):
    """The ``output-format`` assertion."""

    kind: Literal["output-format"] = Field(alias="assert")
    format: Literal["json", "yaml", "markdown"]
    min_headings: int = Field(default=1, ge=0, description="markdown: headings required")


def _row(path: str, expected: JsonValue, actual: JsonValue, passed: bool) -> dict[str, JsonValue]:
    return {"path": path, "expected": expected, "actual": actual, "passed": passed}


def check(spec: OutputFormat, ctx: CheckContext) -> CheckOutcome:
    """Parse or scan the output as ``spec.format``."""
    text, name = output_text(ctx)
    if text is None:
        return no_output()
    rows: list[dict[str, JsonValue]] = []
    if spec.format in ("json", "yaml"):
        parsed = parse_json(text) if spec.format == "json" else parse_yaml(text)
        actual = parsed.error or f"valid {spec.format.upper()}"
        rows.append(_row("format", spec.format, actual, parsed.error is None))
    else:
        found, fences_closed = headings(text)
        rows.append(
            _row(
                "headings", {"min": spec.min_headings}, len(found), len(found) >= spec.min_headings
            )
        )
        rows.append(
            _row("code_fences", "closed", "closed" if fences_closed else "unclosed", fences_closed)
        )
    ok = sum(1 for r in rows if r["passed"])
    failed = [f"{r['path']}: {r['actual']}" for r in rows if not r["passed"]]
    details = (
        f"{name} is valid {spec.format}"
        if not failed
        else (f"{name} is not valid {spec.format}: " + "; ".join(failed))
    )
    return CheckOutcome(ok / len(rows), details, {"fieldResults": rows, "output": name})  # type: ignore[dict-item]


CHECK = CheckSpec(name="output-format", model=OutputFormat, run=check, sources=("output",))
