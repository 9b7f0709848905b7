"""``output-length``: bounds on the output's words and characters.

Words are runs of letters or digits (``prior-auth`` and ``patient's`` count once); characters
are those of the text with leading and trailing whitespace removed. Each bound given is one
``fieldResults`` row (``op`` ``gte`` or ``lte``); score = passed bounds / bounds.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, JsonValue, model_validator

from .._compare import FieldSpec, field_result, fields_score
from .._contracts.check import AssertionSpec, CheckContext, CheckOutcome, CheckSpec
from ._output import no_output, output_text, word_count


class OutputLength(AssertionSpec):
    """The ``output-length`` assertion."""

    kind: Literal["output-length"] = Field(alias="assert")
    min_words: int | None = Field(default=None, ge=0)
    max_words: int | None = Field(default=None, ge=0)
    min_chars: int | None = Field(default=None, ge=0)
    max_chars: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _bounds(self) -> OutputLength:
        given = [self.min_words, self.max_words, self.min_chars, self.max_chars]
        if all(b is None for b in given):
            raise ValueError("give at least one of min_words, max_words, min_chars, max_chars")
        for low, high, unit in (
            (self.min_words, self.max_words, "words"),
            (self.min_chars, self.max_chars, "chars"),
        ):
            if low is not None and high is not None and low > high:
                raise ValueError(f"min_{unit} ({low}) is greater than max_{unit} ({high})")
        return self


def check(spec: OutputLength, ctx: CheckContext) -> CheckOutcome:
    """Count words and characters and compare each bound."""
    text, name = output_text(ctx)
    if text is None:
        return no_output()
    counts = {"words": word_count(text), "chars": len(text.strip())}
    rows: list[dict[str, JsonValue]] = []
    for unit in ("words", "chars"):
        bounds: tuple[tuple[Literal["gte", "lte"], int | None], ...] = (
            ("gte", getattr(spec, f"min_{unit}")),
            ("lte", getattr(spec, f"max_{unit}")),
        )
        for op, bound in bounds:
            if bound is not None:
                rows.append(field_result(FieldSpec(path=unit, expected=bound, op=op), counts[unit]))
    score = fields_score(rows)
    summary = f"{name}: {counts['words']} words, {counts['chars']} characters"
    failed = [
        f"{r['path']} {'>=' if r['op'] == 'gte' else '<='} {r['expected']}"
        for r in rows
        if not r["passed"]
    ]
    details = summary + ("; out of bounds: " + ", ".join(failed) if failed else "; within bounds")
    return CheckOutcome(score, details, {"fieldResults": rows, "output": name, **counts})  # type: ignore[dict-item]


CHECK = CheckSpec(name="output-length", model=OutputLength, run=check, sources=("output",))
