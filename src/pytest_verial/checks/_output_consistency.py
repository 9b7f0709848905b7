"""``output-consistency``: the judge compares related tasks' outputs for contradictions
(PRD-103 §10, cross-task consistency).

::

    assert: output-consistency
    tasks: [verify-pa-summary]      # related task runs of the same run (sandbox names)
    principles: [...]               # optional; defaults below

The criterion belongs to one task (the *anchor*); its own output and those of the listed
tasks, read from the same run directory, are quoted to the judge together, each under its
task's name. It is a judge criterion like ``llm-rubric``: it runs last in the anchor task, is
gated by the anchor's deterministic criteria, bypassed by the same rules, and scored the same
way. A listed task without output means nothing to compare: score 0, no call.

A benchmark may declare these at the top level instead (``consistency:`` entries with ``id``,
``tasks`` and optional ``label``, ``principles``, ``weight``, ``axis``); the loader attaches
each to the last task it lists (:func:`pytest_verial.judge._consistency.expand`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from .._contracts.check import AssertionSpec, CheckContext, CheckOutcome, CheckSpec
from .._errors import CheckError
from ..sources._output import OutputSnapshot
from ._llm_rubric import judge_principles, judge_threshold

DEFAULT_PRINCIPLES = [
    "The outputs do not contradict each other on facts they share: patient, member and "
    "reference numbers, codes, dates, amounts, statuses and decisions.",
    "No output claims an action or result that another output shows did not happen.",
]


class OutputConsistency(AssertionSpec):
    """The ``output-consistency`` assertion."""

    kind: Literal["output-consistency"] = Field(alias="assert")
    tasks: list[str] = Field(min_length=1)
    principles: list[str] = Field(
        default_factory=lambda: list(DEFAULT_PRINCIPLES), min_length=1, max_length=20
    )
    pass_threshold: float | None = Field(default=None, ge=0, le=1)


def _outputs(spec: OutputConsistency, ctx: CheckContext) -> tuple[str | None, str]:
    root = ctx.source("judge").sandbox_path
    if root is None:  # the judge source of a sandbox always knows its folder
        raise CheckError("output-consistency: the task run's sandbox folder is not known")
    own = ctx.source("output")
    keys = [ctx.task_key, *spec.tasks]
    described = "the final outputs of tasks " + ", ".join(keys)
    parts = []
    for key in keys:
        source = own if key == ctx.task_key else OutputSnapshot(Path(root).parent / key)
        text = source.text()
        if text is None or not text.strip():
            return None, f"{described} (task {key} wrote no output)"
        name = source.path.name if source.path else "output"
        parts.append(f"=== task {key} ({name}) ===\n{text.strip()}")
    return "\n\n".join(parts), described


def check(spec: OutputConsistency, ctx: CheckContext) -> CheckOutcome:
    """Ask the judge whether the outputs agree."""
    threshold = judge_threshold(spec.pass_threshold, ctx)
    return judge_principles(ctx, spec.principles, lambda: _outputs(spec, ctx), threshold)


CHECK = CheckSpec(
    name="output-consistency",
    model=OutputConsistency,
    run=check,
    sources=("output", "judge"),
    judge=True,
)
