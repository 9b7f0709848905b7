"""``output-sections``: required Markdown headings in the agent's output.

Headings are ATX (``## Medical necessity``) or setext, outside fenced code. Matching is
case-insensitive and ignores emphasis, leading numbering (``2.``, ``iv)``) and trailing
punctuation, so ``### 2. MEDICAL NECESSITY:`` satisfies ``Medical necessity``. ``level``
restricts which heading levels count. With ``in_order: true`` each section must come after the
one listed before it; a section found only out of order fails with ``actual`` saying so.

Evidence: one ``fieldResults`` row per section, ``actual`` the heading found and its line.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, JsonValue

from .._contracts.check import AssertionSpec, CheckContext, CheckOutcome, CheckSpec
from ._output import Heading, headings, no_output, normalise_heading, output_text


class OutputSections(AssertionSpec):
    """The ``output-sections`` assertion."""

    kind: Literal["output-sections"] = Field(alias="assert")
    sections: list[str] = Field(min_length=1)
    in_order: bool = False
    level: int | None = Field(default=None, ge=1, le=6)
    match: Literal["exact", "contains"] = "exact"


def _matches(wanted: str, heading: Heading, mode: str) -> bool:
    have = normalise_heading(heading.text)
    return have == wanted if mode == "exact" else wanted in have


def check(spec: OutputSections, ctx: CheckContext) -> CheckOutcome:
    """Find each section among the output's headings (in order when asked)."""
    text, name = output_text(ctx)
    if text is None:
        return no_output()
    found, _ = headings(text)
    if spec.level is not None:
        found = [h for h in found if h.level == spec.level]
    rows: list[dict[str, JsonValue]] = []
    cursor = -1  # index in ``found`` of the last in-order match
    for section in spec.sections:
        wanted = normalise_heading(section)
        candidates = [i for i, h in enumerate(found) if _matches(wanted, h, spec.match)]
        row: dict[str, JsonValue] = {"path": f"sections[{section}]", "expected": "present"}
        if spec.in_order:
            row["expected"] = "present, in order"
            after = [i for i in candidates if i > cursor]
            if after:
                cursor = after[0]
                hit = found[after[0]]
                row.update(actual=f"line {hit.line}: {hit.text}", passed=True)
            elif candidates:
                hit = found[candidates[0]]
                row.update(actual=f"line {hit.line}: {hit.text} (out of order)", passed=False)
            else:
                row.update(actual=None, passed=False)
        elif candidates:
            hit = found[candidates[0]]
            row.update(actual=f"line {hit.line}: {hit.text}", passed=True)
        else:
            row.update(actual=None, passed=False)
        rows.append(row)
    ok = sum(1 for r in rows if r["passed"])
    missing = [s for s, r in zip(spec.sections, rows, strict=True) if not r["passed"]]
    details = f"{ok} of {len(rows)} sections found in {name} ({len(found)} headings)"
    if missing:
        details += "; missing or out of order: " + ", ".join(map(repr, missing))
    evidence: dict[str, JsonValue] = {
        "fieldResults": rows,  # type: ignore[dict-item]
        "output": name,
        "headings": [h.text for h in found[:50]],
    }
    return CheckOutcome(ok / len(rows), details, evidence)


CHECK = CheckSpec(name="output-sections", model=OutputSections, run=check, sources=("output",))
